"""Who reads and who writes each buffer, as facts and as a networkx graph.

The facts combine the graph's bindings with each kernel's per-parameter access (from Taichi's
SPIR-V code generator where Vulkan runs, else from the kernel's source; see :mod:`graphlab.access`).

Two views:

- :func:`dataflow_graph`: a ``networkx.DiGraph`` with one node per dispatch (its definition-level
  id) and one per buffer (``arg:x``); an edge ``arg:x -> p2g`` is a read, ``p2g -> arg:x`` a write,
  each with its program ``order``. Sequences are sub-graphs recorded on the nodes (``sequence``)
  and in ``G.graph["sequences"]`` with their repeat count; the dependency of repetition k+1 on
  repetition k shows as ``dep`` edges with ``carried=True``.
- :attr:`DataflowFacts.trace`: the program with each sequence use expanded at most twice (enough to
  see every dependency carried from one repetition to the next), which the role and memory rules walk.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import networkx as nx

from graphlab.access import AccessFlag, kernels_access
from graphlab.nodes import Cond, Dispatch, Loop, SequenceUse, children

if TYPE_CHECKING:
    from graphlab.graph import Graph

#: Short names for the flags of :class:`graphlab.access.AccessFlag` (its values are Taichi's).
READ, WRITE = AccessFlag.READ, AccessFlag.WRITE


@dataclass(frozen=True)
class TraceEntry:
    """One dispatch occurrence in the (at most twice expanded) program."""

    position: int
    node_id: str
    args: dict[str, AccessFlag]  # arg name -> READ | WRITE flags, merged over parameters
    uses: tuple[str, ...]  # enclosing sequence use ids, outermost first


@dataclass
class DataflowFacts:
    """Per-dispatch access by parameter and by arg, and the bounded trace."""

    params: dict[str, dict[str, AccessFlag]] = field(default_factory=dict)  # node id -> param -> flags
    args: dict[str, dict[str, AccessFlag]] = field(default_factory=dict)  # node id -> arg -> flags
    trace: list[TraceEntry] = field(default_factory=list)
    source: dict[str, str] = field(default_factory=dict)  # kernel ref -> "vulkan" | "ast"

    def readers(self, arg: str) -> list[str]:
        """Dispatch ids that read ``arg``."""
        return [n for n, acc in self.args.items() if acc.get(arg, AccessFlag.NONE) & READ]

    def writers(self, arg: str) -> list[str]:
        """Dispatch ids that write ``arg``."""
        return [n for n, acc in self.args.items() if acc.get(arg, AccessFlag.NONE) & WRITE]


def kernel_accesses(
    graph: Graph, access: str = "auto"
) -> tuple[dict[str, dict[str, AccessFlag]], dict[str, str]]:
    """Per-kernel parameter access for every kernel the graph dispatches, and which source answered.

    Open annotations (``ti.types.ndarray(ndim=1)``) are compiled with the spec of the first arg
    bound to them, so Taichi's compiler sees the types the graph will really pass.
    """
    kernels = graph.kernels
    if not kernels:
        return {}, {}
    specs: dict[str, dict[str, object]] = {}
    for _, node in graph.nodes():
        if isinstance(node, Dispatch):
            for param, bound in node.bindings:
                arg = graph.args.get(bound) if bound else None
                if arg is not None and arg.kind == "ndarray":
                    specs.setdefault(node.kernel.ref, {}).setdefault(param, arg)
    reports = kernels_access([info.fn for info in kernels], source=access, arg_specs=specs)  # type: ignore[arg-type]
    flags = {ref: dict(report) for ref, report in reports.items()}
    return flags, {ref: report.source for ref, report in reports.items()}


def dataflow_facts(graph: Graph, *, access: str = "auto") -> DataflowFacts:
    """Compute the facts (cached on the graph until its next edit)."""
    facts: DataflowFacts = graph.cached(f"dataflow:{access}", lambda: _compute_facts(graph, access))
    return facts


def _compute_facts(graph: Graph, access: str) -> DataflowFacts:
    per_kernel, sources = kernel_accesses(graph, access)
    facts = DataflowFacts(source=sources)
    for node_id, node in graph.nodes():
        if not isinstance(node, Dispatch):
            continue
        params = {p: per_kernel.get(node.kernel.ref, {}).get(p, AccessFlag.READ_WRITE) for p, _ in node.bindings}
        facts.params[node_id] = params
        merged: dict[str, AccessFlag] = {}
        for param, bound in node.bindings:
            if bound is not None and bound in graph.args and graph.args[bound].is_buffer:
                merged[bound] = merged.get(bound, AccessFlag.NONE) | params.get(param, AccessFlag.READ_WRITE)
        facts.args[node_id] = merged
    facts.trace = list(_expand(graph, facts, None, "", ()))
    for position, entry in enumerate(facts.trace):
        facts.trace[position] = TraceEntry(position, entry.node_id, entry.args, entry.uses)
    return facts


def _expand(
    graph: Graph, facts: DataflowFacts, container: str | None, prefix: str, uses: tuple[str, ...]
) -> Iterator[TraceEntry]:
    body = graph.body if container is None else graph.sequences[container]
    for node in body:
        node_id = f"{prefix}{node.name}"
        if isinstance(node, Dispatch):
            yield TraceEntry(0, node_id, facts.args.get(node_id, {}), uses)
        elif isinstance(node, SequenceUse):
            for _ in range(min(node.repeat, 2)):
                yield from _expand(graph, facts, node.sequence, f"{node_id}/", (*uses, node_id))
        elif isinstance(node, Cond):
            # the decision reads the flag; both branches are walked (which one runs is known only at run time)
            yield TraceEntry(0, node_id, {node.flag: READ}, uses)
            for segment, sequence in children(node):
                yield from _expand(graph, facts, sequence, f"{node_id}/{segment}", (*uses, node_id))
        elif isinstance(node, Loop):
            for _ in range(2):  # enough to see what one iteration carries into the next
                yield from _expand(graph, facts, node.body, f"{node_id}/", (*uses, node_id))
                decision = node.while_ or node.count
                if decision and graph.args.get(decision) is not None and graph.args[decision].is_buffer:
                    yield TraceEntry(0, node_id, {decision: READ}, uses)


def dataflow_graph(graph: Graph, *, access: str = "auto") -> nx.DiGraph:
    """The data-flow graph: dispatch and buffer nodes, read/write edges, dependency edges."""
    facts = dataflow_facts(graph, access=access)
    flow = nx.DiGraph(name=graph.name)
    sequences: dict[str, dict[str, object]] = {}
    for node_id, node in graph.nodes():
        parent = node_id.rsplit("/", 1)[0] if "/" in node_id else None
        if isinstance(node, SequenceUse):
            sequences[node_id] = {
                "kind": "sequence",
                "sequence": node.sequence,
                "repeat": node.repeat,
                "parent": parent,
                "members": [],
            }
        elif isinstance(node, Loop):
            sequences[node_id] = {
                "kind": "loop",
                "sequence": node.body,
                "while": node.while_,
                "count": node.count,
                "max_iter": node.max_iter,
                "parent": parent,
                "members": [],
            }
            flow.add_node(node_id, kind="decision", control="loop", sequence=parent)
        elif isinstance(node, Cond):
            for segment, sequence in children(node):
                sequences[f"{node_id}/{segment.rstrip('/')}"] = {
                    "kind": "branch",
                    "sequence": sequence,
                    "cond": node_id,
                    "flag": node.flag,
                    "parent": parent,
                    "members": [],
                }
            flow.add_node(node_id, kind="decision", control="cond", sequence=parent)
            flow.add_edge(f"arg:{node.flag}", node_id, kind="read", order=-1)
        else:
            flow.add_node(node_id, kind="dispatch", kernel=node.kernel.name, sequence=parent)
            if parent is not None and parent in sequences:
                sequences[parent]["members"].append(node_id)  # type: ignore[attr-defined]
    flow.graph["sequences"] = sequences
    for name, arg in graph.args.items():
        if arg.is_buffer:
            flow.add_node(f"arg:{name}", kind="buffer", arg=name, role=arg.role, label=arg.describe())
    for order, (node_id, accesses) in enumerate(facts.args.items()):
        for buffer, flags in accesses.items():
            if flags & READ:
                flow.add_edge(f"arg:{buffer}", node_id, kind="read", order=order)
            if flags & WRITE:
                flow.add_edge(node_id, f"arg:{buffer}", kind="write", order=order)
    _add_dependencies(flow, facts)
    return flow


def _add_dependencies(flow: nx.DiGraph, facts: DataflowFacts) -> None:
    """Dispatch -> dispatch edges for read-after-write, write-after-read and write-after-write."""
    first: dict[str, int] = {}
    for entry in facts.trace:
        first.setdefault(entry.node_id, entry.position)
    last_write: dict[str, TraceEntry] = {}
    reads_since: dict[str, list[TraceEntry]] = {}
    for entry in facts.trace:
        for arg, flags in entry.args.items():
            sources = []
            if flags & READ and arg in last_write:
                sources.append((last_write[arg], "raw"))
            if flags & WRITE:
                sources.extend((r, "war") for r in reads_since.get(arg, []) if r.node_id != entry.node_id)
                if arg in last_write:
                    sources.append((last_write[arg], "waw"))
            for source, hazard in sources:
                if source.node_id == entry.node_id and source.position == entry.position:
                    continue
                # carried: source only precedes target through the previous repetition of a sequence
                carried = source.position >= entry.position or first[source.node_id] >= first[entry.node_id]
                if flow.has_edge(source.node_id, entry.node_id):
                    data = flow.edges[source.node_id, entry.node_id]
                    data["args"].add(arg)
                    data["carried"] = data["carried"] and carried
                else:
                    flow.add_edge(source.node_id, entry.node_id, kind="dep", hazard=hazard, args={arg}, carried=carried)
            if flags & WRITE:
                last_write[arg] = entry
                reads_since[arg] = []
            if flags & READ:
                reads_since.setdefault(arg, []).append(entry)


def dependency_order(graph: Graph, *, access: str = "auto") -> list[str]:
    """Dispatch ids in an order that respects every non-carried dependency (networkx topological sort)."""
    flow = dataflow_graph(graph, access=access)
    deps = nx.DiGraph()
    deps.add_nodes_from(n for n, d in flow.nodes(data=True) if d["kind"] == "dispatch")
    deps.add_edges_from((u, v) for u, v, d in flow.edges(data=True) if d["kind"] == "dep" and not d["carried"])
    return list(nx.lexicographical_topological_sort(deps, key=lambda n: _program_index(graph)[n]))


def _program_index(graph: Graph) -> dict[str, int]:
    return {node_id: i for i, (node_id, _) in enumerate(graph.nodes())}
