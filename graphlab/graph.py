"""The graph model: symbolic args, dispatches and sequences, with an editing API.

The model is plain data. Every edit goes through a method here, keeps the structure consistent
(names unique, references resolvable, no sequence inside itself) or raises, bumps ``version`` and
notifies observers. What a graph *means* (do bindings fit, what reads what) is answered by the
functions in :mod:`graphlab.check`, :mod:`graphlab.dataflow` and friends; methods below that
compile, render or save only delegate.

Node ids are paths: ``init`` at the top, ``substep/p2g`` inside a use of sequence ``substep``.
A step, one dispatch of the unrolled graph, has the id ``substep[k]/p2g``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Union

import networkx as nx

from graphlab.errors import GraphError, KernelError
from graphlab.kernels import KernelInfo, kernel_info
from graphlab.limits import MAX_REPEAT as MAX_REPEAT  # re-exported: it was defined here before limits.py
from graphlab.limits import MAX_UNROLLED, repeat_problem
from graphlab.names import check_name, check_node_name
from graphlab.nesting import MAX_NESTING
from graphlab.nodes import CONTROL, Cond, Dispatch, Loop, Node, SequenceUse, children, renamed
from graphlab.spec import Arg, Dim, Role

if TYPE_CHECKING:
    from graphlab.compiled import CompiledGraph
    from graphlab.debug.session import DebugSession
    from graphlab.diagnostics import Diagnostic
    from graphlab.memory import MemoryPlan
    from graphlab.uses import Uses

#: What the convenience methods (validate, compile, debug, render, save, to_code) call: set by
#: :mod:`graphlab.uses` when ``import graphlab`` runs, so the model imports nothing above it.
USES: Uses | None = None


def _uses() -> Uses:
    if USES is None:  # only when graphlab.graph was loaded without its package (never by import)
        raise GraphError("graphlab.uses is not loaded: import graphlab before using a graph's methods")
    return USES

AccessSource = Literal["auto", "vulkan", "ast"]
RenderView = Literal["program", "dataflow", "unrolled"]
_TOP = ""  # the top level in the containment graph (sequence names are never empty)


@dataclass(frozen=True)
class Step:
    """One dispatch of the unrolled graph: ``id`` names the repetition, ``node_id`` the definition."""

    index: int
    id: str
    node_id: str
    dispatch: Dispatch
    repetitions: tuple[tuple[str, int], ...] = ()


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


@dataclass(frozen=True)
class GraphSize:
    """How large a graph gets once unrolled (see :meth:`Graph.size`).

    ``dispatches``: what Taichi builds to compile it, one dispatch per unrolled step. Without control
    flow that is the number of steps; with it, the sum over the compiled segments, where a loop body,
    a branch or a repeated sequence holding control flow is compiled once (see graphlab.plan).
    ``node_ids``: node ids (a sequence used in two places has its nodes under both uses).
    ``trace``: entries of the data-flow trace validation walks (repeats and loops taken twice).
    ``largest``: the top-level node that contributes most dispatches (None for an empty graph).
    """

    dispatches: int
    node_ids: int
    trace: int
    largest: str | None = None


def too_many_dispatches(graph: str, count: int) -> str:
    """The message for a graph past :data:`graphlab.limits.MAX_UNROLLED` (GL024)."""
    return (
        f"graph {graph!r} unrolls to {count:,} dispatches, over the limit of {MAX_UNROLLED:,}: "
        "ti.graph builds one dispatch per unrolled step, so it would never finish compiling"
    )


def _measure(graph: Graph) -> GraphSize:
    """Count dispatches, node ids and trace entries per sequence definition, innermost first."""
    tree = graph._containment()
    sizes: dict[str, tuple[int, int, int, bool]] = {}  # name -> (dispatches, ids, trace, has control)
    for name in reversed(list(nx.topological_sort(tree))):  # the containment graph has no cycle (GL015)
        total = [0, 0, 0]
        control = False
        for node in graph._container(name or None):
            part = _node_size(node, sizes)
            for i in range(3):
                total[i] += part[i]
            control = control or isinstance(node, CONTROL) or any(sizes[s][3] for _, s in children(node))
        sizes[name] = (total[0], total[1], total[2], control)
    dispatches, node_ids, trace, _ = sizes[_TOP]
    parts = [(_node_size(node, sizes)[0], node.name) for node in graph.body]
    largest = max(parts)[1] if parts else None
    return GraphSize(dispatches, node_ids, trace, largest)


def _node_size(node: Node, sizes: Mapping[str, tuple[int, int, int, bool]]) -> tuple[int, int, int]:
    """(dispatches, node ids, trace entries) of one node, from the sizes of the sequences it holds."""
    if isinstance(node, Dispatch):
        return 1, 1, 1
    if isinstance(node, SequenceUse):
        inner = sizes[node.sequence]
        # compiled: a control-free use is unrolled into its segment; one holding control is compiled once
        dispatches = inner[0] if inner[3] else node.repeat * inner[0]
        return dispatches, 1 + inner[1], min(node.repeat, 2) * inner[2]
    if isinstance(node, Cond):
        held = [sizes[s] for _, s in children(node)]
        return sum(h[0] for h in held), 1 + sum(h[1] for h in held), 1 + sum(h[2] for h in held)
    inner = sizes[node.body]  # a loop: its body is compiled once, walked twice by the trace
    return inner[0], 1 + inner[1], 2 * (inner[2] + 1)


Into = Union[str, "SequenceBuilder", None]


class _Same:
    """Marker for :meth:`Graph.move`: keep the node in its own container."""


class SequenceBuilder:
    """A handle on a sequence definition: dispatch into it, nest sequences, use it as a context."""

    def __init__(self, graph: Graph, name: str, use_id: str | None) -> None:
        self._graph = graph
        self.name = name
        self.id = use_id

    def dispatch(self, kernel: Any, *args: Any, name: str | None = None, **bindings: Any) -> str:
        """Append a dispatch to this sequence (see :meth:`Graph.dispatch`); returns its node id."""
        return self._graph._add_dispatch(self, kernel, args, bindings, name)

    def sequence(self, name: str, repeat: int = 1) -> SequenceBuilder:
        """Define a nested sequence and use it here ``repeat`` times."""
        return self._graph._new_sequence(self, name, repeat)

    def append(self, sequence: str | SequenceBuilder, repeat: int = 1, *, name: str | None = None) -> str:
        """Use an existing sequence inside this one."""
        return self._graph.append(sequence, repeat, into=self, name=name)

    def __enter__(self) -> SequenceBuilder:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def __repr__(self) -> str:
        return f"<sequence {self.name!r} at {self.id!r}>"


class Graph:
    """A compute graph of Taichi kernels over symbolic args.

    Examples
    --------
    >>> import graphlab as gl
    >>> g = gl.Graph("update")
    >>> x = g.ndarray("x", "f32", ndim=1)
    >>> x.describe()
    'ndarray f32, ndim=1'
    """

    def __init__(self, name: str = "graph") -> None:
        self.name = name
        self._args: dict[str, Arg] = {}
        self._body: list[Node] = []
        self._sequences: dict[str, list[Node]] = {}
        self._observers: list[Callable[[GraphChange], None]] = []
        self.version = 0
        self._cache: dict[str, Any] = {}

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
        """Declared args by name, in declaration order."""
        return dict(self._args)

    @property
    def body(self) -> tuple[Node, ...]:
        """The top-level nodes in program order."""
        return tuple(self._body)

    @property
    def sequences(self) -> Mapping[str, tuple[Node, ...]]:
        """Sequence definitions by name."""
        return {name: tuple(body) for name, body in self._sequences.items()}

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
        """Every node with its id, depth first in program order (each sequence use entered once)."""
        yield from self._walk(None, "")

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
        end is measured at once; validation refuses one past the limits (GL024, :mod:`graphlab.limits`).
        """
        cached = self._cache.get("size")
        if cached is None:
            cached = self._cache["size"] = _measure(self)
        return cached

    def steps(self) -> list[Step]:
        """The unrolled dispatches in launch order (cached until the next edit).

        Raises GraphError for a graph with control flow: which steps run depends on its flags.
        """
        if self.has_control_flow:
            raise GraphError(
                f"graph {self.name!r} has conditionals or loops: its steps depend on flags read at run time"
            )
        cached = self._cache.get("steps")
        if cached is None:
            count = self.size().dispatches
            if count > MAX_UNROLLED:
                raise GraphError(f"GL024: {too_many_dispatches(self.name, count)}")
            cached = []
            self._unroll(None, "", "", (), cached)
            self._cache["steps"] = cached
        return cached

    def _unroll(
        self, container: str | None, prefix: str, def_prefix: str, reps: tuple[tuple[str, int], ...], out: list
    ) -> None:
        for node in self._container(container):
            if isinstance(node, Dispatch):
                out.append(Step(len(out), f"{prefix}{node.name}", f"{def_prefix}{node.name}", node, reps))
            elif isinstance(node, SequenceUse):  # control flow was refused by steps()
                use_id = f"{def_prefix}{node.name}"
                for k in range(node.repeat):
                    self._unroll(node.sequence, f"{prefix}{node.name}[{k}]/", f"{use_id}/", (*reps, (use_id, k)), out)

    def step_count(self) -> int:
        """Number of dispatches of the unrolled graph, without unrolling it (see :meth:`steps`)."""
        if self.has_control_flow:
            self.steps()  # raises with the reason
        return self.size().dispatches

    def uses_of(self, arg_name: str) -> list[tuple[str, str]]:
        """``(node id, parameter)`` pairs where ``arg_name`` is used (``flag``/``while``/``count`` for control)."""
        uses = []
        for node_id, node in self.nodes():
            if isinstance(node, Dispatch):
                uses += [(node_id, param) for param, bound in node.bindings if bound == arg_name]
            elif isinstance(node, Cond) and node.flag == arg_name:
                uses.append((node_id, "flag"))
            elif isinstance(node, Loop) and arg_name in (node.while_, node.count):
                uses.append((node_id, "while" if node.while_ == arg_name else "count"))
        return uses

    # --- args ---------------------------------------------------------------------------------

    def ndarray(
        self, name: str, dtype: Any, ndim: int, *, shape: Sequence[Dim] | Dim | None = None, role: Role = "state"
    ) -> Arg:
        """Declare an ndarray arg; ``dtype`` may be a primitive, vector or matrix type.

        Parameters
        ----------
        name
            An identifier, unique in the graph: the name of the value ``run`` takes and of the
            exported module's arg.
        dtype
            ``ti.f32``, ``ti.i32``..., a vector or matrix type (``ti.math.vec2``), or a name (``"f32"``).
        ndim
            The number of array dimensions (the element shape of a vector dtype aside).
        shape
            Sizes per dimension, fixed (``64``) or symbolic (``"n"``, ``("G", "G")``): checked before
            a run (a dim name takes one value everywhere), and the sizes an export allocates.
            ``None`` accepts any shape.
        role
            ``"state"`` (default), ``"input"``, ``"output"`` or ``"temp"`` (scratch: allocated by
            graphlab and the exported host when not given).

        Returns
        -------
        Arg
            The symbolic arg, to bind in :meth:`dispatch`.

        Raises
        ------
        GraphError
            A bad name or dtype, or the name is declared already with another spec (GL004).

        Examples
        --------
        >>> g = gl.Graph("demo")
        >>> x = g.ndarray("x", ti.f32, ndim=1, shape="n")
        >>> x.describe(), x.shape
        ('ndarray f32, ndim=1', ('n',))
        >>> g.ndarray("v", ti.math.vec2, ndim=2).describe()
        'ndarray vec2 f32, ndim=2'
        """
        base, element_shape = _parse_dtype(dtype)
        if isinstance(shape, (int, str)):
            shape = (shape,)
        return self.declare(
            Arg(name, "ndarray", base, ndim, element_shape, None, role, None if shape is None else tuple(shape))
        )

    def scalar(self, name: str, dtype: Any, *, role: Role = "state") -> Arg:
        """Declare a scalar arg (``ti.f32``, ``ti.i32`` ...).

        Parameters
        ----------
        name
            An identifier, unique in the graph.
        dtype
            A primitive dtype (``ti.f32``, ``"i32"``, or ``float``/``int``); vectors and matrices
            are declared with :meth:`matrix`.
        role
            ``"state"`` (default), ``"input"``, ``"output"`` or ``"temp"``.

        Returns
        -------
        Arg
            The symbolic arg, to bind in :meth:`dispatch`.

        Raises
        ------
        GraphError
            A bad name, a non-primitive dtype, or the name is declared already with another spec.

        Examples
        --------
        >>> g = gl.Graph("demo")
        >>> g.scalar("a", ti.f32).describe()
        'scalar f32'
        >>> g.scalar("a", ti.i32)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
          ...
        graphlab.errors.GraphError: GL004: arg 'a' is already declared as scalar f32, not scalar i32; ...
        """
        base, element_shape = _parse_dtype(dtype)
        if element_shape:
            raise GraphError(f"arg {name!r}: a scalar needs a primitive dtype; use g.matrix for {dtype!r}")
        return self.declare(Arg(name, "scalar", base, 0, (), None, role))

    def matrix(self, name: str, dtype: Any, *, role: Role = "state") -> Arg:
        """Declare a matrix or vector arg (``ti.math.mat2``, ``ti.types.vector(3, ti.f32)``)."""
        base, element_shape = _parse_dtype(dtype)
        return self.declare(Arg(name, "matrix", base, 0, element_shape, None, role))

    def texture(self, name: str, ndim: int, *, role: Role = "state") -> Arg:
        """Declare a sampled texture arg."""
        return self.declare(Arg(name, "texture", None, ndim, (), None, role))

    def rw_texture(self, name: str, ndim: int, fmt: Any, *, role: Role = "state") -> Arg:
        """Declare a read-write texture arg with a ``ti.Format``."""
        from graphlab.bridge.types import format_name

        return self.declare(Arg(name, "rw_texture", None, ndim, (), format_name(fmt), role))

    def arg_like(self, name: str, value: Any, *, role: Role = "state", shape: Sequence[Dim] | None = None) -> Arg:
        """Declare an arg whose spec is taken from an existing value (a ti.ndarray, ti.Matrix, number).

        The value's concrete shape is not fixed unless ``shape`` says so.
        """
        from graphlab.bridge import types as bridge

        spec = bridge.describe_value(value)
        if spec.kind == "ndarray" and spec.dtype is not None:
            return self.ndarray(
                name,
                bridge.element_type(spec.dtype, spec.element_shape),
                len(spec.shape),
                shape=shape,
                role=role,
            )
        if spec.kind == "matrix":
            return self.declare(Arg(name, "matrix", "f32", 0, spec.element_shape, None, role))
        if spec.kind == "texture":
            return self.texture(name, bridge.texture_ndim(value) or 2, role=role)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise GraphError(
                f"arg_like({name!r}, ...): cannot take a spec from {type(value).__name__}; "
                "pass a ti.ndarray, a ti.Matrix, a ti.Texture or a Python number"
            )
        return self.scalar(name, int if isinstance(value, int) else float, role=role)

    def declare(self, arg: Arg) -> Arg:
        """Add an arg; declaring the same spec again returns the existing arg."""
        if not isinstance(arg, Arg):
            raise GraphError(f"declare() takes a graphlab Arg, got {type(arg).__name__}")
        existing = self._args.get(arg.name)
        if existing is not None:
            if existing == arg:
                return existing
            if existing.same_spec(arg):
                raise GraphError(
                    f"arg {arg.name!r} is already declared ({existing.describe()}, role {existing.role}); "
                    "change its role with g.set_role or its shape with g.redeclare"
                )
            raise GraphError(
                f"GL004: arg {arg.name!r} is already declared as {existing.describe()}, not {arg.describe()}; "
                "use another name, or g.redeclare to change the spec"
            )
        self._args[arg.name] = arg
        self._changed("arg_added", detail={"arg": arg.name})
        return arg

    def redeclare(self, arg: Arg) -> Arg:
        """Replace the spec of an existing arg (bindings keep pointing to it by name)."""
        if arg.name not in self._args:
            raise GraphError(f"arg {arg.name!r} is not declared; declare it first")
        self._args[arg.name] = arg
        self._changed("arg_changed", detail={"arg": arg.name})
        return arg

    def set_role(self, name: str, role: Role) -> Arg:
        """Change the role of a declared arg."""
        return self.redeclare(self._arg(name).replace(role=role))

    def rename_arg(self, old: str, new: str) -> Arg:
        """Rename an arg and every binding to it."""
        arg = self._arg(old)
        if new in self._args:
            raise GraphError(f"cannot rename arg {old!r} to {new!r}: {new!r} is already declared")
        renamed = arg.replace(name=new)
        self._args = {(new if k == old else k): (renamed if k == old else v) for k, v in self._args.items()}
        for container in [None, *self._sequences]:
            body = self._container(container)
            for i, node in enumerate(body):
                if isinstance(node, Dispatch) and any(b == old for _, b in node.bindings):
                    body[i] = _with_bindings(node, {p: (new if b == old else b) for p, b in node.bindings})
        self._changed("arg_renamed", detail={"old": old, "new": new})
        return renamed

    def remove_arg(self, name: str) -> None:
        """Remove an arg that nothing binds."""
        self._arg(name)
        uses = self.uses_of(name)
        if uses:
            where = ", ".join(f"{node}.{param}" for node, param in uses[:5])
            raise GraphError(f"arg {name!r} is still bound at {where}; unbind it first (g.rebind(node, param, None))")
        del self._args[name]
        self._changed("arg_removed", detail={"arg": name})

    def _arg(self, name: str) -> Arg:
        try:
            return self._args[name]
        except KeyError:
            known = ", ".join(self._args) or "none"
            raise GraphError(f"graph {self.name!r} has no arg {name!r}; declared args: {known}") from None

    # --- building -------------------------------------------------------------------------------

    def dispatch(self, kernel: Any, *args: Any, name: str | None = None, **bindings: Any) -> str:
        """Append a kernel launch; bind parameters positionally or by parameter name.

        Returns the new node's id. A parameter left unbound is reported by :meth:`validate`.
        (A kernel with a parameter called ``name`` binds it positionally.)

        Parameters
        ----------
        kernel
            A ``@ti.kernel`` (or a :class:`~graphlab.KernelInfo`).
        *args, **bindings
            Symbolic args (from :meth:`ndarray`, :meth:`scalar`...) or their names, bound to the
            kernel's parameters in order, or by parameter name.
        name
            The node's name; by default the kernel's, made unique (``saxpy#2``).

        Returns
        -------
        str
            The node id.

        Raises
        ------
        KernelError
            ``kernel`` cannot go into a ``ti.graph`` (not a kernel, a template or struct parameter...).
        GraphError
            Too many args, an unknown parameter name or an undeclared arg; nothing is added.

        Examples
        --------
        >>> g = gl.Graph("demo")
        >>> a, x, y = g.scalar("a", ti.f32), g.ndarray("x", ti.f32, ndim=1), g.ndarray("y", ti.f32, ndim=1)
        >>> g.dispatch(saxpy, a, x, y)
        'saxpy'
        >>> g.dispatch(saxpy, a=a, x=y, y="x", name="back")  # x += a * y
        'back'
        >>> g.node("back").bindings
        (('a', 'a'), ('x', 'y'), ('y', 'x'))
        """
        return self._add_dispatch(None, kernel, args, bindings, name)

    def sequence(
        self, name: str, repeat: int = 1, *, into: Into = None, use_name: str | None = None
    ) -> SequenceBuilder:
        """Define a sequence and use it ``repeat`` times (Taichi's Sequential appended N times).

        The use goes at the end of ``into`` (a sequence use id; the top by default) and is named
        ``use_name`` (default: the sequence's name).

        Parameters
        ----------
        name
            The sequence's name, new in the graph.
        repeat
            How many times it runs here (1 to 10,000,000).
        into
            The sequence use (id or builder) to put the use in; ``None`` for the top level.
        use_name
            The use's node name, when it should differ from ``name``.

        Returns
        -------
        SequenceBuilder
            A handle to dispatch into (``s.dispatch(...)``) and nest sequences in; also a context
            manager. ``s.id`` is the use's node id.

        Raises
        ------
        GraphError
            The name is taken or not an identifier, ``repeat`` is out of range (GL014), or the
            nesting would be too deep.

        Examples
        --------
        >>> g = gl.Graph("demo")
        >>> a, x, y = g.scalar("a", ti.f32), g.ndarray("x", ti.f32, ndim=1), g.ndarray("y", ti.f32, ndim=1)
        >>> with g.sequence("substep", repeat=3) as s:
        ...     s.dispatch(saxpy, a, x, y)
        'substep/saxpy'
        >>> s.id, g.node("substep").repeat
        ('substep', 3)
        >>> [step.id for step in g.steps()]
        ['substep[0]/saxpy', 'substep[1]/saxpy', 'substep[2]/saxpy']
        """
        return self._new_sequence(into, name, repeat, use_name)

    def append(
        self, sequence: str | SequenceBuilder, repeat: int = 1, *, into: Into = None, name: str | None = None
    ) -> str:
        """Use an already defined sequence again, at the end of ``into`` (a sequence use id)."""
        seq_name = self._sequence_name(sequence)
        container, parent = self._resolve_into(into)
        self._check_no_cycle(container, seq_name)
        self._check_nesting([(container, seq_name)])
        use = SequenceUse(self._unique(container, name or seq_name), seq_name, _check_repeat(repeat))
        return self._place(container, parent, use)

    def define(self, name: str) -> SequenceBuilder:
        """Define a sequence without using it yet: a body for :meth:`cond` or :meth:`loop`.

        Dispatches into it return their node names; their ids follow from where it is used.
        """
        self._check_sequence_name(name)
        self._sequences[name] = []
        self._changed("sequence_defined", detail={"sequence": name})
        return SequenceBuilder(self, name, None)

    def cond(
        self,
        flag: Arg | str,
        then: str | SequenceBuilder,
        else_: str | SequenceBuilder | None = None,
        *,
        name: str = "cond",
        into: Into = None,
    ) -> str:
        """Run ``then`` when the one-element i32 ndarray ``flag`` is non-zero on the device, else ``else_``.

        The host reads the flag between compiled segments. Returns the node id; the branches' nodes
        are ``<id>/then/<node>`` and ``<id>/else/<node>``.
        """
        flag_name = self._arg_name(flag)
        node = Cond("", flag_name, self._sequence_name(then), None if else_ is None else self._sequence_name(else_))
        return self._place_structure(node, name, into)

    def loop(
        self,
        body: str | SequenceBuilder,
        *,
        while_: Arg | str | None = None,
        count: Arg | str | None = None,
        max_iter: int | None = None,
        name: str = "loop",
        into: Into = None,
    ) -> str:
        """Repeat ``body``: ``count`` times (a scalar i32 arg), or while the flag ``while_`` is non-zero.

        A ``while_`` loop is bounded: ``max_iter`` is required. Iteration k of a body node is the
        step ``<id>/iter[k]/<node>``.
        """
        if (while_ is None) == (count is None):
            raise GraphError("loop(): give exactly one of while_=flag or count=n_arg")
        if while_ is not None and max_iter is None:
            raise GraphError("GL022: a while_ loop needs max_iter=N, so a flag that never clears cannot hang the run")
        if max_iter is not None:
            max_iter = _check_repeat(max_iter)
        node = Loop(
            "",
            self._sequence_name(body),
            None if while_ is None else self._arg_name(while_),
            None if count is None else self._arg_name(count),
            max_iter,
        )
        return self._place_structure(node, name, into)

    def _place_structure(self, node: Cond | Loop, name: str, into: Into) -> str:
        container, parent = self._resolve_into(into)
        for _, sequence in children(node):
            self._check_no_cycle(container, sequence)
        self._check_nesting([(container, sequence) for _, sequence in children(node)])
        return self._place(container, parent, renamed(node, self._unique(container, name)))

    def _place(self, container: str | None, parent: str | None, node: Node) -> str:
        self._container(container).append(node)
        node_id = _join(parent, node.name)
        self._changed("node_added", node_id)
        return node_id

    def _sequence_name(self, sequence: str | SequenceBuilder) -> str:
        seq_name = sequence.name if isinstance(sequence, SequenceBuilder) else sequence
        if seq_name not in self._sequences:
            known = ", ".join(self._sequences) or "none"
            raise GraphError(f"no sequence {seq_name!r} is defined (g.define or g.sequence); defined: {known}")
        return seq_name

    def _arg_name(self, arg: Arg | str) -> str:
        name = arg.name if isinstance(arg, Arg) else arg
        self._arg(name)
        return name

    def _check_sequence_name(self, name: str) -> None:
        check_name(name, "sequence")
        if name in self._sequences:
            raise GraphError(f"sequence {name!r} is already defined; use it again with g.append({name!r}, repeat=...)")

    def _new_sequence(self, into: Into, name: str, repeat: int, use_name: str | None = None) -> SequenceBuilder:
        self._check_sequence_name(name)
        container, parent = self._resolve_into(into)
        self._check_nesting([(container, name)])
        use = SequenceUse(self._unique(container, use_name or name), name, _check_repeat(repeat))
        self._sequences[name] = []
        node_id = self._place(container, parent, use)
        return SequenceBuilder(self, name, node_id)

    def _resolve_into(self, into: Into) -> tuple[str | None, str | None]:
        """(container sequence name or None for the top, id prefix or None) for an ``into`` argument."""
        if into is None:
            return None, None
        if isinstance(into, SequenceBuilder):
            return into.name, into.id
        return self._container_of_use(into), into

    def _add_dispatch(
        self, into: Into, kernel: Any, args: Sequence[Any], bindings: Mapping[str, Any], name: str | None
    ) -> str:
        info = kernel_info(kernel)
        if not info.dispatchable:
            raise KernelError(info.why_not)
        params = [p.name for p in info.params]
        if len(args) > len(params):
            raise GraphError(
                f"kernel {info.name!r} takes {len(params)} parameters ({', '.join(params)}), got {len(args)} args"
            )
        given: dict[str, Any] = dict(zip(params, args))
        for param, value in bindings.items():
            if param not in params:
                raise GraphError(
                    f"kernel {info.name!r} has no parameter {param!r}; its parameters: {', '.join(params)}"
                )
            if param in given:
                raise GraphError(f"kernel {info.name!r}: parameter {param!r} is bound twice")
            given[param] = value
        return self.insert(info, into=into, name=name, bindings=given)

    # --- editing --------------------------------------------------------------------------------

    def insert(
        self,
        kernel: Any,
        *,
        index: int | None = None,
        into: Into = None,
        name: str | None = None,
        bindings: Mapping[str, Any] | None = None,
    ) -> str:
        """Insert a dispatch at ``index`` (default: the end) of ``into`` (a sequence use id or None)."""
        info = kernel_info(kernel)
        if not info.dispatchable:
            raise KernelError(info.why_not)
        resolved: dict[str, str | None] = {p.name: None for p in info.params}
        for param, value in (bindings or {}).items():
            info.param(param)
            resolved[param] = None if value is None else self._bind_value(info, param, value)
        container, parent = self._resolve_into(into)
        body = self._container(container)
        position = _check_index(index, len(body) + 1, "insert")
        node = Dispatch(self._unique(container, name or info.name), info, tuple(resolved.items()))
        body.insert(position, node)
        node_id = _join(parent, node.name)
        self._changed("node_added", node_id)
        return node_id

    def remove(self, node_id: str) -> None:
        """Remove a node (a sequence use removes the definition too once nothing uses it)."""
        container, index = self._locate(node_id)
        before = self._reachable()
        node = self._container(container).pop(index)
        if children(node):
            self._drop_unused_sequences(before)
        self._changed("node_removed", node_id)

    def move(self, node_id: str, index: int, *, into: str | type[_Same] | None = _Same) -> str:
        """Move a node to ``index`` of ``into`` (default: its own container); returns its new id."""
        container, old_index = self._locate(node_id)
        parent = _parent_id(node_id)
        target_id = parent if into is _Same else into
        target = self._container_of_use(target_id)  # type: ignore[arg-type]
        node = self._container(container)[old_index]
        if target != container:
            for _, sequence in children(node):
                self._check_no_cycle(target, sequence)
            self._check_nesting([(target, sequence) for _, sequence in children(node)])
        body = self._container(container)
        body.pop(old_index)
        try:
            dest = self._container(target)
            position = _check_index(index, len(dest) + 1, "move")
            if target != container:
                node = _renamed(node, self._unique(target, node.name))
            dest.insert(position, node)
        except GraphError:
            body.insert(old_index, node)
            raise
        new_id = _join(target_id, node.name)  # type: ignore[arg-type]
        self._changed("node_moved", new_id, detail={"from": node_id})
        return new_id

    def rebind(self, node_id: str, param: str, arg: Arg | str | None) -> None:
        """Bind a dispatch's parameter to another arg (None unbinds it)."""
        container, index = self._locate(node_id)
        node = self._container(container)[index]
        if not isinstance(node, Dispatch):
            raise GraphError(f"node {node_id!r} is a sequence; only dispatches have parameters")
        node.kernel.param(param)
        value = None if arg is None else self._bind_value(node.kernel, param, arg)
        self._container(container)[index] = _with_bindings(
            node, {p: (value if p == param else b) for p, b in node.bindings}
        )
        self._changed("node_rebound", node_id, detail={"param": param, "arg": value})

    def rename(self, node_id: str, new_name: str) -> str:
        """Rename a node within its container; returns the new id."""
        container, index = self._locate(node_id)
        check_node_name(new_name)
        body = self._container(container)
        if any(n.name == new_name for i, n in enumerate(body) if i != index):
            raise GraphError(f"cannot rename {node_id!r}: a sibling is already called {new_name!r}")
        body[index] = _renamed(body[index], new_name)
        new_id = _join(_parent_id(node_id), new_name)
        self._changed("node_renamed", new_id, detail={"from": node_id})
        return new_id

    def set_repeat(self, node_id: str, repeat: int) -> None:
        """Change how many times a sequence use runs."""
        container, index = self._locate(node_id)
        node = self._container(container)[index]
        if not isinstance(node, SequenceUse):
            raise GraphError(f"node {node_id!r} is a dispatch; only sequences have a repeat count")
        self._container(container)[index] = SequenceUse(node.name, node.sequence, _check_repeat(repeat))
        self._changed("node_repeat", node_id, detail={"repeat": repeat})

    def group(self, node_ids: Sequence[str], name: str, *, repeat: int = 1) -> str:
        """Move consecutive sibling nodes into a new sequence used ``repeat`` times in their place."""
        if not node_ids:
            raise GraphError("group() needs at least one node id")
        repeat = _check_repeat(repeat)
        located = [self._locate(node_id) for node_id in node_ids]
        containers = {c for c, _ in located}
        indices = sorted(i for _, i in located)
        if len(containers) != 1 or indices != list(range(indices[0], indices[0] + len(indices))):
            raise GraphError(f"group() needs consecutive nodes of one container, got {list(node_ids)}")
        if check_name(name, "sequence") in self._sequences:
            raise GraphError(f"sequence name {name!r} must be a new identifier")
        container = containers.pop()
        body = self._container(container)
        members = body[indices[0] : indices[-1] + 1]
        inner = [(name, sequence) for member in members for _, sequence in children(member)]
        self._check_nesting([(container, name), *inner])
        self._sequences[name] = list(members)
        body[indices[0] : indices[-1] + 1] = []
        use = SequenceUse(self._unique(container, name), name, repeat)
        body.insert(indices[0], use)
        node_id = _join(_parent_id(node_ids[0]), use.name)
        self._changed("node_grouped", node_id, detail={"members": list(node_ids)})
        return node_id

    # --- undo support & observers ------------------------------------------------------------------

    def snapshot(self) -> GraphState:
        """An immutable copy of the content (args, nodes, sequences), for undo."""
        return GraphState(
            tuple(self._args.values()),
            tuple(self._body),
            tuple((name, tuple(body)) for name, body in self._sequences.items()),
        )

    def restore(self, state: GraphState) -> None:
        """Put back content taken with :meth:`snapshot`."""
        if not isinstance(state, GraphState):
            raise GraphError(f"restore() takes a GraphState from snapshot(), got {type(state).__name__}")
        self._args = {arg.name: arg for arg in state.args}
        self._body = list(state.body)
        self._sequences = {name: list(body) for name, body in state.sequences}
        self._changed("restored")

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
        change = GraphChange(kind, node, dict(detail or {}))
        for callback in list(self._observers):
            try:
                callback(change)
            except Exception as exc:  # an observer must not break the model
                warnings.warn(f"graph observer {callback!r} failed: {exc!r}", RuntimeWarning, stacklevel=3)

    # --- uses of a graph (delegating to graphlab.uses, the one place allowed to reach up) -------------

    def validate(self, *, target: str | None = None, access: AccessSource = "auto") -> list[Diagnostic]:
        """Every problem found, as located diagnostics (see :mod:`graphlab.check`).

        ``target`` adds what an export target cannot take; ``access`` picks where read/write facts
        come from (``"vulkan"``: Taichi's compiler, ``"ast"``: the source, ``"auto"``: the first that works).

        Parameters
        ----------
        target
            An export arch (``"vulkan"``, ``"x64"``, ``"cuda"``) whose limits to check too, or None.
        access
            Where the facts of what each kernel reads and writes come from.

        Returns
        -------
        list of Diagnostic
            Errors and warnings, each with a code, the node and arg it concerns, and a fix; empty
            for a graph that compiles.

        Examples
        --------
        >>> g = gl.Graph("demo")
        >>> g.dispatch(saxpy, g.scalar("a", ti.f32), g.ndarray("x", ti.f32, ndim=1))  # y left unbound
        'saxpy'
        >>> for diagnostic in g.validate():  # doctest: +NORMALIZE_WHITESPACE
        ...     print(diagnostic)
        GL001 error at saxpy [y]: parameter 'y' (ndarray f32, ndim=1) is unbound
          (fix: bind it: g.rebind('saxpy', 'y', arg))
        >>> g.rebind("saxpy", "y", g.ndarray("y", ti.f32, ndim=1))
        >>> g.validate()
        []
        """
        return _uses().validate(self, target=target, access=access)

    def check(self, *, target: str | None = None, access: AccessSource = "auto") -> None:
        """Raise :class:`GraphError` listing the errors :meth:`validate` finds.

        Parameters
        ----------
        target, access
            As for :meth:`validate`.

        Raises
        ------
        GraphError
            The graph has errors (warnings pass); the message lists each with its fix.

        Examples
        --------
        >>> g = gl.Graph("demo")
        >>> g.dispatch(saxpy, g.scalar("a", ti.f32), g.ndarray("x", ti.f32, ndim=1))
        'saxpy'
        >>> g.check()  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
          ...
        graphlab.errors.GraphError: graph 'demo' has 1 error(s):
          GL001 error at saxpy [y]: parameter 'y' (ndarray f32, ndim=1) is unbound
          (fix: bind it: g.rebind('saxpy', 'y', arg))
        """
        _uses().check(self, target=target, access=access)

    def memory_plan(self, **shapes: Any) -> MemoryPlan:
        """Bytes, lifetimes and shared storage slots of the buffers (see :mod:`graphlab.memory`)."""
        return _uses().memory_plan(self, **shapes)

    def render(self, *, view: RenderView = "program", highlight: str | None = None, **options: Any) -> Any:
        """A ``graphviz.Digraph`` of the graph (see :mod:`graphlab.render`).

        A notebook shows the graph itself drawn (``_repr_mimebundle_``); this gives the drawing to
        save or restyle.

        Parameters
        ----------
        view
            ``"program"``: nodes, sequences and the args they read and write; ``"dataflow"``: what
            feeds what; ``"unrolled"``: the dispatches in launch order.
        highlight
            A node id to outline.
        **options
            ``diagnostics``, ``max_steps``, ``access``: see :func:`graphlab.render.render`.

        Returns
        -------
        graphviz.Digraph
            ``.source`` is the DOT text; ``.render(file, format="svg")`` writes a picture.

        Raises
        ------
        GraphError
            An unknown view.

        Examples
        --------
        >>> g = gl.Graph("demo")
        >>> x = g.ndarray("x", ti.f32, ndim=1)
        >>> g.dispatch(fill, x, g.scalar("value", ti.f32))
        'fill'
        >>> g.dispatch(saxpy, g.scalar("a", ti.f32), x, g.ndarray("y", ti.f32, ndim=1))
        'saxpy'
        >>> dot = g.render(view="unrolled")
        >>> print(dot.source)  # doctest: +NORMALIZE_WHITESPACE
        digraph demo {
            graph [fontname=Helvetica label=demo labelloc=t rankdir=TB tooltip=demo]
            node [fontname=Helvetica fontsize=11]
            edge [fontname=Helvetica fontsize=9]
            fill [label="0: fill" id=fill shape=box style=rounded tooltip="0: fill"]
            saxpy [label="1: saxpy" id=saxpy shape=box style=rounded tooltip="1: saxpy"]
            fill -> saxpy
        }
        """
        return _uses().render(self, view=view, highlight=highlight, **options)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return _uses().mimebundle(self)

    def dataflow(self, *, access: AccessSource = "auto") -> nx.DiGraph:
        """The read/write data-flow graph (see :mod:`graphlab.dataflow`)."""
        return _uses().dataflow(self, access=access)

    def compile(self) -> CompiledGraph:
        """Check the graph and build a real ``ti.graph`` CompiledGraph for the current Taichi runtime.

        Returns
        -------
        CompiledGraph
            Runs with ``run(values)`` as many times as wanted, checking the values each time; it
            refuses to run once ``ti.init()``/``ti.reset()`` replaced the runtime (Taichi would crash).

        Raises
        ------
        GraphError
            The graph has errors (see :meth:`check`).

        Examples
        --------
        >>> g = gl.Graph("demo")
        >>> x = g.ndarray("x", ti.f32, ndim=1)
        >>> g.dispatch(fill, x, g.scalar("value", ti.f32))
        'fill'
        >>> compiled = g.compile()
        >>> compiled
        <graphlab.CompiledGraph 'demo' on x64: 1 dispatches, live>
        >>> xs = np.zeros(3, np.float32)
        >>> compiled.run(x=xs, value=0.5)
        >>> xs
        array([0.5, 0.5, 0.5], dtype=float32)
        """
        return _uses().compile(self)

    def run(self, values: Mapping[str, Any] | None = None, /, **kwargs: Any) -> None:
        """Compile once (per edit and Taichi runtime) and run with checked values.

        Every value is checked against its arg (dtype, ndim, element shape, shared dims) before
        anything runs. numpy arrays are copied to the device and the results copied back.

        Parameters
        ----------
        values, **kwargs
            Run values by arg name: ``ti.ndarray`` or numpy arrays for ndarrays, numbers for
            scalars, ``ti.Matrix`` or nested lists for matrices. Temps may be left out.

        Raises
        ------
        GraphRunError
            A value is missing or does not fit its arg; nothing ran. The message names the arg and
            the fix.
        GraphError
            The graph has errors (see :meth:`check`).

        Examples
        --------
        >>> g = gl.Graph("demo")
        >>> x, y = g.ndarray("x", ti.f32, ndim=1, shape="n"), g.ndarray("y", ti.f32, ndim=1, shape="n")
        >>> g.dispatch(fill, x, g.scalar("value", ti.f32))
        'fill'
        >>> g.dispatch(saxpy, g.scalar("a", ti.f32), x, y)
        'saxpy'
        >>> ys = np.ones(4, np.float32)
        >>> g.run(x=np.zeros(4, np.float32), y=ys, value=2.0, a=3.0)
        >>> ys
        array([7., 7., 7., 7.], dtype=float32)
        >>> yt = ti.ndarray(ti.f32, shape=4)  # device arrays are used in place
        >>> g.run(x=ti.ndarray(ti.f32, shape=4), y=yt, value=1.0, a=2.0)
        >>> yt.to_numpy()
        array([2., 2., 2., 2.], dtype=float32)
        >>> g.run(x=np.zeros(4, np.float32), y=np.ones(3, np.float32), value=2.0, a=3.0)
        ... # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
          ...
        graphlab.errors.GraphRunError: run(): arg 'y' has shape (3,), so dim 'n' = 3, but arg 'x' set
          'n' = 4; arrays sharing a dim must agree (Taichi would index out of bounds)
        """
        compiled = self._cache.get("compiled")
        if compiled is None or not compiled.is_current():
            compiled = self.compile()
            self._cache["compiled"] = compiled
        compiled.run(values, **kwargs)

    def debug(self, values: Mapping[str, Any] | None = None, /, **kwargs: Any) -> DebugSession:
        """A step debugger over this graph and these run values (see :mod:`graphlab.debug.session`).

        Parameters
        ----------
        values, **kwargs
            The run values, as for :meth:`run`. The session works in place on ``ti.ndarray``
            values; numpy arrays receive the results when the session reaches the end.
        options
            (keyword) a :class:`graphlab.debug.DebugOptions`: snapshot budget, statistics, fast-forward.

        Returns
        -------
        DebugSession
            At position 0; ``step()``, ``continue_()``, ``back()``, ``goto()``, ``break_at()``,
            ``inspect()``, ``watch()``, ``timing()``... move and look.

        Raises
        ------
        GraphRunError, GraphError
            As for :meth:`run`; nothing ran.

        Examples
        --------
        >>> g = gl.Graph("demo")
        >>> x = g.ndarray("x", ti.f32, ndim=1)
        >>> g.dispatch(fill, x, g.scalar("value", ti.f32))
        'fill'
        >>> g.dispatch(saxpy, g.scalar("a", ti.f32), x, g.ndarray("y", ti.f32, ndim=1))
        'saxpy'
        >>> ys = np.zeros(4, np.float32)
        >>> dbg = g.debug(x=np.zeros(4, np.float32), y=ys, value=2.0, a=3.0)
        >>> print(dbg.position)
        before fill (step 0; 0 of 2 dispatches done)
        >>> dbg.step().step_id
        'saxpy'
        >>> dbg.continue_().reason, ys
        ('end', array([6., 6., 6., 6.], dtype=float32))
        """
        return _uses().debug(self, values, **kwargs)

    def save(self, path: Any) -> None:
        """Write the graph file (JSON, ``graphlab.graph/1``) atomically.

        The file names kernels by reference (``module:qualname``); :func:`graphlab.load` resolves
        them from the kernels it is given. The text is read back before anything is written, so
        a file that would not load is never written, and an old file is replaced whole or not at all.

        Parameters
        ----------
        path
            The file to write (``str`` or ``os.PathLike``).

        Raises
        ------
        GraphFileError
            The graph would not load back, or the file cannot be written; the old file is unchanged.

        Examples
        --------
        >>> import os, tempfile
        >>> g = gl.Graph("demo")
        >>> g.dispatch(fill, g.ndarray("x", ti.f32, ndim=1), g.scalar("value", ti.f32))
        'fill'
        >>> path = os.path.join(tempfile.mkdtemp(), "demo.json")
        >>> g.save(path)
        >>> gl.load(path, kernels=[fill]).to_dict() == g.to_dict()
        True
        """
        _uses().save(self, path)

    def to_dict(self) -> dict[str, Any]:
        """The graph file's content as a dict."""
        return _uses().to_dict(self)

    def to_code(self) -> str:
        """The equivalent plain ``ti.graph`` Python code.

        Returns
        -------
        str
            A script that builds and compiles the same graph with ``ti.graph.GraphBuilder`` and no
            graphlab, importing the kernels from their modules.

        Raises
        ------
        GraphError
            The graph has conditionals or loops, which plain ``ti.graph`` cannot express.

        Examples
        --------
        >>> g = gl.Graph("demo")
        >>> x = g.ndarray("x", ti.f32, ndim=1)
        >>> g.dispatch(fill, x, g.scalar("value", ti.f32))
        'fill'
        >>> code = g.to_code()
        >>> print(code)
        import taichi as ti
        from graphlab.doc_kernels import fill
        <BLANKLINE>
        sym_x = ti.graph.Arg(ti.graph.ArgKind.NDARRAY, 'x', dtype=ti.f32, ndim=1)
        sym_value = ti.graph.Arg(ti.graph.ArgKind.SCALAR, 'value', dtype=ti.f32)
        <BLANKLINE>
        builder_demo = ti.graph.GraphBuilder()
        builder_demo.dispatch(fill, sym_x, sym_value)
        graph_demo = builder_demo.compile()
        <BLANKLINE>
        >>> namespace = {}
        >>> exec(code, namespace)  # it runs as it is
        >>> xt = ti.ndarray(ti.f32, shape=2)
        >>> namespace["graph_demo"].run({"x": xt, "value": 4.0})
        >>> xt.to_numpy()
        array([4., 4.], dtype=float32)
        """
        return _uses().to_code(self)

    def __repr__(self) -> str:
        steps = "control flow" if self.has_control_flow else f"{self.step_count()} dispatches unrolled"
        return f"<graphlab.Graph {self.name!r}: {len(self._args)} args, {len(self._body)} top-level nodes, {steps}>"

    # --- internals -------------------------------------------------------------------------------

    def _bind_value(self, info: KernelInfo, param: str, value: Any) -> str:
        if isinstance(value, Arg):
            existing = self._args.get(value.name)
            if existing is None:
                self.declare(value)  # an arg made for another graph (Taichi shares Args across graphs)
            elif not existing.same_spec(value):
                raise GraphError(
                    f"GL004: {info.name}.{param}: arg {value.name!r} is {value.describe()} but this graph "
                    f"declares {value.name!r} as {existing.describe()}; use one spec per name"
                )
            return value.name
        if isinstance(value, str):
            self._arg(value)
            return value
        raise GraphError(
            f"{info.name}.{param}: bind a symbolic arg (g.ndarray(...), g.scalar(...)) or its name, "
            f"not a {type(value).__name__}; concrete values are given to run()"
        )

    def _container(self, name: str | None) -> list[Node]:
        return self._body if name is None else self._sequences[name]

    def _container_of_use(self, use_id: str | None) -> str | None:
        """The sequence definition a use id stands for (None: the top level)."""
        if use_id is None:
            return None
        if use_id.endswith(("/then", "/else")):
            parent, branch = use_id.rsplit("/", 1)
            node = self.node(parent)
            for segment, sequence in children(node):
                if segment == f"{branch}/":
                    return sequence
            raise GraphError(f"{use_id!r}: {parent!r} has no {branch!r} branch")
        node = self.node(use_id)
        inner = children(node)
        if not inner or isinstance(node, Cond):
            what = "a dispatch" if not inner else "a conditional (name its branch: '.../then')"
            raise GraphError(f"{use_id!r} is {what}, not a sequence; nodes go into sequences")
        return inner[0][1]

    def _locate(self, node_id: str) -> tuple[str | None, int]:
        if not isinstance(node_id, str) or not node_id:
            raise GraphError(f"node id must be a non-empty string like 'substep/p2g', got {node_id!r}")
        container: str | None = None
        parts = node_id.split("/")
        depth = 0
        while depth < len(parts):
            part = parts[depth]
            body = self._container(container)
            index = next((i for i, n in enumerate(body) if n.name == part), None)
            if index is None:
                here = "/".join(parts[:depth])
                options = ", ".join(_join(here or None, n.name) for n in body[:12]) or "none"
                raise GraphError(f"graph {self.name!r} has no node {node_id!r}; nodes here: {options}")
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

    def _unique(self, container: str | None, base: str) -> str:
        check_node_name(base)
        taken = {n.name for n in self._container(container)}
        if base not in taken:
            return base
        stem = base.split("#", 1)[0]
        k = 2
        while f"{stem}#{k}" in taken:
            k += 1
        return f"{stem}#{k}"

    def _containment(self) -> nx.DiGraph:
        """Which sequence definition uses which (an edge parent -> child; the top level is ``_TOP``)."""
        tree = nx.DiGraph()
        for name, body in [(_TOP, self._body), *self._sequences.items()]:
            tree.add_node(name)
            for node in body:
                for _, sequence in children(node):
                    tree.add_edge(name, sequence)
        return tree

    def _check_no_cycle(self, container: str | None, sequence: str) -> None:
        if container is None:
            return
        tree = self._containment()
        if container == sequence or (sequence in tree and nx.has_path(tree, sequence, container)):
            raise GraphError(
                f"GL015: sequence {sequence!r} cannot be used inside {container!r}: it would contain itself"
            )

    def _check_nesting(self, edges: Sequence[tuple[str | None, str]]) -> None:
        """Refuse an edit putting sequences inside containers (``None``: the top) past MAX_NESTING.

        Depth counts the sequences on one chain of containment, so a sequence defined but not used
        yet counts as used at the top: attaching it anywhere only makes it deeper.
        """
        tree = self._containment()
        tree.add_edges_from((container or _TOP, sequence) for container, sequence in edges)
        tree.remove_node(_TOP)
        if not tree or not nx.is_directed_acyclic_graph(tree):  # _check_no_cycle names a cycle
            return
        chain = nx.dag_longest_path(tree)
        if len(chain) > MAX_NESTING:
            raise GraphError(
                f"sequences would nest {len(chain)} deep ({' > '.join(chain)}), past the limit of {MAX_NESTING} "
                "(graphlab.nesting.MAX_NESTING); flatten a level, e.g. put the dispatches of a sequence "
                "used once with repeat=1 into its parent"
            )

    def _drop_unused_sequences(self, before: set[str]) -> None:
        """Drop definitions that were reachable before an edit and are not any more."""
        reachable = nx.descendants(self._containment(), _TOP)
        for name in [n for n in self._sequences if n in before and n not in reachable]:
            del self._sequences[name]

    def _reachable(self) -> set[str]:
        return set(nx.descendants(self._containment(), _TOP))


def _parse_dtype(dtype: Any) -> tuple[str, tuple[int, ...]]:
    from graphlab.bridge.types import parse_dtype

    return parse_dtype(dtype)


def _check_repeat(repeat: Any) -> int:
    problem = repeat_problem(repeat)  # the graph file loader reads repeats through this function too
    if problem is not None:
        raise GraphError(f"GL014: {problem}")
    return repeat


def _check_index(index: int | None, size: int, what: str) -> int:
    if index is None:
        return size - 1
    if isinstance(index, bool) or not isinstance(index, int) or not -size <= index < size:
        raise GraphError(f"{what}: index {index!r} is out of range 0..{size - 1}")
    return index % size if index < 0 else index


def _join(parent: str | None, name: str) -> str:
    return f"{parent}/{name}" if parent else name


def _parent_id(node_id: str) -> str | None:
    return node_id.rsplit("/", 1)[0] if "/" in node_id else None


_renamed = renamed


def _with_bindings(node: Dispatch, bindings: Mapping[str, str | None]) -> Dispatch:
    return Dispatch(node.name, node.kernel, tuple(bindings.items()))
