"""What ``gl.verify`` reports: each written ndarray compared, C host against Python, and the control path.

:func:`compare` measures one output (max abs, peak rel, elements that differ; NaNs must sit in the
same places); :class:`VerifyReport` holds them all with the decisions both sides took, and prints
as a table (``str``) or as HTML in a notebook. Running the two sides is :mod:`graphlab.export.verify`.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from graphlab.export.control import FrameEvent

__all__ = ["OutputDiff", "VerifyReport", "compare"]

#: Control events a passing report lists.
SHOWN_EVENTS = 3


@dataclass(frozen=True)
class OutputDiff:
    """How one written ndarray compares: C host (``got``) against the Python frontend (``want``).

    ``peak_rel`` is the largest absolute difference divided by the reference's largest magnitude, so
    values near zero do not blow it up. (It is not the debugger's ``max_rel``, the largest
    ``|a-b| / max(|a|, |b|)`` over the elements.)
    """

    name: str
    dtype: str
    shape: tuple[int, ...]
    max_abs: float
    peak_rel: float
    mismatched: int
    passed: bool
    spread: float | None = None  # peak_rel of the Python frontend against a second run of itself

    @property
    def identical(self) -> bool:
        """Bit for bit the same (NaNs in the same places count as equal)."""
        return self.mismatched == 0


@dataclass(frozen=True)
class VerifyReport:
    """Per output: max abs and rel difference, pass/fail by ``rtol``; ``passed`` when every one passed."""

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
        """Whether every output is within ``rtol`` and both sides took the same control path."""
        return self.events_match and all(o.passed for o in self.outputs)

    @property
    def identical(self) -> bool:
        """Whether every output is bit-identical."""
        return all(o.identical for o in self.outputs)

    def _rows(self) -> list[list[str]]:
        return [
            [o.name, o.dtype, "x".join(map(str, o.shape)), f"{o.max_abs:.3g}", f"{o.peak_rel:.3g}",
             "-" if o.spread is None else f"{o.spread:.3g}", f"{o.mismatched:,}",
             "identical" if o.identical else "pass" if o.passed else "FAIL"]
            for o in self.outputs
        ]  # fmt: skip

    _HEADER = ("output", "dtype", "shape", "max abs", "max rel", "py vs py", "differ", "result")

    def __str__(self) -> str:
        verdict = "PASSED" if self.passed else "FAILED"
        lines = [
            f"verify {self.path} ({self.arch}, {self.frames} frame(s), rtol={self.rtol:g}, inputs: "
            f"{self.inputs}): {verdict}"
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
        colour = {"identical": "#1a7f37", "pass": "#1a7f37", "FAIL": "#cf222e"}
        head = "".join(f"<th>{h}</th>" for h in self._HEADER)
        body = "".join(
            "<tr>"
            + "".join(f"<td>{html.escape(c)}</td>" for c in r[:-1])
            + f'<td style="color:{colour[r[-1]]};font-weight:bold">{r[-1]}</td></tr>'
            for r in self._rows()
        )
        verdict = "passed" if self.passed else "FAILED"
        notes = "".join(f"<p>{html.escape(n)}</p>" for n in self.control_lines())
        notes += "".join(f"<p><i>note:</i> {html.escape(n)}</p>" for n in self.notes)
        title = html.escape(
            f"{self.path} ({self.arch}, {self.frames} frame(s), rtol={self.rtol:g}, inputs: {self.inputs})"
        )
        return f"<div><b>verify {verdict}</b>: {title}<table><tr>{head}</tr>{body}</table>{notes}</div>"


def _nth(events: tuple[FrameEvent, ...], i: int) -> str:
    return str(events[i]) if i < len(events) else "nothing"


def compare(name: str, got: np.ndarray, want: np.ndarray, rtol: float) -> OutputDiff:
    """Compare one output; NaNs must sit in the same places."""
    shape = tuple(want.shape)
    if got.shape != want.shape or got.dtype != want.dtype:
        return OutputDiff(name, str(want.dtype), shape, float("inf"), float("inf"), want.size, False)
    same = (got == want) | (np.isnan(got) & np.isnan(want)) if want.dtype.kind == "f" else got == want
    mismatched = int(np.count_nonzero(~same))
    if not mismatched:
        return OutputDiff(name, str(want.dtype), shape, 0.0, 0.0, 0, True)
    diff = np.abs(got.astype(np.float64) - want.astype(np.float64))[~same]
    max_abs = float(np.nanmax(diff)) if not np.isnan(diff).all() else float("nan")
    scale = float(np.nanmax(np.abs(want.astype(np.float64)))) if want.size else 0.0
    peak_rel = max_abs / scale if scale > 0 else float("inf")
    passed = bool(np.isfinite(peak_rel) and peak_rel <= rtol)
    return OutputDiff(name, str(want.dtype), shape, max_abs, peak_rel, mismatched, passed)
