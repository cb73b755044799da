"""The canvas's drag of a group (sequence, loop, conditional) as a whole, checked before it is stored.

A group has no position of its own on the canvas: it is drawn as a box around its members. Dragging it
moves every member by one offset, sent as one ``place`` edit naming the group, so it is one undo step
and the members keep their places relative to each other in the graph file. A drag that would leave a
member behind, move a node outside the group, or move members by different offsets would break that
quietly; it is refused here, naming the node and the fix, before anything changes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from graphlab.core.errors import GraphError
from graphlab.model.graph import Graph
from graphlab.model.nodes import Cond, Dispatch

__all__ = ["TOLERANCE", "check_group_drag"]

#: How far (px) two members' moves may differ: the canvas rounds each new position to a whole pixel.
TOLERANCE = 1.0


def check_group_drag(graph: Graph, group: str, positions: Mapping[str, Sequence[float]]) -> None:
    """Refuse a drag of ``group`` whose ``positions`` are not all of its members moved by one offset."""
    if not _is_branch(graph, group):
        try:
            node = graph.node(group)
        except GraphError:
            raise GraphError(
                f"field 'group': graph {graph.name!r} has no node {group!r}; the view may be stale"
            ) from None
        if isinstance(node, Dispatch):
            raise GraphError(f"field 'group': {group!r} is a dispatch, not a group; place it without 'group'")
    if not positions:
        raise GraphError(f"field 'positions': a drag of group {group!r} gives its members' positions; none given")
    inside = [key for key in positions if key == group or key.startswith(group + "/")]
    outside = [key for key in positions if key not in inside]
    if outside:
        raise GraphError(
            f"field 'positions': {outside[0]!r} is not inside group {group!r}; a group drag moves only its members "
            "(place other nodes in an edit of their own)"
        )
    saved = {key: where for key, where in graph.layout.positions.items() if key == group or key.startswith(group + "/")}
    left = [key for key in saved if key not in positions]
    if left:
        raise GraphError(
            f"field 'positions': member {left[0]!r} of group {group!r} has a saved position but was not moved; "
            "give every member's position, so they keep their places relative to each other"
        )
    moves = {key: (positions[key][0] - x, positions[key][1] - y) for key, (x, y) in saved.items()}
    if moves:
        first_key, (dx, dy) = next(iter(moves.items()))
        for key, (mx, my) in moves.items():
            if abs(mx - dx) > TOLERANCE or abs(my - dy) > TOLERANCE:
                raise GraphError(
                    f"field 'positions': member {key!r} of group {group!r} moves by ({mx:g}, {my:g}) but "
                    f"{first_key!r} by ({dx:g}, {dy:g}); a group moves as a whole: move every member by one offset"
                )


def _is_branch(graph: Graph, group: str) -> bool:
    """Whether ``group`` is a branch of a conditional (``big/then``): drawn as a group, not a node of its own."""
    parent, _, branch = group.rpartition("/")
    if branch not in ("then", "else") or not parent:
        return False
    try:
        node = graph.node(parent)
    except GraphError:
        return False
    return isinstance(node, Cond) and (branch == "then" or node.else_ is not None)
