"""Compile a checked graph into a real ``ti.graph`` CompiledGraph and run it with checked values.

The graph's :class:`~graphlab.model.plan.Plan` says what to compile: one ``ti.graph`` per segment (a graph
without control flow is one segment, so one ti.graph), run in the order the plan's cursor visits
them. Each segment is built as a user writes it by hand: top-level dispatches go to the
GraphBuilder, a sequence becomes one Sequential appended ``repeat`` times (a sequence nested inside
another is unrolled into its parent's Sequential, since Taichi's Sequential only dispatches). So
running costs what the hand-built graph costs; the only extra work per run is the value check.
A ``while_`` loop with ``check_every=k`` whose body is one segment also gets that segment k times
over in one ti.graph, so the k iterations between two flag reads are one launch, not k; a guarded
one also gets the copy graphs that save and restore what its body writes (:mod:`graphlab.run.rollback`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import taichi as ti

from graphlab.analysis.check import check
from graphlab.analysis.check.rules_targets import check_runnable
from graphlab.analysis.dataflow import dataflow_facts
from graphlab.analysis.memory import TempAllocator
from graphlab.bridge import runtime as bridge
from graphlab.core.errors import GraphError, GraphRunError, StaleGraphError
from graphlab.kernelfacts.access import AccessFlag
from graphlab.kernelfacts.shape_facts import graph_shape_relations
from graphlab.model.nodes import Dispatch, Node, SequenceUse
from graphlab.model.plan import ControlEvent, Iterate, Plan, Segment, build_plan, run_plan
from graphlab.model.sizes import dim_names, resolve_sizes
from graphlab.run.boundscheck import Bounds, check_bounds, checked_bounds
from graphlab.run.rollback import GuardedLoops
from graphlab.run.values import ValueChecker

if TYPE_CHECKING:
    from graphlab.model.graph import Graph


class CompiledGraph:
    """A compiled graph bound to the Taichi runtime it was built for.

    ``run`` checks values first (see :mod:`graphlab.run.values`) and refuses to touch Taichi once the
    runtime was reset, which would otherwise segfault the process.
    """

    def __init__(
        self,
        graph: Graph,
        plan: Plan,
        ti_graphs: dict[int, Any],
        token: bridge.RuntimeToken,
        written: set[str],
        batches: dict[tuple[int, int], Any] | None = None,
        guarded: GuardedLoops | None = None,
        saving_batches: dict[tuple[int, int], Any] | None = None,
    ) -> None:
        self.name = graph.name
        self.arch = token.arch
        self.args = {name: arg for name, arg in graph.args.items() if graph.uses_of(name)}
        self.plan = plan
        self._ti_graphs = ti_graphs  # by segment id
        self._batches = batches or {}  # by (segment id, times): the segment that many times in one graph
        self._guarded = guarded  # the save/restore graphs of guarded loops, if any
        self._saving_batches = saving_batches or {}  # a guarded loop's batches, its save in front
        self._last_events: list[ControlEvent] = []
        self._last_segments: list[int] = []
        self._token = token
        self._checker = ValueChecker(graph.name, self.args.values(), written, graph_shape_relations(graph))
        self.step_count = None if graph.has_control_flow else graph.step_count()
        frozen = type(graph)(graph.name)
        frozen.restore(graph.snapshot())  # later edits of the graph do not change this compiled one
        self.graph = frozen
        self._temps = TempAllocator(frozen)
        self._dim_names = set(dim_names(self.args.values()))

    def is_current(self) -> bool:
        """Whether the Taichi runtime this graph was compiled for is still alive."""
        return self._token.is_current()

    def prepare(self, values: Mapping[str, Any] | None = None, /, **kwargs: Any) -> Any:
        """Check values and convert them for Taichi without running (used by the debugger too).

        A name that is a dim of the args' shapes, not an arg (``n=1024``), sizes the temps no value
        sizes (:func:`graphlab.model.sizes.resolve_sizes`, the rule every runner of a graph follows).
        """
        if not self._token.is_current():
            raise StaleGraphError(
                f"graph {self.name!r} was compiled for a Taichi runtime that ti.reset()/ti.init() replaced; "
                "using it would crash the process. Compile it again: g.compile()"
            )
        merged = dict(values or {})
        clash = set(merged) & set(kwargs)
        if clash:
            raise GraphRunError(f"run(): {', '.join(sorted(clash))} given both in the dict and as keywords")
        merged.update(kwargs)
        dims = {k: merged.pop(k) for k in list(merged) if k not in self.args and k in self._dim_names}
        prepared = self._checker.prepare(merged, optional=self._temps.temps)
        sizes = resolve_sizes(
            self.args.values(), prepared.dims, given=merged, dims=dims, dim_fix="pass {dim}=SIZE to run()/debug()",
            error=lambda message, arg: GraphRunError(f"run() of graph {self.name!r}: {message}", arg=arg),
        )  # fmt: skip
        prepared.dims.update(sizes.dims)
        self._temps.fill(prepared.values, prepared.dims)
        allocated = {name: prepared.values[name] for name in self._temps.temps if name not in merged}
        if allocated:  # temps sized from their declared shapes must fit the kernels' loops too
            self._checker.check_relations(prepared, allocated)
        return prepared

    @property
    def last_events(self) -> list[ControlEvent]:
        """Branches taken and loop iterations of the last run (empty without control flow)."""
        return list(self._last_events)

    @property
    def last_segments(self) -> list[str]:
        """The plan segments the last run launched, by name, in launch order (a loop body once per iteration)."""
        names = [segment.name for segment in self.plan.segments]
        return [names[i] for i in self._last_segments]

    def segment_graph(self, segment: int) -> Any:
        """The compiled ``ti.graph`` of a plan segment (what the exporter puts into the AOT module)."""
        return self._ti_graphs[segment]

    def run_segment(self, segment: int, values: Mapping[str, Any]) -> None:
        """Launch one plan segment on prepared values (see :meth:`prepare`); the debugger runs spans so."""
        self._ti_graphs[segment].run(values)

    def execute(self, values: Mapping[str, Any]) -> list[ControlEvent]:
        """Run the plan on prepared values: segments in the cursor's order, flags read on the host."""

        visited: list[int] = []
        guarded = self._guarded.bind(values) if self._guarded else None

        def launch(segment: Segment) -> None:
            if guarded is not None:
                guarded.flush()
            visited.append(segment.id)
            self._ti_graphs[segment.id].run(values)

        def launch_batch(segment: Segment, times: int) -> bool:
            batch, run_with = self._batches.get((segment.id, times)), values
            saving = self._saving_batches.get((segment.id, times))
            if guarded is not None and guarded.pending is not None and saving is not None:
                guarded.take_save()  # this launch copies the buffers aside, then runs the k iterations
                batch, run_with = saving, guarded.values
            elif guarded is not None:
                guarded.flush()
            if batch is None:
                return False
            visited.extend([segment.id] * times)
            batch.run(run_with)
            return True

        def read_flag(name: str) -> int:
            if guarded is not None:
                guarded.flush()
            return bridge.read_flag(values[name])

        def read_count(name: str) -> int:
            return int(values[name])

        self._last_segments = visited
        self._last_events = run_plan(self.plan, launch, read_flag, read_count, launch_batch, guarded)
        return self._last_events

    def run(self, values: Mapping[str, Any] | None = None, /, *, bounds: Bounds = "trust", **kwargs: Any) -> None:
        """Run the graph once: ``c.run(x=F_x, v=F_v)`` or ``c.run({"x": F_x, ...})``.

        ``bounds="check"`` first runs the graph once on copies of the values in a child process under
        Taichi's bounds checks (:mod:`graphlab.run.boundscheck`) and raises
        :class:`~graphlab.core.errors.OutOfBoundsError` for the first index out of bounds, before anything
        runs here. A graph arg named ``bounds`` goes in the ``values`` dict.
        """
        mode = checked_bounds(bounds, f"run() of graph {self.name!r}")
        prepared = self.prepare(values, **kwargs)
        if mode == "check":
            check_bounds(self.graph, prepared.values)
        self.execute(prepared.values)
        if prepared.write_back:
            prepared.finish()

    def __repr__(self) -> str:
        state = "live" if self.is_current() else "stale"
        size = "control flow" if self.step_count is None else f"{self.step_count} dispatches"
        return f"<graphlab.CompiledGraph {self.name!r} on {self.arch}: {size}, {state}>"


def compile_graph(graph: Graph) -> CompiledGraph:
    """Check the graph, then build and compile the ``ti.graph`` (several segments with control flow)."""
    check(graph)
    if not bridge.runtime_ready():  # Taichi's config is None until ti.init (and after ti.reset)
        raise GraphRunError(
            f"graph {graph.name!r} cannot compile: Taichi has no runtime (no ti.init yet, or ti.reset since); "
            "call ti.init(arch=...) first, e.g. ti.init(arch=ti.cpu)"
        )
    check_runnable(graph, bridge.current_arch())
    token = bridge.RuntimeToken()
    symbols = {name: bridge.to_graph_arg(arg) for name, arg in graph.args.items()}

    plan = build_plan(graph)
    ti_graphs = {segment.id: build_ti_graph(graph, segment.nodes, symbols, segment.name) for segment in plan.segments}
    batched = batched_bodies(graph, plan)
    batches = {
        (segment.id, times): build_ti_graph(graph, segment.nodes * times, symbols, f"{segment.name}_x{times}")
        for segment, times in batched
    }
    guarded = GuardedLoops(graph, plan)
    saving = {  # a guarded loop's batch with its save in front: one launch per group of k
        (segment.id, times): build_ti_graph(
            graph, segment.nodes * times, symbols, f"{segment.name}_x{times}_saving", guarded.save_dispatches(loop)
        )
        for loop, segment in _guarded_bodies(plan)
        for body, times in batched
        if body == segment
    }
    facts = dataflow_facts(graph)
    written = {arg for accesses in facts.args.values() for arg, flags in accesses.items() if flags & AccessFlag.WRITE}
    return CompiledGraph(graph, plan, ti_graphs, token, written, batches, guarded, saving)


#: A batched loop body holds at most this many dispatches (compiling it costs time per dispatch).
MAX_BATCH_DISPATCHES = 4096


def batched_bodies(graph: Graph, plan: Plan) -> set[tuple[Segment, int]]:
    """(segment, times) for each ``while_`` loop with ``check_every`` > 1 whose body is one segment:
    its k iterations between two flag reads, and the shorter group before ``max_iter`` when k does
    not divide it."""
    found = set()
    for op in plan.ops():
        if not (isinstance(op, Iterate) and op.while_ and op.check_every > 1 and len(op.body) == 1):
            continue
        (body,) = op.body
        if not isinstance(body, Segment) or _dispatch_count(graph, body.nodes) * op.check_every > MAX_BATCH_DISPATCHES:
            continue
        found.add((body, op.check_every))
        if op.limit % op.check_every > 1:
            found.add((body, op.limit % op.check_every))
    return found


def _guarded_bodies(plan: Plan) -> list[tuple[str, Segment]]:
    """(loop id, body) of each guarded loop whose body is one segment."""
    return [
        (op.node_id, op.body[0])
        for op in plan.ops()
        if isinstance(op, Iterate) and op.guarded and len(op.body) == 1 and isinstance(op.body[0], Segment)
    ]


def _dispatch_count(graph: Graph, nodes: Sequence[tuple[str, Node]]) -> int:
    """Dispatches the nodes launch (sequence uses unrolled: repeat times their body)."""
    total = 0
    for node_id, node in nodes:
        if isinstance(node, SequenceUse):
            body = [(f"{node_id}/{inner.name}", inner) for inner in graph.sequences[node.sequence]]
            total += node.repeat * _dispatch_count(graph, body)
        else:
            total += 1
    return total


def build_ti_graph(
    graph: Graph,
    nodes: Sequence[tuple[str, Node]],
    symbols: dict[str, Any],
    name: str,
    before: Sequence[tuple[Any, tuple[Any, ...]]] = (),
) -> Any:
    """Compile one ``ti.graph`` from ``nodes``: dispatches, and sequences as Sequentials appended ``repeat`` times.

    ``symbols`` maps arg names to their ``ti.graph.Arg`` (see :func:`graphlab.bridge.runtime.to_graph_arg`);
    ``name`` names the graph in the error raised when Taichi refuses it; ``before`` are graphlab's own
    (kernel, graph args) dispatches put first (a guarded loop's save). The debugger builds the spans
    it runs with this too.
    """
    builder = ti.graph.GraphBuilder()
    for kernel, args in before:
        builder.dispatch(kernel, *args)
    sequentials: dict[str, Any] = {}
    for node_id, node in nodes:
        if isinstance(node, Dispatch):
            _dispatch(builder, node_id, node, symbols)
            continue
        assert isinstance(node, SequenceUse)
        seq = sequentials.get(node.sequence)
        if seq is None:
            seq = builder.create_sequential()
            _fill(graph, seq, node.sequence, f"{node_id}/", symbols)
            sequentials[node.sequence] = seq
        for _ in range(node.repeat):
            builder.append(seq)
    try:
        return builder.compile()
    except Exception as exc:
        raise GraphError(f"Taichi could not compile graph {name!r}: {exc}") from exc


def _fill(graph: Graph, seq: Any, sequence: str, prefix: str, symbols: dict[str, Any]) -> None:
    for node in graph.sequences[sequence]:
        node_id = f"{prefix}{node.name}"
        if isinstance(node, Dispatch):
            _dispatch(seq, node_id, node, symbols)
        elif isinstance(node, SequenceUse):
            for _ in range(node.repeat):
                _fill(graph, seq, node.sequence, f"{node_id}/", symbols)


def _dispatch(target: Any, node_id: str, node: Dispatch, symbols: dict[str, Any]) -> None:
    values = [symbols[bound] for _, bound in node.bindings if bound is not None]
    try:
        target.dispatch(node.kernel.fn, *values)
    except Exception as exc:  # Taichi raises several unrelated types at build time
        raise GraphError(f"Taichi refused dispatch {node_id!r} ({node.kernel.name}): {exc}") from exc
