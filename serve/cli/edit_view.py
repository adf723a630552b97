"""``purr edit``'s view for people: the word diff of the changes, the unsure suggestions, the
revision with its citations, the evidence, the judge's steps and findings, and the scores."""

from __future__ import annotations

import sys

from editor.result import EditResult
from editor.verdicts import CONTRADICTED
from serve.chat.citations import cited_text
from serve.diff import diff_markup, word_changes

__all__ = ["diff_markup", "show", "word_changes"]


def plain_output(console) -> bool:
    """Whether ``console`` shows no colour: not a terminal, or ``NO_COLOR`` set."""
    return not console.is_terminal or console.no_color or console.color_system is None


def show(result: EditResult, console=None) -> None:
    from rich.console import Console
    from rich.markup import escape

    console = console or Console()
    colour = {"edited": "green", "unchanged": "cyan", "degraded": "red"}[result.status]
    console.print(f"[bold {colour}]{result.status}[/]")
    for w in result.warnings:
        console.print(f"[yellow]warning:[/] {escape(w)}")
    if result.revised != result.original:
        console.print("\n[bold]changes[/]")
        plain = plain_output(console)
        changes = diff_markup(result.original, result.revised, plain)
        if plain:  # the markers as they are, never read as Rich markup
            console.out(changes, highlight=False)
        else:
            console.print(changes, highlight=False)
    unsure = [f for f in result.findings if f.applicability == "unsafe"]
    shown = result.report.evidence_ids if result.report is not None else ()
    for f in unsure:  # a fix the judge could not prove: suggested, never applied unasked
        cite = (
            f"[{shown.index(f.evidence_id) + 1}]"
            if f.evidence_id in shown
            else f"[{f.evidence_id}]"
        )
        console.print(
            f"[yellow]unsure:[/] {escape(repr(f.text))} \u2192 {escape(repr(f.suggestion))}? "
            f"{escape(cite)}",
            highlight=False,
        )
    if unsure:
        n = len(unsure)
        console.print(
            f"[dim]{n} unsure fix{'es' if n > 1 else ''} can be applied with --apply-unsure[/]"
        )
    console.print("\n[bold]revised[/]")
    console.print(escape(cited_text(result)), highlight=False)
    report = result.report
    if result.citations is not None:  # the text's own sources, under their own ids
        console.print("\n[bold]sources[/]")
        for e in result.evidence:
            title = f"{e.title}: " if e.title else ""
            label = escape(f"[{e.id}]")
            console.print(f"{label} [cyan]{escape(title)}[/]{escape(e.text)}", highlight=False)
    elif report is not None and report.evidence_ids:
        console.print("\n[bold]evidence[/]")
        by_id = {e.id: e for e in result.evidence}
        for i, eid in enumerate(report.evidence_ids, 1):
            e = by_id.get(eid)
            if e is None:
                continue
            title = f"{e.title}: " if e.title else ""
            console.print(f"[{i}] [cyan]{escape(title)}[/]{escape(e.text)}", highlight=False)
            if e.url:
                fetched = f" (fetched {e.fetched_at})" if e.fetched_at else ""
                console.print(f"    [dim]{escape(e.url)}{fetched}[/]", highlight=False)
    for h in result.hops:
        found = f" -> {h.found}" if h.found else " -> nothing found"
        console.print(f"[dim]hop {h.number}: {escape(h.query)}{escape(found)}[/]")
    for st in result.steps:
        if st.accepted:
            by = f"{st.rule} rule, {st.editor} editor, proved by {st.verified_by}"
            console.print(f"[dim]edit ({escape(by)}): {escape(st.reason)}[/]")
        elif st.agrees is False and not st.flags:  # no words named: the step's reason
            console.print(f"[yellow]found, not fixed:[/] {escape(st.reason)}", highlight=False)
    for f in result.findings:  # what the evidence flags and no edit fixed: the words and why
        if not f.fixed and f.applicability != "unsafe":
            kind = CONTRADICTED if f.kind == CONTRADICTED else "not stated by the evidence"
            at = f", characters {f.start}-{f.end}" if f.start is not None else ""
            states = f"; the evidence states {f.fix!r}" if f.fix else ""
            console.print(
                f"[yellow]flagged, not fixed:[/] {escape(repr(f.text))} ({kind}{at}) by "
                f"{escape(f'[{f.evidence_id}]')}{escape(states)}: {escape(f.reason)}",
                highlight=False,
            )
    if result.citations is not None:
        console.print("\n[bold]citations[/]")
        for c in result.citations.changes:
            ids = f"[{', '.join(c.before)}] -> [{', '.join(c.after)}]"
            console.print(
                f"  sentence {c.sentence + 1}: [bold]{c.action}[/] {escape(ids)}: "
                f"{escape(c.reason)}",
                highlight=False,
            )
        if not result.citations.changes:
            console.print("  every citation supports its sentence")
    if report is not None:

        def fmt(x):
            return "n/a" if x is None else f"{x:.2f}"

        console.print(
            f"\n[bold]scores[/] attribution {fmt(report.attribution_before)} -> "
            f"{fmt(report.attribution_after)}, preservation {report.preservation:.2f}, "
            f"F1_AP {fmt(report.f1_ap)}"
        )
    total = sum(result.timings_ms.values())
    stages = ", ".join(f"{k} {v:.0f} ms" for k, v in result.timings_ms.items())
    console.print(f"[dim]{total / 1000:.1f} s ({stages})[/]")
    sys.stdout.flush()
