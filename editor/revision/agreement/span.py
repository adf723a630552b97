"""The ``span`` agreement model: the span judge decides (``editor.revision.span_fix``).

The sentence of the text that answers the query, decontextualised ("It" resolved), is judged
against the evidence in windows:
``disagrees`` when a window calls it contradicted and its pointer finds the evidence words for
a flagged span (the reason names the words and the fix the evidence states), ``agrees`` when a
window supports it, else ``irrelevant``. The fix found is remembered for the sentence as the
text writes it, so the span editor makes the same edit there.
"""

from __future__ import annotations

from collections.abc import Sequence

from editor.result import Flag
from editor.revision.agreement.base import Agreement, FromBatch
from editor.revision.span_fix import SpanFixer, asked
from editor.text.document import TextParser
from editor.text.words import answering_sentences
from editor.types import Evidence, evidence_text


class SpanAgreement(FromBatch):
    name = "span"

    def __init__(
        self, fixer: SpanFixer, sentences_per_query: int = 1, parser: TextParser | None = None
    ) -> None:
        self.fixer = fixer
        self.sentences_per_query = sentences_per_query
        self.parser = parser or TextParser()

    def check_batch(
        self, items: Sequence[tuple[str, str, Evidence]], context: str | None = None
    ) -> list[Agreement]:
        out = []
        for text, query, ev in items:
            spans = answering_sentences(text, query, self.sentences_per_query)
            if not spans:
                out.append(Agreement("irrelevant", "no sentence of the text answers the query"))
                continue
            parsed = self.parser.parse(text, context)
            question = asked(context)
            fixes = []
            for span in spans:
                sentence = text[span[0] : span[1]]
                alone = parsed.standalone(sentence)
                ev_text = [evidence_text(ev)]
                fixes.append((span, self.fixer.fix_in_context(sentence, alone, ev_text, question)))
            span, f = max(fixes, key=lambda x: (x[1].verdict == "contradicted", x[1].supported))
            sentence = text[span[0] : span[1]]
            flags = tuple(
                Flag(
                    span[0] + s.start,
                    span[0] + s.end,
                    s.kind,
                    f.window[s.fix[0] : s.fix[1]] if s.fix else None,
                )
                for s in f.spans
                if f.verdict != "supported"
            )
            if f.verdict == "contradicted" and any(s.fix for s in f.spans):
                flagged = ", ".join(
                    repr(sentence[s.start : s.end]) for s in f.spans if s.kind == "contradicted"
                )
                out.append(
                    Agreement(
                        "disagrees",
                        f"the evidence contradicts {flagged}",
                        span,
                        f.supported,
                        f.contradicted,
                        "span",
                        flags,
                    )
                )
            elif f.verdict == "supported":
                out.append(
                    Agreement(
                        "agrees",
                        f"the evidence supports {sentence!r} (P(supported) {f.supported:.2f})",
                        span,
                        f.supported,
                        f.contradicted,
                    )
                )
            else:
                out.append(
                    Agreement(
                        "irrelevant",
                        f"{f.reason}: {sentence!r}",
                        span,
                        f.supported,
                        f.contradicted,
                        flags=flags,
                    )
                )
        return out
