"""Who reads and who writes each buffer, as facts and as a networkx graph.

The facts combine the graph's bindings with each kernel's per-parameter access (from Taichi's
SPIR-V code generator where Vulkan runs, else from the kernel's source; see :mod:`graphlab.kernelfacts.access`).

Two views:

- :func:`dataflow_graph`: a ``networkx.DiGraph`` with one node per dispatch (its definition-level
  id) and one per buffer (``arg:x``); an edge ``arg:x -> p2g`` is a read, ``p2g -> arg:x`` a write,
  each with its program ``order``. Dependency edges (``kind="dep"``) carry ``hazards``: per buffer,
  ``"raw"``, ``"war"`` or ``"waw"`` (a frozenset where several hold). Sequences are sub-graphs
  recorded on the nodes (``sequence``) and in ``G.graph["sequences"]`` with their repeat count; the
  dependency of repetition k+1 on repetition k shows as ``dep`` edges with ``carried=True``.
- :attr:`DataflowFacts.trace`: the program with each sequence use expanded at most twice (enough to
  see every dependency carried from one repetition to the next), which the role and memory rules walk.

A dispatch whose kernel writes a buffer before reading it (:class:`graphlab.kernelfacts.access.FirstAccess`)
does not depend on the buffer's previous writer through a read: it is ordered after it only as
write-after-write.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import networkx as nx

from graphlab.kernelfacts.access import AccessFlag, AccessReport, FirstAccess, kernels_access
from graphlab.kernelfacts.access_order import first_from_flags
from graphlab.model.nodes import Cond, Dispatch, Loop, SequenceUse, children

if TYPE_CHECKING:
    from graphlab.model.graph import Graph

#: Short names for the flags of :class:`graphlab.kernelfacts.access.AccessFlag` (its values are Taichi's).
READ, WRITE = AccessFlag.READ, AccessFlag.WRITE
_READ_BIT, _WRITE_BIT = int(READ), int(WRITE)
_READ_OR_WRITE = _READ_BIT | _WRITE_BIT
#: Dependency kinds, strongest first: read-after-write, write-after-read, write-after-write.
HAZARDS = ("raw", "war", "waw")


@dataclass(frozen=True)
class TraceEntry:
    """One dispatch occurrence in the (at most twice expanded) program."""

    position: int
    node_id: str
    args: dict[str, AccessFlag]  # arg name -> READ | WRITE flags, merged over parameters
    uses: tuple[str, ...]  # enclosing sequence use ids, outermost first
    first: Mapping[str, FirstAccess] = field(default_factory=dict)  # arg name -> order of the first access

    def first_access(self, arg: str) -> FirstAccess:
        """Whether this occurrence's first access to ``arg`` reads what earlier steps left there."""
        return self.first.get(arg) or first_from_flags(self.args.get(arg, AccessFlag.NONE))


@dataclass
class DataflowFacts:
    """Per-dispatch access by parameter and by arg, and the bounded trace."""

    params: dict[str, dict[str, AccessFlag]] = field(default_factory=dict)  # node id -> param -> flags
    args: dict[str, dict[str, AccessFlag]] = field(default_factory=dict)  # node id -> arg -> flags
    trace: list[TraceEntry] = field(default_factory=list)
    source: dict[str, str] = field(default_factory=dict)  # kernel ref -> "vulkan" | "ast"
    first: dict[str, dict[str, FirstAccess]] = field(default_factory=dict)  # node id -> arg -> first access

    def readers(self, arg: str) -> list[str]:
        """Dispatch ids that read ``arg``."""
        return list(self._by_arg.get(arg, ((), ()))[0])

    def writers(self, arg: str) -> list[str]:
        """Dispatch ids that write ``arg``."""
        return list(self._by_arg.get(arg, ((), ()))[1])

    @cached_property
    def _by_arg(self) -> dict[str, tuple[list[str], list[str]]]:
        """(readers, writers) of each arg, in program order, made in one pass on the first question.

        Rules ask for every arg in turn; scanning all dispatches per question was args x dispatches.
        The facts are complete when anyone asks (:func:`dataflow_facts` returns them finished).
        """
        index: dict[str, tuple[list[str], list[str]]] = {}
        for node_id, accesses in self.args.items():
            for arg, flags in accesses.items():
                bits = int(flags)  # int arithmetic: enum.Flag operators cost a microsecond each
                if bits & _READ_OR_WRITE:
                    readers, writers = index.setdefault(arg, ([], []))
                    if bits & _READ_BIT:
                        readers.append(node_id)
                    if bits & _WRITE_BIT:
                        writers.append(node_id)
        return index


def kernel_accesses(graph: Graph, access: str = "auto") -> tuple[dict[str, dict[str, AccessFlag]], dict[str, str]]:
    """Per-kernel parameter access for every kernel the graph dispatches, and which source answered."""
    reports = kernel_reports(graph, access)
    flags = {ref: dict(report) for ref, report in reports.items()}
    return flags, {ref: report.source for ref, report in reports.items()}


def kernel_reports(graph: Graph, access: str = "auto") -> dict[str, AccessReport]:
    """The :class:`~graphlab.kernelfacts.access.AccessReport` of every kernel the graph dispatches, by ref.

    Open annotations (``ti.types.ndarray(ndim=1)``) are compiled with the spec of the first arg
    bound to them, so Taichi's compiler sees the types the graph will really pass.
    """
    kernels = graph.kernels
    if not kernels:
        return {}
    specs: dict[str, dict[str, object]] = {}
    args = graph.args
    seen: set[tuple[str, tuple[tuple[str, str | None], ...]]] = set()
    for _, node in graph.nodes():
        if isinstance(node, Dispatch) and (node.kernel.ref, node.bindings) not in seen:
            seen.add((node.kernel.ref, node.bindings))  # the first dispatch of a kernel with these bindings decides
            for param, bound in node.bindings:
                arg = args.get(bound) if bound else None
                if arg is not None and arg.kind == "ndarray":
                    specs.setdefault(node.kernel.ref, {}).setdefault(param, arg)
    return kernels_access([info.fn for info in kernels], source=access, arg_specs=specs)  # type: ignore[arg-type]


def dataflow_facts(graph: Graph, *, access: str = "auto") -> DataflowFacts:
    """Compute the facts (cached on the graph until its next edit)."""
    facts: DataflowFacts = graph.cached(f"dataflow:{access}", lambda: _compute_facts(graph, access))
    return facts


def access_mode(graph: Graph) -> str:
    """The ``access`` that gives the graph's default facts again elsewhere: ``"ast"`` when no kernel's
    came from Vulkan (a child process then skips a Vulkan probe that would fail again), else ``"auto"``."""
    sources = dataflow_facts(graph).source.values()
    return "ast" if sources and all(source == "ast" for source in sources) else "auto"


def assume_access(graph: Graph, access: str) -> None:
    """Make ``access`` answer for the graph's default (``"auto"``) facts until its next edit; for a
    process that already knows, from :func:`access_mode` of its parent, where the facts come from."""
    if access != "auto":
        graph.cached("dataflow:auto", lambda: dataflow_facts(graph, access=access))


def _compute_facts(graph: Graph, access: str) -> DataflowFacts:
    reports = kernel_reports(graph, access)
    facts = DataflowFacts(source={ref: report.source for ref, report in reports.items()})
    # what a dispatch accesses depends only on its kernel and bindings: work it out once per pair, so
    # 10**5 dispatches of a few kernels cost a few walks of the flags, not 10**5
    known: dict[tuple[str, tuple[tuple[str, str | None], ...]], _DispatchAccess] = {}
    for node_id, node in graph.nodes():
        if not isinstance(node, Dispatch):
            continue
        key = (node.kernel.ref, node.bindings)
        found = known.get(key)
        if found is None:
            found = known[key] = _dispatch_access(graph, node, reports.get(node.kernel.ref))
        # dispatches with one kernel and bindings share these dicts: the facts are read, never edited
        facts.params[node_id], facts.args[node_id], facts.first[node_id] = found
    _expand(graph, facts, None, "", (), facts.trace)
    return facts


#: One dispatch's access: by parameter, by arg (merged over parameters), and each arg's first access.
_DispatchAccess = tuple[dict[str, AccessFlag], dict[str, AccessFlag], dict[str, FirstAccess]]


def _dispatch_access(graph: Graph, node: Dispatch, report: AccessReport | None) -> _DispatchAccess:
    """The access facts of one dispatch, from its kernel's report and its bindings."""
    args = graph.args
    known: Mapping[str, AccessFlag] = report if report is not None else {}
    params = {p: known.get(p, AccessFlag.READ_WRITE) for p, _ in node.bindings}
    merged: dict[str, AccessFlag] = {}
    orders: dict[str, set[FirstAccess]] = {}
    for param, bound in node.bindings:
        if bound is not None and bound in args and args[bound].is_buffer:
            flags = params.get(param, AccessFlag.READ_WRITE)
            merged[bound] = merged.get(bound, AccessFlag.NONE) | flags
            if flags:
                orders.setdefault(bound, set()).add(_first_access(graph, node, report, param, flags))
    # one buffer on two parameters (GL012): their accesses interleave in an order nobody knows
    first = {a: o.pop() if len(o) == 1 else FirstAccess.MAY_READ for a, o in orders.items()}
    return params, merged, first


def _first_access(
    graph: Graph, node: Dispatch, report: AccessReport | None, param: str, flags: AccessFlag
) -> FirstAccess:
    """The order for one bound parameter; where write-first needs two buffers of one shape, the args say."""
    if report is None or param not in report:
        return first_from_flags(flags)
    first = report.first_access(param)
    others = report.shaped_like.get(param)
    if first is FirstAccess.WRITE or not others:
        return first
    bound = dict(node.bindings)
    shape = _declared_shape(graph, bound.get(param))
    if shape is not None and all(_declared_shape(graph, bound.get(other)) == shape for other in others):
        return FirstAccess.WRITE
    return first


def _declared_shape(graph: Graph, name: str | None) -> tuple[object, ...] | None:
    """The arg's declared shape (fixed or symbolic dims); None where it accepts any shape."""
    arg = graph.args.get(name) if name is not None else None
    return tuple(arg.shape) if arg is not None and arg.is_buffer and arg.shape is not None else None


def _expand(
    graph: Graph, facts: DataflowFacts, container: str | None, prefix: str, uses: tuple[str, ...], out: list[TraceEntry]
) -> None:
    """Append the trace of ``container`` to ``out``, each entry at its position in the whole trace."""
    body = graph.body if container is None else graph.sequences[container]
    args = graph.args
    for node in body:
        node_id = f"{prefix}{node.name}"
        if isinstance(node, Dispatch):
            out.append(TraceEntry(len(out), node_id, facts.args.get(node_id, {}), uses, facts.first.get(node_id, {})))
        elif isinstance(node, SequenceUse):
            for _ in range(min(node.repeat, 2)):
                _expand(graph, facts, node.sequence, f"{node_id}/", (*uses, node_id), out)
        elif isinstance(node, Cond):
            # the decision reads the flag; both branches are walked (which one runs is known only at run time)
            out.append(TraceEntry(len(out), node_id, {node.flag: READ}, uses))
            for segment, sequence in children(node):
                _expand(graph, facts, sequence, f"{node_id}/{segment}", (*uses, node_id), out)
        elif isinstance(node, Loop):
            for _ in range(2):  # enough to see what one iteration carries into the next
                _expand(graph, facts, node.body, f"{node_id}/", (*uses, node_id), out)
                decision = node.while_ or node.count
                if decision and args.get(decision) is not None and args[decision].is_buffer:
                    out.append(TraceEntry(len(out), node_id, {decision: READ}, uses))


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
    """Dispatch -> dispatch edges for read-after-write, write-after-read and write-after-write.

    Each edge's ``hazards`` names the kind per buffer: one edge can be RAW on one buffer and WAR on
    another. ``hazard`` and ``args`` are kept for older callers (``hazard``: the strongest kind).
    """
    first: dict[str, int] = {}
    for entry in facts.trace:
        first.setdefault(entry.node_id, entry.position)
    last_write: dict[str, TraceEntry] = {}
    reads_since: dict[str, list[TraceEntry]] = {}
    kinds: dict[tuple[str, str], dict[str, set[str]]] = {}
    for entry in facts.trace:
        for arg, flags in entry.args.items():
            sources = []
            if flags & READ and arg in last_write and entry.first_access(arg).may_read:
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
                    flow.add_edge(source.node_id, entry.node_id, kind="dep", args={arg}, carried=carried)
                kinds.setdefault((source.node_id, entry.node_id), {}).setdefault(arg, set()).add(hazard)
            if flags & WRITE:
                last_write[arg] = entry
                reads_since[arg] = []
            if flags & READ:
                reads_since.setdefault(arg, []).append(entry)
    for (u, v), per_arg in kinds.items():
        data = flow.edges[u, v]
        data["hazards"] = {a: next(iter(h)) if len(h) == 1 else frozenset(h) for a, h in sorted(per_arg.items())}
        found = set().union(*per_arg.values())
        data["hazard"] = next(h for h in HAZARDS if h in found)


def dependency_order(graph: Graph, *, access: str = "auto") -> list[str]:
    """Dispatch ids in an order that respects every non-carried dependency (networkx topological sort)."""
    flow = dataflow_graph(graph, access=access)
    deps = nx.DiGraph()
    deps.add_nodes_from(n for n, d in flow.nodes(data=True) if d["kind"] == "dispatch")
    deps.add_edges_from((u, v) for u, v, d in flow.edges(data=True) if d["kind"] == "dep" and not d["carried"])
    return list(nx.lexicographical_topological_sort(deps, key=lambda n: _program_index(graph)[n]))


def _program_index(graph: Graph) -> dict[str, int]:
    return {node_id: i for i, (node_id, _) in enumerate(graph.nodes())}
