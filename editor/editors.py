"""Editors: revise a text so it agrees with evidence, minimally. One interface, chosen in config.

``edit(text, evidence, context) -> Revision`` (and ``edit_batch``): the revised text and a short
reason. The revision loop (``editor.revision``) decides *when* to call an editor (the agreement
gate), on which span (sentence or passage) and rejects edits that are too large; an editor only
decides *how* to fix.

- ``identity``: changes nothing (the baseline).
- ``substitute``: the offline default until a trained editor ships. Candidate minimal edits swap
  one name, number or date of the text for a same-type one the evidence states (or swap two
  same-type names of the text, for role errors); the attribution model scores every candidate
  against the evidence and the best is kept if it raises P(supported) - P(contradicted) by at
  least ``min_gain`` and ends up supported more than contradicted.
- ``prompted``: RARR's editor: a few-shot LLM prompt per evidence ("copy the wrong words, then
  the fix"), applied as a span replacement, so the LLM cannot rewrite what it was not asked to.
- ``fid`` (``editor.fid``) and ``causal`` (``editor.causal``): trained seq2seq / causal editors.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from editor.agreement import load_template, quote
from editor.attribution import AttributionModel
from editor.config import EditorConfig
from editor.nlp import ner_only
from editor.registry import Registry
from editor.types import Evidence, evidence_text

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Revision:
    """An editor's answer: the revised text (``text`` itself when nothing changed) and why."""

    text: str
    reason: str


class Editor(Protocol):
    """Revises a text so that it agrees with the evidence."""

    name: str

    def edit(
        self, text: str, evidence: Sequence[Evidence], context: str | None = None
    ) -> Revision: ...

    def edit_batch(
        self, items: Sequence[tuple[str, Sequence[Evidence]]], context: str | None = None
    ) -> list[Revision]: ...


class _OneByOne:
    """``edit_batch`` as a loop over ``edit``."""

    def edit_batch(
        self, items: Sequence[tuple[str, Sequence[Evidence]]], context: str | None = None
    ) -> list[Revision]:
        return [self.edit(t, e, context) for t, e in items]  # type: ignore[attr-defined]


class _FromBatch:
    """``edit`` as a batch of one (for editors whose work is naturally batched)."""

    def edit(self, text: str, evidence: Sequence[Evidence], context: str | None = None) -> Revision:
        return self.edit_batch([(text, evidence)], context)[0]  # type: ignore[attr-defined]


class ModelEditor(_FromBatch):
    """An editor over a model loaded lazily, once, under a lock: pass a reference (hub id,
    path, ``packaged:NAME``) or an already loaded model with its tokenizer. Subclasses
    implement ``_load() -> (tokenizer, model)`` and ``edit_batch``."""

    def __init__(self, model: str | Any, tokenizer: Any = None, adapter: str | None = None):
        if isinstance(model, str):
            self.ref, self._model, self._tokenizer = model, None, None
        else:
            if tokenizer is None:
                raise ValueError("pass the tokenizer with a loaded model")
            self.ref = getattr(model, "name_or_path", "model")
            self._model, self._tokenizer = model, tokenizer
        self.adapter = adapter
        self._lock = threading.Lock()

    def load(self) -> tuple[Any, Any]:
        """Tokenizer and model (loaded on the first call)."""
        with self._lock:
            if self._model is None:
                self._tokenizer, self._model = self._load()
        return self._tokenizer, self._model

    def _load(self) -> tuple[Any, Any]:
        raise NotImplementedError


def trained_evidence(adapter: str | None, fallback: int = 4) -> int:
    """How many evidence snippets an adapter was trained with (``train_config.json``)."""
    if adapter:
        cfg = Path(adapter) / "train_config.json"
        if cfg.is_file():
            return int(json.loads(cfg.read_text()).get("n_evidence", fallback))
    return fallback


class IdentityEditor(_OneByOne):
    """Changes nothing: the baseline every editor is measured against."""

    name = "identity"

    def edit(self, text: str, evidence: Sequence[Evidence], context: str | None = None) -> Revision:
        return Revision(text, "identity editor: no edits")


# -- substitute -------------------------------------------------------------------------------

_TYPES = {
    "PERSON": "person",
    "ORG": "org",
    "GPE": "place",
    "LOC": "place",
    "FAC": "place",
    "NORP": "norp",
    "DATE": "date",
    "TIME": "date",
    "CARDINAL": "number",
    "QUANTITY": "number",
    "MONEY": "number",
    "PERCENT": "number",
    "ORDINAL": "ordinal",
    "EVENT": "other",
    "WORK_OF_ART": "other",
    "PRODUCT": "other",
    "LANGUAGE": "other",
}
_NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?![\w])")
_YEAR = re.compile(r"^(1[0-9]{3}|20[0-9]{2})$")


@dataclass(frozen=True)
class _Span:
    start: int
    end: int
    text: str
    kind: str


def _norm(text: str) -> str:
    return re.sub(r"\W+", " ", text.lower()).strip()


def _family(kind: str) -> str:
    """Kinds that may replace each other: spaCy often labels a person's name ORG and back."""
    return "name" if kind in {"person", "org"} else kind


def _shape(text: str) -> str:
    """Digits as 9, letters as a, runs collapsed: '1889' -> '9', 'the 1910s' -> 'a 9a'.

    >>> _shape("1,200"), _shape("the 1910s"), _shape("Gustave Eiffel")
    ('9,9', 'a 9a', 'a a')
    """
    out = re.sub(r"[0-9]+", "9", text)
    return re.sub(r"[^\W\d_]+", "a", out)


def fit_replacement(replacement: str, before: str, after: str) -> str:
    """``replacement`` without the words at its ends that the text around the span already has
    (``'250'`` in "is 250 metres tall" swapped for the evidence's "330 metres" gives "330").

    >>> fit_replacement("330 metres", "It is ", " metres tall.")
    '330'
    >>> fit_replacement("the Eiffel company", "built by the ", "."), fit_replacement("X", "a", "b")
    ('Eiffel company', 'X')
    """
    words = replacement.split()
    following = [_norm(w) for w in after.split()]
    for k in range(len(words) - 1, 0, -1):
        if [_norm(w) for w in words[-k:]] == following[:k]:
            words = words[:-k]
            break
    preceding = [_norm(w) for w in before.split()]
    for k in range(len(words) - 1, 0, -1):
        if preceding[-k:] and [_norm(w) for w in words[:k]] == preceding[-k:]:
            words = words[k:]
            break
    return " ".join(words)


def typed_spans(doc: Any) -> list[_Span]:
    """Named entities (coarse types) and bare numbers of a parsed text; numbers that look like
    years are dates. Numbers inside an entity are listed too, so '31 March 1887' offers both
    the whole date and '1887'."""
    spans = [
        _Span(e.start_char, e.end_char, e.text, _TYPES[e.label_])
        for e in doc.ents
        if e.label_ in _TYPES
    ]
    seen = {(s.start, s.end) for s in spans}
    for m in _NUMBER.finditer(doc.text):
        if (m.start(), m.end()) in seen:
            continue
        kind = "date" if _YEAR.match(m.group()) else "number"
        spans.append(_Span(m.start(), m.end(), m.group(), kind))
    return spans


class SubstituteEditor(_OneByOne):
    """NLI-verified span substitution (see the module doc)."""

    name = "substitute"

    def __init__(
        self,
        attribution: AttributionModel,
        min_gain: float = 0.2,
        max_candidates: int = 48,
        nlp: Any = None,
    ) -> None:
        self.attribution = attribution
        self.min_gain = min_gain
        self.max_candidates = max_candidates
        self._nlp = nlp
        self._off: list[str] | None = None

    @property
    def nlp(self) -> Any:
        if self._nlp is None:
            from editor.nlp import get_nlp

            self._nlp = get_nlp()
        return self._nlp

    @property
    def _ner_off(self) -> list[str]:
        """Components skipped when only entities are needed (worked out once)."""
        if self._off is None:
            self._off = ner_only(self.nlp)
        return self._off

    def candidates(self, text: str, evidence: Sequence[Evidence]) -> list[tuple[str, str, bool]]:
        """(revised text, description, same surface shape) of every single swap worth scoring;
        "same shape" (a year for a year, a number for a number) breaks near-ties."""
        off = self._ner_off
        doc = self.nlp(text, disable=off)
        mine = typed_spans(doc)
        theirs: list[_Span] = []
        for d in self.nlp.pipe([evidence_text(e) for e in evidence], disable=off):
            theirs.extend(typed_spans(d))
        ev_norm = " " + " ".join(_norm(evidence_text(e)) for e in evidence) + " "
        text_norm = " " + _norm(text) + " "
        out: dict[str, tuple[str, bool]] = {}
        for s in mine:
            if f" {_norm(s.text)} " in ev_norm:
                continue  # the evidence states it too
            for t in theirs:
                if _family(t.kind) != _family(s.kind) or f" {_norm(t.text)} " in text_norm:
                    continue
                replacement = fit_replacement(t.text, text[: s.start], text[s.end :])
                if s.text.endswith(("'s", "’s")) and not t.text.endswith(("'s", "’s")):
                    replacement += s.text[-2:]  # keep the possessive: "Edison's" -> "Eiffel's"
                new = text[: s.start] + replacement + text[s.end :]
                out.setdefault(new, (f"{s.text!r} -> {t.text!r}", _shape(s.text) == _shape(t.text)))
        for i, a in enumerate(mine):  # role swaps: two same-type names trade places
            for b in mine[i + 1 :]:
                if a.kind != b.kind or a.kind in {"number", "date"} or a.end > b.start:
                    continue
                new = text[: a.start] + b.text + text[a.end : b.start] + a.text + text[b.end :]
                out.setdefault(new, (f"swapped {a.text!r} and {b.text!r}", True))
        return [(t, d, same) for t, (d, same) in out.items()][: self.max_candidates]

    def edit(self, text: str, evidence: Sequence[Evidence], context: str | None = None) -> Revision:
        if not evidence or not text.strip():
            return Revision(text, "no evidence to edit against")
        cands = self.candidates(text, evidence)
        if not cands:
            return Revision(text, "no name, number or date of the evidence fits the text")
        premises = [evidence_text(e) for e in evidence]
        texts = [text] + [c for c, _, _ in cands]
        pairs = [(p, t) for t in texts for p in premises]
        scores = self.attribution.score_batch(pairs)
        n = len(premises)

        def margin(i: int) -> tuple[float, float, float]:
            group = scores[i * n : (i + 1) * n]
            best = max(group, key=lambda s: s.supported - s.contradicted)
            return best.supported - best.contradicted, best.supported, best.contradicted

        base, _, _ = margin(0)
        ranked = sorted(
            range(1, len(texts)), key=lambda i: -(margin(i)[0] + 0.05 * cands[i - 1][2])
        )
        best_i = ranked[0]
        gain, sup, con = margin(best_i)
        if gain - base >= self.min_gain and sup > con:
            return Revision(
                texts[best_i],
                f"{cands[best_i - 1][1]}: support - contradiction {base:.2f} -> {gain:.2f}",
            )
        return Revision(
            text,
            f"no swap helped enough (best {cands[best_i - 1][1]}: {base:.2f} -> {gain:.2f})",
        )


# -- prompted (RARR) --------------------------------------------------------------------------

_WRONG = re.compile(r"^\s*(.*?)\s*(?:\n|$)", re.S)
_FIX = re.compile(r"^\s*Fix:\s*(.*?)\s*$", re.M | re.I)


def apply_fix(text: str, completion: str) -> tuple[str, str]:
    """Apply a ``Wrong: SPAN / Fix: NEW`` completion (the prompt ends at ``Wrong:``) to ``text``.

    >>> apply_fix("It was built in 1887.", " 1887\\nFix: 1889")
    ('It was built in 1889.', "'1887' -> '1889'")
    >>> apply_fix("It was built in 1887.", " none")[1]
    'the LLM found nothing wrong'
    >>> apply_fix("It was built in 1887.", " 1850\\nFix: 1889")[1]
    "the LLM's span '1850' is not in the text"
    """
    m = _WRONG.match(completion)
    wrong = (m.group(1) if m else "").strip().strip('"').strip()
    if not wrong or wrong.lower().rstrip(".") in {"none", "nothing", "n/a"}:
        return text, "the LLM found nothing wrong"
    fix = _FIX.search(completion)
    if fix is None:
        return text, f"the LLM named {wrong!r} but gave no fix"
    new = fix.group(1).strip().strip('"').strip()
    if wrong not in text:
        return text, f"the LLM's span {wrong!r} is not in the text"
    if new == wrong:
        return text, "the LLM's fix equals the span"
    return text.replace(wrong, new, 1), f"{wrong!r} -> {new!r}"


class PromptedEditor(_FromBatch):
    """RARR's few-shot prompted editor over any LLM backend; one evidence per call (the best
    one when given several), greedy, the fix applied as a span replacement."""

    name = "prompted"

    def __init__(self, llm: Any, prompt: str | None = None, max_new_tokens: int = 48) -> None:
        self.llm = llm
        self.template = load_template(prompt, "editor_rarr.txt", ["evidence", "text"])
        self.max_new_tokens = max_new_tokens

    def render(self, text: str, evidence: Evidence, context: str | None) -> str:
        ctx = f'Conversation: """{quote(context)}"""\n' if context and context.strip() else ""
        return (
            self.template.replace("{{context}}", ctx)
            .replace("{{evidence}}", quote(evidence_text(evidence)))
            .replace("{{text}}", quote(text))
        )

    def edit_batch(
        self, items: Sequence[tuple[str, Sequence[Evidence]]], context: str | None = None
    ) -> list[Revision]:
        todo = [(i, t, ev[0]) for i, (t, ev) in enumerate(items) if ev and t.strip()]
        out = [Revision(t, "no evidence to edit against") for t, _ in items]
        if not todo:
            return out
        prompts = [self.render(t, e, context) for _, t, e in todo]
        completions = self.llm.complete(
            prompts,
            max_new_tokens=self.max_new_tokens,
            temperature=0.0,
            stop=["\n\nEvidence:", "\nEvidence:", "\nText:"],
        )
        for (i, text, _), comp in zip(todo, completions, strict=True):
            new, reason = apply_fix(text, comp[0] if comp else "")
            out[i] = Revision(new, reason)
        return out


# -- registry ---------------------------------------------------------------------------------

EditorFactory = Callable[..., Editor]

_EDITORS: Registry[EditorFactory] = Registry("editor type", "editor.type")


def register(name: str, factory: EditorFactory) -> None:
    """Make ``factory(cfg, attribution=..., llm=..., llm_cfg=...)`` buildable as
    ``editor.type=name``; ``attribution`` and ``llm`` are zero-argument loaders."""
    _EDITORS.register(name, factory)


def available() -> list[str]:
    return _EDITORS.available()


def build(
    cfg: EditorConfig,
    attribution: Callable[[], AttributionModel],
    llm: Callable[[], Any],
    llm_cfg: Any = None,
) -> Editor:
    """The editor of ``cfg.type``; models load lazily on first use."""
    return _EDITORS.get(cfg.type)(cfg, attribution=attribution, llm=llm, llm_cfg=llm_cfg)


def _fid(cfg: EditorConfig, **_: Any) -> Editor:
    from editor.fid import FiDEditor

    assert cfg.model is not None  # PipelineConfig refuses editor.type=fid without a model
    return FiDEditor(
        cfg.model,
        adapter=cfg.adapter,
        max_evidence=cfg.max_evidence or trained_evidence(cfg.adapter),
        max_input_tokens=cfg.max_input_tokens,
        max_new_tokens=cfg.max_new_tokens,
        num_beams=cfg.num_beams,
        device=cfg.device,
    )


def _causal(cfg: EditorConfig, llm_cfg: Any = None, **_: Any) -> Editor:
    from editor.causal import DEFAULT_BASE, CausalEditor, default_causal_adapter

    base = cfg.model or (llm_cfg.model if llm_cfg is not None else DEFAULT_BASE)
    adapter = cfg.adapter
    if adapter is None and base == DEFAULT_BASE and default_causal_adapter().is_dir():
        adapter = str(default_causal_adapter())  # the shipped adapter, trained on this base
    return CausalEditor(
        base,
        adapter=adapter,
        prompt=cfg.prompt,
        max_evidence=cfg.max_evidence or trained_evidence(adapter),
        max_new_tokens=cfg.max_new_tokens,
        num_beams=cfg.num_beams,
        device=cfg.device,
        prompt_lookup=cfg.prompt_lookup,
    )


register("identity", lambda cfg, **_: IdentityEditor())
register(
    "substitute",
    lambda cfg, attribution, **_: SubstituteEditor(attribution(), min_gain=cfg.min_gain),
)
register(
    "prompted",
    lambda cfg, llm, **_: PromptedEditor(llm(), cfg.prompt, max_new_tokens=cfg.max_new_tokens),
)
register("fid", _fid)
register("causal", _causal)
