"""GL024: a graph too large to compile or to check once unrolled.

Sizes come from :meth:`graphlab.model.graph.Graph.size`, counted arithmetically, so a graph whose
unrolling would take forever (three nested sequences repeated 10**7 times each: 10**21 dispatches)
is measured at once. The limits and why they are what they are: :mod:`graphlab.core.limits`.

:func:`too_large_to_analyse` tells :func:`graphlab.analysis.check.validate` to skip the other rules when
walking the node ids or the data-flow trace would itself not finish.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from graphlab.analysis.check.context import CheckContext
from graphlab.core.diagnostics import Diagnostic
from graphlab.core.limits import MAX_EXPANDED, MAX_UNROLLED
from graphlab.model.unroll import too_many_dispatches

if TYPE_CHECKING:
    from graphlab.model.graph import Graph


def too_large_to_analyse(graph: Graph) -> bool:
    """Whether the node ids or the data-flow trace are past :data:`~graphlab.core.limits.MAX_EXPANDED`."""
    size = graph.size()
    return size.node_ids > MAX_EXPANDED or size.trace > MAX_EXPANDED


def validate_size(graph: Graph, ctx: CheckContext) -> Iterator[Diagnostic]:
    """GL024: more dispatches than ti.graph can build, or more node ids / trace entries than a check can walk."""
    size = graph.size()
    if size.dispatches > MAX_UNROLLED:
        yield Diagnostic(
            "GL024",
            "error",
            too_many_dispatches(graph.name, size.dispatches),
            size.largest,
            None,
            "lower the repeat counts, or use shared sequences in fewer places (both multiply along nesting); "
            "or repeat at run time with g.loop(body, count=n_arg), whose body is compiled once",
        )
    if size.node_ids > MAX_EXPANDED:
        yield Diagnostic(
            "GL024",
            "error",
            f"graph {graph.name!r} has {size.node_ids:,} node ids, over the limit of {MAX_EXPANDED:,} that a check "
            "can walk: a sequence used in several places has its nodes under every use, so nesting shared "
            "sequences multiplies them",
            size.largest,
            None,
            "use shared sequences in fewer places, or nest fewer of them inside one another",
        )
    elif size.trace > MAX_EXPANDED:
        yield Diagnostic(
            "GL024",
            "error",
            f"graph {graph.name!r} nests repeated sequences and loops so deep that its data-flow trace has "
            f"{size.trace:,} steps, over the limit of {MAX_EXPANDED:,} that a check can walk (each level is "
            "walked twice, to see what one repetition carries into the next)",
            size.largest,
            None,
            "nest fewer repeated sequences and loops inside one another",
        )


RULE_FUNCTIONS = (validate_size,)
