"""GL025: declared shapes that contradict what the kernels' loops need (:mod:`graphlab.kernelfacts.shape_facts`);
GL029: accesses the source cannot prove in bounds, and the checked run that can.

A kernel that loops over ``x`` and indexes ``J[p]`` needs ``J.shape[0] >= x.shape[0]``. When both
shapes are declared:

- two fixed sizes that break it are an **error**: every run would be refused;
- two different dims (``"m"`` and ``"n"``, or a dim and a size) are an **info**, not a warning: a
  buffer larger than the loop is a normal design (a pool with spare room), ``run()`` checks the
  relation before anything is dispatched, so nothing can go out of bounds; the note tells the user
  the kernels tie the two dims together, and that one dim name says it where it is meant.

A constant bound (``ti.ndrange(GRID_SIZE, GRID_SIZE)``) against a declared fixed size too small is
an error too; against a dim it is checked by ``run()``.

Relations on an undeclared shape are not reported here; ``render`` shows them and ``run`` checks them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from graphlab.analysis.check.context import CheckContext
from graphlab.core.diagnostics import Diagnostic
from graphlab.kernelfacts.shape_facts import ShapeRelation, graph_shape_relations, graph_unchecked_accesses

if TYPE_CHECKING:
    from graphlab.model.graph import Graph


def validate_shape_relations(graph: Graph, ctx: CheckContext) -> Iterator[Diagnostic]:
    """GL025: a declared shape too small for a loop in a kernel, or declared apart from it."""
    seen: set[tuple[str, int, str, int]] = set()
    for rel in graph_shape_relations(graph):
        if rel.source is None or rel.source_axis is None:
            yield from _constant_bound(graph, rel)
            continue
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


def _constant_bound(graph: Graph, rel: ShapeRelation) -> Iterator[Diagnostic]:
    """GL025 error: a declared fixed size below a loop's constant bound (a dim is checked by run())."""
    declared = graph.args[rel.arg].shape
    have = None if declared is None else declared[rel.axis]
    if not isinstance(have, int) or rel.minimum is None or have >= rel.minimum or _never_runs(graph, rel.guards):
        return
    yield Diagnostic(
        "GL025",
        "error",
        f"dispatch {rel.node!r} indexes {rel.access}, so {rel.arg}.shape[{rel.axis}] must be >= {rel.minimum} "
        f"(the loop's constant bound), but {rel.arg!r} is declared with shape {declared}; every run would be "
        "refused (Taichi would index past the end)",
        rel.node,
        rel.arg,
        f"declare {rel.arg!r} with shape[{rel.axis}] >= {rel.minimum}",
    )


def _never_runs(graph: Graph, guards: tuple[tuple[str, int | None], ...]) -> bool:
    """Whether a loop around the access is declared empty (a fixed size 0), so the access never runs."""
    for name, axis in guards:
        shape = graph.args[name].shape
        if shape is not None and 0 in (shape if axis is None else shape[axis : axis + 1]):
            return True
    return False


#: GL029 names at most this many dispatches (and one access each); the rest are counted.
_SHOWN = 3


def validate_unchecked_accesses(graph: Graph, ctx: CheckContext) -> Iterator[Diagnostic]:
    """GL029 (info, once per graph): ndarray indices no shape relation covers, so no check before a run.

    Taichi checks no index either, so a too-small array there is read and written out of bounds.
    The note names the dispatches and points to ``bounds="check"``, the run that checks them all.
    """
    unchecked = graph_unchecked_accesses(graph)
    if not unchecked:
        return
    shown = [f"{node!r} ({accesses[0]}{', ...' if len(accesses) > 1 else ''})" for node, accesses in unchecked.items()]
    more = f" and {len(shown) - _SHOWN} more" if len(shown) > _SHOWN else ""
    yield Diagnostic(
        "GL029",
        "info",
        f"{sum(map(len, unchecked.values()))} ndarray access(es) in dispatch(es) {', '.join(shown[:_SHOWN])}{more} "
        "cannot be proven in bounds from the kernels' source (an index under an `if`, with arithmetic, a scalar "
        "or in a ti.func), so run() cannot check them and Taichi does not either",
        None,
        None,
        "run once with g.run(..., bounds='check') (or g.debug(..., bounds='check'), or `graphlab run FILE "
        "--kernels MODULE --bounds check`): it runs the graph in a child under Taichi's bounds checks and names "
        "the first dispatch, arg and index out of bounds",
    )


RULE_FUNCTIONS = (validate_shape_relations, validate_unchecked_accesses)
