"""What ``gl.verify`` reports: each written ndarray compared, C host against Python, and the control path.

:func:`compare` measures one output (max abs, peak rel, elements that differ; NaNs must sit in the
same places) and gives it one of three verdicts:

- ``identical``: bit for bit what Python wrote;
- ``within run-to-run noise``: it differs, but no more than Taichi's Python frontend differs from
  itself on a second run of the same inputs (float atomics add in thread or GPU scheduling order),
  the ``py vs py`` column; up to a factor :data:`NOISE_FACTOR`, since two samples of the same noise
  differ by about that much. Differences within ``rtol`` count as noise too (a second run may
  happen to repeat the first);
- ``differs``: anything larger. Only this verdict fails.

:class:`VerifyReport` holds them all with the decisions both sides took, and prints as a table
(``str``) or as HTML in a notebook. Running the two sides is :mod:`graphlab.deploy.verify`.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np

from graphlab.deploy.control import FrameEvent

__all__ = [
    "DIFFERS", "IDENTICAL", "NOISE", "NOISE_FACTOR", "RANDOM", "TOLERATED", "OutputDiff", "Verdict", "VerifyReport",
    "compare",
]  # fmt: skip

#: Control events a passing report lists.
SHOWN_EVENTS = 3
Verdict = Literal["identical", "within run-to-run noise", "depends on ti.random", "within rtol", "differs"]
IDENTICAL: Verdict = "identical"
NOISE: Verdict = "within run-to-run noise"
#: It differs, and a dispatch upstream of it draws random numbers: the two sides drew other numbers.
RANDOM: Verdict = "depends on ti.random"
#: It differs within ``rtol``, and nothing in the graph (no atomic add, race or random draw) explains it.
TOLERATED: Verdict = "within rtol"
DIFFERS: Verdict = "differs"
#: How many times the Python-vs-Python difference a host difference may reach and still count as noise.
#: Two samples of one noise differ: on x64 with 8 threads adding 2^18 floats into 16 cells, one run's
#: max abs difference from another reached 2.3x a third's (mpm88, 4 threads: 1.4x); a wrong result
#: (a kernel scaled by 1.001) was over 1,000x.
NOISE_FACTOR = 4.0


@dataclass(frozen=True)
class OutputDiff:
    """How one written ndarray compares: C host (``got``) against the Python frontend (``want``).

    ``peak_rel`` is the largest absolute difference divided by the reference's largest magnitude, so
    values near zero do not blow it up. (It is not the debugger's ``max_rel``, the largest
    ``|a-b| / max(|a|, |b|)`` over the elements.) ``noise`` is the max abs difference of the Python
    frontend's further runs from its first (the farthest; ``None``: not measured), ``spread`` the same
    as a peak rel.
    """

    name: str
    dtype: str
    shape: tuple[int, ...]
    max_abs: float
    peak_rel: float
    mismatched: int
    passed: bool
    spread: float | None = None  # peak_rel of the Python frontend against a second run of itself
    noise: float | None = None  # max abs of the Python frontend against further runs of itself
    #: What in the graph makes it vary (``Cause.text()``: random draws, float atomics, races); None: not known.
    causes: tuple[str, ...] | None = None
    random: bool = False  # a dispatch upstream of it draws random numbers

    @property
    def identical(self) -> bool:
        """Bit for bit the same (NaNs in the same places count as equal)."""
        return self.mismatched == 0

    @property
    def verdict(self) -> Verdict:
        """``identical``, ``within run-to-run noise``, ``depends on ti.random``, ``within rtol`` (these pass)
        or ``differs`` (fails). With the causes known, noise is said only where the graph has one."""
        if self.identical:
            return IDENTICAL
        if not self.passed:
            return DIFFERS
        if self.random:
            return RANDOM
        return TOLERATED if self.causes == () else NOISE


@dataclass(frozen=True)
class VerifyReport:
    """Per output: max abs and rel difference, Python against itself, a verdict; ``passed`` unless one differs."""

    path: Path
    arch: str
    frames: int
    rtol: float
    inputs: str
    outputs: tuple[OutputDiff, ...]
    notes: tuple[str, ...] = ()
    timings: Mapping[str, float] = field(default_factory=dict)
    host_events: tuple[FrameEvent, ...] = ()
    python_events: tuple[FrameEvent, ...] = ()

    @property
    def events_match(self) -> bool:
        """Whether the C host and Python took the same branches and loop iterations in every frame."""
        return self.host_events == self.python_events

    @property
    def passed(self) -> bool:
        """Whether no output differs beyond run-to-run noise and both sides took the same control path."""
        return self.events_match and all(o.passed for o in self.outputs)

    @property
    def verdict(self) -> Verdict:
        """``identical``, ``within run-to-run noise``, ``depends on ti.random``, ``within rtol`` or ``differs``
        (a different control path differs): the first failing output's, else the gravest passing one."""
        if not self.passed:
            return DIFFERS
        if self.identical:
            return IDENTICAL
        seen = {o.verdict for o in self.outputs}
        return next(v for v in (RANDOM, TOLERATED, NOISE) if v in seen)

    @property
    def identical(self) -> bool:
        """Whether every output is bit-identical."""
        return all(o.identical for o in self.outputs)

    def _rows(self) -> list[list[str]]:
        return [
            [o.name, o.dtype, "x".join(map(str, o.shape)) or "()", f"{o.max_abs:.3g}", f"{o.peak_rel:.3g}",
             "-" if o.noise is None else f"{o.noise:.3g}", f"{o.mismatched:,}", o.verdict]
            for o in self.outputs
        ]  # fmt: skip

    _HEADER = ("output", "dtype", "shape", "max abs", "max rel", "py vs py", "differ", "result")

    def __str__(self) -> str:
        verdict = "PASSED" if self.passed else "FAILED"
        lines = [
            f"verify {self.path} ({self.arch}, {self.frames} frame(s), rtol={self.rtol:g}, inputs: "
            f"{self.inputs}): {verdict} ({self.verdict})"
        ]
        rows = [list(self._HEADER), *self._rows()]
        widths = [max(len(r[i]) for r in rows) for i in range(len(self._HEADER))]
        lines += ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
        lines += self.control_lines()
        lines += [f"note: {n}" for n in self.notes]
        if self.timings:
            lines.append("time: " + ", ".join(f"{k} {v:.2f} s" for k, v in self.timings.items()))
        return "\n".join(lines)

    def control_lines(self) -> list[str]:
        """What the graphs decided, host against Python: a few events, or the first difference."""
        host, python = self.host_events, self.python_events
        if not host and not python:
            return []
        if self.events_match:
            shown = [str(e) for e in host[:SHOWN_EVENTS]]
            more = f" (and {len(host) - SHOWN_EVENTS} more)" if len(host) > SHOWN_EVENTS else ""
            count = f"{len(host)} decision{'s' * (len(host) != 1)}"
            return [f"control: same path in the C host and Python ({count}): {'; '.join(shown)}{more}"]
        i = next((i for i, (h, p) in enumerate(zip(host, python)) if h != p), min(len(host), len(python)))
        return [
            f"control: FAIL: the C host and Python took different paths ({len(host)} vs {len(python)} decisions); "
            f"decision {i + 1}: host {_nth(host, i)}, python {_nth(python, i)}"
        ]

    def _repr_html_(self) -> str:
        colour = {IDENTICAL: "#1a7f37", NOISE: "#1a7f37", RANDOM: "#9a6700", TOLERATED: "#9a6700", DIFFERS: "#cf222e"}
        head = "".join(f"<th>{h}</th>" for h in self._HEADER)
        body = "".join(
            "<tr>"
            + "".join(f"<td>{html.escape(c)}</td>" for c in r[:-1])
            + f'<td style="color:{colour[o.verdict]};font-weight:bold">{o.verdict}</td></tr>'
            for o, r in zip(self.outputs, self._rows())
        )
        verdict = f"passed ({self.verdict})" if self.passed else f"FAILED ({self.verdict})"
        notes = "".join(f"<p>{html.escape(n)}</p>" for n in self.control_lines())
        notes += "".join(f"<p><i>note:</i> {html.escape(n)}</p>" for n in self.notes)
        title = html.escape(
            f"{self.path} ({self.arch}, {self.frames} frame(s), rtol={self.rtol:g}, inputs: {self.inputs})"
        )
        return f"<div><b>verify {verdict}</b>: {title}<table><tr>{head}</tr>{body}</table>{notes}</div>"


def _nth(events: tuple[FrameEvent, ...], i: int) -> str:
    return str(events[i]) if i < len(events) else "nothing"


def compare(
    name: str,
    got: np.ndarray,
    want: np.ndarray,
    rtol: float,
    again: Sequence[np.ndarray] = (),
    *,
    causes: tuple[str, ...] | None = None,
    random: bool = False,
) -> OutputDiff:
    """Compare one output (``got``, the host's) with Python's (``want``); NaNs must sit in the same places.

    ``again`` are Python's further runs on the same inputs: the farthest of them from ``want`` is
    the run-to-run noise that the host's difference is measured against. ``causes`` say what in the
    graph makes the output vary (None: not known); with none, measured noise explains nothing, so
    only ``rtol`` can pass a difference. ``random``: a dispatch upstream draws random numbers, so any
    difference is the draws' (verdict ``depends on ti.random``).
    """
    max_abs, peak_rel, mismatched = _difference(got, want)
    noise = spread = None
    if again:
        noise, spread = max((_difference(other, want)[:2] for other in again), key=lambda d: (np.isnan(d[0]), d[0]))
    shape, dtype = tuple(want.shape), str(want.dtype)
    if not mismatched:
        return OutputDiff(name, dtype, shape, 0.0, 0.0, 0, True, spread, noise, causes, random)
    within_rtol = np.isfinite(peak_rel) and peak_rel <= rtol
    earned = causes is None or bool(causes)  # noise is an excuse only where the graph has a cause for it
    within_noise = earned and noise is not None and np.isfinite(max_abs) and max_abs <= NOISE_FACTOR * noise
    # other draws explain other values, not another shape or a NaN on one side only
    passed = bool(within_rtol or within_noise or (random and np.isfinite(max_abs)))
    return OutputDiff(name, dtype, shape, max_abs, peak_rel, mismatched, passed, spread, noise, causes, random)


def _difference(got: np.ndarray, want: np.ndarray) -> tuple[float, float, int]:
    """Max abs difference, peak rel (over ``want``'s largest magnitude) and elements that differ."""
    if got.shape != want.shape or got.dtype != want.dtype:
        return float("inf"), float("inf"), want.size
    same = (got == want) | (np.isnan(got) & np.isnan(want)) if want.dtype.kind == "f" else got == want
    mismatched = int(np.count_nonzero(~same))
    if not mismatched:
        return 0.0, 0.0, 0
    diff = np.abs(got.astype(np.float64) - want.astype(np.float64))[~same]
    max_abs = float("nan") if np.isnan(diff).any() else float(diff.max())  # a NaN on one side only
    scale = float(np.nanmax(np.abs(want.astype(np.float64)))) if want.size else 0.0
    return max_abs, max_abs / scale if scale > 0 else float("inf"), mismatched
