"""Agreement model: do the text and a piece of evidence imply the same answer to a query?

``check(text, query, evidence, context) -> Agreement`` with a verdict ``agrees``,
``disagrees`` or ``irrelevant`` and a reason. Only on ``disagrees`` does the revision loop call
the editor (RARR's gate; without it the paper saw over-editing, F1_AP 68.1 -> 62.8 on NQ).

Two implementations, chosen by ``agreement.type``:

- ``nli`` (default): question-guided NLI. The sentences of the text that answer the query are
  found by content-word overlap with the query (a sentence query is the sentence itself; an
  entity question shares its focus words), decontextualised against the passage and dialogue
  context, and scored against the evidence by the attribution model. ``disagrees`` when the
  best-matching sentence's P(contradicted) reaches ``contradiction_threshold`` and exceeds its
  P(supported); ``agrees`` when P(supported) reaches ``support_threshold``; else ``irrelevant``.
- ``llm``: RARR's prompted check with chain of thought: the LLM states the answer the text
  implies, the answer the evidence implies, then judges. Parsed from the last line.

Both return where in the text the judged sentence lies (``span``), so an editor can work on
that sentence alone.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from editor.attribution import AttributionModel
from editor.config import AgreementConfig
from editor.registry import Registry
from editor.types import Evidence, evidence_text
from retrieval.sentences import split_spans

log = logging.getLogger(__name__)

Verdict = Literal["agrees", "disagrees", "irrelevant"]

PROMPT_DIR = Path(__file__).parent / "prompts"

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    """a an the and or but if of to in on at by for with from as is are was were be been being
    it its this that these those which who whom what when where why how not no than then there
    their they them he she his her we our you your i has have had do does did can could will
    would should may might must also into over under about after before between during such
    whose many much""".split()
)


@dataclass(frozen=True)
class Agreement:
    """The verdict on one (text, query, evidence) triple.

    ``span`` is the (start, end) character range of the sentence of the text that was judged
    (None when no sentence matched the query); ``scores`` the model's numbers behind it.
    """

    verdict: Verdict
    reason: str
    span: tuple[int, int] | None = None
    supported: float | None = None
    contradicted: float | None = None

    @property
    def disagrees(self) -> bool:
        return self.verdict == "disagrees"


class AgreementModel(Protocol):
    """Decides whether ``text`` and ``evidence`` imply the same answer to ``query``."""

    def check(
        self, text: str, query: str, evidence: Evidence, context: str | None = None
    ) -> Agreement: ...

    def check_batch(
        self, items: Sequence[tuple[str, str, Evidence]], context: str | None = None
    ) -> list[Agreement]: ...


def content_words(text: str) -> set[str]:
    """Lower-cased content words (digits kept).

    >>> sorted(content_words("When was the Eiffel Tower built?"))
    ['built', 'eiffel', 'tower']
    """
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def answering_sentences(text: str, query: str, top: int = 1) -> list[tuple[int, int]]:
    """Character spans of the ``top`` sentences of ``text`` that share the most content words
    with ``query`` (in that order); none when no sentence shares any.

    >>> t = "Paris is in France. The Eiffel Tower was built in 1889."
    >>> [t[a:b] for a, b in answering_sentences(t, "When was the Eiffel Tower built?")]
    ['The Eiffel Tower was built in 1889.']
    """
    target = content_words(query)
    scored = []
    for i, (a, b) in enumerate(split_spans(text)):
        words = content_words(text[a:b])
        if not words:
            continue
        overlap = len(words & target) / len(target | words) if target else 0.0
        if overlap > 0:
            scored.append((-overlap, i, (a, b)))
    scored.sort()
    return [span for _, _, span in scored[:top]]


def focus(evidence: str, claim: str, max_chars: int = 800) -> str:
    """The run of consecutive sentences of ``evidence`` (at most ``max_chars``) sharing the
    most content words with ``claim``: long documents shrink to the snippet-sized window
    trained editors saw in training. Short evidence is returned whole.

    >>> doc = "Paris is in France. " * 30 + "The tower was built in 1889. It is tall."
    >>> focus(doc, "The tower was built in 1887.", 45)
    'The tower was built in 1889. It is tall.'
    """
    if len(evidence) <= max_chars:
        return evidence
    spans = split_spans(evidence)
    target = content_words(claim)
    scores = [len(content_words(evidence[a:b]) & target) for a, b in spans]
    best, best_score = (0, 0), -1
    for i in range(len(spans)):
        j, total = i, 0
        while j < len(spans) and spans[j][1] - spans[i][0] <= max_chars:
            total += scores[j]
            j += 1
        if j > i and total > best_score:
            best, best_score = (i, j), total
    if best_score < 0:  # one sentence longer than the budget
        return evidence[:max_chars]
    i, j = best
    return evidence[spans[i][0] : spans[j - 1][1]]


class _FromBatch:
    """``check`` as a batch of one."""

    def check(
        self, text: str, query: str, evidence: Evidence, context: str | None = None
    ) -> Agreement:
        return self.check_batch([(text, query, evidence)], context)[0]  # type: ignore[attr-defined]


class NLIAgreement(_FromBatch):
    """Question-guided NLI agreement over the attribution model (see the module doc)."""

    name = "nli"

    def __init__(
        self,
        attribution: AttributionModel,
        contradiction_threshold: float = 0.5,
        support_threshold: float = 0.5,
        sentences_per_query: int = 1,
        decontextualize: bool = True,
    ) -> None:
        self.attribution = attribution
        self.contradiction_threshold = contradiction_threshold
        self.support_threshold = support_threshold
        self.sentences_per_query = sentences_per_query
        self.decontextualize = decontextualize

    def check_batch(
        self, items: Sequence[tuple[str, str, Evidence]], context: str | None = None
    ) -> list[Agreement]:
        plans: list[list[tuple[tuple[int, int], str]]] = []
        pairs: list[tuple[str, str]] = []
        standalone: dict[str, dict[str, str]] = {}  # text -> sentence -> decontextualised
        for text, query, ev in items:
            spans = answering_sentences(text, query, self.sentences_per_query)
            hyps = self._hypotheses(text, spans, context, standalone)
            plans.append(list(zip(spans, hyps, strict=True)))
            pairs.extend((evidence_text(ev), h) for h in hyps)
        scores = iter(self.attribution.score_batch(pairs) if pairs else [])
        out: list[Agreement] = []
        for plan in plans:
            if not plan:
                out.append(Agreement("irrelevant", "no sentence of the text answers the query"))
                continue
            judged = [(span, hyp, next(scores)) for span, hyp in plan]
            out.append(self._decide(judged))
        return out

    def _hypotheses(
        self,
        text: str,
        spans: list[tuple[int, int]],
        context: str | None,
        cache: dict[str, dict[str, str]],
    ) -> list[str]:
        sentences = [text[a:b] for a, b in spans]
        if not self.decontextualize or not sentences:
            return sentences
        if text not in cache:
            from editor.decontext import decontextualize_passage

            full = decontextualize_passage(text, context)
            cache[text] = {d.original: d.decontextualized for d in full}
        return [cache[text].get(s, s) for s in sentences]

    def _decide(self, judged) -> Agreement:
        # the sentence the evidence speaks to most clearly, contradiction first
        span, hyp, s = max(judged, key=lambda j: (j[2].contradicted, j[2].supported))
        if s.contradicted >= self.contradiction_threshold and s.contradicted > s.supported:
            return Agreement(
                "disagrees",
                f"the evidence contradicts {hyp!r} (P(contradicted) {s.contradicted:.2f})",
                span,
                s.supported,
                s.contradicted,
            )
        span, hyp, s = max(judged, key=lambda j: j[2].supported)
        if s.supported >= self.support_threshold:
            return Agreement(
                "agrees",
                f"the evidence supports {hyp!r} (P(supported) {s.supported:.2f})",
                span,
                s.supported,
                s.contradicted,
            )
        return Agreement(
            "irrelevant",
            f"the evidence neither supports nor contradicts {hyp!r} "
            f"(P(supported) {s.supported:.2f}, P(contradicted) {s.contradicted:.2f})",
            span,
            s.supported,
            s.contradicted,
        )


def quote(text: str) -> str:
    """Text made safe to sit inside a triple-quoted block of a prompt (its triple double quotes
    become triple single quotes).

    >>> quote(" Paris. ")
    'Paris.'
    >>> quote('say ' + '"' * 3 + 'hi' + '"' * 3) == "say '''hi'''"
    True
    """
    return text.strip().replace('"""', "'''")


def load_template(name_or_path: str | None, default: str, placeholders: Sequence[str]) -> str:
    """A prompt template file (packaged ``default`` when None), checked for its placeholders."""
    path = Path(name_or_path) if name_or_path else PROMPT_DIR / default
    if not path.is_file():
        raise ValueError(f"prompt file {path} not found; point the setting at an existing file")
    template = path.read_text("utf-8")
    missing = [p for p in placeholders if "{{" + p + "}}" not in template]
    if missing:
        raise ValueError(f"prompt file {path} lacks placeholders {missing}; add them")
    return template


_VERDICT_LINE = re.compile(
    r"(?:therefore|so|verdict)[^\n]*?\b(agrees?|disagrees?|irrelevant)\b", re.IGNORECASE
)


def parse_llm_verdict(completion: str) -> tuple[Verdict, str] | None:
    """The verdict and the reasoning of a chain-of-thought completion; None if it has none.

    >>> parse_llm_verdict("The text says 1887. The evidence says 1889. Therefore: disagrees.")
    ('disagrees', 'The text says 1887. The evidence says 1889.')
    >>> parse_llm_verdict("no idea") is None
    True
    """
    matches = list(_VERDICT_LINE.finditer(completion))
    if not matches:
        return None
    m = matches[-1]
    if m is None:
        return None
    word = m.group(1).lower()
    verdict: Verdict = (
        "disagrees"
        if word.startswith("disagree")
        else "agrees"
        if word.startswith("agree")
        else "irrelevant"
    )
    reason = completion[: m.start()].strip() or completion.strip()
    return verdict, reason


class LLMAgreement(_FromBatch):
    """RARR's prompted agreement check with chain of thought, through any LLM backend.

    The prompt (``prompts/agreement.txt`` by default) shows the query, the text and the evidence
    as quoted data; the completion states both implied answers and ends with
    "Therefore: agrees|disagrees|irrelevant". An unparseable completion counts as
    ``irrelevant`` (no edit), with the raw answer in the reason.
    """

    name = "llm"

    def __init__(self, llm, prompt: str | None = None, max_new_tokens: int = 96) -> None:
        self.llm = llm
        self.template = load_template(prompt, "agreement.txt", ["query", "text", "evidence"])
        self.max_new_tokens = max_new_tokens

    def render(self, text: str, query: str, evidence: Evidence, context: str | None) -> str:
        ctx = f'Conversation: """{quote(context)}"""\n' if context and context.strip() else ""
        return (
            self.template.replace("{{context}}", ctx)
            .replace("{{query}}", quote(query))
            .replace("{{text}}", quote(text))
            .replace("{{evidence}}", quote(evidence_text(evidence)))
        )

    def check_batch(
        self, items: Sequence[tuple[str, str, Evidence]], context: str | None = None
    ) -> list[Agreement]:
        prompts = [self.render(t, q, e, context) for t, q, e in items]
        outs = self.llm.complete(
            prompts, max_new_tokens=self.max_new_tokens, temperature=0.0, stop=["\n\n"]
        )
        result = []
        for (text, query, _), out in zip(items, outs, strict=True):
            completion = out[0] if out else ""
            spans = answering_sentences(text, query, 1)
            parsed = parse_llm_verdict(completion)
            if parsed is None:
                result.append(
                    Agreement(
                        "irrelevant",
                        f"the LLM gave no verdict ({completion.strip()[:120]!r})",
                        spans[0] if spans else None,
                    )
                )
            else:
                result.append(Agreement(parsed[0], parsed[1], spans[0] if spans else None))
        return result


AgreementFactory = Callable[..., AgreementModel]

_AGREEMENT: Registry[AgreementFactory] = Registry("agreement model type", "agreement.type")


def register(name: str, factory: AgreementFactory) -> None:
    """Make ``factory(cfg, attribution=..., llm=...)`` buildable as ``agreement.type=name``."""
    _AGREEMENT.register(name, factory)


def build(
    cfg: AgreementConfig,
    attribution: Callable[[], AttributionModel],
    llm: Callable[[], object],
) -> AgreementModel:
    """The agreement model of ``cfg.type``; ``attribution``/``llm`` are called only if needed."""
    return _AGREEMENT.get(cfg.type)(cfg, attribution=attribution, llm=llm)


register(
    "nli",
    lambda cfg, attribution, llm: NLIAgreement(
        attribution(),
        cfg.contradiction_threshold,
        cfg.support_threshold,
        cfg.sentences_per_query,
    ),
)
register("llm", lambda cfg, attribution, llm: LLMAgreement(llm(), cfg.prompt, cfg.max_new_tokens))
