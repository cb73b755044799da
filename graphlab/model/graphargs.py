"""Declaring a graph's symbolic args: the args part of :class:`graphlab.Graph`'s editing API.

An arg is a named, typed slot (:class:`graphlab.core.spec.Arg`) that dispatches bind and ``run`` fills.
:class:`GraphArgs` declares args from Taichi dtypes or existing values, changes their spec, role or
name (rebinding every dispatch to it) and removes the unbound; each edit notifies observers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from graphlab.core.errors import GraphError
from graphlab.core.spec import Arg, Dim, Role
from graphlab.model.graphdata import GraphData
from graphlab.model.nodes import Dispatch, with_bindings


class GraphArgs(GraphData):
    """The arg declarations of a graph (see :class:`graphlab.Graph`)."""

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


def _parse_dtype(dtype: Any) -> tuple[str, tuple[int, ...]]:
    from graphlab.bridge.types import parse_dtype  # import cost: Taichi

    return parse_dtype(dtype)
