"""Citations and dialogue context shared by the chat wrapper (server and Python helper)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from editor.citations.document import parse_markers
from editor.report.sentence_verdicts import sentence_spans
from editor.result import EditResult
from editor.verdicts import SUPPORTED

CitationStyle = Literal["markers", "sources", "none"]
WORDS_PER_CHUNK = 4
"""A streamed reply comes a few words at a time."""


def message_text(content: Any) -> str:
    """The text of an OpenAI message ``content`` (a string or a list of content parts).

    >>> message_text([{"type": "text", "text": "Hi"}, {"type": "image_url"}, {"text": "there"}])
    'Hi\\nthere'
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, Mapping)]
        return "\n".join(p for p in parts if isinstance(p, str))
    raise ValueError(
        f"message content must be a string or a list of content parts, got {type(content).__name__}"
    )


def dialogue_context(messages: Sequence[Mapping[str, Any]], max_chars: int = 4000) -> str | None:
    """The conversation a reply answers, as the pipeline's context: the last turns that fit.

    >>> dialogue_context([{"role": "system", "content": "Be brief."},
    ...                   {"role": "user", "content": "Who built it?"}])
    'user: Who built it?'
    """
    turns = [
        f"{m.get('role')}: {message_text(m.get('content'))}"
        for m in messages
        if m.get("role") in ("user", "assistant") and message_text(m.get("content")).strip()
    ]
    kept: list[str] = []
    size = 0
    for turn in reversed(turns):
        if size + len(turn) + 1 > max_chars:
            if not kept:  # one long turn: keep its end
                kept.append(turn[-max_chars:])
            break
        kept.append(turn)
        size += len(turn) + 1
    return "\n".join(reversed(kept)) or None


def cited_text(result: EditResult) -> str:
    """The revised text with `` [n]`` after each sentence the report calls supported by its
    n-th evidence (the judge's verdict where it judged the sentence, else the attribution
    model's at ``judge.attributed_min``): a sentence the judge doubts is never cited. A text
    that cites its own sources comes back as it is."""
    report = result.report
    if report is None or result.citations is not None or parse_markers(result.revised):
        return result.revised  # a cited text keeps its own markers, never doubled
    numbers = {eid: i + 1 for i, eid in enumerate(report.evidence_ids)}
    text, pos, out = result.revised, 0, []
    spans = sentence_spans(text, [s.text for s in report.sentences])
    for s, span in zip(report.sentences, spans, strict=True):
        if span is None:
            continue
        out.append(text[pos : span[1]])
        if s.evidence_id in numbers and s.verdict == SUPPORTED:
            out.append(f" [{numbers[s.evidence_id]}]")
        pos = span[1]
    out.append(text[pos:])
    return "".join(out)


def sources_block(result: EditResult) -> str:
    """``[n] Title: snippet (url)`` lines for the evidence the report cites."""
    if result.report is None:
        return ""
    by_id = {e.id: e for e in result.evidence}
    lines = []
    for i, eid in enumerate(result.report.evidence_ids, 1):
        e = by_id.get(eid)
        if e is None:
            continue
        snippet = e.text if len(e.text) <= 200 else e.text[:197].rstrip() + "..."
        title = f"{e.title}: " if e.title else ""
        url = f" ({e.url})" if e.url else ""
        lines.append(f"[{i}] {title}{snippet}{url}")
    return "\n".join(lines)


def render_reply(result: EditResult, style: CitationStyle = "sources") -> str:
    """The reply a chat user sees: the revised text with markers, and (``sources``) the list.

    The markers only appear when a sentence is attributed; ``none`` gives the plain revision."""
    if style == "none":
        return result.revised
    text = cited_text(result)
    if style == "sources" and text != result.revised:
        block = sources_block(result)
        if block:
            text = f"{text}\n\nSources:\n{block}"
    return text


def word_pieces(text: str, n: int = WORDS_PER_CHUNK) -> list[str]:
    """``text`` in pieces of ``n`` words that join back to it: how a reply is streamed.

    >>> word_pieces("one two three four five six", 4)
    ['one two three four ', 'five six']
    """
    words = text.split(" ")
    return [
        " ".join(words[i : i + n]) + (" " if i + n < len(words) else "")
        for i in range(0, len(words), n)
    ]
