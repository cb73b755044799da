"""The canvas's paste: copies of dispatches and of whole groups (sequences, loops, conditionals).

A group is a node that uses named sequence *definitions*; a copy that used the same definitions would
change whenever the original is edited, which no one who pressed Ctrl+D expects. So a pasted group
gets its own definitions, copied under new names (``body`` -> ``body_2``), with every node inside
copied the same way, bindings, repeat counts and loop settings (flag or count, ``max_iter``,
``check_every``, guarded) kept. A definition the copied nodes use more than once is copied once and
used as often in the copy.

Only the model's editing API builds the copy (``define``, ``insert``, ``append``, ``loop``, ``cond``,
``move``), so its own checks (names, nesting depth, cycles, loop rules) hold for the copy too. The
editor runs a paste as one edit: one undo step, tried on a copy of the graph first.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from graphlab.core.errors import GraphError
from graphlab.model.graph import Graph, Into
from graphlab.model.layout import Layout, Point
from graphlab.model.nodes import Cond, Dispatch, Loop, Node, SequenceUse

__all__ = ["OFFSET", "outermost", "paste_nodes", "placed_copies"]

#: How far a copy lands from its original on the canvas (px, right and down) when the canvas gives no offset.
OFFSET = 40.0


def outermost(node_ids: Iterable[str]) -> list[str]:
    """The ids not inside another of them, in order, once each (a loop and its body node: the loop)."""
    ids = list(dict.fromkeys(node_ids))
    return [n for n in ids if not any(n.startswith(o + "/") for o in ids if o != n)]


def paste_nodes(graph: Graph, node_ids: Sequence[str], *, into: str | None, index: int | None) -> list[str]:
    """Copy these nodes into ``into`` (a sequence use id; None: the top level) from ``index`` on (None:
    at the end); returns the copies' ids, in order. Groups are copied with their whole bodies."""
    copier = _Copier(graph)
    originals = [graph.node(node_id) for node_id in node_ids]  # all read before any is copied
    made = []
    for offset, node in enumerate(originals):
        at = None if index is None else index + offset
        made.append(copier.node(node, into, at))
    return made


def placed_copies(
    layout: Layout, pairs: Iterable[tuple[str, str]], *, offset: tuple[float, float] = (OFFSET, OFFSET)
) -> Layout:
    """``layout`` with each copy's nodes placed ``offset`` (px right, down) from its original's (``pairs``:
    original id, copy id); the nodes inside a group keep their offsets from each other, and no other node
    moves. The canvas picks an offset where the copied block covers nothing."""
    dx, dy = offset
    placed: dict[str, Point] = {}
    for source, copy in pairs:
        for key, (x, y) in layout.positions.items():
            if key == source or key.startswith(source + "/"):
                placed[copy + key[len(source) :]] = (x + dx, y + dy)
    return layout.placed(placed)


class _Copier:
    """Copies nodes into a graph; remembers the definitions it copied, so a shared one stays shared."""

    def __init__(self, graph: Graph) -> None:
        self._graph = graph
        self._definitions = graph.sequences  # as they were before the paste
        self._copied: dict[str, str] = {}

    def node(self, node: Node, into: Into, index: int | None) -> str:
        """A copy of ``node`` at ``index`` of ``into`` (None: the end); its id."""
        graph = self._graph
        if isinstance(node, Dispatch):
            return graph.insert(node.kernel, index=index, into=into, name=node.name, bindings=node.bound)
        if isinstance(node, SequenceUse):
            node_id = graph.append(self.sequence(node.sequence), node.repeat, into=into, name=node.name)
        elif isinstance(node, Loop):
            node_id = graph.loop(
                self.sequence(node.body),
                while_=node.while_,
                count=node.count,
                max_iter=node.max_iter,
                check_every=node.check_every,
                guarded=node.guarded,
                name=node.name,
                into=into,
            )
        elif isinstance(node, Cond):
            else_ = None if node.else_ is None else self.sequence(node.else_)
            node_id = graph.cond(node.flag, self.sequence(node.then), else_, name=node.name, into=into)
        else:  # pragma: no cover - Node is the union above
            raise GraphError(f"cannot paste a {type(node).__name__}")
        # the model puts a structure at the end of its container: move it to where the paste goes
        return node_id if index is None else graph.move(node_id, index)

    def sequence(self, name: str) -> str:
        """The copy of definition ``name`` (made on first use, its nodes copied into it)."""
        copied = self._copied.get(name)
        if copied is not None:
            return copied
        copied = self._copied[name] = _free_name(self._graph.sequences, name)
        builder = self._graph.define(copied)
        for node in self._definitions[name]:
            self.node(node, builder, None)
        return copied


def _free_name(taken: Mapping[str, object], base: str) -> str:
    """``base_k`` with the first k from 2 not taken (a ``_k`` already on ``base`` is counted on)."""
    stem, _, tail = base.rpartition("_")
    if not (stem and tail.isdigit()):
        stem = base
    k = 2
    while f"{stem}_{k}" in taken:
        k += 1
    return f"{stem}_{k}"
