"""``nli+span``: the question-guided NLI gate, then the span judge where NLI finds no
disagreement. The evidence disagrees when either does; the first that does gives the reason
(and the rule the step records)."""

from __future__ import annotations

from collections.abc import Sequence

from editor.revision.agreement.base import Agreement, AgreementModel, FromBatch
from editor.types import Evidence


class EitherAgreement(FromBatch):
    name = "nli+span"

    def __init__(self, first: AgreementModel, second: AgreementModel) -> None:
        self.first = first
        self.second = second

    @property
    def parser(self):
        return getattr(self.first, "parser", None)

    @parser.setter
    def parser(self, value) -> None:  # the pipeline's parser reaches both (text.document.share)
        for stage in (self.first, self.second):
            if hasattr(stage, "parser"):
                stage.parser = value

    def check_batch(
        self, items: Sequence[tuple[str, str, Evidence]], context: str | None = None
    ) -> list[Agreement]:
        out = list(self.first.check_batch(items, context))
        rest = [i for i, a in enumerate(out) if not a.disagrees]
        if rest:
            again = self.second.check_batch([items[i] for i in rest], context)
            for i, a in zip(rest, again, strict=True):
                if a.disagrees:
                    out[i] = a
        return out
