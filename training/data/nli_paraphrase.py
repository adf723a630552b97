"""Paraphrased claims without an LLM: the same facts in another word order, made from the
claim's dependency parse, so a verifier can be measured (``purr eval paraphrase``) and trained
(``purr train attribution --paraphrases``) on claims that do not copy their evidence's wording.

Three rewrites, each keeping every word of the claim that carries a fact:

- ``fronted``: a phrase of time or place at the end moves to the front
  ("Curie won the prize in 1911." -> "In 1911, Curie won the prize.");
- ``passive``: subject and object of a regular past-tense verb swap roles
  ("Curie discovered polonium in 1898." -> "Polonium was discovered by Curie in 1898.");
- ``inverted``: a copula with a definite description turns round
  ("Paris is the capital of France." -> "The capital of France is Paris.").

A rewrite keeps its pair's label: the facts and what the evidence says of them are unchanged.

    python -m training.data.nli_paraphrase --splits runs/pool/splits.jsonl.xz \
        --out runs/pool/para-splits.jsonl.xz --share 1.0
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from tqdm.auto import tqdm

from training.args import option
from training.data.nli import NLIExample, NLISplits, read_splits, write_splits

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc, Span, Token

_FRONTED_PREPS = frozenset({"in", "on", "at", "during", "since", "until", "after", "before"})
_CLAIM_PUNCT = frozenset({".", "!"})
KINDS = ("fronted", "passive", "inverted")
_PLACED = frozenset({"locate", "base", "situate", "headquarter", "be"})
_UNSAFE = '[]()"“”;:'


def paraphrase(doc: Doc) -> tuple[str, str] | None:
    """``(kind, text)`` of the first rewrite that applies to a one-sentence ``doc``, or None.

    >>> from editor.text.nlp import get_nlp
    >>> nlp = get_nlp()
    >>> paraphrase(nlp("Marie Curie won the Nobel Prize in Chemistry in 1911."))
    ('fronted', 'In 1911, Marie Curie won the Nobel Prize in Chemistry.')
    >>> paraphrase(nlp("The company acquired Instagram."))
    ('passive', 'Instagram was acquired by the company.')
    >>> paraphrase(nlp("Paris is the capital of France."))
    ('inverted', 'The capital of France is Paris.')
    >>> paraphrase(nlp("Is it true?")) is None
    True
    """
    words = [t for t in doc if not t.is_space]
    if len(words) < 4 or words[-1].text not in _CLAIM_PUNCT or len(list(doc.sents)) != 1:
        return None
    if any(c in doc.text for c in _UNSAFE):
        return None  # brackets and quotes: a rewrite could cut through them
    for kind, rewrite in (("fronted", _fronted), ("passive", _passive), ("inverted", _inverted)):
        text = rewrite(doc)
        if text and text != doc.text:
            return kind, text
    return None


def _span_text(span: Span | Sequence[Token]) -> str:
    return "".join(t.text_with_ws for t in span).strip()


def _subtree(token: Token) -> Span:
    return token.doc[token.left_edge.i : token.right_edge.i + 1]


def _lead(text: str) -> str:
    """``text`` as the start of a sentence."""
    return text[:1].upper() + text[1:]


def _inside(text: str, first: Token) -> str:
    """``text`` (which starts at ``first``) moved inside a sentence: a capital kept only on a
    name ("The team" -> "the team", "Marie Curie" stays)."""
    if first.pos_ != "DET" and (first.pos_ == "PROPN" or first.text == "I" or first.ent_type_):
        return text
    return text[:1].lower() + text[1:]


def _fronted(doc: Doc) -> str | None:
    root = doc[:].root
    end = doc[-1] if doc[-1].is_punct else None
    if end is None or root.pos_ not in {"VERB", "AUX"} or root.lemma_ in _PLACED:
        return None  # "In Atlanta, the institute is located." reads wrong
    for child in root.children:
        if child.dep_ != "prep" or child.lower_ not in _FRONTED_PREPS:
            continue
        phrase = _subtree(child)
        if phrase.end != end.i or len(phrase) > 6 or phrase.start <= root.i:
            continue
        if not any(t.ent_type_ in {"DATE", "GPE", "LOC", "TIME", "EVENT"} for t in phrase):
            continue
        if doc[phrase.start - 1].is_punct:  # "..., in 1911." already set apart
            continue
        rest = _span_text(doc[: phrase.start])
        moved = _lead(_span_text(phrase))
        return f"{moved}, {_inside(rest, doc[0])}{end.text}"
    return None


def _passive(doc: Doc) -> str | None:
    root = doc[:].root
    if root.tag_ != "VBD" or not root.lower_.endswith("ed"):
        return None  # a regular past tense: the participle is the same word
    if any(c.dep_ in {"aux", "auxpass", "neg", "prt"} for c in root.children):
        return None
    subj = next((c for c in root.children if c.dep_ == "nsubj"), None)
    obj = next((c for c in root.children if c.dep_ == "dobj"), None)
    if subj is None or obj is None or subj.pos_ == "PRON" or obj.pos_ == "PRON":
        return None
    s, o = _subtree(subj), _subtree(obj)
    if s.start != 0 or s.end != root.i or o.start != root.i + 1:
        return None  # only "SUBJECT VERB OBJECT rest"
    if s[0].pos_ not in {"DET", "PROPN"}:
        return None  # "Diabetic patients ... experience decreased risk": likely a misparse
    for t in doc[o.end :]:  # the rest: phrases of the verb's (time, place, manner), the stop
        if not (t.is_punct and t.i == len(doc) - 1) and _attached(t, root) not in _ADJUNCTS:
            return None
    plural = obj.tag_ in {"NNS", "NNPS"} or any(c.dep_ == "conj" for c in obj.children)
    be = "were" if plural else "was"
    rest = _span_text(doc[o.end :])
    joined = f"{_lead(_span_text(o))} {be} {root.text} by {_inside(_span_text(s), s[0])}"
    return joined + ("" if doc[o.end].is_punct else " ") + rest


_ADJUNCTS = frozenset({"prep", "npadvmod", "advmod"})


def _attached(token: Token, root: Token) -> str:
    """The dependency by which ``token``'s branch hangs from ``root`` ("" if it does not)."""
    while token.head.i != root.i:
        if token.head.i == token.i:
            return ""
        token = token.head
    return token.dep_


def _inverted(doc: Doc) -> str | None:
    root = doc[:].root
    if root.lemma_ != "be" or root.tag_ not in {"VBZ", "VBD"}:
        return None
    subj = next((c for c in root.children if c.dep_ == "nsubj"), None)
    attr = next((c for c in root.children if c.dep_ == "attr"), None)
    if subj is None or attr is None or subj.pos_ != "PROPN":
        return None
    s, a = _subtree(subj), _subtree(attr)
    if s.start != 0 or s.end != root.i or a.start != root.i + 1 or a[0].lower_ != "the":
        return None
    if a.end != len(doc) - 1 or not doc[-1].is_punct:
        return None
    stop = "" if s[-1].text.endswith(".") else doc[-1].text  # "Juventus F.C.", not "F.C.."
    return f"{_lead(_span_text(a))} {root.text} {_span_text(s)}{stop}"


def paraphrase_rows(
    rows: Iterable[NLIExample],
    nlp: Language,
    kinds: Sequence[str] = KINDS,
    progress: bool = False,
) -> list[tuple[NLIExample, NLIExample, str]]:
    """``(row, rewritten row, kind)`` for each row whose hypothesis (one sentence) a rewrite of
    ``kinds`` applies to; the rewritten row keeps the label, source and group, its id ends in
    ``#para``."""
    rows = list(rows)
    out = []
    docs = nlp.pipe([r.hypothesis for r in rows], batch_size=64)
    for row, doc in tqdm(
        zip(rows, docs, strict=True), total=len(rows), disable=not progress, desc="paraphrase"
    ):
        made = paraphrase(doc)
        if made is None or made[0] not in kinds:
            continue
        kind, text = made
        out.append((row, replace(row, id=f"{row.id}#para", hypothesis=text), kind))
    return out


def with_paraphrases(
    train: dict[str, list[NLIExample]], share: float, seed: int = 0, progress: bool = False
) -> dict[str, list[NLIExample]]:
    """``train`` plus, for each source, the rewrites of a seeded ``share`` of its rows as
    source ``NAME-paraphrase`` (capped per source like any other); groups are kept, so a
    rewrite stays on its parent's side of the split."""
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"the paraphrase share must be in [0, 1], got {share}")
    from editor.text.nlp import get_nlp

    rng = random.Random(seed)
    out = dict(train)
    for name, rows in train.items():
        picked = [r for r in rows if rng.random() < share]
        made = [
            replace(b, source=f"{name}-paraphrase")
            for _, b, _ in paraphrase_rows(picked, get_nlp(), progress=progress)
        ]
        if made:
            out[f"{name}-paraphrase"] = made
    return out


def with_paraphrased_train(
    splits: NLISplits, share: float, seed: int = 0, progress: bool = False
) -> NLISplits:
    """``with_paraphrases`` on saved splits (``--splits``): their train rows grouped by source,
    the rewrites added after them; dev unchanged."""
    by_source: dict[str, list[NLIExample]] = {}
    for row in splits.train:
        by_source.setdefault(row.source, []).append(row)
    added = with_paraphrases(by_source, share, seed, progress)
    extra = [r for name, rows in added.items() if name not in by_source for r in rows]
    return NLISplits([*splits.train, *extra], splits.dev)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--splits", type=Path, required=True, help="prepared splits (--save-splits)")
    p.add_argument("--out", type=Path, required=True, help="the splits with the rewrites added")
    option(p, "--share", float, 1.0, "share of train rows to reword")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    splits = with_paraphrased_train(read_splits(args.splits), args.share, args.seed, True)
    print(json.dumps(write_splits(splits, args.out)))


if __name__ == "__main__":
    main()
