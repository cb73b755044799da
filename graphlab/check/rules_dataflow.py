"""Rules on who reads and writes what: roles, uninitialised temps, dead writes, aliasing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from graphlab.access import AccessFlag
from graphlab.check.context import CheckContext
from graphlab.dataflow import READ, WRITE
from graphlab.diagnostics import Diagnostic
from graphlab.graph import Dispatch

if TYPE_CHECKING:
    from graphlab.graph import Graph


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
    """
    temps = {n for n, a in graph.args.items() if a.role == "temp" and a.is_buffer}
    if not temps:
        return
    written: set[str] = set()
    last_writer: dict[str, str] = {}
    write_read: dict[tuple[str, str], bool] = {}  # (temp, writer node id) -> read by someone later
    reported: set[tuple[str, str]] = set()
    for entry in ctx.dataflow.trace:
        for arg, flags in entry.args.items():
            if arg not in temps:
                continue
            if flags & READ:
                if arg not in written and (arg, entry.node_id) not in reported:
                    reported.add((arg, entry.node_id))
                    yield Diagnostic(
                        "GL009",
                        "error",
                        f"temp {arg!r} is read by {entry.node_id!r} before anything writes it",
                        entry.node_id,
                        arg,
                        f"write {arg!r} first, or declare it role='input'/'state' and pass a value",
                    )
                if arg in last_writer:
                    write_read[(arg, last_writer[arg])] = True
            if flags & WRITE:
                write_read.setdefault((arg, entry.node_id), False)
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


def validate_aliasing(graph: Graph, ctx: CheckContext) -> Iterator[Diagnostic]:
    """GL012: one buffer bound to two parameters of one dispatch while one of them is written."""
    for node_id, node in ctx.node_ids:
        if not isinstance(node, Dispatch):
            continue
        params = ctx.dataflow.params.get(node_id, {})
        by_arg: dict[str, list[str]] = {}
        for param, bound in node.bindings:
            if bound is not None and bound in graph.args and graph.args[bound].is_buffer:
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
