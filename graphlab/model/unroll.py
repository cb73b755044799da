"""How a graph unrolls: its steps in launch order, and its size counted without unrolling it.

A *step* is one dispatch of the unrolled graph (``substep[k]/p2g``). :func:`measure` counts
dispatches, node ids and trace entries arithmetically (repeats multiply along nesting, sum over
siblings), so a graph whose unrolling would never end is measured at once; :func:`unroll` refuses
one past :data:`graphlab.core.limits.MAX_UNROLLED` (GL024). :class:`graphlab.Graph`'s ``size()``,
``steps()`` and ``step_count()`` call these and cache the answers until the next edit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import networkx as nx

from graphlab.core.errors import GraphError
from graphlab.core.limits import MAX_UNROLLED
from graphlab.model.locate import TOP, Sequences, body_of, containment
from graphlab.model.nodes import CONTROL, Cond, Dispatch, Node, SequenceUse, children

if TYPE_CHECKING:
    from graphlab.model.graphdata import GraphData


@dataclass(frozen=True)
class Step:
    """One dispatch of the unrolled graph: ``id`` names the repetition, ``node_id`` the definition."""

    index: int
    id: str
    node_id: str
    dispatch: Dispatch
    repetitions: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class GraphSize:
    """How large a graph gets once unrolled (see :meth:`Graph.size`).

    ``dispatches``: what Taichi builds to compile it, one dispatch per unrolled step. Without control
    flow that is the number of steps; with it, the sum over the compiled segments, where a loop body,
    a branch or a repeated sequence holding control flow is compiled once (see graphlab.model.plan).
    ``node_ids``: node ids (a sequence used in two places has its nodes under both uses).
    ``trace``: entries of the data-flow trace validation walks (repeats and loops taken twice).
    ``largest``: the top-level node that contributes most dispatches (None for an empty graph).
    """

    dispatches: int
    node_ids: int
    trace: int
    largest: str | None = None


def too_many_dispatches(graph: str, count: int) -> str:
    """The message for a graph past :data:`graphlab.core.limits.MAX_UNROLLED` (GL024)."""
    return (
        f"graph {graph!r} unrolls to {count:,} dispatches, over the limit of {MAX_UNROLLED:,}: "
        "ti.graph builds one dispatch per unrolled step, so it would never finish compiling"
    )


def measure(graph: GraphData) -> GraphSize:
    """Count dispatches, node ids and trace entries per sequence definition, innermost first."""
    top, sequences = graph.body, graph.sequences
    tree = containment(top, sequences)
    sizes: dict[str, tuple[int, int, int, bool]] = {}  # name -> (dispatches, ids, trace, has control)
    for name in reversed(list(nx.topological_sort(tree))):  # the containment graph has no cycle (GL015)
        total = [0, 0, 0]
        control = False
        for node in body_of(top, sequences, name or None):
            if isinstance(node, Dispatch):  # the common node, counted without a call
                total[0] += 1
                total[1] += 1
                total[2] += 1
                continue
            part = _node_size(node, sizes)
            for i in range(3):
                total[i] += part[i]
            control = control or isinstance(node, CONTROL) or any(sizes[s][3] for _, s in children(node))
        sizes[name] = (total[0], total[1], total[2], control)
    dispatches, node_ids, trace, _ = sizes[TOP]
    parts = [(_node_size(node, sizes)[0], node.name) for node in top]
    largest = max(parts)[1] if parts else None
    return GraphSize(dispatches, node_ids, trace, largest)


def _node_size(node: Node, sizes: Mapping[str, tuple[int, int, int, bool]]) -> tuple[int, int, int]:
    """(dispatches, node ids, trace entries) of one node, from the sizes of the sequences it holds."""
    if isinstance(node, Dispatch):
        return 1, 1, 1
    if isinstance(node, SequenceUse):
        inner = sizes[node.sequence]
        # compiled: a control-free use is unrolled into its segment; one holding control is compiled once
        dispatches = inner[0] if inner[3] else node.repeat * inner[0]
        return dispatches, 1 + inner[1], min(node.repeat, 2) * inner[2]
    if isinstance(node, Cond):
        held = [sizes[s] for _, s in children(node)]
        return sum(h[0] for h in held), 1 + sum(h[1] for h in held), 1 + sum(h[2] for h in held)
    inner = sizes[node.body]  # a loop: its body is compiled once, walked twice by the trace
    return inner[0], 1 + inner[1], 2 * (inner[2] + 1)


def unroll(graph: GraphData) -> list[Step]:
    """The unrolled dispatches of a graph in launch order.

    Raises GraphError for a graph with control flow (which steps run depends on its flags) and
    for one past MAX_UNROLLED (GL024).
    """
    if graph.has_control_flow:
        raise GraphError(f"graph {graph.name!r} has conditionals or loops: its steps depend on flags read at run time")
    count = graph.size().dispatches
    if count > MAX_UNROLLED:
        raise GraphError(f"GL024: {too_many_dispatches(graph.name, count)}")
    steps: list[Step] = []
    _unroll(graph.body, graph.sequences, None, "", "", (), steps)
    return steps


def _unroll(
    top: tuple[Node, ...],
    sequences: Sequences,
    container: str | None,
    prefix: str,
    def_prefix: str,
    reps: tuple[tuple[str, int], ...],
    out: list[Step],
) -> None:
    for node in body_of(top, sequences, container):
        if isinstance(node, Dispatch):
            out.append(Step(len(out), f"{prefix}{node.name}", f"{def_prefix}{node.name}", node, reps))
        elif isinstance(node, SequenceUse):  # control flow was refused by unroll()
            use_id = f"{def_prefix}{node.name}"
            for k in range(node.repeat):
                _unroll(
                    top, sequences, node.sequence, f"{prefix}{node.name}[{k}]/", f"{use_id}/", (*reps, (use_id, k)), out
                )
