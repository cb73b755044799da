"""Where a graph's nodes live: node ids resolved to a place, and which sequence holds which.

A graph's content is a top-level body and sequence definitions by name (see :mod:`graphlab.model.graph`).
The functions here read that content as plain data: they resolve a node id (``substep/p2g``,
``branch/then/halve``) to its container and index, a use id to the sequence definition it stands
for, build the containment graph (which definition uses which) and refuse the edits that would
make a sequence contain itself (GL015) or nest past :data:`graphlab.core.nesting.MAX_NESTING`.
:class:`graphlab.Graph` calls them with its own content; they change nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import networkx as nx

from graphlab.core.errors import GraphError
from graphlab.core.names import check_node_name
from graphlab.core.nesting import MAX_NESTING
from graphlab.model.nodes import Cond, Node, children

#: The top level in the containment graph (sequence names are never empty).
TOP = ""

#: Sequence definitions by name.
Sequences = Mapping[str, Sequence[Node]]


def join(parent: str | None, name: str) -> str:
    """The id of ``name`` inside the use ``parent`` (None: the top level)."""
    return f"{parent}/{name}" if parent else name


def parent_id(node_id: str) -> str | None:
    """The id of the use holding ``node_id`` (None at the top level)."""
    return node_id.rsplit("/", 1)[0] if "/" in node_id else None


def body_of(top: Sequence[Node], sequences: Sequences, name: str | None) -> Sequence[Node]:
    """The body of sequence ``name`` (None: the top level)."""
    return top if name is None else sequences[name]


#: Where the caller keeps each container's node names to their indexes (see :func:`positions`).
Positions = Callable[[str | None], Mapping[str, int]]


def positions(body: Sequence[Node]) -> dict[str, int]:
    """Each node name of ``body`` to its index (the first, should a name repeat)."""
    found: dict[str, int] = {}
    for i, node in enumerate(body):
        found.setdefault(node.name, i)
    return found


def locate(
    graph: str, top: Sequence[Node], sequences: Sequences, node_id: str, *, index_of: Positions | None = None
) -> tuple[str | None, int]:
    """(container sequence name or None for the top, index) of a node id; a GraphError lists close ids.

    ``graph`` is the graph's name, for the message. ``index_of(container)`` gives the
    :func:`positions` of a container where the caller keeps them: locating each of n nodes then
    costs O(n) in all, not O(n**2).
    """
    if not isinstance(node_id, str) or not node_id:
        raise GraphError(f"node id must be a non-empty string like 'substep/p2g', got {node_id!r}")
    container: str | None = None
    parts = node_id.split("/")
    depth = 0
    while depth < len(parts):
        part = parts[depth]
        body = body_of(top, sequences, container)
        if index_of is None:
            index = next((i for i, n in enumerate(body) if n.name == part), None)
        else:
            index = index_of(container).get(part)
        if index is None:
            here = "/".join(parts[:depth])
            options = ", ".join(join(here or None, n.name) for n in body[:12]) or "none"
            raise GraphError(f"graph {graph!r} has no node {node_id!r}; nodes here: {options}")
        if depth == len(parts) - 1:
            return container, index
        node = body[index]
        inner = children(node)
        if not inner:
            raise GraphError(f"{'/'.join(parts[: depth + 1])!r} is a dispatch; it has no children")
        if isinstance(node, Cond):
            depth += 1
            branch = {segment.rstrip("/"): sequence for segment, sequence in inner}
            if depth >= len(parts) - 1 or parts[depth] not in branch:
                raise GraphError(
                    f"{node_id!r}: inside conditional {'/'.join(parts[:depth])!r} name a branch "
                    f"({' or '.join(branch)}), e.g. '{'/'.join(parts[:depth])}/then/<node>'"
                )
            container = branch[parts[depth]]
        else:
            container = inner[0][1]
        depth += 1
    raise GraphError(f"node id {node_id!r} names a branch, not a node")


def node_at(
    graph: str, top: Sequence[Node], sequences: Sequences, node_id: str, *, index_of: Positions | None = None
) -> Node:
    """The node with this id (see :func:`locate`)."""
    container, index = locate(graph, top, sequences, node_id, index_of=index_of)
    return body_of(top, sequences, container)[index]


def container_of_use(
    graph: str, top: Sequence[Node], sequences: Sequences, use_id: str | None, *, index_of: Positions | None = None
) -> str | None:
    """The sequence definition a use id stands for (None: the top level)."""
    if use_id is None:
        return None
    if use_id.endswith(("/then", "/else")):
        parent, branch = use_id.rsplit("/", 1)
        node = node_at(graph, top, sequences, parent, index_of=index_of)
        for segment, sequence in children(node):
            if segment == f"{branch}/":
                return sequence
        raise GraphError(f"{use_id!r}: {parent!r} has no {branch!r} branch")
    node = node_at(graph, top, sequences, use_id, index_of=index_of)
    inner = children(node)
    if not inner or isinstance(node, Cond):
        what = "a dispatch" if not inner else "a conditional (name its branch: '.../then')"
        raise GraphError(f"{use_id!r} is {what}, not a sequence; nodes go into sequences")
    return inner[0][1]


def unique_name(body: Sequence[Node], base: str) -> str:
    """``base``, or ``base#k`` with the first k from 2 that no node of ``body`` is called."""
    check_node_name(base)
    taken = {n.name for n in body}
    if base not in taken:
        return base
    stem = base.split("#", 1)[0]
    k = 2
    while f"{stem}#{k}" in taken:
        k += 1
    return f"{stem}#{k}"


class NameIndex:
    """The node names taken in each container, kept between inserts so naming a node is O(1).

    :func:`unique_name` reads a whole body per call, which makes building or loading n nodes
    O(n**2). The graph keeps one index: :meth:`add` records a node it appended or inserted, and
    :meth:`clear` forgets everything after any other edit (a removal, a rename, an undo), so a
    container is read again only on its next insert. For each stem it also remembers the k below
    which every ``stem#k`` is taken, so numbering ``fill#2`` ... ``fill#100000`` is not quadratic either.
    """

    def __init__(self) -> None:
        self._taken: dict[str | None, set[str]] = {}
        self._next: dict[str | None, dict[str, int]] = {}

    def unique(self, container: str | None, body: Sequence[Node], base: str) -> str:
        """What :func:`unique_name` gives for ``body`` (the content of ``container``); changes no node."""
        check_node_name(base)
        taken = self._taken.get(container)
        if taken is None:
            taken = self._taken[container] = {n.name for n in body}
            self._next[container] = {}
        if base not in taken:
            return base
        stem = base.split("#", 1)[0]
        hints = self._next[container]
        k = hints.get(stem, 2)
        while f"{stem}#{k}" in taken:
            k += 1
        hints[stem] = k  # every stem#j for 2 <= j < k is taken, and stays so until clear()
        return f"{stem}#{k}"

    def add(self, container: str | None, name: str) -> None:
        """Record a node named ``name`` that was just put into ``container``."""
        taken = self._taken.get(container)
        if taken is not None:
            taken.add(name)

    def clear(self) -> None:
        """Forget every container (after an edit other than adding a node)."""
        self._taken.clear()
        self._next.clear()


def containment(top: Sequence[Node], sequences: Sequences) -> nx.DiGraph:
    """Which sequence definition uses which (an edge parent -> child; the top level is :data:`TOP`)."""
    tree = nx.DiGraph()
    for name, body in [(TOP, top), *sequences.items()]:
        tree.add_node(name)
        for node in body:
            for _, sequence in children(node):
                tree.add_edge(name, sequence)
    return tree


def reachable(top: Sequence[Node], sequences: Sequences) -> set[str]:
    """The sequence definitions the top level uses, directly or not."""
    return set(nx.descendants(containment(top, sequences), TOP))


def check_no_cycle(
    top: Sequence[Node], sequences: Sequences, container: str | None, sequence: str, *, tree: nx.DiGraph | None = None
) -> None:
    """Refuse using ``sequence`` inside ``container`` when it would contain itself (GL015).

    ``tree``: the :func:`containment` graph of this content, where the caller keeps one (it is read only).
    """
    if container is None:
        return
    tree = containment(top, sequences) if tree is None else tree
    if container == sequence or (sequence in tree and nx.has_path(tree, sequence, container)):
        raise GraphError(f"GL015: sequence {sequence!r} cannot be used inside {container!r}: it would contain itself")


def check_nesting(
    top: Sequence[Node],
    sequences: Sequences,
    edges: Sequence[tuple[str | None, str]],
    *,
    tree: nx.DiGraph | None = None,
) -> None:
    """Refuse an edit putting sequences inside containers (``None``: the top) past MAX_NESTING.

    Depth counts the sequences on one chain of containment, so a sequence defined but not used
    yet counts as used at the top: attaching it anywhere only makes it deeper. ``tree``: the
    :func:`containment` graph of this content, where the caller keeps one (copied, not changed).
    """
    tree = containment(top, sequences) if tree is None else tree.copy()
    tree.add_edges_from((container or TOP, sequence) for container, sequence in edges)
    tree.remove_node(TOP)
    if not tree or not nx.is_directed_acyclic_graph(tree):  # check_no_cycle names a cycle
        return
    chain = nx.dag_longest_path(tree)
    if len(chain) > MAX_NESTING:
        raise GraphError(
            f"sequences would nest {len(chain)} deep ({' > '.join(chain)}), past the limit of {MAX_NESTING} "
            "(graphlab.core.nesting.MAX_NESTING); flatten a level, e.g. put the dispatches of a sequence "
            "used once with repeat=1 into its parent"
        )
