"""Where the editor's canvas draws each node, and which bindings it guessed: kept with the graph.

The canvas lets people drag nodes; a layout recomputed on every edit would move what they placed.
So positions live beside the content in the graph's state (:class:`graphlab.model.graphdata.GraphState`),
where Undo covers a drag like any edit, and in the graph file's ``layout`` section. The bindings the
editor guessed for a new dispatch (by type) are kept here too, so the canvas can draw them as
suggestions until someone accepts them. Neither changes what the graph computes: a ``Layout`` is
plain data, keyed by node id, and never read by the checker, the compiler or the exporter.

>>> lay = Layout().placed({"init": (0.0, 10.0)})
>>> lay.positions["init"]
(0.0, 10.0)
>>> lay.renamed("init", "setup").positions
mappingproxy({'setup': (0.0, 10.0)})
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from graphlab.core.errors import GraphError
from graphlab.model.nodes import Cond, children

#: Positions farther out than this are refused: a canvas coordinate, not a float's full range.
MAX_COORDINATE = 1e7

Point = tuple[float, float]


def placeable_ids(graph: Any) -> set[str]:
    """The ids a layout may hold: every node's, each conditional's branches (``decide/then``, drawn as
    boxes; an empty one has a place of its own) and ``arg:<name>`` for each declared arg (drawn as a node).

    ``graph`` is a :class:`graphlab.model.graphdata.GraphData` (typed loosely: the model imports this module).
    """
    ids = {f"arg:{name}" for name in graph.args}
    for node_id, node in graph.nodes():
        ids.add(node_id)
        if isinstance(node, Cond):
            ids.update(f"{node_id}/{segment.rstrip('/')}" for segment, _ in children(node))
    return ids


def position_problem(value: Any) -> str | None:
    """Why ``value`` is not a canvas position ``[x, y]`` (two finite numbers), or None when it is one."""
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        return f"expected a position [x, y], got {_shown(value)}"
    for axis, coordinate in zip("xy", value):
        if isinstance(coordinate, bool) or not isinstance(coordinate, (int, float)):
            return f"{axis} must be a number, got {_shown(coordinate)}"
        if not math.isfinite(coordinate) or abs(coordinate) > MAX_COORDINATE:
            return f"{axis}={coordinate} is outside the canvas (finite, at most {MAX_COORDINATE:g} from 0)"
    return None


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _inside(node_id: str, ids: Iterable[str]) -> bool:
    """Whether ``node_id`` is one of ``ids`` or nested in one of them (``substep/p2g`` in ``substep``)."""
    return any(node_id == i or node_id.startswith(i + "/") for i in ids)


@dataclass(frozen=True)
class Layout:
    """Canvas positions by node id and guessed bindings (node id -> parameter names); immutable.

    Every method returns a new ``Layout``, so a ``GraphState`` holding one is a true snapshot.
    """

    positions: Mapping[str, Point] = field(default_factory=lambda: MappingProxyType({}))
    guessed: Mapping[str, frozenset[str]] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        object.__setattr__(self, "positions", MappingProxyType(dict(self.positions)))
        object.__setattr__(self, "guessed", MappingProxyType({k: frozenset(v) for k, v in self.guessed.items() if v}))

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle (and deepcopy) as plain dicts: a read-only ``mappingproxy`` does not pickle."""
        return (Layout, (dict(self.positions), dict(self.guessed)))

    def placed(self, positions: Mapping[str, Any]) -> Layout:
        """These nodes at these positions (others keep theirs); GraphError names a bad one."""
        new = dict(self.positions)
        for node_id, value in positions.items():
            problem = position_problem(value)
            if problem is not None:
                raise GraphError(f"position of node {node_id!r}: {problem}")
            new[node_id] = (float(value[0]), float(value[1]))
        return Layout(new, self.guessed)

    def without(self, node_ids: Iterable[str]) -> Layout:
        """Forget these nodes and everything nested in them."""
        ids = list(node_ids)
        return Layout(
            {k: v for k, v in self.positions.items() if not _inside(k, ids)},
            {k: v for k, v in self.guessed.items() if not _inside(k, ids)},
        )

    def renamed(self, old: str, new: str) -> Layout:
        """Follow a node renamed (or moved to a new id) from ``old`` to ``new``, with what it holds."""
        if old == new:
            return self

        def moved(key: str) -> str:
            return new + key[len(old) :] if _inside(key, [old]) else key

        return Layout({moved(k): v for k, v in self.positions.items()}, {moved(k): v for k, v in self.guessed.items()})

    def guess(self, node_id: str, params: Iterable[str]) -> Layout:
        """Mark these bindings of a dispatch as guessed by the editor (drawn as suggestions)."""
        marked = dict(self.guessed)
        marked[node_id] = frozenset(params)
        return Layout(self.positions, marked)

    def accepted(self, node_id: str, param: str | None = None) -> Layout:
        """Accept a guessed binding (``param`` None: all of the node's)."""
        marked = dict(self.guessed)
        if param is None:
            marked.pop(node_id, None)
        elif node_id in marked:
            marked[node_id] = marked[node_id] - {param}
        return Layout(self.positions, marked)

    def kept(self, node_ids: Iterable[str]) -> Layout:
        """Only the entries of these nodes (the ones that still exist)."""
        ids = set(node_ids)
        return Layout(
            {k: v for k, v in self.positions.items() if k in ids}, {k: v for k, v in self.guessed.items() if k in ids}
        )
