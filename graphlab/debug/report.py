"""What the debugger hands back: the records of a stop, a position, a fault, a parity check.

Execution lives in :mod:`graphlab.debug.session`; this module holds the records, and
:mod:`graphlab.debug.report_text` turns them and the timing tables into text and HTML, the way TVM
keeps its debug executor's reports apart from running the graph. Records are plain frozen
dataclasses, so a widget or a test reads fields, never parses text.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from graphlab.core.spec import is_float
from graphlab.debug.report_text import parity_text, stop_html, stop_text
from graphlab.debug.session_errors import StaleViewError
from graphlab.kernelfacts.access import AccessFlag

if TYPE_CHECKING:
    from graphlab.core.spec import Arg
    from graphlab.debug.breakpoints import Breakpoint
    from graphlab.debug.stats import BufferStats


class StopStats(Mapping[str, "BufferStats"]):
    """The statistics of the buffers a control wrote, reduced on the device when first read.

    Reading them costs a device pass per buffer (about a millisecond each on a GPU), so a control
    does not pay for them unless someone looks: a notebook showing the stop, a test, a widget. They
    describe the position the control stopped at; once the session moved on they cannot be made
    any more (:class:`StaleViewError`), and those already read stay as they were.
    """

    def __init__(self, names: Sequence[str], compute: Callable[[str], BufferStats], fresh: Callable[[], bool]) -> None:
        self._names = tuple(names)
        self._compute = compute
        self._fresh = fresh
        self._values: dict[str, BufferStats] = {}

    def __getitem__(self, name: str) -> BufferStats:
        if name not in self._values:
            if name not in self._names:
                raise KeyError(f"{name!r} was not written by this control; written: {', '.join(self._names) or 'none'}")
            if not self._fresh():
                raise StaleViewError(
                    f"the statistics of {name!r} at this stop were not read before the session moved on; "
                    f"read them right after the control, or call dbg.inspect({name!r}, at=<the stop's index>)"
                )
            self._values[name] = self._compute(name)
        return self._values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __repr__(self) -> str:
        return f"StopStats({', '.join(self._names)})"


StopReason = Literal["step", "breakpoint", "condition", "end", "nonfinite", "fault", "start"]
WatchValue = float | int | bool


@dataclass(frozen=True)
class StepRef:
    """One dispatch of the unrolled graph: its index, step id, node id and kernel."""

    index: int
    step_id: str
    node_id: str
    kernel: str

    def __str__(self) -> str:
        return f"{self.step_id} ({self.kernel}, step {self.index})"


@dataclass(frozen=True)
class Position:
    """Where a session stands: ``index`` dispatches have run; ``step_id`` is the next one.

    ``step_id``/``node_id`` are None at the end; ``last_step_id`` is None at the start. In a graph
    with conditionals or loops, ``total`` counts the steps recorded so far and ``total_known`` is
    False until the run has reached its end once (the flags decide the rest).
    """

    index: int
    total: int
    step_id: str | None
    node_id: str | None
    last_step_id: str | None
    total_known: bool = True

    @property
    def at_start(self) -> bool:
        """Nothing has run yet."""
        return self.index == 0

    @property
    def at_end(self) -> bool:
        """Every dispatch has run."""
        return self.index == self.total and self.step_id is None

    def __str__(self) -> str:
        total = f"{self.total}" if self.total_known else f"{self.total}+"
        if self.step_id is None:
            return f"at the end ({self.index} of {total} dispatches done)"
        return f"before {self.step_id} (step {self.index}; {self.index} of {total} dispatches done)"


@dataclass(frozen=True)
class Decision:
    """A control point a session passed: where the host read a flag, and what it chose.

    ``index``: dispatches run before the read; ``node_id``: the conditional or loop (definition
    id); ``scope``: this run of it (``outer[1]/solve``); ``value``: the flag read; ``outcome``:
    ``"then"``, ``"else"`` or ``"skip"`` for a conditional, ``"again"``, ``"done"`` (the flag read
    0) or ``"limit"`` (``max_iter`` reached) after a loop iteration.
    """

    index: int
    node_id: str
    scope: str
    kind: Literal["cond", "loop"]
    value: int
    outcome: str

    def __str__(self) -> str:
        return f"{self.scope} at step {self.index}: flag {self.value} -> {self.outcome}"


@dataclass(frozen=True)
class NonfiniteHit:
    """The first dispatch found writing NaN or Inf, and where in which buffer.

    ``step`` is None when the buffer already held NaN/Inf where the hunt began. ``before``: how
    many non-finite values the buffer held where a hunt past known NaN/Inf began (then the hit is
    where they spread, and ``first_index`` the first new one).
    """

    step: StepRef | None
    buffer: str
    nan: int
    inf: int
    first_index: tuple[int, ...] | None
    before: int = 0

    @property
    def count(self) -> int:
        """NaN plus Inf values in the buffer."""
        return self.nan + self.inf

    def __str__(self) -> str:
        who = f"{self.step.step_id} ({self.step.kernel})" if self.step else "(before the hunt began)"
        if self.before:
            return (
                f"{who} spread NaN/Inf in {self.buffer!r}: {self.count} non-finite values ({self.nan} NaN, "
                f"{self.inf} Inf) where {self.before} were, the first new one at index {self.first_index}"
            )
        return (
            f"{who} left {self.count} non-finite values in {self.buffer!r} "
            f"({self.nan} NaN, {self.inf} Inf), the first at index {self.first_index}"
        )


@dataclass(frozen=True)
class Fault:
    """A dispatch that raised: the session stayed at the step before it, buffers restored.

    ``error`` is kept without its traceback (whose frames would keep the session alive past a
    ``ti.init``); ``traceback`` holds it as text.
    """

    step: StepRef
    error: BaseException
    traceback: str = ""

    def __str__(self) -> str:
        first = str(self.error).strip().splitlines()[0] if str(self.error).strip() else ""
        return f"{self.step.step_id} ({self.step.kernel}) raised {type(self.error).__name__}: {first}"


@dataclass(frozen=True)
class Stop:
    """Where and why a control (``step``, ``continue_``, ``goto`` ...) stopped.

    ``index``/``step_id``/``node_id`` give the position: ``index`` dispatches have run and
    ``step_id`` is the next to run (None at the end); ``last_step_id`` ran last. A breakpoint on a
    node stops before it runs; a condition, a NaN/Inf hunt or a step stop after the dispatch that
    made it so (``last_step_id``); a fault stops before the dispatch that failed (``step_id``),
    with its buffers restored. ``total_known`` is False in a graph with control flow whose run has
    not reached its end yet (``total`` counts the steps recorded so far). ``moved`` is ``index``
    minus the index before the control; ``elapsed`` the wall time of the whole control in seconds.
    ``stats`` holds the statistics of the buffers written (or restored) since the previous position,
    reduced on the device when first read (:class:`StopStats`); ``watches`` the watch list's values
    here. ``already``: a condition or NaN/Inf that held where the control began, so no dispatch of
    it caused the stop (``cause_step_id`` is then None, whatever ran last).
    """

    reason: StopReason
    index: int
    total: int
    step_id: str | None
    node_id: str | None
    last_step_id: str | None
    moved: int
    elapsed: float
    watches: Mapping[str, WatchValue] = field(default_factory=dict)
    stats: Mapping[str, BufferStats] = field(default_factory=dict, repr=False, compare=False)
    breakpoints: tuple[Breakpoint, ...] = ()
    fault: Fault | None = None
    nonfinite: NonfiniteHit | None = None
    note: str = ""
    total_known: bool = True
    already: bool = False

    @property
    def cause_step_id(self) -> str | None:
        """The dispatch that made a condition, NaN/Inf or step stop so; None when it already held."""
        if self.already or self.reason not in ("condition", "nonfinite", "step"):
            return None
        if self.nonfinite is not None and self.nonfinite.step is not None:
            return self.nonfinite.step.step_id
        return self.last_step_id

    @property
    def breakpoint(self) -> Breakpoint | None:
        """The (first) breakpoint that fired, if any."""
        return self.breakpoints[0] if self.breakpoints else None

    @property
    def error(self) -> BaseException | None:
        """The exception of a fault, if any."""
        return self.fault.error if self.fault else None

    def __str__(self) -> str:
        return stop_text(self)

    def _repr_html_(self) -> str:
        return stop_html(self)


@dataclass(frozen=True)
class Halt:
    """Why a run stopped before its target (the session turns it into a :class:`Stop`)."""

    reason: StopReason
    breakpoints: tuple[Breakpoint, ...] = ()
    fault: Fault | None = None
    nonfinite: NonfiniteHit | None = None
    note: str = ""
    already: bool = False  # it held where the run began: no dispatch of the run caused it


@dataclass(frozen=True)
class SnapshotUsage:
    """Device memory held for going back.

    ``held_bytes``: copies taken before stepped dispatches, at ``positions`` distinct steps;
    ``mark_bytes``: the two reused slots for the starts of compiled runs; both within
    ``budget_bytes``. ``initial_bytes``: the initial state, kept apart. ``skipped``: copies not
    taken because one step's buffers exceed the budget.
    """

    held_bytes: int
    mark_bytes: int
    budget_bytes: int
    initial_bytes: int
    positions: int
    skipped: int


@dataclass(frozen=True)
class ParityRow:
    """How one buffer differs between the stepped and the compiled run."""

    buffer: str
    count: int
    changed: int
    max_abs: float
    max_rel: float
    nonfinite_mismatch: int
    first_changed: tuple[int, ...] | None

    @property
    def identical(self) -> bool:
        """Bit for bit the same (two NaN at one place count as equal)."""
        return self.changed == 0


@dataclass(frozen=True)
class ParityReport:
    """The stepped run (one kernel call per dispatch) against the compiled graph, per buffer.

    ``timing_dependent`` names the dispatches whose float read-modify-writes (``+=``, atomics) can
    make the last bits depend on thread timing on this arch; differences are reported either way.
    ``control`` says where the two runs of a graph with conditionals or loops took different paths
    (a branch, a loop's iteration count); empty when they agree. ``random`` names the dispatches that
    draw random numbers (``ti.random``) when buffers differ: the two runs drew other numbers.
    """

    arch: str
    threads: int | None
    rows: tuple[ParityRow, ...]
    timing_dependent: tuple[str, ...]
    control: tuple[str, ...] = ()
    random: tuple[str, ...] = ()

    @property
    def identical(self) -> bool:
        """Every buffer bit-identical, and the same path through conditionals and loops."""
        return all(row.identical for row in self.rows) and not self.control

    def row(self, buffer: str) -> ParityRow:
        """The row of one buffer."""
        for row in self.rows:
            if row.buffer == buffer:
                return row
        raise KeyError(f"parity report has no buffer {buffer!r}; buffers: {', '.join(r.buffer for r in self.rows)}")

    def to_dict(self) -> dict[str, Any]:
        """Plain data (JSON-ready)."""
        return {
            "arch": self.arch,
            "threads": self.threads,
            "identical": self.identical,
            "timing_dependent": list(self.timing_dependent),
            "control": list(self.control),
            "rows": [
                {**r.__dict__, "first_changed": list(r.first_changed) if r.first_changed else None} for r in self.rows
            ],
        }

    def __str__(self) -> str:
        return parity_text(self)

    def _repr_html_(self) -> str:
        return "<pre>" + html.escape(parity_text(self)) + "</pre>"


def timing_dependent(
    accesses: Mapping[str, Mapping[str, int]], args: Mapping[str, Arg], arch: str, threads: int | None
) -> tuple[str, ...]:
    """Notes on dispatches whose results can depend on thread timing: a float buffer both read and
    written (``+=``, atomics) on a parallel arch (anything but one CPU thread).

    ``accesses`` is :attr:`graphlab.analysis.dataflow.DataflowFacts.args` (node id -> arg -> READ|WRITE flags).
    """
    if threads == 1:
        return ()
    who = f"{threads} CPU threads" if threads else f"the {arch} device's parallel threads"
    notes = []
    for node_id, flags in accesses.items():
        both = AccessFlag.READ_WRITE
        rmw = [a for a, f in flags.items() if f & both == both and is_float(args[a].dtype)]
        if rmw:
            notes.append(
                f"{node_id} read-modify-writes float buffer(s) {', '.join(rmw)} (+= or atomics): with {who} "
                "the order of the additions, and so the last bits, can change from run to run"
            )
    return tuple(notes)
