"""The debug panel's "Compare with...": ``DebugSession.compare`` with its progress shown, then the
session moved to the step before the divergence.

A comparison runs seconds (the other arch starts a Taichi runtime in a child process), in the
kernel, like the export panel's export: its ``progress`` callback publishes the ``compare`` field of
the ``debugger`` trait (``CompareView`` in :mod:`graphlab.widget.protocol`) as the boundaries go
by. The panel ends with the divergence (drawn on the graph and in the inspect panel), with "they
agree", or with the error that stopped it; a failed comparison leaves the session where it was.
Picking an arch in the form starts its process at once (``DebugSession.prepare_compare``), so the
click on Compare pays only the search; the session keeps that process for its later comparisons.
"""

from __future__ import annotations

import base64
import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from graphlab.widget.jobs import finish_job, throttled
from graphlab.widget.wording import ui_text

if TYPE_CHECKING:
    from graphlab.debug import DebugSession, Divergence


#: Archs offered in the panel's list (the field also takes an exported module's folder or a capture folder).
ARCHS: tuple[str, ...] = ("vulkan", "x64", "cuda", "metal", "opengl", "arm64")
#: Largest difference picture sent to the front-end (bytes before base64); a larger one is left out.
MAX_PICTURE = 1 << 21


def _number(value: Any) -> float | int | bool | str | None:
    """A value as JSON carries it (NaN and infinities as strings, see ``Num``)."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    f = float(value)
    if math.isnan(f):
        return "nan"
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    return f


def picture_url(picture: bytes | str | None) -> str | None:
    """A ``data:`` URL of a divergence picture (PNG bytes or SVG text), or None (none, or too big)."""
    if picture is None:
        return None
    data, mime = (picture, "image/png") if isinstance(picture, bytes) else (picture.encode(), "image/svg+xml")
    if len(data) > MAX_PICTURE:
        return None
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def divergence_view(found: Divergence) -> dict[str, Any]:
    """A ``DivergenceView``: ``Divergence.to_dict()`` with JSON-safe numbers and the picture as a URL."""
    out = found.to_dict()
    out.pop("rtol", None)
    out.pop("atol", None)
    out.pop("segment", None)  # against a capture: the sentence (``text``) names the segment and suspects
    out.pop("suspects", None)
    out["archs"] = [str(a) for a in out["archs"]]
    if out["values"] is not None:
        out["values"] = [_number(v) for v in out["values"]]
    out["max_abs"] = _number(out["max_abs"])
    out["max_rel"] = _number(out["max_rel"])
    out["picture"] = picture_url(found.picture())
    return out


def idle_view() -> dict[str, Any]:
    """The ``CompareView`` of a session that has not compared yet."""
    return {
        "run": 0,
        "state": "idle",
        "archs": list(ARCHS),
        "against": None,
        "rtol": 0.0,
        "atol": 0.0,
        "stage": "",
        "fraction": 0.0,
        "divergence": None,
        "error": None,
        "seconds": 0.0,
    }


class CompareRun:
    """The comparisons of one debug session and the ``CompareView`` of the last one."""

    def __init__(self) -> None:
        self._view = idle_view()
        self.found: Divergence | None = None

    def view(self) -> dict[str, Any]:
        return dict(self._view)

    @property
    def running(self) -> bool:
        return bool(self._view["state"] == "running")

    def run(
        self,
        session: DebugSession,
        against: str,
        rtol: float,
        atol: float,
        publish: Callable[[], None],
        timeout: float,
    ) -> str | None:
        """Compare, publishing progress; returns the error text, or None (``found``: the divergence).
        ``timeout``: seconds the other arch's process may take over one command."""
        view = self._view
        started = time.perf_counter()
        self.found = None
        view.update(run=view["run"] + 1, state="running", against=against, rtol=float(rtol), atol=float(atol))
        view.update(stage="start", fraction=0.0, divergence=None, error=None, seconds=0.0)
        publish()

        def report(stage: str, fraction: float) -> None:
            view.update(stage=stage, fraction=round(float(fraction), 4), seconds=time.perf_counter() - started)
            publish()

        def work() -> None:
            progress = throttled(report)
            self.found = session.compare(against, rtol=rtol, atol=atol, progress=progress, timeout=timeout)
            view.update(state="done", stage="done", fraction=1.0)
            view.update(divergence=None if self.found is None else divergence_view(self.found))

        interrupted = "the comparison was interrupted; the session did not move"
        error = finish_job(view, work, what="compare", interrupted=interrupted, started=started)
        if error is None:
            return None
        view["error"] = ui_text(str(view["error"]))  # the panel's terms, the Python call as a hint
        return ui_text(error)

    def prepare(self, session: DebugSession, against: str) -> None:
        """Start the process of a later comparison against ``against`` now (not waited for: its
        errors come with that comparison); nothing to do for a module folder or while one runs."""
        if not self.running:
            session.prepare_compare(against)
