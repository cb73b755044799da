"""Rules on the graph's shape: emptiness, kernels that cannot go into a graph, unused args."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from graphlab.check.context import CheckContext
from graphlab.diagnostics import Diagnostic
from graphlab.graph import Dispatch, SequenceUse

if TYPE_CHECKING:
    from graphlab.graph import Graph


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
    for node_id, node in ctx.node_ids:
        if isinstance(node, SequenceUse) and not graph.sequences[node.sequence]:
            yield Diagnostic(
                "GL013",
                "error",
                f"sequence {node.sequence!r} is empty",
                node_id,
                None,
                "dispatch a kernel into it, or remove it",
            )


def validate_kernels(graph: Graph, ctx: CheckContext) -> Iterator[Diagnostic]:
    """GL005 and GL006: template/struct parameters; kernels returning a value."""
    for node_id, node in ctx.node_ids:
        if not isinstance(node, Dispatch):
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
    """GL007: an arg no dispatch binds."""
    bound = {b for _, node in ctx.node_ids if isinstance(node, Dispatch) for _, b in node.bindings}
    for name in graph.args:
        if name not in bound:
            yield Diagnostic(
                "GL007",
                "warning",
                f"arg {name!r} is declared but no dispatch uses it",
                None,
                name,
                f"bind it to a parameter, or remove it with g.remove_arg({name!r})",
            )


RULES = (validate_not_empty, validate_kernels, validate_args_used)
