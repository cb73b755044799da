"""The node-id and step-id grammar, built and parsed in one place.

A *node id* names a definition: ``init`` at the top, ``substep/p2g`` inside a use of a sequence,
``solve/jacobi`` inside a loop, ``branch/then/halve`` inside a conditional's branch. A node name is an
identifier with an optional ``#n`` suffix (``p2g#2``: the second dispatch of ``p2g`` in one body).

A *step id* names one dispatch of a run: ``substep[3]/p2g`` (repetition 3 of sequence ``substep``),
``solve/iter[7]/jacobi`` (iteration 7 of loop ``solve``), ``branch/then/halve`` (the taken branch).
A *repetition id* names one repetition, iteration or taken branch: ``substep[3]``, ``solve/iter[7]``,
``branch/then``. Repetitions and iterations count from 0.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Literal

from graphlab.core.errors import GraphError
from graphlab.model.nodes import Cond, Dispatch, Loop, SequenceUse

if TYPE_CHECKING:
    from graphlab.model.graph import Graph as GraphModel

IdKind = Literal["node", "step", "repetition"]

__all__ = [
    "NODE_NAME",
    "REPETITION_INDEX",
    "branch",
    "child",
    "is_node_name",
    "iteration",
    "last",
    "numbered",
    "parse_id",
    "repetition",
    "runs_once",
    "stem",
]

#: A node name: an identifier, optionally numbered (``p2g#2``).
NODE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:#[0-9]+)?")
#: One path part of a step id: a node name with an optional repetition index (``substep[3]``).
STEP_PART = re.compile(r"(?P<name>[A-Za-z_][A-Za-z0-9_]*(?:#[0-9]+)?)(?:\[(?P<k>[0-9]+)\])?")
#: A loop iteration part (``iter[7]``).
ITERATION_PART = re.compile(r"iter\[(?P<k>[0-9]+)\]")
#: Any repetition or iteration index in an id (what separates a step id from a node id).
REPETITION_INDEX = re.compile(r"\[\d+\]")
BRANCHES = ("then", "else")


def is_node_name(name: object) -> bool:
    """Whether ``name`` is a node name (a full match: no trailing newline, no other characters)."""
    return isinstance(name, str) and NODE_NAME.fullmatch(name) is not None


def child(prefix: str, name: str) -> str:
    """The id of ``name`` inside a body whose ids start with ``prefix`` (``""`` or ``"substep/"``)."""
    return f"{prefix}{name}"


def last(node_id: str) -> str:
    """The node's own name: the last part of its id."""
    return node_id.rpartition("/")[2]


def branch(cond_id: str, taken: str) -> str:
    """The id of a conditional's branch (``branch/then``)."""
    return f"{cond_id}/{taken}"


def repetition(use_id: str, k: int) -> str:
    """Repetition ``k`` of a sequence use (``substep[3]``)."""
    return f"{use_id}[{k}]"


def iteration(loop_id: str, k: int) -> str:
    """Iteration ``k`` of a loop (``solve/iter[7]``)."""
    return f"{loop_id}/iter[{k}]"


def stem(name: str) -> str:
    """A node name without its ``#n`` number."""
    return name.split("#", 1)[0]


def numbered(base: str, taken: set[str]) -> str:
    """``base`` if free, else the first free ``stem#k`` (k from 2): how a second ``p2g`` is named."""
    if base not in taken:
        return base
    root, k = stem(base), 2
    while f"{root}#{k}" in taken:
        k += 1
    return f"{root}#{k}"


# --- ids checked against a graph's structure -------------------------------------------------------


def runs_once(graph: GraphModel, node_id: str) -> bool:
    """Whether a node is a dispatch in no loop and no sequence, so that it runs at most once (its
    step id is its node id: ``branch/then/halve``)."""
    if not isinstance(graph.node(node_id), Dispatch):
        return False
    parts = node_id.split("/")
    for depth in range(1, len(parts)):
        prefix = "/".join(parts[:depth])
        if parts[depth - 1] in BRANCHES and isinstance(graph.node("/".join(parts[: depth - 1])), Cond):
            continue  # a branch, not a node
        if isinstance(graph.node(prefix), Loop | SequenceUse):
            return False
    return True


def parse_id(graph: GraphModel, target: str) -> tuple[IdKind, str]:
    """What an id names in a control-flow graph, checked against its structure before it runs.

    Returns ``(kind, definition id)``: ``"node"`` for a node id (``solve/jacobi``), ``"step"`` for one
    dispatch on one path (``solve/iter[7]/jacobi``), ``"repetition"`` for one repetition, iteration or
    taken branch (``outer[1]``, ``solve/iter[7]``, ``branch/then``). Raises GraphError naming what is
    wrong and what would fit.
    """
    if "[" not in target:  # a node id, or the one taken-branch instance of a top-level conditional
        parent, _, branch = target.rpartition("/")
        if branch in BRANCHES and parent:
            cond = graph.node(parent)
            if isinstance(cond, Cond) and (branch == "then" or cond.else_ is not None):
                return "repetition", target
        graph.node(target)  # raises naming the ids nearby
        return "node", target
    parts = target.split("/")
    container: str | None = None
    defs: list[str] = []
    indexed = False
    i = 0
    while i < len(parts):
        m = STEP_PART.fullmatch(parts[i])
        here = "/".join(defs)
        body = graph.body if container is None else graph.sequences[container]
        node = next((n for n in body if m is not None and n.name == m.group("name")), None)
        if m is None or node is None:
            names = ", ".join(n.name for n in body[:12]) or "none"
            where = f"in {here!r}" if here else "at the top level"
            raise GraphError(f"{target!r}: no node {parts[i]!r} {where}; nodes there: {names}")
        k = None if m.group("k") is None else int(m.group("k"))
        defs.append(node.name)
        last = i == len(parts) - 1
        if isinstance(node, Dispatch):
            if k is not None or not last:
                raise GraphError(f"{target!r}: {'/'.join(defs)!r} is a dispatch; it has no repetitions or children")
            return ("step" if indexed else "node"), "/".join(defs)
        if isinstance(node, SequenceUse):
            if k is None:
                if last:
                    return "node", "/".join(defs)
                raise GraphError(f"{target!r}: name a repetition of sequence {'/'.join(defs)!r}, e.g. '{node.name}[0]'")
            if k >= node.repeat:
                raise GraphError(
                    f"{target!r}: sequence {'/'.join(defs)!r} repeats {node.repeat} times (0..{node.repeat - 1})"
                )
            indexed = True
            container = node.sequence
        elif k is not None:
            kind = "a loop: its iterations are '.../iter[k]'" if isinstance(node, Loop) else "a conditional"
            raise GraphError(f"{target!r}: {'/'.join(defs)!r} is {kind}, not a sequence")
        elif last:
            return "node", "/".join(defs)
        elif isinstance(node, Loop):
            i += 1
            it = ITERATION_PART.fullmatch(parts[i])
            if it is None:
                raise GraphError(
                    f"{target!r}: inside loop {'/'.join(defs)!r} name an iteration, e.g. '{'/'.join(defs)}/iter[0]'"
                )
            j = int(it.group("k"))
            if node.max_iter is not None and j >= node.max_iter:
                top = node.max_iter - 1
                raise GraphError(
                    f"{target!r}: loop {'/'.join(defs)!r} runs at most {node.max_iter} iterations (0..{top})"
                )
            indexed = True
            container = node.body
        elif isinstance(node, Cond):
            i += 1
            branches = {"then": node.then, "else": node.else_}
            if parts[i] not in branches or branches[parts[i]] is None:
                have = " or ".join(b for b, s in branches.items() if s is not None)
                raise GraphError(f"{target!r}: inside conditional {'/'.join(defs)!r} name a branch ({have})")
            defs.append(parts[i])
            container = branches[parts[i]]
        if i == len(parts) - 1:
            return "repetition", "/".join(defs)
        i += 1
    raise GraphError(f"{target!r} names no node")  # unreachable: the loop returns or raises
