"""Rules for conditionals and loops: flags that the host can read, written where they are decided."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from graphlab.analysis.check.context import CheckContext
from graphlab.analysis.dataflow import WRITE, TraceEntry
from graphlab.core.diagnostics import Diagnostic
from graphlab.core.limits import check_every_problem
from graphlab.model.nodes import Cond, Loop

if TYPE_CHECKING:
    from graphlab.model.graph import Graph


def _flag_problem(graph: Graph, name: str) -> str | None:
    arg = graph.args.get(name)
    if arg is None:
        return f"flag {name!r} is not declared"
    if arg.kind != "ndarray" or arg.dtype != "i32" or arg.element_shape or arg.ndim > 1:
        return f"flag {name!r} is {arg.describe()}; a flag is a one-element i32 ndarray (ndim 0 or 1)"
    if arg.shape is not None and any(isinstance(d, int) and d != 1 for d in arg.shape):
        return f"flag {name!r} is declared with shape {arg.shape}; a flag holds one element"
    return None


def validate_control(graph: Graph, ctx: CheckContext) -> Iterator[Diagnostic]:
    """GL019 (check_every past max_iter), GL020 (flag or count of the wrong kind), GL021 (cond flag not
    written before the decision), GL023 (a while loop whose body never writes its flag), GL026 (a
    guarded body writing a texture)."""
    trace = ctx.dataflow.trace if any(isinstance(n, (Cond, Loop)) for _, n in ctx.node_ids) else []
    flag_written, loop_writes = _trace_writes(ctx.node_ids, trace)
    for node_id, node in ctx.node_ids:
        if isinstance(node, Cond) or (isinstance(node, Loop) and node.while_ is not None):
            flag = node.flag if isinstance(node, Cond) else node.while_
            assert flag is not None
            problem = _flag_problem(graph, flag)
            if problem:
                yield Diagnostic(
                    "GL020",
                    "error",
                    problem,
                    node_id,
                    flag,
                    f"declare it g.ndarray({flag!r}, ti.i32, ndim=1, shape=(1,))",
                )
                continue
        if isinstance(node, Cond):
            if not flag_written.get(node_id, False):
                yield Diagnostic(
                    "GL021",
                    "error",
                    f"no dispatch writes flag {node.flag!r} before conditional {node_id!r} decides on it",
                    node_id,
                    node.flag,
                    "dispatch a kernel that writes the flag before the conditional",
                )
        elif isinstance(node, Loop) and node.while_ is not None:
            if node.while_ not in loop_writes.get(node_id, ()):
                yield Diagnostic(
                    "GL023",
                    "error",
                    f"nothing in the body of loop {node_id!r} writes its flag "
                    f"{node.while_!r}: it would run max_iter={node.max_iter} times",
                    node_id,
                    node.while_,
                    "dispatch a kernel in the body that clears the flag when done",
                )
            problem = check_every_problem(node.check_every, node.max_iter, guarded=node.guarded)
            if problem is not None:  # g.loop() refuses it; a restored snapshot or an inserted node may not
                fix = problem.split("; ", 1)[1]
                yield Diagnostic("GL019", "error", f"loop {node_id!r}: {problem.split('; ', 1)[0]}", node_id, None, fix)
            yield from _guarded_textures(graph, node_id, node, loop_writes.get(node_id, set()))
        elif isinstance(node, Loop) and node.count is not None:
            arg = graph.args.get(node.count)
            if arg is None or arg.kind != "scalar" or arg.dtype not in ("i32", "i64", "u32"):
                got = "undeclared" if arg is None else arg.describe()
                yield Diagnostic(
                    "GL020",
                    "error",
                    f"loop count {node.count!r} is {got}; a count is an integer scalar",
                    node_id,
                    node.count,
                    f"declare it g.scalar({node.count!r}, ti.i32)",
                )


def _trace_writes(
    node_ids: list[tuple[str, Any]], trace: list[TraceEntry]
) -> tuple[dict[str, bool], dict[str, set[str]]]:
    """In one walk of the trace: whether each conditional's flag is written before it first decides,
    and the args written inside each while loop's body (entries whose id is under the loop's).

    Asking the trace per conditional or loop made validation conditionals x trace long.
    """
    cond_flags = {node_id: node.flag for node_id, node in node_ids if isinstance(node, Cond)}
    loops = {node_id for node_id, node in node_ids if isinstance(node, Loop) and node.while_ is not None}
    flag_written: dict[str, bool] = {}
    loop_writes: dict[str, set[str]] = {}
    written: set[str] = set()
    for entry in trace:
        if entry.node_id in cond_flags and entry.node_id not in flag_written:  # its first decision
            flag_written[entry.node_id] = cond_flags[entry.node_id] in written
        writes = [arg for arg, flags in entry.args.items() if flags & WRITE]
        if not writes:
            continue
        written.update(writes)
        if loops:
            parts = entry.node_id.split("/")
            for depth in range(1, len(parts)):
                enclosing = "/".join(parts[:depth])
                if enclosing in loops:
                    loop_writes.setdefault(enclosing, set()).update(writes)
    return flag_written, loop_writes


def _guarded_textures(graph: Graph, node_id: str, loop: Loop, written: set[str]) -> Iterator[Diagnostic]:
    """GL026: a guarded loop copies what its body writes aside, which a texture's texels cannot be."""
    if not loop.guarded:
        return
    for name in sorted(a for a in written if a in graph.args and graph.args[a].kind in ("texture", "rw_texture")):
        yield Diagnostic(
            "GL026",
            "error",
            f"guarded loop {node_id!r} writes texture {name!r}, which graphlab cannot copy aside to go back to",
            node_id,
            name,
            "drop guarded=True (the loop then may run up to check_every-1 extra iterations)",
        )


RULE_FUNCTIONS = (validate_control,)
