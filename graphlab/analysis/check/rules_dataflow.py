"""Rules on who reads and writes what: roles, uninitialised temps, dead writes, aliasing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from graphlab.analysis.check.context import CheckContext
from graphlab.analysis.dataflow import READ, WRITE
from graphlab.core.diagnostics import Diagnostic
from graphlab.kernelfacts.access import AccessFlag, FirstAccess
from graphlab.kernelfacts.access_order import reads_own_write
from graphlab.model.nodes import Dispatch

if TYPE_CHECKING:
    from graphlab.model.graph import Graph


def validate_roles(graph: Graph, ctx: CheckContext) -> Iterator[Diagnostic]:
    """GL008 (input written) and GL011 (output never written)."""
    facts = ctx.dataflow
    for name, arg in graph.args.items():
        if not arg.is_buffer:
            continue
        writers = facts.writers(name)
        if arg.role == "input" and writers:
            for node_id in writers:
                yield Diagnostic(
                    "GL008",
                    "error",
                    f"input {name!r} is written by {node_id!r}",
                    node_id,
                    name,
                    f"declare {name!r} with role='state' if the graph updates it, or write to another arg",
                )
        if arg.role == "output" and not writers and graph.uses_of(name):
            yield Diagnostic(
                "GL011",
                "error",
                f"output {name!r} is never written",
                None,
                name,
                "bind it to a parameter a kernel writes, or declare it role='input'",
            )


def validate_temps(graph: Graph, ctx: CheckContext) -> Iterator[Diagnostic]:
    """GL009 (temp read before any write) and GL010 (a temp write that no later dispatch reads).

    A write inside a repeated sequence counts as read when any repetition's write is read later:
    the last repetition's value being unused is what a loop does, not a mistake.

    Order inside a kernel counts (:class:`graphlab.kernelfacts.access.FirstAccess`): a kernel that writes a temp
    before it reads it neither reads it uninitialised nor reads an earlier dispatch's write, and its
    own write is used; so is the write of one that reads the temp in a later top-level loop than one
    that writes it (an accumulator summed, then used). GL009 is an error only where the first access
    is certainly a read; where the analysis cannot tell, it is a warning that says "may".
    """
    temps = {n for n, a in graph.args.items() if a.role == "temp" and a.is_buffer}
    if not temps:
        return
    nodes = dict(ctx.node_ids)
    written: set[str] = set()
    last_writer: dict[str, str] = {}
    write_read: dict[tuple[str, str], bool] = {}  # (temp, writer node id) -> read by someone later
    reported: set[tuple[str, str]] = set()
    for entry in ctx.dataflow.trace:
        for arg, flags in entry.args.items():
            if arg not in temps:
                continue
            first = entry.first_access(arg)
            if flags & READ and first.may_read:
                if arg not in written and (arg, entry.node_id) not in reported:
                    reported.add((arg, entry.node_id))
                    yield _uninitialised(arg, entry.node_id, certain=first is FirstAccess.READ)
                if arg in last_writer:
                    write_read[(arg, last_writer[arg])] = True
            if flags & WRITE:
                # a kernel that writes before it reads uses its own write
                own_use = bool(flags & READ) and (not first.may_read or _reads_own_write(nodes.get(entry.node_id), arg))
                write_read[(arg, entry.node_id)] = write_read.get((arg, entry.node_id), False) or own_use
                last_writer[arg] = entry.node_id
                written.add(arg)
    for (arg, node_id), was_read in write_read.items():
        if not was_read:
            yield Diagnostic(
                "GL010",
                "warning",
                f"temp {arg!r} written by {node_id!r} is never read afterwards",
                node_id,
                arg,
                "remove the write, or declare the arg role='output' to keep it",
            )


def _reads_own_write(node: object, arg: str) -> bool:
    """Whether the dispatch's kernel reads ``arg`` in a later top-level statement than one that writes it."""
    if not isinstance(node, Dispatch):
        return False
    return any(bound == arg and reads_own_write(node.kernel.fn, param) for param, bound in node.bindings)


def _uninitialised(arg: str, node_id: str, *, certain: bool) -> Diagnostic:
    """GL009: an error where the kernel certainly reads first, a "may" warning where that is not proven."""
    fix = f"write {arg!r} first, or declare it role='input'/'state' and pass a value"
    if certain:
        message = f"temp {arg!r} is read by {node_id!r} before anything writes it"
        return Diagnostic("GL009", "error", message, node_id, arg, fix)
    return Diagnostic(
        "GL009",
        "warning",
        f"temp {arg!r} may be read by {node_id!r} before anything writes it: the kernel reads and writes "
        "it, and graphlab could not prove that each read follows the kernel's own write",
        node_id,
        arg,
        f"{fix}; a kernel that fills it before reading is recognised when it stores each element at the "
        "index it then reads in the same loop body, or first clears the parameter in a top-level "
        "`for I in ti.grouped(param)` loop",
    )


def validate_aliasing(graph: Graph, ctx: CheckContext) -> Iterator[Diagnostic]:
    """GL012: one buffer bound to two parameters of one dispatch while one of them is written."""
    args, facts = graph.args, ctx.dataflow
    for node_id, node in ctx.node_ids:
        if not isinstance(node, Dispatch):
            continue
        bound_args = [b for _, b in node.bindings if b is not None]
        if len(set(bound_args)) == len(bound_args):  # no arg bound twice: nothing can alias
            continue
        params = facts.params.get(node_id, {})
        by_arg: dict[str, list[str]] = {}
        for param, bound in node.bindings:
            if bound is not None and bound in args and args[bound].is_buffer:
                by_arg.setdefault(bound, []).append(param)
        for arg, bound_params in by_arg.items():
            if len(bound_params) > 1 and any(params.get(p, AccessFlag.READ_WRITE) & WRITE for p in bound_params):
                yield Diagnostic(
                    "GL012",
                    "error",
                    f"arg {arg!r} is bound to {', '.join(bound_params)} of "
                    f"{node.kernel.name!r} and the kernel writes one of them; Taichi assumes "
                    "parameters do not alias",
                    node_id,
                    arg,
                    "bind a separate buffer (a copy) to one of the parameters",
                )


RULE_FUNCTIONS = (validate_roles, validate_temps, validate_aliasing)
