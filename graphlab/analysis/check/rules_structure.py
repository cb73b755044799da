"""Rules on the graph's shape: emptiness, kernels that cannot go into a graph, unused args."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from graphlab.analysis.check.context import CheckContext
from graphlab.core.diagnostics import Diagnostic
from graphlab.model.kernels import KernelInfo
from graphlab.model.nodes import Dispatch, children

if TYPE_CHECKING:
    from graphlab.model.graph import Graph


def validate_not_empty(graph: Graph, ctx: CheckContext) -> Iterator[Diagnostic]:
    """GL013: a graph or a sequence with nothing to dispatch."""
    if not graph.body:
        yield Diagnostic(
            "GL013",
            "error",
            f"graph {graph.name!r} dispatches nothing",
            None,
            None,
            "add a dispatch with g.dispatch(kernel, ...)",
        )
    sequences = graph.sequences
    for node_id, node in ctx.node_ids:
        if isinstance(node, Dispatch):
            continue
        for _, sequence in children(node):
            if sequences[sequence]:
                continue
            yield Diagnostic(
                "GL013",
                "error",
                f"sequence {sequence!r} is empty",
                node_id,
                None,
                "dispatch a kernel into it, or remove it",
            )


def validate_kernels(graph: Graph, ctx: CheckContext) -> Iterator[Diagnostic]:
    """GL005 and GL006: template/struct parameters; kernels returning a value."""
    sound: set[KernelInfo] = set()  # kernels already found dispatchable and returning nothing
    for node_id, node in ctx.node_ids:
        if not isinstance(node, Dispatch) or node.kernel in sound:
            continue
        if node.kernel.dispatchable and not node.kernel.returns:
            sound.add(node.kernel)
            continue
        if not node.kernel.dispatchable:
            yield Diagnostic(
                "GL005",
                "error",
                node.kernel.why_not or "",
                node_id,
                None,
                "rewrite the kernel with ndarray/scalar/matrix parameters",
            )
        if node.kernel.returns:
            yield Diagnostic(
                "GL006",
                "error",
                f"kernel {node.kernel.name!r} returns a value, which a compute graph drops",
                node_id,
                None,
                "write the result into an ndarray parameter instead of returning it",
            )


def validate_args_used(graph: Graph, ctx: CheckContext) -> Iterator[Diagnostic]:
    """GL007: an arg nothing uses (no dispatch binds it, no conditional or loop reads it)."""
    for name in graph.args:
        if not graph.uses_of(name):
            yield Diagnostic(
                "GL007",
                "warning",
                f"arg {name!r} is declared but no dispatch uses it",
                None,
                name,
                f"bind it to a parameter, or remove it with g.remove_arg({name!r})",
            )


RULE_FUNCTIONS = (validate_not_empty, validate_kernels, validate_args_used)
