"""``purr edit``'s change view: colours in a terminal, git's word-diff markers without one."""

from __future__ import annotations

import io

from rich.console import Console

from editor.result import EditResult
from serve.cli.edit_view import show, word_changes

BEFORE = "It was designed and built by Thomas Edison's company from 1887 to 1889."
AFTER = "It was designed and built by Gustave Eiffel's company from 1887 to 1889."


def _edited() -> EditResult:
    return EditResult(BEFORE, AFTER, None, (), (), (), None, "edited")


def _render(**console: object) -> str:
    out = io.StringIO()
    show(_edited(), Console(file=out, width=200, **console))
    return out.getvalue()


def test_piped_output_reads_as_one_grouped_change():
    text = _render()  # a file is not a terminal
    assert "[-Thomas Edison's-]{+Gustave Eiffel's+} company" in text
    assert "\x1b[" not in text  # no escape codes in a file


def test_no_color_gives_the_markers_in_a_terminal_too():
    text = _render(force_terminal=True, no_color=True)
    assert "[-Thomas Edison's-]{+Gustave Eiffel's+}" in text


def test_a_terminal_keeps_its_colours():
    text = _render(force_terminal=True, color_system="truecolor")
    assert "[-" not in text and "{+" not in text
    # struck through in red, then green: one change, not word by word
    assert "\x1b[9;31mThomas Edison's\x1b[0m\x1b[32mGustave Eiffel's\x1b[0m" in text


def test_changes_apart_stay_apart_and_rebuild_both_texts():
    before = "Built by Thomas Edison in 1887 and opened in 1889."
    after = "Built by Gustave Eiffel in 1889 and opened in 1889."
    pieces = word_changes(before, after)
    changed = [(o, n) for o, n in pieces if o != n]
    assert changed == [("Thomas Edison", "Gustave Eiffel"), ("1887", "1889")]
    assert "".join(o for o, _ in pieces) == before
    assert "".join(n for _, n in pieces) == after


def test_insertions_and_deletions_mark_one_side():
    assert [p for p in word_changes("one two", "one") if p[0] != p[1]] == [(" two", "")]
    assert [p for p in word_changes("one", "one two") if p[0] != p[1]] == [("", " two")]
