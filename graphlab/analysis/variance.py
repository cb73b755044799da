"""Which buffers may differ from one run of a graph to the next, and what in the graph makes them.

Two runs of one graph on the same inputs give other bits only for a reason found in its kernels
(:mod:`graphlab.kernelfacts.effects`): a random draw, a float atomic add into a shared cell, or a race.
Each taints the buffer it writes, and every buffer computed from a tainted one (a dispatch reading
it taints what it writes). The debugger, ``compare`` and ``gl.verify`` use the causes to say why a
buffer differs ("dispatch 'init' draws random numbers") instead of blaming "run-to-run noise", and
give a noise verdict only where a cause exists.

Examples
--------
>>> Cause("random", "init", "draws random numbers").text()
"dispatch 'init' draws random numbers"
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import networkx as nx

from graphlab.analysis.dataflow import dataflow_facts
from graphlab.core.spec import is_float
from graphlab.kernelfacts.access import AccessFlag
from graphlab.kernelfacts.effects import graph_effects

if TYPE_CHECKING:
    from graphlab.model.graph import Graph

__all__ = ["Cause", "CauseKind", "buffer_causes", "causes_from_data", "causes_to_data"]

CauseKind = Literal["random", "atomic", "race"]


@dataclass(frozen=True)
class Cause:
    """One reason a buffer can change from run to run: ``kind`` at dispatch ``node``, said by ``detail``."""

    kind: CauseKind
    node: str
    detail: str

    def text(self) -> str:
        """``dispatch 'init' draws random numbers (ti.random() in init, line 12)``."""
        return f"dispatch {self.node!r} {self.detail}"


def _own_causes(graph: Graph) -> dict[str, list[Cause]]:
    """The causes each dispatch brings, by the buffer it writes first-hand."""
    own: dict[str, list[Cause]] = {}
    writes = dataflow_facts(graph).args
    for found in graph_effects(graph):
        effects = found.effects
        if effects.random:
            where = "; ".join(d.describe() for d in effects.random)
            cause = Cause("random", found.node, f"draws random numbers ({where})")
            for arg, flags in writes.get(found.node, {}).items():
                if flags & AccessFlag.WRITE:
                    own.setdefault(arg, []).append(cause)
        for add in effects.atomics:
            arg = found.arg(add.param)
            spec = graph.args.get(arg)
            if spec is not None and is_float(spec.dtype):
                detail = f"adds floats atomically into {arg}[{add.index}] (line {add.line}): the sum's order varies"
                own.setdefault(arg, []).append(Cause("atomic", found.node, detail))
        for race in effects.races:
            arg = found.arg(race.param)
            detail = f"races on {race.describe(arg)}: the result depends on thread order"
            own.setdefault(arg, []).append(Cause("race", found.node, detail))
    return own


def buffer_causes(graph: Graph) -> dict[str, tuple[Cause, ...]]:
    """Every buffer that may differ from run to run, with the causes upstream of it (in graph order).

    Cached until the next edit. A buffer missing from the answer is computed the same way each run.
    """
    causes: dict[str, tuple[Cause, ...]] = graph.cached("variance", lambda: _buffer_causes(graph))
    return causes


def _buffer_causes(graph: Graph) -> dict[str, tuple[Cause, ...]]:
    own = _own_causes(graph)
    if not own:
        return {}
    flow = nx.DiGraph()
    for accesses in dataflow_facts(graph).args.values():
        read = [a for a, f in accesses.items() if f & AccessFlag.READ]
        written = [a for a, f in accesses.items() if f & AccessFlag.WRITE]
        flow.add_edges_from((r, w) for r in read for w in written if r != w)
    found: dict[str, dict[Cause, None]] = {}
    for buffer, listed in own.items():
        reached = {buffer} | (nx.descendants(flow, buffer) if buffer in flow else set())
        for name in reached:
            found.setdefault(name, {}).update(dict.fromkeys(listed))
    return {name: tuple(c) for name, c in found.items()}


def causes_to_data(causes: dict[str, tuple[Cause, ...]]) -> dict[str, list[list[str]]]:
    """Plain JSON data (``{buffer: [[kind, node, detail], ...]}``), to cross a process boundary."""
    return {name: [[c.kind, c.node, c.detail] for c in listed] for name, listed in causes.items()}


def causes_from_data(data: dict[str, Iterable[Iterable[str]]]) -> dict[str, tuple[Cause, ...]]:
    """The reverse of :func:`causes_to_data`."""
    out: dict[str, tuple[Cause, ...]] = {}
    for name, listed in data.items():
        out[name] = tuple(Cause(*item) for item in listed)  # type: ignore[arg-type]
    return out
