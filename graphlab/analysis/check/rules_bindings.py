"""Rules on bindings: every parameter bound, to an arg that fits it."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from graphlab.analysis.check.context import CheckContext
from graphlab.core.diagnostics import Diagnostic
from graphlab.core.names import a_or_an
from graphlab.core.spec import Arg
from graphlab.model.kernels import KernelInfo, Param
from graphlab.model.nodes import Dispatch

if TYPE_CHECKING:
    from graphlab.model.graph import Graph


def binding_problem(param: Param, arg: Arg) -> tuple[str, str] | None:
    """Why ``arg`` cannot be bound to ``param``: (code, reason), or None when it fits.

    >>> from graphlab.core.spec import Arg
    >>> p = Param("x", "ndarray", None, 1, None)
    >>> binding_problem(p, Arg("x", "ndarray", "f32", 2))
    ('GL003', 'ndim 2 does not fit ndim 1')
    """
    if param.kind != arg.kind:
        return "GL002", f"{a_or_an(arg.kind)} arg cannot be passed to {a_or_an(param.kind)} parameter"
    if param.dtype is not None and arg.dtype is not None and param.dtype != arg.dtype:
        return "GL003", f"dtype {arg.dtype} does not fit dtype {param.dtype}"
    if param.ndim is not None and param.ndim != arg.ndim:
        return "GL003", f"ndim {arg.ndim} does not fit ndim {param.ndim}"
    if param.element_shape is not None and param.element_shape != arg.element_shape:
        return "GL003", (
            f"element shape {list(arg.element_shape)} does not fit element shape {list(param.element_shape)}"
        )
    if param.fmt is not None and arg.fmt is not None and param.fmt != arg.fmt:
        return "GL003", f"format {arg.fmt} does not fit format {param.fmt}"
    return None


def validate_bindings(graph: Graph, ctx: CheckContext) -> Iterator[Diagnostic]:
    """GL001, GL002, GL003: unbound parameters and bindings that do not fit."""
    args = graph.args
    fits: set[tuple[KernelInfo, tuple[tuple[str, str | None], ...]]] = set()  # (kernel, bindings) found sound
    for node_id, node in ctx.node_ids:
        if not isinstance(node, Dispatch) or (node.kernel, node.bindings) in fits:
            continue
        found = list(_binding_diagnostics(node_id, node, args))
        if not found:  # 10**5 dispatches of a few kernels: check each (kernel, bindings) once
            fits.add((node.kernel, node.bindings))
        yield from found


def _binding_diagnostics(node_id: str, node: Dispatch, args: Mapping[str, Arg]) -> Iterator[Diagnostic]:
    """The binding diagnostics of one dispatch (the same for every dispatch of its kernel and bindings)."""
    for param in node.kernel.params:
        if not param.graphable:
            continue
        bound = node.binding(param.name)
        if bound is None:
            yield Diagnostic(
                "GL001",
                "error",
                f"parameter {param.name!r} ({param.describe()}) is unbound",
                node_id,
                param.name,
                f"bind it: g.rebind({node_id!r}, {param.name!r}, arg)",
            )
            continue
        arg = args.get(bound)
        if arg is None:  # the model prevents this; a hand-edited state could still hold it
            yield Diagnostic(
                "GL001",
                "error",
                f"parameter {param.name!r} is bound to undeclared arg {bound!r}",
                node_id,
                param.name,
                f"declare {bound!r} or rebind the parameter",
            )
            continue
        problem = binding_problem(param, arg)
        if problem:
            code, reason = problem
            yield Diagnostic(
                code,
                "error",
                f"{node.kernel.name}.{param.name} expects {param.describe()}; arg {arg.name!r} is "
                f"{arg.describe()}: {reason}",
                node_id,
                param.name,
                f"bind an arg declared as {param.describe()}, or change {arg.name!r}'s spec",
            )


RULE_FUNCTIONS = (validate_bindings,)
