"""The loop form's edits: wrap nodes in a while loop, a counted loop or a conditional, without code.

The model builds loops and conditionals around a sequence *definition* (``g.define`` then
``g.loop(body, ...)``/``g.cond(flag, then)``), placed at the end of a container. The form instead
picks nodes on the canvas (or nothing, for an empty body) and expects the structure in their place.
This module does that with the model's editing API only: ``group`` the nodes into the new sequence
(a use in their place), put the loop or conditional on that sequence at the end of the same
container, remove the use, and move the structure to where the nodes were. The editor runs it as
one edit, so it is one undo step, and tries it on a copy first, so a refusal changes nothing.

The form's fields are checked first, each error naming the field and the fix in the form's words
(the model's own checks still run after, for anything these do not cover).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from graphlab.core.errors import GraphError
from graphlab.core.names import name_problem
from graphlab.model.graph import Graph
from graphlab.model.locate import parent_id
from graphlab.model.nodes import SequenceUse
from graphlab.widget.protocol import MakeCondEdit, MakeLoopEdit

__all__ = ["make_cond", "make_loop"]


def make_loop(graph: Graph, edit: MakeLoopEdit, view: Mapping[str, Any]) -> str:
    """Make the loop ``edit`` asks for; returns its node id. ``view``: the ``graph`` trait (node positions)."""
    _check_new_sequence(graph, "body", edit["body"])
    if edit["mode"] == "while":
        if edit["count"] is not None:
            raise GraphError("field 'count': a while loop reads a flag, not a count; clear the count")
        _check_flag(graph, "flag", edit["flag"], "a while loop")
        if edit["max_iter"] is None:
            raise GraphError(
                "field 'max_iter': a while loop needs the most iterations it may run, so a flag that never "
                "clears cannot hang the run; give max_iter"
            )
    else:
        if edit["flag"] is not None:
            raise GraphError("field 'flag': a counted loop reads no flag; clear the flag or pick 'while'")
        _check_count(graph, edit["count"])
        if edit["check_every"] != 1 or edit["guarded"]:
            raise GraphError(
                "field 'check_every': a counted loop reads no flag, so check_every and guarded do not apply"
            )
    into, index = _wrap(graph, edit["nodes"], edit["body"], edit["into"], edit["index"], view)
    flag, count = (edit["flag"], None) if edit["mode"] == "while" else (None, edit["count"])
    loop_id = graph.loop(
        edit["body"],
        while_=flag,
        count=count,
        max_iter=edit["max_iter"],
        check_every=edit["check_every"],
        guarded=edit["guarded"],
        name=edit["name"],
        into=into,
    )
    return _settle(graph, loop_id, edit["nodes"], edit["body"], into, index)


def make_cond(graph: Graph, edit: MakeCondEdit, view: Mapping[str, Any]) -> str:
    """Make the conditional ``edit`` asks for; returns its node id."""
    _check_new_sequence(graph, "body", edit["body"])
    else_body = edit["else_body"]
    if else_body is not None:
        _check_new_sequence(graph, "else_body", else_body)
        if else_body == edit["body"]:
            raise GraphError("field 'else_body': the else branch needs a name of its own, not the then branch's")
    _check_flag(graph, "flag", edit["flag"], "a conditional")
    into, index = _wrap(graph, edit["nodes"], edit["body"], edit["into"], edit["index"], view)
    if else_body is not None:
        graph.define(else_body)
    cond_id = graph.cond(edit["flag"], edit["body"], else_body, name=edit["name"], into=into)
    return _settle(graph, cond_id, edit["nodes"], edit["body"], into, index)


def _wrap(
    graph: Graph, nodes: Sequence[str], body: str, into: str | None, index: int | None, view: Mapping[str, Any]
) -> tuple[str | None, int | None]:
    """Put ``nodes`` into the new sequence ``body`` (a use in their place), or define it empty; returns the
    container and the index the structure goes to (None: the end)."""
    if not nodes:
        graph.define(body)
        return into, index
    by_id = {n["id"]: n for n in view.get("nodes", ())}
    parents = {parent_id(node) for node in nodes}
    if len(parents) != 1:
        raise GraphError(f"field 'nodes': pick nodes of one container (side by side), got {list(nodes)}")
    graph.group(list(nodes), body)
    positions = [by_id[node]["index"] for node in nodes if node in by_id]
    return parents.pop(), min(positions) if positions else None


def _settle(graph: Graph, node_id: str, nodes: Sequence[str], body: str, into: str | None, index: int | None) -> str:
    """Remove the use ``group`` left in the nodes' place and move the structure there; its final id."""
    if nodes:
        use = next(
            n
            for n, node in graph.nodes()
            if parent_id(n) == into and isinstance(node, SequenceUse) and node.sequence == body
        )
        graph.remove(use)
    if index is not None:
        node_id = graph.move(node_id, index)
    return node_id


def _check_new_sequence(graph: Graph, field: str, name: str) -> None:
    problem = name_problem(name)
    if problem is not None:
        raise GraphError(f"field {field!r}: {name!r} is not a sequence name: {problem}; type another")
    if name in graph.sequences:
        raise GraphError(f"field {field!r}: a sequence {name!r} exists already; pick a new name")


def _check_flag(graph: Graph, field: str, name: str | None, what: str) -> None:
    if name is None:
        raise GraphError(f"field {field!r}: {what} needs a flag arg (a one-element i32 ndarray); pick one")
    arg = graph.args.get(name)
    if arg is None:
        raise GraphError(f"field {field!r}: graph {graph.name!r} has no arg {name!r}; declare it first (New arg...)")
    shape_ok = arg.shape is None or all(not isinstance(d, int) or d == 1 for d in arg.shape)
    if arg.kind != "ndarray" or arg.dtype != "i32" or arg.element_shape or arg.ndim > 1 or not shape_ok:
        raise GraphError(
            f"field {field!r}: {name!r} is {arg.describe()}; a flag is a one-element i32 ndarray (ndim 0 or 1, "
            "shape (1,)): pick another arg or declare one"
        )


def _check_count(graph: Graph, name: str | None) -> None:
    if name is None:
        raise GraphError("field 'count': a counted loop needs a count arg (a scalar i32); pick one")
    arg = graph.args.get(name)
    if arg is None:
        raise GraphError(f"field 'count': graph {graph.name!r} has no arg {name!r}; declare it first (New arg...)")
    if arg.kind != "scalar" or arg.dtype not in ("i32", "i64", "u32"):
        raise GraphError(f"field 'count': {name!r} is {arg.describe()}; a count is an integer scalar: pick another")
