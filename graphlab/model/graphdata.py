"""A graph's content and how to read it: the base of :class:`graphlab.Graph`.

:class:`GraphData` holds what a graph is (args, a top-level body, sequence definitions), answers
questions about it (nodes by id, kernels, the uses of an arg, its unrolled steps and size), takes
snapshots for undo and tells observers about edits. It changes nothing itself: the editing API
(:mod:`graphlab.model.graph`) does, and every edit ends in :meth:`GraphData._changed`.
Node location is :mod:`graphlab.model.locate`'s, unrolling and size :mod:`graphlab.model.unroll`'s.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import networkx as nx

from graphlab.core.errors import GraphError
from graphlab.core.names import check_name
from graphlab.core.spec import Arg
from graphlab.model import locate
from graphlab.model.kernels import KernelInfo
from graphlab.model.layout import Layout
from graphlab.model.nodes import CONTROL, Cond, Dispatch, Loop, Node, children
from graphlab.model.unroll import GraphSize, Step, measure, unroll

#: Edits after which the name index and the containment graph hold as kept (an added node updates both).
_KEEPS_NAMES = frozenset(("node_added", "arg_added", "arg_changed"))


@dataclass(frozen=True)
class GraphChange:
    """What an edit changed, for observers (a widget, a cache)."""

    kind: str
    node: str | None = None
    detail: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class GraphState:
    """An opaque copy of a graph's content, for undo."""

    args: tuple[Arg, ...]
    body: tuple[Node, ...]
    sequences: tuple[tuple[str, tuple[Node, ...]], ...]
    layout: Layout = field(default_factory=Layout)
    """The editor's canvas positions and guessed bindings (:mod:`graphlab.model.layout`): undone with the content."""


class GraphData:
    """A graph's content (args, nodes, sequence definitions) with its reading API and observers."""

    def __init__(self, name: str = "graph") -> None:
        self.name = name
        self._args: dict[str, Arg] = {}
        self._body: list[Node] = []
        self._sequences: dict[str, list[Node]] = {}
        self._observers: list[Callable[[GraphChange], None]] = []
        self.version = 0
        self._layout = Layout()
        self._cache: dict[str, Any] = {}
        self._names = locate.NameIndex()
        #: The containment graph (:func:`graphlab.model.locate.containment`), kept like the name index: made
        #: on demand, extended by an added node, dropped by any other edit that may change it.
        self._tree: nx.DiGraph | None = None
        self._tree_checked = False  # whether _tree as it is now was found within MAX_NESTING

    # --- reading -----------------------------------------------------------------------------

    @property
    def name(self) -> str:
        """The graph's name: it names the graph in the AOT module and the C host (checked when set)."""
        return self._name

    @name.setter
    def name(self, value: str) -> None:
        self._name = check_name(value, "graph")

    @property
    def args(self) -> Mapping[str, Arg]:
        """Declared args by name, in declaration order (a read-only copy, kept until the next edit).

        Kept, not copied per call: rules read ``graph.args`` once per node, and a copy of 10**5
        args each time made validation scale as args x nodes.
        """
        cached = self._cache.get("args")
        if cached is None:
            cached = self._cache["args"] = MappingProxyType(dict(self._args))
        return cached

    @property
    def body(self) -> tuple[Node, ...]:
        """The top-level nodes in program order (kept until the next edit)."""
        cached = self._cache.get("body")
        if cached is None:
            cached = self._cache["body"] = tuple(self._body)
        return cached

    @property
    def sequences(self) -> Mapping[str, tuple[Node, ...]]:
        """Sequence definitions by name (a read-only copy, kept until the next edit)."""
        cached = self._cache.get("sequences")
        if cached is None:
            copied = {name: tuple(body) for name, body in self._sequences.items()}
            cached = self._cache["sequences"] = MappingProxyType(copied)
        return cached

    @property
    def kernels(self) -> list[KernelInfo]:
        """The distinct kernels the graph dispatches, in first-use order."""
        seen: dict[str, KernelInfo] = {}
        for _, node in self.nodes():
            if isinstance(node, Dispatch):
                seen.setdefault(node.kernel.ref, node.kernel)
        return list(seen.values())

    def node(self, node_id: str) -> Node:
        """The node with this id (``substep/p2g``); a GraphError lists close ids when absent."""
        container, index = self._locate(node_id)
        return self._container(container)[index]

    def nodes(self) -> Iterator[tuple[str, Node]]:
        """Every node with its id, depth first in program order (each sequence use entered once).

        The walk is kept until the next edit: validation asks for it once per rule.
        """
        cached = self._cache.get("nodes")
        if cached is None:
            cached = self._cache["nodes"] = tuple(self._walk(None, ""))
        return iter(cached)

    def _walk(self, container: str | None, prefix: str) -> Iterator[tuple[str, Node]]:
        for node in self._container(container):
            node_id = f"{prefix}{node.name}"
            yield node_id, node
            for segment, sequence in children(node):
                yield from self._walk(sequence, f"{node_id}/{segment}")

    def cached(self, key: str, compute: Callable[[], Any]) -> Any:
        """``compute()``, kept under ``key`` until the graph's next edit.

        How modules above the model (data flow, for one) cache what they derive from a graph; use a
        key that names your module (``"dataflow:..."``).
        """
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]

    @property
    def has_control_flow(self) -> bool:
        """Whether the graph holds conditionals or loops (its steps then depend on run-time flags)."""
        cached = self._cache.get("has_control_flow")
        if cached is None:  # over definitions, not node ids: a shared sequence is looked at once
            reached = [None, *self._reachable()]
            cached = any(isinstance(node, CONTROL) for name in reached for node in self._container(name))
            self._cache["has_control_flow"] = cached
        return cached

    def size(self) -> GraphSize:
        """How large the graph gets once unrolled, counted arithmetically (cached until the next edit).

        Repeats multiply along nesting and sum over siblings, so a graph whose unrolling would never
        end is measured at once; validation refuses one past the limits (GL024, :mod:`graphlab.core.limits`).
        """
        cached = self._cache.get("size")
        if cached is None:
            cached = self._cache["size"] = measure(self)
        return cached

    def steps(self) -> list[Step]:
        """The unrolled dispatches in launch order (cached until the next edit).

        Raises GraphError for a graph with control flow: which steps run depends on its flags.
        """
        cached = self._cache.get("steps")
        if cached is None:
            cached = self._cache["steps"] = unroll(self)
        return cached

    def step_count(self) -> int:
        """Number of dispatches of the unrolled graph, without unrolling it (see :meth:`steps`)."""
        if self.has_control_flow:
            self.steps()  # raises with the reason
        return self.size().dispatches

    def uses_of(self, arg_name: str) -> list[tuple[str, str]]:
        """``(node id, parameter)`` pairs where ``arg_name`` is used (``flag``/``while``/``count`` for control).

        Read from an index of every arg's uses, made in one walk and kept until the next edit, so
        asking for each of n args costs one walk, not n.
        """
        return list(self._uses().get(arg_name, ()))

    def _uses(self) -> dict[str, list[tuple[str, str]]]:
        """Every arg's uses, in program order (cached until the next edit)."""
        cached = self._cache.get("uses")
        if cached is None:
            cached = self._cache["uses"] = {}
            for node_id, node in self.nodes():
                if isinstance(node, Dispatch):
                    for param, bound in node.bindings:
                        if bound is not None:
                            cached.setdefault(bound, []).append((node_id, param))
                elif isinstance(node, Cond):
                    cached.setdefault(node.flag, []).append((node_id, "flag"))
                elif isinstance(node, Loop):
                    if node.while_ is not None:
                        cached.setdefault(node.while_, []).append((node_id, "while"))
                    if node.count is not None and node.count != node.while_:
                        cached.setdefault(node.count, []).append((node_id, "count"))
        return cached

    # --- undo support & observers ------------------------------------------------------------------

    def snapshot(self) -> GraphState:
        """An immutable copy of the content (args, nodes, sequences), for undo."""
        return GraphState(
            tuple(self._args.values()),
            tuple(self._body),
            tuple((name, tuple(body)) for name, body in self._sequences.items()),
            self._layout,
        )

    def restore(self, state: GraphState) -> None:
        """Put back content taken with :meth:`snapshot`."""
        if not isinstance(state, GraphState):
            raise GraphError(f"restore() takes a GraphState from snapshot(), got {type(state).__name__}")
        self._args = {arg.name: arg for arg in state.args}
        self._body = list(state.body)
        self._sequences = {name: list(body) for name, body in state.sequences}
        self._layout = state.layout
        self._changed("restored")

    @property
    def layout(self) -> Layout:
        """Where the editor's canvas draws each node, and its guessed bindings (:mod:`graphlab.model.layout`)."""
        return self._layout

    @layout.setter
    def layout(self, value: Layout) -> None:
        # not an edit of what the graph computes: no version bump, so a drag keeps a debug session going
        if not isinstance(value, Layout):
            raise GraphError(f"layout takes a graphlab.model.layout.Layout, got {type(value).__name__}")
        self._layout = value

    def __getstate__(self) -> dict[str, Any]:
        """For pickle and ``copy.deepcopy``: the content and observers, not what is derived from them
        (the caches and indexes, some of them read-only views that cannot be pickled, are remade on demand)."""
        state = dict(self.__dict__)
        state.update(_cache={}, _names=locate.NameIndex(), _tree=None, _tree_checked=False)
        return state

    def observe(self, callback: Callable[[GraphChange], None]) -> Callable[[], None]:
        """Call ``callback(change)`` after every edit; returns a function that unsubscribes."""
        self._observers.append(callback)

        def unsubscribe() -> None:
            if callback in self._observers:
                self._observers.remove(callback)

        return unsubscribe

    def _changed(self, kind: str, node: str | None = None, detail: Mapping[str, Any] | None = None) -> None:
        self.version += 1
        self._cache.clear()
        if kind not in _KEEPS_NAMES:  # _added() has recorded an added node's name; other edits drop the index
            self._names.clear()
            self._tree, self._tree_checked = None, False
        if not self._observers:  # building 10**5 nodes with nobody listening makes no records
            return
        change = GraphChange(kind, node, dict(detail or {}))
        for callback in list(self._observers):
            try:
                callback(change)
            except Exception as exc:  # an observer must not break the model
                warnings.warn(f"graph observer {callback!r} failed: {exc!r}", RuntimeWarning, stacklevel=3)

    # --- internals -------------------------------------------------------------------------------

    def _arg(self, name: str) -> Arg:
        try:
            return self._args[name]
        except KeyError:
            known = ", ".join(self._args) or "none"
            raise GraphError(f"graph {self.name!r} has no arg {name!r}; declared args: {known}") from None

    def _container(self, name: str | None) -> list[Node]:
        return self._body if name is None else self._sequences[name]

    def _locate(self, node_id: str) -> tuple[str | None, int]:
        return locate.locate(self.name, self._body, self._sequences, node_id, index_of=self._positions)

    def _positions(self, container: str | None) -> Mapping[str, int]:
        """Node names of a container to their indexes, kept until the next edit (one id lookup is O(1))."""
        kept: dict[str | None, dict[str, int]] = self._cache.setdefault("positions", {})
        found = kept.get(container)
        if found is None:
            found = kept[container] = locate.positions(self._container(container))
        return found

    def _container_of_use(self, use_id: str | None) -> str | None:
        """The sequence definition a use id stands for (None: the top level)."""
        return locate.container_of_use(self.name, self._body, self._sequences, use_id, index_of=self._positions)

    def _unique(self, container: str | None, base: str) -> str:
        return self._names.unique(container, self._container(container), base)

    def _added(self, container: str | None, node: Node, node_id: str) -> str:
        """Record ``node``, just put into ``container``, and tell observers; returns its id."""
        self._names.add(container, node.name)
        if self._tree is not None:
            for _, sequence in children(node):
                if not self._tree.has_edge(container or locate.TOP, sequence):
                    self._tree.add_edge(container or locate.TOP, sequence)
                    self._tree_checked = False
        self._changed("node_added", node_id)
        return node_id

    def _containment(self) -> nx.DiGraph:
        """The containment graph, made once and kept while nodes are only added (see ``_tree``)."""
        if self._tree is None:
            self._tree = locate.containment(self._body, self._sequences)
        return self._tree

    def _check_no_cycle(self, container: str | None, sequence: str) -> None:
        locate.check_no_cycle(self._body, self._sequences, container, sequence, tree=self._containment())

    def _check_nesting(self, edges: Sequence[tuple[str | None, str]]) -> None:
        tree = self._containment()
        if not all(tree.has_edge(container or locate.TOP, sequence) for container, sequence in edges):
            locate.check_nesting(self._body, self._sequences, edges, tree=tree)
        elif not self._tree_checked:  # another use of a sequence already there: the depth stays as checked
            locate.check_nesting(self._body, self._sequences, [], tree=tree)
            self._tree_checked = True

    def _drop_unused_sequences(self, before: set[str]) -> None:
        """Drop definitions that were reachable before an edit and are not any more."""
        reachable = self._reachable()
        for name in [n for n in self._sequences if n in before and n not in reachable]:
            del self._sequences[name]

    def _reachable(self) -> set[str]:
        return locate.reachable(self._body, self._sequences)
