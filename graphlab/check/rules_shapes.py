"""GL025: declared shapes that contradict what the kernels' loops need (:mod:`graphlab.shape_facts`).

A kernel that loops over ``x`` and indexes ``J[p]`` needs ``J.shape[0] >= x.shape[0]``. When both
shapes are declared:

- two fixed sizes that break it are an **error**: every run would be refused;
- two different dims (``"m"`` and ``"n"``, or a dim and a size) are an **info**, not a warning: a
  buffer larger than the loop is a normal design (a pool with spare room), ``run()`` checks the
  relation before anything is dispatched, so nothing can go out of bounds; the note tells the user
  the kernels tie the two dims together, and that one dim name says it where it is meant.

Relations on an undeclared shape are not reported here; ``render`` shows them and ``run`` checks them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from graphlab.check.context import CheckContext
from graphlab.diagnostics import Diagnostic
from graphlab.shape_facts import graph_shape_relations

if TYPE_CHECKING:
    from graphlab.graph import Graph


def validate_shape_relations(graph: Graph, ctx: CheckContext) -> Iterator[Diagnostic]:
    """GL025: a declared shape too small for a loop in a kernel, or declared apart from it."""
    seen: set[tuple[str, int, str, int]] = set()
    for rel in graph_shape_relations(graph):
        arg, source = graph.args[rel.arg], graph.args[rel.source]
        if arg.shape is None or source.shape is None:
            continue
        have, need = arg.shape[rel.axis], source.shape[rel.source_axis]
        key = (rel.arg, rel.axis, rel.source, rel.source_axis)
        if have == need or key in seen or _never_runs(graph, rel.guards):
            continue
        seen.add(key)
        needs = f"{rel.arg}.shape[{rel.axis}] must be >= {rel.source}.shape[{rel.source_axis}]"
        tie = f"dispatch {rel.node!r} indexes {rel.access}, so {needs}"
        if isinstance(have, int) and isinstance(need, int):
            if have < need:
                yield Diagnostic(
                    "GL025",
                    "error",
                    f"{tie}, but {rel.arg!r} is declared with shape {arg.shape} and {rel.source!r} with "
                    f"{source.shape}; every run would be refused (Taichi would index past the end)",
                    rel.node,
                    rel.arg,
                    f"declare {rel.arg!r} with shape[{rel.axis}] >= {need}",
                )
            continue
        yield Diagnostic(
            "GL025",
            "info",
            f"{tie}; they are declared apart ({have!r} and {need!r}), so run() checks it before dispatching",
            rel.node,
            rel.arg,
            f"if they are always equal, declare both with the dim {need!r}",
        )


def _never_runs(graph: Graph, guards: tuple[tuple[str, int | None], ...]) -> bool:
    """Whether a loop around the access is declared empty (a fixed size 0), so the access never runs."""
    for name, axis in guards:
        shape = graph.args[name].shape
        if shape is not None and 0 in (shape if axis is None else shape[axis : axis + 1]):
            return True
    return False


RULE_FUNCTIONS = (validate_shape_relations,)
