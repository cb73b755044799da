"""Checking the values given to ``run`` against the graph, before anything is dispatched.

Taichi 1.7.4 checks dtypes per dispatch (so a bad value for dispatch 2 fails after dispatch 1 has
written) and concrete shapes never. Here every value is checked up front: missing and unknown
names, kind, dtype, ndim, element shape, declared shapes and symbolic dims that must agree, and
the shape relations read from the kernels' source (:mod:`graphlab.kernelfacts.shape_facts`: ``J[p]`` in a loop
over ``x`` needs ``J`` at least as long as ``x``), declared or not.

How other values are taken (Taichi's own ``run`` refuses them):

- numpy scalars (``np.float32(1)``, ``np.int64(3)``) for scalar args become Python numbers; an
  integer arg refuses a float, as Taichi does, and an out-of-range integer is refused.
- numpy arrays for ndarray args must have the arg's dtype exactly (no silent casts) and trailing
  axes equal to the element shape; they are copied to a Taichi ndarray before the run and copied
  back in place afterwards when the graph writes them. Pass ``ti.ndarray``s to avoid the copies.
  A read-only array (``setflags(write=False)``, a broadcast view) for an arg the graph writes is
  refused up front; the copy back is all or nothing (:meth:`PreparedRun.finish`).
- a ``ti.ndarray`` or ``ti.Texture`` made before ``ti.reset()``/``ti.init()`` raises
  :class:`StaleGraphError` (its memory is gone; Taichi would segfault).
- numpy arrays or nested lists for matrix args become a ``ti.Matrix`` of the arg's shape; complex or
  non-numeric entries are refused (numpy would drop imaginary parts, parse strings).
- refused too, as Taichi fails on them mid-run: a numpy array with a 0-length axis (Taichi cannot
  allocate it) and, for a float arg, an int too large for a float64.

The checks shared with the exported module's runner (:mod:`graphlab.deploy.cruntime`): a numpy
array's dtype and shape (:func:`array_problem`) and an int arg's values (:func:`number_problem`)
are declared here once, beside symbolic dims agreeing across args and the rule that sizes temps
(:mod:`graphlab.model.sizes`); each caller raises its own error with its own prefix.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

import numpy as np

from graphlab.bridge import runtime as bridge
from graphlab.bridge import types as bridge_types
from graphlab.core.errors import GraphRunError, StaleGraphError
from graphlab.core.names import shown
from graphlab.core.spec import NUMPY_DTYPES, Arg, is_float
from graphlab.kernelfacts.shape_facts import ShapeRelation, first_violation
from graphlab.model.sizes import dim_names, dims_problem

_INT_RANGES = {name: np.iinfo(np.dtype(np_name)) for name, np_name in NUMPY_DTYPES.items() if name[0] in "iu"}
_FLOAT_INT_LIMIT = int(np.finfo(np.float64).max)  # a larger int cannot become a float


__all__ = [
    "ArgLike",
    "PreparedRun",
    "Problem",
    "ValueChecker",
    "array_problem",
    "dims_problem",
    "number_problem",
    "numpy_dtype",
    "shape_pattern",
]


class ArgLike(Protocol):
    """What a value is checked against: a :class:`graphlab.core.spec.Arg`, or an arg read from manifest.json."""

    @property
    def name(self) -> str: ...
    @property
    def dtype(self) -> str | None: ...
    @property
    def ndim(self) -> int: ...
    @property
    def element_shape(self) -> tuple[int, ...]: ...
    @property
    def shape(self) -> tuple[int | str, ...] | None: ...


class Problem(NamedTuple):
    """Why a value does not fit an arg: what was expected, what was given, and the fix."""

    want: str
    got: str
    fix: str


def numpy_dtype(arg: ArgLike) -> np.dtype[Any]:
    """The numpy dtype of an arg's values."""
    return np.dtype(NUMPY_DTYPES[arg.dtype or "f32"])


def array_problem(arg: ArgLike, value: np.ndarray) -> Problem | None:
    """Why a numpy array cannot be ``arg``'s buffer (dtype exactly, ndim and element shape), or None."""
    want = numpy_dtype(arg)
    if value.dtype != want:
        fix = f"convert it with .astype(np.{want})"
        return Problem(f"dtype {want} ({arg.dtype})", f"{value.dtype} numpy array", fix)
    esh = arg.element_shape
    if value.ndim != arg.ndim + len(esh) or value.shape[arg.ndim :] != esh:
        pattern = shape_pattern(arg)
        return Problem(f"shape {pattern}", f"numpy array of shape {value.shape}", f"give an array of shape {pattern}")
    return None


def shape_pattern(arg: ArgLike) -> str:
    """The shape an arg's numpy value takes, for a person: ``(n, 2)`` is n (any size if undeclared)
    vec2 elements; axes nobody named show as ``_`` (any size), ``()`` is a 0-d ndarray's one element.
    """
    axes = [str(d) for d in arg.shape] if arg.shape is not None else ["_"] * arg.ndim
    parts = [*axes, *map(str, arg.element_shape)]
    return f"({parts[0]},)" if len(parts) == 1 else f"({', '.join(parts)})"


def number_problem(arg: ArgLike, low: float, high: float, *, floating: bool) -> Problem | None:
    """Why numbers from ``low`` to ``high`` (``floating``: given as floats) cannot be an int arg's, or None.

    A float arg takes any number. An int arg refuses floats, as Taichi does, and values out of its
    dtype's range (rather than wrapping them).
    """
    limits = _INT_RANGES.get(arg.dtype or "")
    if limits is None:
        return None
    if floating:
        fix = "pass an int (Taichi cannot cast a float to an int arg)"
        return Problem(f"an int ({arg.dtype})", f"float {low!r}", fix)
    if not limits.min <= low <= high <= limits.max:
        bad = low if low < limits.min else high
        fix = f"it must lie in {limits.min}..{limits.max}"
        return Problem(f"an {arg.dtype}", f"{shown(bad)}, which does not fit {arg.dtype}", fix)
    return None


@dataclass
class PreparedRun:
    """Values ready for Taichi, plus numpy arrays to copy back after the run."""

    values: dict[str, Any]
    write_back: list[tuple[str, np.ndarray, Any]] = field(default_factory=list)
    dims: dict[str, int] = field(default_factory=dict)
    dim_owner: dict[str, str] = field(default_factory=dict)
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)  # ndarray arg -> field dims, for relations

    def finish(self, retry: str = "run again") -> None:
        """Copy device results back into the caller's numpy arrays, all or none.

        Every result is fetched to the host and every destination checked before the first copy,
        so a failure leaves all of the caller's arrays as they were.
        """
        results = [(name, array, ndarray.to_numpy()) for name, array, ndarray in self.write_back]
        for name, array, result in results:
            if not array.flags.writeable or array.shape != result.shape or array.dtype != result.dtype:
                problem = "is read-only now" if not array.flags.writeable else "changed its shape or dtype"
                raise GraphRunError(
                    f"the numpy array given for arg {name!r} {problem}, so the graph's results cannot be "
                    "copied back; no numpy array was changed. Make it writable with its old shape and "
                    f"dtype again ({result.dtype}, shape {result.shape}) and {retry}",
                    arg=name,
                )
        for _, array, result in results:
            np.copyto(array, result)


class ValueChecker:
    """Checks a dict of run values against the graph's args (built once per compiled graph)."""

    def __init__(
        self, graph_name: str, args: Iterable[Arg], written: Iterable[str] = (), relations: Iterable[ShapeRelation] = ()
    ) -> None:
        self.graph_name = graph_name
        self.args = {arg.name: arg for arg in args}
        self.written = set(written)
        self.relations = list(relations)
        self._checks: dict[str, Callable[[Any, PreparedRun], Any]] = {
            name: _CHECKERS[arg.kind](arg, name in self.written) for name, arg in self.args.items()
        }

    def prepare(self, values: Mapping[str, Any], optional: Iterable[str] = ()) -> PreparedRun:
        """Check every value; raise :class:`GraphRunError` on the first problem, before any copy."""
        names = self.args.keys()
        unknown = [k for k in values if k not in names]
        if unknown:
            dims = dim_names(self.args.values())
            sizes = f"; its dims (sizes for temps, as n=1024): {', '.join(dims)}" if dims else ""
            raise GraphRunError(
                f"run() of graph {self.graph_name!r} got unknown arg(s) {', '.join(map(repr, unknown))}; "
                f"the graph's args: {', '.join(names)}{sizes}",
                arg=unknown[0],
            )
        skip = set(optional)
        missing = [k for k in names if k not in values and k not in skip]
        if missing:
            raise GraphRunError(
                f"run() of graph {self.graph_name!r} is missing {', '.join(map(repr, missing))}; "
                f"pass {', '.join(f'{k}=...' for k in missing)}",
                arg=missing[0],
            )
        prepared = PreparedRun({})
        converted = {name: self._checks[name](value, prepared) for name, value in values.items()}
        self.check_relations(prepared)
        for name, (array, shape) in [(n, v) for n, v in converted.items() if isinstance(v, _PendingNumpy)]:
            ndarray = bridge.new_ndarray(self.args[name].dtype or "f32", shape, self.args[name].element_shape)
            ndarray.from_numpy(array)
            converted[name] = ndarray
            if name in self.written:
                prepared.write_back.append((name, array, ndarray))
        prepared.values = converted
        return prepared

    def check_relations(self, prepared: PreparedRun, more: Mapping[str, Any] | None = None) -> None:
        """Raise :class:`GraphRunError` when the shapes break a relation the kernels' source makes certain.

        ``more`` adds ndarrays not checked by :meth:`prepare` (temps allocated afterwards).
        """
        if not self.relations:
            return
        shapes = prepared.shapes
        if more:
            shapes = {**shapes, **{k: tuple(bridge_types.describe_value(v).shape) for k, v in more.items()}}
        broken = first_violation(self.relations, shapes)
        if broken is not None:
            raise GraphRunError(f"run() of graph {self.graph_name!r}: {broken[1]}", arg=broken[0].arg)


class _PendingNumpy(tuple):
    """A checked numpy array waiting for its device copy (made only once every value passed)."""


def _fail(arg: Arg, got: str, fix: str) -> GraphRunError:
    return GraphRunError(f"run(): arg {arg.name!r} expects {arg.describe()}; got {got}. {fix}", arg=arg.name)


def _check_dims(arg: Arg, shape: tuple[int, ...], prepared: PreparedRun) -> None:
    prepared.shapes[arg.name] = tuple(shape)
    problem = dims_problem(arg, shape, prepared.dims, prepared.dim_owner)
    if problem is not None:
        raise GraphRunError(f"run(): arg {arg.name!r} {problem}", arg=arg.name)


def _stale(arg: Arg, what: str) -> StaleGraphError:
    return StaleGraphError(
        f"run(): arg {arg.name!r} is a {what} made before ti.reset()/ti.init() replaced the Taichi runtime; "
        "its memory is gone and using it would crash the process. Allocate it again after ti.init()"
    )


def _ndarray_checker(arg: Arg, written: bool) -> Callable[[Any, PreparedRun], Any]:
    def check(value: Any, prepared: PreparedRun) -> Any:
        if isinstance(value, np.ndarray):
            if written and not value.flags.writeable:
                raise GraphRunError(
                    f"run(): arg {arg.name!r} is a read-only numpy array, but the graph writes {arg.name!r} "
                    "and run() copies the results back into it. Pass a writable copy: np.array(value)",
                    arg=arg.name,
                )
            return _numpy_ndarray(arg, value, prepared)
        if not bridge_types.is_ndarray(value):
            raise _fail(arg, type(value).__name__, "pass a ti.ndarray (or a numpy array of that dtype)")
        if not bridge.value_is_current(value):
            raise _stale(arg, "ti.ndarray")
        spec = bridge_types.describe_value(value)
        if spec.dtype != arg.dtype or spec.element_shape != arg.element_shape or len(spec.shape) != arg.ndim:
            got = f"ndarray {spec.dtype} element shape {list(spec.element_shape)}, shape {spec.shape}"
            raise _fail(arg, got, "allocate it with the arg's dtype, element shape and ndim")
        _check_dims(arg, spec.shape, prepared)
        return value

    return check


def _numpy_ndarray(arg: Arg, value: np.ndarray, prepared: PreparedRun) -> Any:
    problem = array_problem(arg, value)
    if problem is not None:
        raise _fail(arg, problem.got, problem.fix)
    shape = value.shape[: arg.ndim]
    if 0 in shape:  # Taichi cannot allocate it ("(0,) is not a valid shape for ndarray")
        raise _fail(arg, f"a numpy array of shape {value.shape}", "Taichi ndarrays hold at least one element per axis")
    _check_dims(arg, shape, prepared)
    return _PendingNumpy((value, tuple(shape)))


def _scalar_checker(arg: Arg, written: bool) -> Callable[[Any, PreparedRun], Any]:
    floating = is_float(arg.dtype)

    def check(value: Any, prepared: PreparedRun) -> Any:
        if isinstance(value, np.generic) and value.shape == ():
            value = value.item()
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _fail(arg, type(value).__name__, "pass a Python or numpy number")
        if floating:
            if isinstance(value, int) and abs(value) > _FLOAT_INT_LIMIT:  # pybind11 fails on it (RuntimeError)
                raise _fail(arg, f"an int of {value.bit_length():,} bits", "pass a number a float64 can hold")
            return float(value) if isinstance(value, float) else value
        problem = number_problem(arg, value, value, floating=isinstance(value, float))
        if problem is not None:
            raise _fail(arg, problem.got, problem.fix)
        return value

    return check


def _matrix_checker(arg: Arg, written: bool) -> Callable[[Any, PreparedRun], Any]:
    def check(value: Any, prepared: PreparedRun) -> Any:
        spec = bridge_types.describe_value(value)
        if spec.kind == "matrix":
            shape = spec.element_shape
        else:
            try:  # real numbers only: complex would lose its imaginary part, strings parse as numbers
                raw = np.asarray(value)
                if raw.dtype.kind not in "biufO":
                    raise TypeError(raw.dtype)
                array = raw.astype(np.float64)
            except (TypeError, ValueError, OverflowError):
                raise _fail(arg, type(value).__name__, "pass a ti.Matrix, a numpy array or nested lists") from None
            shape = array.shape
        if tuple(shape) != arg.element_shape:
            raise _fail(arg, f"a matrix of shape {tuple(shape)}", f"give shape {arg.element_shape}")
        return value if spec.kind == "matrix" else bridge.make_matrix(array)

    return check


def _texture_checker(arg: Arg, written: bool) -> Callable[[Any, PreparedRun], Any]:
    def check(value: Any, prepared: PreparedRun) -> Any:
        if bridge_types.describe_value(value).kind != "texture":
            raise _fail(arg, type(value).__name__, "pass a ti.Texture")
        if not bridge.value_is_current(value):
            raise _stale(arg, "ti.Texture")
        ndim = bridge_types.texture_ndim(value)
        if ndim is not None and ndim != arg.ndim:
            raise _fail(arg, f"a {ndim}-D texture", f"pass a {arg.ndim}-D texture")
        fmt = bridge_types.texture_format(value)
        if arg.kind == "rw_texture" and fmt is not None and fmt != arg.fmt:
            # A ti.graph run stores through the wrong format silently (values quantised); a kernel call refuses.
            raise _fail(arg, f"a {fmt} texture", f"allocate it as ti.Texture(ti.Format.{arg.fmt}, shape)")
        return value

    return check


_CHECKERS = {
    "ndarray": _ndarray_checker,
    "scalar": _scalar_checker,
    "matrix": _matrix_checker,
    "texture": _texture_checker,
    "rw_texture": _texture_checker,
}
