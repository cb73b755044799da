"""The debug and inspect panels' side in Python: one :class:`~graphlab.debug.DebugSession`, seen as JSON.

The widget does not step anything itself: every button is one call on the session's public API
(``step``, ``step_over``, ``continue_``, ``back``, ``goto``, ``restart``, ``find_first_nonfinite``,
``break_at``/``break_when``/``remove_breakpoint``, ``watch``/``unwatch``, ``inspect``, ``diff``,
``timing``), and what the session says comes back as the ``debugger`` trait (``DebugView`` in
``extension/src/wire/protocol.ts``) and the inspect traits. A session started from Python
(``editor.debug(values)``) is the same object the notebook holds: stepping it in a cell shows in
the panel once the cell has run.

Sessions are numbered; the panel's messages name the number they were drawn for, so a click
meant for an ended session is refused instead of acting on the next one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphlab.core.errors import GraphlabError
from graphlab.widget.checking import BoundsCheck
from graphlab.widget.compare_panel import CompareRun, idle_view
from graphlab.widget.inspect_panel import (
    NO_PICTURE,
    PAGE_SIZE,
    Picture,
    component_labels,
    diff_picture,
    diff_stats_view,
    page_of,
    picture_of,
    stats_view,
)

if TYPE_CHECKING:
    from graphlab.debug import Breakpoint, DebugSession, NodeTime, Stop
    from graphlab.debug.report import Fault, NonfiniteHit, Position

CONTROLS = ("step", "step_over", "continue", "back", "restart", "find_nonfinite", "goto")

#: The fields of the ``debugger`` trait while no session runs.
IDLE: dict[str, Any] = {
    "position": None,
    "reason": None,
    "message": "",
    "note": "",
    "breakpoints": [],
    "watches": [],
    "fault": None,
    "faults": [],
    "nonfinite": None,
    "timing": [],
    "buffers": [],
    "decisions": [],
    "compare": idle_view(),
}
#: Most control-flow decisions the panel lists (the latest ones up to the position).
MAX_DECISIONS = 20


class PanelError(GraphlabError, ValueError):
    """A panel asked for something the session cannot do now (no session, an unknown buffer)."""


@dataclass(frozen=True)
class Inspection:
    """Everything the inspect panel shows: the header (``InspectView``) and three byte arrays."""

    view: dict[str, Any]
    picture: bytes
    diff: bytes
    page: bytes


EMPTY_INSPECTION = Inspection({"session": 0, "buffer": None}, b"", b"", b"")


def position_view(position: Position) -> dict[str, Any]:
    """A ``PositionView``."""
    return {
        "index": position.index,
        "total": position.total,
        "step_id": position.step_id,
        "node_id": position.node_id,
        "last_step_id": position.last_step_id,
        "total_known": bool(getattr(position, "total_known", True)),
    }


def fault_view(fault: Fault) -> dict[str, Any]:
    """A ``FaultView``: the dispatch that raised, and the first line of its error."""
    text = str(fault.error).strip()
    return {
        "index": fault.step.index,
        "step_id": fault.step.step_id,
        "node_id": fault.step.node_id,
        "kernel": fault.step.kernel,
        "error": f"{type(fault.error).__name__}: {text.splitlines()[0] if text else ''}",
    }


def _pick(record: Any, *names: str) -> dict[str, Any]:
    """The named attributes of a debugger record, as a view dict."""
    return {name: getattr(record, name) for name in names}


def breakpoint_view(bp: Breakpoint) -> dict[str, Any]:
    """A ``BreakpointView``."""
    return _pick(bp, "id", "kind", "target", "every", "enabled", "hits")


def node_time_view(row: NodeTime) -> dict[str, Any]:
    """A ``NodeTimeView``: a node's stepped dispatches summed (seconds)."""
    return _pick(row, "node_id", "kernel", "calls", "total_s", "mean_s", "share")


def decision_view(decision: Any) -> dict[str, Any]:
    """A ``DecisionView``: where the host read a flag of a conditional or loop, and what it chose."""
    return _pick(decision, "index", "node_id", "scope", "kind", "value", "outcome")


def nonfinite_view(hit: NonfiniteHit) -> dict[str, Any]:
    """A ``NonfiniteView``: the dispatch that first wrote NaN/Inf, the buffer and where."""
    return {
        "step_id": hit.step.step_id if hit.step else None,
        "node_id": hit.step.node_id if hit.step else None,
        "buffer": hit.buffer,
        "nan": hit.nan,
        "inf": hit.inf,
        "first_index": None if hit.first_index is None else list(hit.first_index),
    }


def _watch_value(value: Any) -> float | int | bool | str | None:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value
    f = float(value)
    if f != f:
        return "nan"
    if f in (float("inf"), float("-inf")):
        return "inf" if f > 0 else "-inf"
    return f


class DebugPanel:
    """The session behind the debug and inspect panels, and what they show of it."""

    def __init__(self) -> None:
        self.session: DebugSession | None = None
        self.number = 0
        self.ended = ""
        self.stop: Stop | None = None
        self.previous: int | None = None
        self.buffer: str | None = None
        self.component: int | None = None
        self.page = 0
        #: The fixed leading indexes of a heat map of a 3-D or higher buffer (None: all 0).
        self.slice: list[int] | None = None
        self._seen: tuple[Any, ...] | None = None
        self.comparison = CompareRun()
        self.bounds = BoundsCheck()
        """The last start's bounds check (Debug with "check bounds first"); kept when that start failed."""

    # --- the session ----------------------------------------------------------------------------

    def attach(self, session: DebugSession) -> None:
        """Show ``session`` (a new number; the previous session is let go)."""
        self.session = session
        self.number += 1
        self.ended = ""
        self.stop = None
        self.previous = None
        self.comparison = CompareRun()
        buffers = list(session.buffers)
        if self.buffer not in buffers:
            self.buffer = buffers[0] if buffers else None
            self.component = None
        self.page = 0
        self._seen = self.signature()

    def end(self, why: str) -> None:
        """Let the session go (the graph changed, the user stopped it); the panel says why."""
        if self.session is None:
            return
        self.session.close()  # its warm compare processes
        self.session = None
        self.ended = why
        self.stop = None
        self.previous = None
        self._seen = None

    def require(self, number: int) -> DebugSession:
        """The session a message was made for; PanelError if it is not the current one."""
        if self.session is None:
            why = f": {self.ended}" if self.ended else "; press Debug to start one"
            raise PanelError(f"no debug session is running{why}")
        if number != self.number:
            raise PanelError(
                f"stale: the panel was drawn for debug session {number}, which has ended; session "
                f"{self.number} is running now. Nothing was done"
            )
        return self.session

    # --- controls --------------------------------------------------------------------------------

    def control(self, action: str, target: int | None = None) -> Stop:
        """One debugger control: the session's call of that name (DebugError etc. pass through)."""
        session = self.session
        if session is None:
            raise PanelError("no debug session is running; press Debug to start one")
        before = session.position.index
        if action == "step":
            stop = session.step()
        elif action == "step_over":
            stop = session.step_over()
        elif action == "continue":
            stop = session.continue_()
        elif action == "back":
            stop = session.back()
        elif action == "restart":
            stop = session.restart()
        elif action == "find_nonfinite":
            stop = session.find_first_nonfinite()
        elif action == "goto" and target is not None:
            stop = session.goto(target)
        else:
            raise PanelError(f"unknown debugger control {action!r}; expected one of {', '.join(CONTROLS)}")
        self._moved(before, stop)
        return stop

    def _moved(self, before: int, stop: Stop) -> None:
        self.stop = stop
        if stop.index != before:
            self.previous = before
        if stop.nonfinite is not None and self.session is not None and stop.nonfinite.buffer in self.session.buffers:
            self.buffer = stop.nonfinite.buffer  # show where the NaN/Inf is
            self.component = None
            first = stop.nonfinite.first_index
            self.page = self._page_of_index(first) if first else 0
        self._seen = self.signature()

    def _page_of_index(self, index: tuple[int, ...]) -> int:
        session = self.session
        if session is None or self.buffer is None:
            return 0
        shape = tuple(session.buffers[self.buffer].shape)
        flat = 0
        for i, n in zip(index[: len(shape)], shape):
            flat = flat * n + int(i)
        return flat // PAGE_SIZE

    def compare(
        self, against: str, rtol: float, atol: float, publish: Callable[[], None], timeout: float
    ) -> str | None:
        """Compare the session with ``against`` (``DebugSession.compare``), publishing progress; on a
        divergence, go to the step before it and inspect the buffer that differs. Returns the error text."""
        session = self._current()
        if self.comparison.running:
            raise PanelError("a comparison is running already; wait for it to finish")
        error = self.comparison.run(session, against, rtol, atol, publish, timeout)
        found = self.comparison.found
        if error is not None or found is None or self.session is not session:
            return error
        self.control("goto", found.index)
        if found.buffer is not None and found.buffer in session.buffers:
            self.buffer, self.component = found.buffer, None
            self.page = self._page_of_index(found.first_index) if found.first_index else 0
        return None

    def prepare_compare(self, against: str) -> None:
        """Start the process of a comparison against ``against`` (the user picked it in the form)."""
        self.comparison.prepare(self._current(), against)

    def toggle_breakpoint(self, node: str) -> str:
        """Remove the location breakpoint on ``node`` if there is one, else set one; returns what was done."""
        session = self._current()
        for bp in session.breakpoints:
            if bp.kind != "condition" and bp.target == node:
                session.remove_breakpoint(bp)
                return f"removed the breakpoint on {node}"
        session.break_at(node)
        return f"breakpoint on {node}"

    def add_condition(self, expression: str, every: str) -> str:
        session = self._current()
        bp = session.break_when(expression, every=every)  # type: ignore[arg-type]
        return f"breakpoint #{bp.id} when {bp.target}"

    def remove_breakpoint(self, bp_id: int) -> str:
        session = self._current()
        session.remove_breakpoint(bp_id)
        return f"removed breakpoint #{bp_id}"

    def watch(self, expression: str) -> str:
        return f"watching {self._current().watch(expression).text}"

    def unwatch(self, expression: str) -> str:
        self._current().unwatch(expression)
        return f"stopped watching {expression}"

    def choose(self, buffer: str, component: int | None, page: int, slice_: list[int] | None = None) -> None:
        """Inspect another buffer, component, page or 2-D slice (checked against the session's buffers)."""
        session = self._current()
        if buffer not in session.buffers:
            known = ", ".join(session.buffers) or "none"
            raise PanelError(f"inspect: {buffer!r} is not a buffer of this session; buffers: {known}")
        array = session.buffers[buffer]
        ncomp = len(component_labels(tuple(array.element_shape)))
        if component is not None and not 0 <= component < ncomp:
            what = f"0..{ncomp - 1}" if ncomp else "none (a scalar field): give null"
            raise PanelError(f"inspect {buffer!r}: component {component} does not exist; components: {what}")
        if page < 0:
            raise PanelError(f"inspect {buffer!r}: page {page} is negative")
        if slice_ is not None:
            shape = tuple(array.shape)
            lead = shape[: max(0, len(shape) - 2)]
            if len(slice_) != len(lead) or not all(0 <= i < n for i, n in zip(slice_, lead)):
                what = f"{len(lead)} index(es) within {lead}" if lead else "none (2 dims or fewer): give null"
                raise PanelError(f"inspect {buffer!r}: slice {slice_} does not fit its shape {shape}; slice: {what}")
        self.buffer, self.component, self.page, self.slice = buffer, component, page, slice_

    def _current(self) -> DebugSession:
        if self.session is None:
            raise PanelError("no debug session is running; press Debug to start one")
        return self.session

    # --- changes made from Python ------------------------------------------------------------------

    def signature(self) -> tuple[Any, ...] | None:
        """What the panel shows of the session, to notice changes made to it from Python."""
        s = self.session
        if s is None:
            return None
        breaks = tuple((bp.id, bp.enabled, bp.hits) for bp in s.breakpoints)
        return (s.position.index, breaks, tuple(s.watches), len(s.faults))

    def changed_elsewhere(self, result: Any = None) -> bool:
        """Whether the session moved or changed since the panel last showed it; remembers it now.

        ``result`` is what the notebook cell that made the change ended with: when it is the
        :class:`~graphlab.debug.Stop` of that move (``session.find_first_nonfinite()`` as a cell's
        last line), the panel shows why the session stopped, not only where.
        """
        from graphlab.debug import Stop  # import cost: Taichi

        now = self.signature()
        if now == self._seen:
            return False
        if self._seen is not None and now is not None and now[0] != self._seen[0]:
            before = self._seen[0]
            if isinstance(result, Stop) and result.index == now[0]:
                self._moved(before, result)
            else:
                self.previous, self.stop = before, None
        self._seen = self.signature()
        return True

    # --- what the panels show -------------------------------------------------------------------------

    def view(self) -> dict[str, Any]:
        """The ``debugger`` trait (``DebugView``)."""
        s = self.session
        base: dict[str, Any] = {
            "session": self.number,
            "active": s is not None,
            "ended": self.ended,
            "bounds": self.bounds.view(),
        }
        if s is None:
            return base | IDLE
        stop = self.stop
        watches = stop.watches if stop is not None else {}
        timing = s.timing()
        faults: dict[str, dict[str, Any]] = {}
        for fault in s.faults:
            faults[fault.step.node_id] = fault_view(fault)
        return base | {
            "position": position_view(s.position),
            "reason": stop.reason if stop is not None else None,
            "message": str(stop).splitlines()[0] if stop is not None else str(s.position),
            "note": stop.note if stop is not None else "",
            "breakpoints": [breakpoint_view(bp) for bp in s.breakpoints],
            "watches": [{"text": text, "value": _watch_value(watches.get(text))} for text in s.watches],
            "fault": fault_view(stop.fault) if stop is not None and stop.fault is not None else None,
            "faults": list(faults.values()),
            "nonfinite": nonfinite_view(stop.nonfinite) if stop is not None and stop.nonfinite else None,
            "timing": [node_time_view(n) for n in timing.nodes],
            "buffers": list(s.buffers),
            "decisions": [decision_view(d) for d in self._decisions_so_far(s)],
            "compare": self.comparison.view(),
        }

    @staticmethod
    def _decisions_so_far(session: DebugSession) -> list[Any]:
        here = session.position.index
        passed = [d for d in getattr(session, "decisions", ()) if d.index <= here]
        return passed[-MAX_DECISIONS:]

    def inspection(self) -> Inspection:
        """The inspect traits for the chosen buffer at the current position (device statistics, a
        picture, a page of values, and the diff since the previous position)."""
        s = self.session
        if s is None or self.buffer is None:
            return Inspection({"session": self.number, "buffer": None}, b"", b"", b"")
        view = s.inspect(self.buffer)
        stats = view.stats
        labels = component_labels(view.element_shape)
        lead = max(0, len(view.shape) - 2)
        origin = self.slice if self.slice is not None and len(self.slice) == lead else None  # another buffer's: 0s
        picture = picture_of(view, self.component, origin=origin)
        page_header, page = page_of(view, self.page)
        self.page = page_header["page"]
        diff_header: dict[str, Any] | None = None
        dpic: Picture = NO_PICTURE
        here = s.position.index
        if self.previous is not None and self.previous != here:
            diff = s.diff(self.buffer, self.previous)
            diff_header = diff_stats_view(diff.stats, diff.a, diff.b) | {"picture": None}
            dpic = diff_picture(diff, origin=origin)
            diff_header["picture"] = dpic.view
        last = view.last_writer
        header = {
            "session": self.number,
            "buffer": view.name,
            "position": here,
            "dtype": view.dtype,
            "shape": list(view.shape),
            "element_shape": list(view.element_shape),
            "last_writer": last.step_id if last is not None else None,
            "component": self.component,
            "components": labels,
            "stats": stats_view(stats),
            "component_stats": [stats_view(c, label) for c, label in zip(stats.components, labels)],
            "picture": picture.view,
            "diff": diff_header,
            "page": page_header,
        }
        return Inspection(header, picture.data, dpic.data, page)
