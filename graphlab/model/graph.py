"""The graph model: symbolic args, dispatches and sequences, with an editing API.

The model is plain data. Every edit goes through a method here, keeps the structure consistent
(names unique, references resolvable, no sequence inside itself) or raises, bumps ``version`` and
notifies observers. What a graph *means* (do bindings fit, what reads what) is answered by the
functions in :mod:`graphlab.analysis.check`, :mod:`graphlab.analysis.dataflow` and friends. This
class knows none of them: the public ``graphlab.Graph`` (:mod:`graphlab.api.graph`) adds the methods
that validate, compile, run, render and save it.

This module holds the whole editing API: declaring args (ndarray, scalar, declare, rename_arg...)
and building and editing nodes (dispatch, sequence, cond, loop, insert, move, group...).
:class:`Graph`'s one base, :class:`graphlab.model.graphdata.GraphData`, holds the content and its
reading API; node location is :mod:`graphlab.model.locate`'s, unrolling :mod:`graphlab.model.unroll`'s.

Node ids are paths: ``init`` at the top, ``substep/p2g`` inside a use of sequence ``substep``.
A step, one dispatch of the unrolled graph, has the id ``substep[k]/p2g``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Union

from graphlab.core.errors import GraphError, KernelError
from graphlab.core.limits import check_every_problem, repeat_problem
from graphlab.core.names import check_name, check_node_name
from graphlab.core.spec import Arg, Dim, Role
from graphlab.model.graphdata import GraphData
from graphlab.model.kernels import KernelInfo, kernel_info
from graphlab.model.locate import join, parent_id, unique_name
from graphlab.model.nodes import Cond, Dispatch, Loop, Node, SequenceUse, children, renamed, with_bindings

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


class Graph(GraphData):
    """A compute graph of Taichi kernels over symbolic args.

    The model: its content, reading, undo and observers (:class:`graphlab.model.graphdata.GraphData`,
    the base), and here every edit: declaring args, building and editing nodes. Users make the
    public ``graphlab.Graph`` (:class:`graphlab.api.graph.Graph`), which adds the methods that
    validate, run, debug, render and save it.

    Examples
    --------
    >>> import graphlab as gl
    >>> g = gl.Graph("update")
    >>> x = g.ndarray("x", "f32", ndim=1)
    >>> x.describe()
    'ndarray f32, ndim=1'
    """

    # --- declaring args ---------------------------------------------------------------------------

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
        graphlab.core.errors.GraphError: GL004: arg 'a' is already declared as scalar f32, not scalar i32; ...
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
        from graphlab.bridge.types import format_name  # import cost: Taichi

        return self.declare(Arg(name, "rw_texture", None, ndim, (), format_name(fmt), role))

    def arg_like(self, name: str, value: Any, *, role: Role = "state", shape: Sequence[Dim] | None = None) -> Arg:
        """Declare an arg whose spec is taken from an existing value (a ti.ndarray, ti.Matrix, number).

        The value's concrete shape is not fixed unless ``shape`` says so.
        """
        from graphlab.bridge import types as bridge  # import cost: Taichi

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
                    body[i] = with_bindings(node, {p: (new if b == old else b) for p, b in node.bindings})
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
        check_every: int = 1,
        guarded: bool = False,
        name: str = "loop",
        into: Into = None,
    ) -> str:
        """Repeat ``body``: ``count`` times (a scalar i32 arg), or while the flag ``while_`` is non-zero.

        A ``while_`` loop is bounded: ``max_iter`` is required. Iteration k of a body node is the
        step ``<id>/iter[k]/<node>``. ``check_every=k`` (while loops, opt-in) reads the flag only after
        iterations k, 2k, ... and after iteration ``max_iter``: each read is a host round trip, so
        this saves k-1 of every k, but the body may run up to k-1 iterations after the flag cleared
        (it must be safe to repeat). The iterations reported are those that ran.

        ``guarded=True`` (with ``check_every`` > 1) is the guarded form, for a body you mark safe to
        repeat: before each group of k iterations the buffers the body writes are copied aside on the
        device, and when a read finds the flag 0 they are put back and the group replayed one
        iteration and one read at a time. The loop then stops, and leaves its buffers, exactly where
        ``check_every=1`` would, at the cost of that copy per group. "Safe to repeat" means replaying
        from the saved buffers gives the same flags: no ``ti.random``, no state outside the graph's
        args, and a flag that stays 0 once cleared (one that flips back is only seen at reads).
        """
        if (while_ is None) == (count is None):
            raise GraphError("loop(): give exactly one of while_=flag or count=n_arg")
        if while_ is not None and max_iter is None:
            raise GraphError("GL022: a while_ loop needs max_iter=N, so a flag that never clears cannot hang the run")
        if max_iter is not None:
            max_iter = _check_repeat(max_iter)
        if check_every != 1:
            if while_ is None:
                raise GraphError("loop(): check_every applies to while_ loops only (a count loop reads no flag)")
            problem = repeat_problem(check_every)
            if problem is not None:
                raise GraphError(f"loop(): check_every: {problem.replace('repeat', 'check_every', 1)}")
            problem = check_every_problem(check_every, max_iter, guarded=guarded is True)
            if problem is not None:
                raise GraphError(f"GL019: loop(): {problem}")
        if guarded is not False and (guarded is not True or check_every == 1):
            raise GraphError(
                f"loop(): guarded={guarded!r}: give guarded=True together with check_every=k > 1 "
                "(a loop that reads its flag every iteration is already exact)"
            )
        node = Loop(
            "",
            self._sequence_name(body),
            None if while_ is None else self._arg_name(while_),
            None if count is None else self._arg_name(count),
            max_iter,
            check_every,
            guarded,
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
        return self._added(container, node, join(parent, node.name))

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
        return self._insert(info, None, into, name, given)

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
        return self._insert(info, index, into, name, bindings)

    def _insert(
        self, info: KernelInfo, index: int | None, into: Into, name: str | None, bindings: Mapping[str, Any] | None
    ) -> str:
        """:meth:`insert` for a kernel already found dispatchable."""
        resolved: dict[str, str | None] = {p.name: None for p in info.params}
        for param, value in (bindings or {}).items():
            info.param(param)
            resolved[param] = None if value is None else self._bind_value(info, param, value)
        container, parent = self._resolve_into(into)
        body = self._container(container)
        position = _check_index(index, len(body) + 1, "insert")
        node = Dispatch(self._unique(container, name or info.name), info, tuple(resolved.items()))
        body.insert(position, node)
        return self._added(container, node, join(parent, node.name))

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
        parent = parent_id(node_id)
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
                node = renamed(node, self._unique(target, node.name))
            dest.insert(position, node)
        except GraphError:
            body.insert(old_index, node)
            raise
        new_id = join(target_id, node.name)  # type: ignore[arg-type]
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
        self._container(container)[index] = with_bindings(
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
        body[index] = renamed(body[index], new_name)
        new_id = join(parent_id(node_id), new_name)
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
        use = SequenceUse(unique_name(body, name), name, repeat)  # the body changed: not the name index
        body.insert(indices[0], use)
        node_id = join(parent_id(node_ids[0]), use.name)
        self._changed("node_grouped", node_id, detail={"members": list(node_ids)})
        return node_id

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


def _parse_dtype(dtype: Any) -> tuple[str, tuple[int, ...]]:
    from graphlab.bridge.types import parse_dtype  # import cost: Taichi

    return parse_dtype(dtype)
