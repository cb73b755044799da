"""GL027 and GL028: kernels whose results differ from run to run, read from their source.

- **GL027** (warning): a dispatch's kernel draws random numbers (``ti.random``/``ti.randn``, in the
  kernel or a ``ti.func`` it calls). Every run, every replay in the debugger and every side of a
  comparison draws other numbers, so nothing that follows repeats bit for bit;
- **GL028** (warning): a kernel's parallel loop writes a buffer at one index and reads it at another
  (``rho[i, j] = rho[inb, jnb]``). Whether the read sees the old or the new value depends on which
  thread runs first: on a GPU the result changes from run to run.

The facts are :mod:`graphlab.kernelfacts.effects`; each kernel is reported once per dispatch node.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from graphlab.analysis.check.context import CheckContext
from graphlab.core.diagnostics import Diagnostic
from graphlab.kernelfacts.effects import REPRODUCIBLE_HINT, graph_effects

if TYPE_CHECKING:
    from graphlab.model.graph import Graph


def validate_random_draws(graph: Graph, ctx: CheckContext) -> Iterator[Diagnostic]:
    """GL027: a dispatch whose kernel calls ``ti.random`` (directly or through ``ti.func``s)."""
    for found in graph_effects(graph):
        draws = found.effects.random
        if not draws:
            continue
        where = "; ".join(d.describe() for d in draws)
        yield Diagnostic(
            "GL027",
            "warning",
            f"kernel {found.kernel!r} draws random numbers ({where}): every run, debugger replay and "
            "comparison draws other numbers, so results after it do not repeat bit for bit",
            found.node,
            None,
            REPRODUCIBLE_HINT,
        )


def validate_races(graph: Graph, ctx: CheckContext) -> Iterator[Diagnostic]:
    """GL028: a parallel loop that writes a buffer at one index and reads it at another."""
    for found in graph_effects(graph):
        for race in found.effects.races:
            buffer = found.arg(race.param)
            others = " or ".join(f"{buffer}[{r}]" for r in race.reads)
            yield Diagnostic(
                "GL028",
                "warning",
                f"kernel {found.kernel!r}: {race.describe(buffer)}; another thread may write "
                f"{others} before or after this read, so on a GPU the result depends on "
                "thread order",
                found.node,
                buffer,
                f"read from a copy of {buffer!r} (another buffer) or move the write into a second kernel",
            )


RULE_FUNCTIONS = (validate_random_draws, validate_races)
