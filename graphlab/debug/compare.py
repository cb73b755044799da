"""Differential debugging: run one graph on two archs from the same start and stop where they first disagree.

A bug that shows only on another arch (a fast-math transcendental, an out-of-bounds read one
backend clamps, float atomics in another order) is found by running the same graph twice and
comparing, as a debugger would, dispatch by dispatch. Doing that literally would cost a host round
trip per dispatch, so :func:`compare_runs` compares at *boundaries* first: both sides run
compiled segments to the same step index (every plan-segment visit of a graph with control flow, at
most :data:`STRIDE` dispatches apart), then compare what the span wrote. Only the first span that
disagrees is run again, dispatch by dispatch, from the state before it (each session goes back
exactly), to name the dispatch. Each side therefore runs the graph about once, plus one span twice.

The other arch runs in a child process (:mod:`graphlab.debug.compare_child`): Taichi holds one arch
per ``ti.init``. Flag reads are compared at every boundary: when the two sides choose a different
branch or loop iteration count, that is the divergence, reported as such.

An exported module (:func:`compare_module`) runs a whole graph per call in Taichi's C runtime, so it
is compared at the end of the run, then narrowed through a debug variant with one module graph per
dispatch (:mod:`graphlab.deploy.module_runner`, given to the session by
:func:`graphlab.api.graph.module_runner`).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np

from graphlab.core.capture_format import is_capture_folder
from graphlab.debug.compare_children import ChildPool, child_threads
from graphlab.debug.compare_sides import COMMAND_TIMEOUT, Answer, LocalSide, Side
from graphlab.debug.pictures import heatmap_png, lineplot_svg
from graphlab.debug.session_errors import DebugError
from graphlab.kernelfacts.effects import REPRODUCIBLE_HINT, graph_effects
from graphlab.model.nodes import Cond, Loop

if TYPE_CHECKING:
    from graphlab.debug.session import DebugSession
    from graphlab.debug.steps import StepTable
    from graphlab.model.graph import Graph
    from graphlab.model.plan import ControlEvent

__all__ = [
    "ARCHS",
    "Divergence",
    "ModuleLike",
    "Progress",
    "StepsView",
    "compare_module",
    "compare_runs",
    "flag_buffers",
]


#: Archs ``compare`` can run the other side on.
ARCHS = ("x64", "arm64", "cuda", "vulkan", "metal", "opengl")
#: Most dispatches between two boundaries: bounds the dispatch-by-dispatch replay of one span.
STRIDE = 128
#: ``progress(stage, fraction)``: told where a comparison is (fraction 0..1 of the steps known so far).
Progress = Callable[[str, float], None]


@dataclass(frozen=True)
class Divergence:
    """Where two runs of the same graph first disagree.

    ``kind`` is ``"buffer"`` (a dispatch left different values in ``buffer``) or ``"control"`` (the
    two sides took a different branch or loop iteration count at ``control_node``). ``index`` is the
    step (dispatches run before it) and ``step_id``/``node_id`` name it; ``first_index`` is the
    first differing element (array index, components last), ``values`` the two sides' values there,
    ``count`` how many elements differ, ``max_abs``/``max_rel`` the largest errors among them.
    ``archs`` names the two sides (this session's first). :meth:`picture` draws the difference.
    """

    kind: Literal["buffer", "control"]
    archs: tuple[str, str]
    index: int
    step_id: str | None
    node_id: str | None
    buffer: str | None = None
    first_index: tuple[int, ...] | None = None
    values: tuple[Any, Any] | None = None
    count: int = 0
    size: int = 0
    max_abs: float = 0.0
    max_rel: float = 0.0
    rtol: float = 0.0
    atol: float = 0.0
    control_node: str | None = None
    decisions: tuple[str, str] | None = None
    difference: np.ndarray | None = field(default=None, repr=False, compare=False)
    #: Set when the dispatch that differs draws random numbers (``ti.random``): what it draws, where.
    random: str | None = None
    #: Against a capture: the segment visit (execution order) whose recorded end differs, None for
    #: the end of the run; ``suspects``: when no dispatch-level data decides, the steps that may be it.
    segment: int | None = None
    suspects: tuple[str, ...] | None = None

    def picture(self) -> bytes | str | None:
        """The absolute difference of ``buffer``: a PNG heat map (2-D and more, components folded by
        max), an SVG line plot (1-D), or None (a scalar, or a control divergence)."""
        d = self.difference
        if d is None or d.ndim == 0:
            return None
        if d.ndim == 1:
            return lineplot_svg(d, title=f"|{self.archs[0]} - {self.archs[1]}| of {self.buffer}")
        return heatmap_png(d.reshape(d.shape[0], -1), colormap="viridis")

    def to_dict(self) -> dict[str, Any]:
        """The divergence as JSON data (no picture), with its sentence under ``"text"``."""
        keys = ("kind", "archs", "index", "step_id", "node_id", "buffer", "first_index", "values", "count", "size")
        out: dict[str, Any] = {key: getattr(self, key) for key in keys}
        out.update(max_abs=self.max_abs, max_rel=self.max_rel, rtol=self.rtol, atol=self.atol)
        out.update(control_node=self.control_node, decisions=self.decisions, random=self.random, text=str(self))
        out.update(segment=self.segment, suspects=self.suspects)
        for key in ("archs", "first_index", "values", "decisions", "suspects"):
            out[key] = None if out[key] is None else list(out[key])
        return out

    def __str__(self) -> str:
        a, b = self.archs
        if self.step_id:
            where = f"step {self.index} {self.step_id} (node {self.node_id})"
        else:
            where = "the start" if self.index == 0 else f"the end of the run (after {self.index} dispatches)"
        tol = "bit for bit" if self.rtol == 0 and self.atol == 0 else f"rtol {self.rtol:g}, atol {self.atol:g}"
        if self.suspects is not None:  # a capture holds nothing inside a segment: say which steps it may be
            span = "the run" if self.segment is None else f"segment {self.segment}"
            shown = list(self.suspects) if len(self.suspects) <= 6 else [*self.suspects[:3], "...", *self.suspects[-2:]]
            where = f"{span} (steps {', '.join(shown)}; {len(self.suspects)} in all)"
        elif self.segment is not None and self.step_id:
            where += f", in segment {self.segment}"
        if self.kind == "control":
            assert self.decisions is not None
            when = f"after {where}" if self.step_id else "over the whole run"
            text = (
                f"{a} and {b} take different paths at {self.control_node} {when}: "
                f"{a} {self.decisions[0]}, {b} {self.decisions[1]}"
            )
            if self.buffer is not None and self.values is not None:
                text += f"; flag {self.buffer!r} is {self.values[0]} on {a}, {self.values[1]} on {b}"
            return text
        assert self.values is not None
        if self.random is not None:  # other draws, not a value divergence
            return (
                f"{self.random}: {a} and {b} drew other numbers at {where}, so buffer {self.buffer!r} differs "
                f"({self.count} of {self.size} elements) and what follows cannot be compared value for value; "
                f"{REPRODUCIBLE_HINT}"
            )
        if self.suspects is not None:
            where += ", one of which departs: the capture has no state inside it to say which"
        return (
            f"{a} and {b} diverge at {where}: buffer {self.buffer!r} differs first at "
            f"{list(self.first_index or ())} ({a} {self.values[0]!r}, {b} {self.values[1]!r}); "
            f"{self.count} of {self.size} elements differ, max abs error {self.max_abs:.6g}, "
            f"max rel error {self.max_rel:.6g} ({tol})"
        )


# --- comparing arrays -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Diff:
    mask: np.ndarray
    abs_err: np.ndarray
    rel_err: np.ndarray


def differ(a: np.ndarray, b: np.ndarray, rtol: float, atol: float) -> _Diff | None:
    """Where ``a`` and ``b`` differ: bit for bit when both tolerances are 0, else beyond
    ``atol + rtol * |b|`` (NaN equals NaN); None when they agree."""
    if a.shape != b.shape:
        raise DebugError(f"compare: the two sides hold buffers of different shapes {a.shape} and {b.shape}")
    if rtol == 0 and atol == 0:
        # each element's bytes on a last axis (a 0-d array too: numpy cannot re-type its bytes in place)
        bytes_a = np.ascontiguousarray(a).reshape(*a.shape, 1).view(np.uint8)
        bytes_b = np.ascontiguousarray(b).reshape(*b.shape, 1).view(np.uint8)
        mask = (bytes_a != bytes_b).any(axis=-1)
    else:
        mask = ~np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
    mask = np.asarray(mask)
    if not mask.any():
        return None
    x, y = a.astype(np.float64), b.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        abs_err = np.where(mask, np.abs(x - y), 0.0)
        den = np.maximum(np.abs(x), np.abs(y))
        rel_err = np.where(mask & (den > 0), abs_err / np.where(den > 0, den, 1.0), 0.0)
    return _Diff(mask, abs_err, rel_err)


def _scalar(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v


def buffer_divergence(name: str, a: np.ndarray, b: np.ndarray, d: _Diff, element_ndim: int, **where: Any) -> Divergence:
    """A buffer divergence from the two arrays and their difference."""
    first = tuple(int(i) for i in np.argwhere(d.mask)[0]) if d.mask.ndim else ()
    finite = np.nan_to_num(d.abs_err, nan=np.inf)
    picture = finite.max(axis=tuple(range(a.ndim - element_ndim, a.ndim))) if element_ndim else finite
    return Divergence(
        "buffer",
        buffer=name,
        first_index=first,
        values=(_scalar(a[first]), _scalar(b[first])),
        count=int(d.mask.sum()),
        size=int(a.size),
        max_abs=float(np.nanmax(d.abs_err)) if d.abs_err.size else 0.0,
        max_rel=float(np.nanmax(d.rel_err)) if d.rel_err.size else 0.0,
        difference=picture,
        **where,
    )


# --- the search ---------------------------------------------------------------------------------------


@dataclass
class _Search:
    """Both sides, stepped in lock step; ``mine`` is the session whose table names the steps."""

    mine: StepsView
    sides: tuple[Side, Side]
    rtol: float
    atol: float
    stride: int
    element_ndim: Mapping[str, int]
    since: int = 0
    flags: Mapping[str, str] = field(default_factory=dict)
    progress: Progress | None = None
    random: Mapping[str, str] = field(default_factory=dict)  # node id -> what its kernel draws at random

    def report(self, stage: str, at: int) -> None:
        """Tell ``progress`` how far the search is (the share of the steps known so far)."""
        if self.progress is not None:
            self.progress(stage, min(1.0, at / max(self.mine.table.count, 1)))

    @property
    def archs(self) -> tuple[str, str]:
        return self.sides[0].arch, self.sides[1].arch

    def _step_names(self, k: int) -> tuple[str | None, str | None]:
        table = self.mine.table
        if k < table.count:
            return table.steps[k].id, table.steps[k].node_id
        return None, None

    def next_boundary(self, at: int) -> int | None:
        """The next step index to compare at; None at the end of the run."""
        table = self.mine.table
        if not self.mine.known(at):
            return None
        chunk = table.chunk_of(at)
        stop = table.count if chunk is None else chunk.stop
        return min(stop, at + self.stride)

    def goto(self, index: int, names: Sequence[str]) -> list[Answer]:
        """Both sides to step ``index`` at the same time; their states and the named buffers there."""
        pending = [side.goto(index, names, self.since) for side in self.sides]
        return [answer() for answer in pending]

    def step(self, names: Sequence[str]) -> list[Answer]:
        """One dispatch on both sides at the same time; their states and the named buffers after it."""
        pending = [side.step(names, self.since) for side in self.sides]
        return [answer() for answer in pending]

    def first_buffer(self, names: list[str], answers: list[Any], **where: Any) -> Divergence | None:
        (_, mine), (_, theirs) = answers
        for name in names:
            d = differ(mine[name], theirs[name], self.rtol, self.atol)
            if d is not None:
                return buffer_divergence(
                    name, mine[name], theirs[name], d, self.element_ndim.get(name, 0),
                    archs=self.archs, rtol=self.rtol, atol=self.atol, random=self.random.get(where["node_id"]),
                    **where,
                )  # fmt: skip
        return None

    def control(self, answers: list[Any], at: int) -> Divergence | None:
        """A control divergence when the two sides' flag reads (or their ends) differ."""
        (a, arrays_a), (b, arrays_b) = answers
        if a["decisions"] == b["decisions"] and a["index"] == b["index"] and a["done"] == b["done"]:
            self.since += len(a["decisions"])
            return None
        pairs = list(zip(a["decisions"], b["decisions"]))
        first = next((i for i, (x, y) in enumerate(pairs) if x != y), len(pairs))
        da = a["decisions"][first] if first < len(a["decisions"]) else None
        db = b["decisions"][first] if first < len(b["decisions"]) else None
        ref = da or db
        index = max((at if ref is None else int(ref[0])) - 1, 0)  # the dispatch whose result decided
        step_id, node_id = self._step_names(index)
        node = None if ref is None else ref[1]
        flag = self.flags.get(node) if node is not None else None
        values = None
        if flag is not None and flag in arrays_a and flag in arrays_b:
            values = (_scalar(arrays_a[flag].reshape(-1)[0]), _scalar(arrays_b[flag].reshape(-1)[0]))
        return Divergence(
            "control",
            archs=self.archs,
            index=index,
            step_id=step_id,
            node_id=node_id,
            buffer=flag if values is not None else None,
            values=values,
            rtol=self.rtol,
            atol=self.atol,
            control_node=None if ref is None else ref[2],
            decisions=(_decision(da, a), _decision(db, b)),
        )

    def run(self) -> Divergence | None:
        at = 0
        table = self.mine.table
        while True:
            stop = self.next_boundary(at)
            if stop is None:
                end = self.goto(at, list(self.flags.values()))
                return self.control(end, at)
            names = self.mine.ordered(table.written_between(at, stop))
            wanted = list(dict.fromkeys([*names, *self.flags.values()]))
            answers = self.goto(stop, wanted)
            since = self.since
            found = self.control(answers, stop)
            if found is not None:
                return found
            step_id, node_id = self._step_names(stop - 1)
            if self.first_buffer(names, answers, index=stop - 1, step_id=step_id, node_id=node_id) is not None:
                self.since = since
                self.report(f"steps {at}..{stop - 1} differ: replaying them one by one", at)
                return self.narrow(at, stop)
            at = stop
            self.report(f"steps 0..{stop - 1} agree", at)

    def narrow(self, start: int, stop: int) -> Divergence:
        """Replay ``[start, stop)`` dispatch by dispatch on both sides; the first step that differs."""
        table = self.mine.table
        self.goto(start, [])
        last: Divergence | None = None
        for k in range(start, stop):
            names = self.mine.ordered(table.writes[k])
            answers = self.step(names)
            step_id, node_id = self._step_names(k)
            last = self.first_buffer(names, answers, index=k, step_id=step_id, node_id=node_id)
            if last is not None:
                return last
        raise DebugError(  # a span differed as a whole but no dispatch of it did when replayed: not repeatable
            f"compare: steps {start}..{stop - 1} left different buffers on {self.archs[0]} and {self.archs[1]} "
            "when run as compiled segments, but not when replayed dispatch by dispatch; the results depend on "
            "timing (float atomics with several threads?): run the CPU side on one thread"
        )


def _decision(d: list[Any] | None, state: Mapping[str, Any]) -> str:
    if d is None:
        return "reached the end" if state["done"] else f"stopped at step {state['index']}"
    _, _, scope, kind, value, outcome = d
    if kind == "cond":
        return f"read {value} and took {outcome!r} at {scope}"
    return f"read {value} and chose {outcome!r} at {scope}"


def flag_buffers(graph: Graph, canonical: Mapping[str, str]) -> dict[str, str]:
    """Control node id -> the flag buffer (canonical name) it reads: while loops and conditionals."""
    out = {}
    for node_id, node in graph.nodes():
        if isinstance(node, Cond):
            out[node_id] = node.flag
        elif isinstance(node, Loop) and node.while_ is not None:
            out[node_id] = node.while_
    return {k: canonical[v] for k, v in out.items() if v in canonical}


@dataclass(frozen=True)
class StepsView:
    """What the search reads of this side's session: its steps (``table``), ``known(k)`` (whether step
    ``k`` exists, recording the steps up to it), ``ordered(names)`` (buffers in arg order) and the
    flag buffer each control node reads (``flags``)."""

    table: StepTable
    known: Callable[[int], bool]
    ordered: Callable[[set[str] | frozenset[str]], list[str]]
    flags: Mapping[str, str]


def compare_runs(
    mine: DebugSession,
    view: StepsView,
    start: Mapping[str, Any],
    against: str,
    *,
    rtol: float = 0.0,
    atol: float = 0.0,
    stride: int | None = None,
    threads: int | None = None,
    progress: Progress | None = None,
    timeout: float = COMMAND_TIMEOUT,
    children: ChildPool | None = None,
    keep: bool = True,
) -> Divergence | None:
    """Run ``mine`` (a session on copies of the run values ``start``, which the search moves) against
    the same graph on arch ``against`` from the same values; see the module docs.

    ``stride``: most dispatches between boundaries (default :data:`STRIDE`); ``threads``: CPU threads
    of an x64 other side (default: as many as this side uses when it is a CPU); ``progress``: told
    each boundary passed; ``timeout``: seconds the other side may take over one command before it
    is taken as hung and stopped (ChildRunError naming the arch and the command); ``children``: the
    warm processes to take the other side from and, with ``keep``, to leave it in (None: a process
    of its own, closed at the end).
    """
    graph = mine.graph
    element_ndim = {name: len(arg.element_shape) for name, arg in graph.args.items()}
    if threads is None:
        threads = child_threads(mine.arch)
    pool = children if children is not None else ChildPool()
    if progress is not None:
        warm = pool.pid(against) is not None
        progress(f"{'using the warm' if warm else 'starting the'} {against} process", 0.0)
    try:
        with pool.lease(graph, against, start, threads, timeout, keep=keep) as other:
            sides = (LocalSide(mine), other)
            search = _Search(
                view, sides, rtol, atol, max(1, stride or STRIDE), element_ndim, flags=view.flags,
                progress=progress, random=random_dispatches(graph),
            )  # fmt: skip
            return search.run()
    finally:
        if children is None:
            pool.close()


class ModuleLike(Protocol):
    """An exported module run from the start values (``graphlab.deploy.module_runner.ModuleRunner``)."""

    arch: str

    def run_deployed(self) -> tuple[list[ControlEvent], dict[str, np.ndarray]]: ...

    def reset(self) -> None: ...

    def step(self, node_id: str) -> dict[str, np.ndarray]: ...

    def close(self) -> None: ...


def compare_module(
    mine: DebugSession,
    view: StepsView,
    runner: ModuleLike,
    *,
    rtol: float = 0.0,
    atol: float = 0.0,
    progress: Progress | None = None,
) -> Divergence | None:
    """Compare ``mine`` (a session on copies of the start values) with an exported module.

    The deployed module runs the whole graph in one call, so it is compared at the end first (its
    control events, then every written buffer but temps, which it keeps inside). Only when it
    differs are both replayed dispatch by dispatch, the module side through its debug variant (one
    module graph per dispatch node), to name the first dispatch that differs, temps included; if
    none does, the end-of-run difference is returned.
    """
    archs = (mine.arch, runner.arch)
    if progress is not None:
        progress("running the module", 0.0)
    events, theirs = runner.run_deployed()
    mine.continue_()
    table = view.table
    end = table.count
    for a, b in itertools.zip_longest(mine.events, events):
        if a != b:
            first = a if a is not None else b
            assert first is not None
            said = (_event(a), _event(b))
            return Divergence(
                "control", archs, end, None, None, rtol=rtol, atol=atol, control_node=first.node, decisions=said
            )
    # the module keeps its temps inside (slots shared): compare them only when replaying dispatch by dispatch
    names = [n for n in view.ordered(set(table.written)) if mine.graph.args[n].role != "temp"]
    buffers = mine.buffers
    at_end = _first_differing(names, {n: buffers[n].to_numpy() for n in names}, theirs, rtol, atol)
    if at_end is None:
        return None
    if progress is not None:
        progress("the module's results differ: replaying it dispatch by dispatch", 0.5)
    mine.goto(0)
    runner.reset()
    element_ndim = {name: len(arg.element_shape) for name, arg in mine.graph.args.items()}
    for k in range(end):
        mine.step()
        step = table.steps[k]
        after = runner.step(step.node_id)
        written = view.ordered(table.writes[k])
        found = _first_differing(written, {n: buffers[n].to_numpy() for n in written}, after, rtol, atol)
        if found is not None:
            name, d, a, b = found
            return buffer_divergence(
                name, a, b, d, element_ndim.get(name, 0),
                archs=archs, index=k, step_id=step.id, node_id=step.node_id, rtol=rtol, atol=atol,
                random=random_dispatches(mine.graph).get(step.node_id),
            )  # fmt: skip
    name, d, a, b = at_end
    return buffer_divergence(
        name, a, b, d, element_ndim.get(name, 0), archs=archs, index=end, step_id=None, node_id=None, rtol=rtol,
        atol=atol,
    )  # fmt: skip


def random_dispatches(graph: Graph) -> dict[str, str]:
    """Node id -> what its kernel draws at random (``dispatch 'init' draws random numbers (...)``)."""
    return {e.node: e.random_note() for e in graph_effects(graph) if e.effects.random}


def _event(e: ControlEvent | None) -> str:
    if e is None:
        return "decided nothing more"
    return f"took {e.value!r} at {e.node}" if e.kind == "cond" else f"ran {e.node} {e.value} times"


def _first_differing(
    names: Sequence[str], mine: Mapping[str, np.ndarray], theirs: Mapping[str, np.ndarray], rtol: float, atol: float
) -> tuple[str, _Diff, np.ndarray, np.ndarray] | None:
    for name in names:
        d = differ(mine[name], theirs[name], rtol, atol)
        if d is not None:
            return name, d, mine[name], theirs[name]
    return None


def is_module_folder(against: object) -> bool:
    """Whether ``against`` names a folder (an exported module) rather than an arch or a capture."""
    if is_capture_folder(against):
        return False
    if isinstance(against, os.PathLike):
        return True
    return isinstance(against, str) and against not in ARCHS and Path(against).is_dir()


def check_options(
    graph_name: str,
    arg_kinds: Sequence[str],
    against: object,
    rtol: float,
    atol: float,
    timeout: float = COMMAND_TIMEOUT,
) -> None:
    """Refuse a bad ``against``, tolerance or graph before anything runs."""
    if {"texture", "rw_texture"} & set(arg_kinds):
        raise DebugError(
            f"compare(): graph {graph_name!r} binds textures, which compare cannot copy to another "
            "arch yet; compare a graph of ndarrays"
        )
    if (
        not is_module_folder(against)
        and not is_capture_folder(against)
        and (not isinstance(against, str) or against not in ARCHS)
    ):
        raise DebugError(
            f"compare(against={against!r}): give an arch name, one of {', '.join(ARCHS)}, "
            "the folder of a module gl.export wrote, or a capture (gl.open_capture, or its folder)"
        )
    for name, value in (("rtol", rtol), ("atol", atol)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
            raise DebugError(f"compare({name}={value!r}): give a number >= 0 (0 with atol=0: bit for bit)")
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < float("inf"):
        raise DebugError(f"compare(timeout={timeout!r}): give the seconds one command may take, a number > 0")
