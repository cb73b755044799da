"""How the debugger's records read as text and HTML: stops, timing and parity tables, diffs.

The records themselves (:class:`~graphlab.debug.report.Stop`, :class:`~graphlab.debug.report.ParityReport`
...) are in :mod:`graphlab.debug.report`; their ``__str__`` and ``_repr_html_`` call the functions here.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from graphlab.debug.session_errors import StaleViewError

if TYPE_CHECKING:
    from graphlab.debug.report import ParityReport, Stop
    from graphlab.debug.stats import BufferStats, DiffStats
    from graphlab.debug.timing import TimingReport


def fmt_seconds(seconds: float) -> str:
    """A duration with a unit that keeps 3 significant digits (``412 us``, ``3.07 ms``, ``1.25 s``)."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} us"
    if seconds < 1.0:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds:.3g} s"


def fmt_value(value: Any) -> str:
    """A watch or statistic value, short."""
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.6g}"
    return str(value)


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], right: Sequence[bool] | None = None) -> str:
    """A plain text table with a rule under the headers (numbers right-aligned)."""
    cells = [[str(h) for h in headers], *[[str(c) for c in row] for row in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    align = right or [False] * len(headers)

    def line(row: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) if a else c.ljust(w) for c, w, a in zip(row, widths, align)).rstrip()

    return "\n".join([line(cells[0]), line(["-" * w for w in widths]), *[line(r) for r in cells[1:]]])


def html_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """The same table as HTML (escaped)."""
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


_REASONS = {
    "step": "stepped",
    "breakpoint": "breakpoint",
    "condition": "condition",
    "end": "reached the end",
    "nonfinite": "NaN/Inf found",
    "fault": "FAULT",
    "start": "at the start",
}


def stop_lines(stop: Stop) -> list[str]:
    """The lines of a stop's text: headline, cause, watches, statistics."""
    total = f"{stop.total}" if stop.total_known else f"{stop.total}+"
    head = f"{_REASONS[stop.reason]} at step {stop.index}/{total}"
    if stop.reason == "fault" and stop.step_id:
        head += f": {stop.step_id} failed"
    else:
        head += f": next {stop.step_id}" if stop.step_id else ""
        if stop.already:  # what ran last did not cause it: say so instead of naming it
            head += f"{',' if stop.step_id else ':'} already so before this run (no dispatch of it is the cause)"
        elif stop.last_step_id:
            head += f"{',' if stop.step_id else ':'} last ran {stop.last_step_id}"
    lines = [f"{head}; moved {stop.moved:+d} in {fmt_seconds(stop.elapsed)}"]
    for bp in stop.breakpoints:
        lines.append(f"  breakpoint {bp}")
    if stop.fault:
        lines.append(f"  {stop.fault}")
    if stop.nonfinite:
        lines.append(f"  {stop.nonfinite}")
    if stop.note:
        lines.append(f"  note: {stop.note}")
    for text, value in stop.watches.items():
        lines.append(f"  watch {text} = {fmt_value(value)}")
    shown, unread = _readable_stats(stop)
    for name, s in shown.items():
        bad = f", {s.nan} NaN, {s.inf} Inf" if s.nan or s.inf else ""
        lines.append(f"  {name}: min {fmt_value(s.min)} max {fmt_value(s.max)} mean {fmt_value(s.mean)}{bad}")
    if unread:
        lines.append(f"  also wrote {', '.join(unread)} (statistics not read before the session moved on)")
    return lines


def _readable_stats(stop: Stop) -> tuple[dict[str, BufferStats], list[str]]:
    """The stop's statistics that can still be shown, and the names of those that cannot."""
    shown, unread = {}, []
    for name in stop.stats:
        try:
            shown[name] = stop.stats[name]
        except StaleViewError:
            unread.append(name)
    return shown, unread


def stop_text(stop: Stop) -> str:
    """A stop as a few lines of text."""
    return "\n".join(stop_lines(stop))


def stop_html(stop: Stop) -> str:
    """A stop as HTML: the headline, then tables of watches and statistics."""
    lines = stop_lines(stop)
    head = f"<div><b>{html.escape(lines[0])}</b></div>"
    extra = "".join(
        f"<div>{html.escape(str(x))}</div>" for x in (*stop.breakpoints, stop.fault, stop.nonfinite) if x is not None
    )
    if stop.note:
        extra += f"<div><i>{html.escape(stop.note)}</i></div>"
    watches = (
        html_table(["watch", "value"], [(t, fmt_value(v)) for t, v in stop.watches.items()]) if stop.watches else ""
    )
    shown, unread = _readable_stats(stop)
    stats = (
        html_table(
            ["buffer", "min", "max", "mean", "std", "NaN", "Inf"],
            [
                (n, fmt_value(s.min), fmt_value(s.max), fmt_value(s.mean), fmt_value(s.std), s.nan, s.inf)
                for n, s in shown.items()
            ],
        )
        if shown
        else ""
    )
    if unread:
        stats += f"<div>also wrote {html.escape(', '.join(unread))} (statistics not read in time)</div>"
    return head + extra + watches + stats


def timing_text(report: TimingReport) -> str:
    """TVM-debug-executor-like tables: per node (summed over repetitions), then per step."""
    total = report.total_s
    lines = [f"device time of {len(report.steps)} stepped dispatches: {fmt_seconds(total)}"]
    if report.nodes:
        lines.append(
            table(
                ["node", "kernel", "calls", "total", "mean", "min", "max", "share"],
                [
                    (
                        n.node_id,
                        n.kernel,
                        n.calls,
                        fmt_seconds(n.total_s),
                        fmt_seconds(n.mean_s),
                        fmt_seconds(n.min_s),
                        fmt_seconds(n.max_s),
                        f"{100 * n.share:.1f}%",
                    )
                    for n in report.nodes
                ],
                [False, False, True, True, True, True, True, True],
            )
        )
    if report.steps:
        shown = report.steps if len(report.steps) <= 40 else [*report.steps[:20], None, *report.steps[-20:]]
        rows = [
            ("...", "", "", "") if s is None else (s.step_id, s.kernel, fmt_seconds(s.seconds), f"{100 * s.share:.1f}%")
            for s in shown
        ]
        lines += ["", table(["step", "kernel", "time", "share"], rows, [False, False, True, True])]
    if report.segments:
        seg_total = sum(s.seconds for s in report.segments)
        done = sum(s.stop - s.start for s in report.segments)
        lines += ["", f"fast-forward: {done} dispatches in {len(report.segments)} segments, {fmt_seconds(seg_total)}"]
    if report.loops:
        lines += [
            "",
            table(
                ["loop", "runs", "iterations", "mean", "hit max_iter", "stepped"],
                [
                    (
                        r.node_id,
                        r.runs,
                        r.iterations,
                        f"{r.mean_iterations:.4g}",
                        r.limit_reached,
                        fmt_seconds(r.stepped_s),
                    )
                    for r in report.loops
                ],
                [False, True, True, True, True, True],
            ),
        ]
    return "\n".join(lines)


def parity_text(report: ParityReport) -> str:
    """The parity table, with the verdict per buffer and the timing notes."""
    threads = f", {report.threads} threads" if report.threads else ""
    verdict = "bit-identical" if report.identical else "DIFFERENT"
    if report.random:
        verdict += " (a dispatch draws random numbers: see below)"
    lines = [f"stepped run vs compiled graph on {report.arch}{threads}: {verdict}"]
    lines.append(
        table(
            ["buffer", "changed", "of", "max abs", "max rel", "nonfinite mismatch", "first changed"],
            [
                (
                    r.buffer,
                    r.changed,
                    r.count,
                    f"{r.max_abs:.3g}",
                    f"{r.max_rel:.3g}",
                    r.nonfinite_mismatch,
                    "" if r.first_changed is None else str(r.first_changed),
                )
                for r in report.rows
            ],
            [False, True, True, True, True, True, False],
        )
    )
    for note in report.control:
        lines.append(f"control flow: {note}")
    for note in report.random:
        lines.append(f"random: {note}")
    for note in report.timing_dependent:
        lines.append(f"timing-dependent: {note}")
    return "\n".join(lines)


def diff_text(name: str, a: int, b: int, stats: DiffStats) -> str:
    """One line for a diff of a buffer between two positions."""
    return (
        f"{name}: step {a} -> step {b}: {stats.changed} of {stats.count} values changed, max abs "
        f"{stats.max_abs:.6g}, max rel {stats.max_rel:.3g}, {stats.nonfinite_mismatch} NaN/Inf mismatches"
        + (f", first at {stats.first_changed}" if stats.first_changed is not None else "")
    )
