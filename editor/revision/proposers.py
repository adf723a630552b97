"""Proposers: what writes candidate revisions of a sentence the judge found wrong. Editors
propose, the judge decides (``Judge.choose``); no proposer decides whether its revision stands.

``propose_batch([(sentence, finding, evidence)], context) -> [[Candidate]]``. Two kinds:

- ``OwnProposal``: the revision the judge's signal wrote with its finding (the reader's answer
  spliced in, the span judge's copied evidence words): ``finding.proposal``;
- ``EditorProposer``: any editor (``answer``, ``substitute``, ``causal``, ``prompted``,
  ``fid``): its revision of the sentence with the evidence.

The revision loop asks them in order, each only for the sentences the judge has applied no
candidate of yet, so the LLM editor (seconds a call on a CPU) runs only where the cheap ones
did not settle it; a proposer that ``settles`` (the judge's own fix, the question's answer)
closes its sentence once it writes a candidate, applied or not.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol

from editor.judge.base import Candidate, Finding
from editor.revision.editors.base import Editor, edits
from editor.types import Evidence

Item = tuple[str, Finding, Sequence[Evidence]]
"""A sentence, the finding on it and the evidence to revise it with (the finding's first)."""


class Proposer(Protocol):
    """Writes candidate revisions of the sentences the judge found wrong. ``settles``: where it
    writes a candidate, no later proposer is asked for that sentence (the judge's own fix and
    the question's answer: the judge chooses among those alone, so a doubted answer is
    suggested rather than another value written in)."""

    name: str
    settles: bool

    def applies(self, item: Item, context: str | None) -> bool:
        """Whether it would be asked to write for ``item`` at all (one that does not apply and
        writes nothing leaves no note in the step's reason)."""
        ...

    def propose_batch(
        self, items: Sequence[Item], context: str | None = None
    ) -> list[list[Candidate]]: ...


class OwnProposal:
    """The revision the judge's signal proposed with its finding (see the module doc)."""

    name = "judge"
    settles = True

    def applies(self, item: Item, context: str | None) -> bool:
        return item[1].proposal is not None

    def propose_batch(
        self, items: Sequence[Item], context: str | None = None
    ) -> list[list[Candidate]]:
        out = []
        for _, f, _ in items:
            p = f.proposal
            out.append([Candidate(p.text, p.reason, f.rule or self.name)] if p else [])
        return out


class EditorProposer:
    """An editor's revision of each sentence as its one candidate (none where it leaves the
    sentence as it was)."""

    def __init__(self, editor: Editor, settles: bool = False) -> None:
        self.editor = editor
        self.name = editor.name
        self.settles = settles

    def load(self) -> None:
        load = getattr(self.editor, "load", None)
        if callable(load):
            load()

    def applies(self, item: Item, context: str | None) -> bool:
        """The editor's own ``applies(text, context)`` where it has one (the answer editor
        applies to a question's answer only), else True."""
        applies = getattr(self.editor, "applies", None)
        return bool(applies(item[0], context)) if callable(applies) else True

    def propose_batch(
        self, items: Sequence[Item], context: str | None = None
    ) -> list[list[Candidate]]:
        revs = self.editor.edit_batch([(s, ev) for s, _, ev in items], context)
        return [
            [Candidate(r.text, r.reason, r.editor or self.name)]
            if r.text.strip() != s.strip()
            else []
            for r, (s, _, _) in zip(revs, items, strict=True)
        ]


class AnswerRewrite:
    """A rewrite that states the evidence's answer, where the finding names a whole sentence
    that gives none (the reader's ``not_supported`` flag, the answer as its fix): ``editor``
    (the causal editor) is asked with the question and that answer as its context and the
    evidence sentence that holds the answer as its evidence, so it keeps the sentence's words
    where it can. None for any other finding."""

    settles = True

    def __init__(self, editor: Editor) -> None:
        self.editor = editor
        self.name = f"{editor.name} (answer rewrite)"

    def applies(self, item: Item, context: str | None) -> bool:
        return _whole_fix(item[1]) is not None

    def propose_batch(
        self, items: Sequence[Item], context: str | None = None
    ) -> list[list[Candidate]]:
        from retrieval.sentences import split

        out: list[list[Candidate]] = [[] for _ in items]
        asked, at = [], []
        for i, (sentence, f, ev) in enumerate(items):
            fix = _whole_fix(f)
            if fix is None or not ev:
                continue
            held = [s for s in split(f.evidence_text or "") if fix in s] or [fix]
            source = replace(ev[0], text=held[0])
            asked.append(((sentence, [source]), f"{context or ''} Answer: {fix}".strip()))
            at.append(i)
        for i, (item, ctx) in zip(at, asked, strict=True):
            (rev,) = self.editor.edit_batch([item], ctx)
            if rev.text.strip() != items[i][0].strip():
                out[i] = [Candidate(rev.text, rev.reason, self.name)]
        return out


def _whole_fix(f: Finding) -> str | None:
    """The fix of a finding that names its whole sentence as giving no answer, else None."""
    if f.rule != "reader" or len(f.flags) != 1 or f.span is None:
        return None
    flag = f.flags[0]
    whole = (flag.start, flag.end) == f.span and not flag.contradicts
    return flag.fix if whole else None


def proposers_of(editors: Editor | Sequence[Editor], own: bool = True) -> list[Proposer]:
    """The judge's own proposal (``own``) and then each editor that can change a text, in
    order."""
    listed = [editors] if not isinstance(editors, Sequence) else list(editors)
    out: list[Proposer] = [OwnProposal()] if own else []
    return out + [EditorProposer(e, getattr(e, "settles", False)) for e in listed if edits(e)]
