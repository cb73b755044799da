"""The one place that knows Taichi 1.7.4's Python internals.

Everything that reads a Taichi object (a dtype, an annotation, an ndarray, the runtime) or builds
one (a ``ti.graph.Arg``) goes through here, so a Taichi upgrade touches this module only.

Importing this module wraps ``Ndarray.__init__`` and ``Texture.__init__`` to note, on each new
object, the Taichi runtime it was made in (:func:`value_is_current`): an ndarray or texture made
before ``ti.reset()``/``ti.init()`` points at freed memory, and passing it to a graph segfaults.
"""

from __future__ import annotations

import functools
import weakref
from dataclasses import dataclass
from typing import Any

import taichi as ti
from taichi.lang import impl
from taichi.lang.matrix import MatrixType
from taichi.lang.struct import StructType
from taichi.types import ndarray_type, texture_type

from graphlab.errors import GraphError
from graphlab.spec import DTYPES, Arg

_TAICHI_DTYPES: dict[str, Any] = {name: getattr(ti, name) for name in DTYPES}


def dtype_name(dtype: Any) -> str:
    """Canonical name (``"f32"``) of a Taichi primitive dtype, or of Python ``int``/``float``."""
    if dtype is float:
        return str(impl.get_runtime().default_fp)
    if dtype is int:
        return str(impl.get_runtime().default_ip)
    name = str(dtype)
    if name not in DTYPES:
        raise GraphError(f"dtype {dtype!r} is not a Taichi primitive type ({', '.join(DTYPES)})")
    return name


def taichi_dtype(name: str) -> Any:
    """The Taichi primitive dtype for a canonical name."""
    return _TAICHI_DTYPES[name]


def split_dtype(dtype: Any) -> tuple[str, tuple[int, ...]]:
    """A primitive, vector or matrix dtype as (primitive name, element shape)."""
    if isinstance(dtype, MatrixType):
        return dtype_name(dtype.dtype), tuple(dtype.get_shape())
    return dtype_name(dtype), ()


def element_type(dtype: str, element_shape: tuple[int, ...]) -> Any:
    """The Taichi type for a primitive name and element shape (``vec2 f32`` -> ``ti.types.vector``)."""
    base = taichi_dtype(dtype)
    if len(element_shape) == 1:
        return ti.types.vector(element_shape[0], base)
    if len(element_shape) == 2:
        return ti.types.matrix(element_shape[0], element_shape[1], base)
    return base


def format_name(fmt: Any) -> str:
    """Name of a ``ti.Format`` (``"r32f"``); strings pass through after a check."""
    name = fmt if isinstance(fmt, str) else getattr(fmt, "name", None)
    if not isinstance(name, str) or not hasattr(ti.Format, name) or name == "unknown":
        raise GraphError(f"texture format {fmt!r} is not a ti.Format (e.g. ti.Format.r32f)")
    return name


def to_graph_arg(arg: Arg) -> Any:
    """Build the ``ti.graph.Arg`` for a graphlab arg."""
    kinds = ti.graph.ArgKind
    if arg.kind == "scalar":
        return ti.graph.Arg(kinds.SCALAR, arg.name, taichi_dtype(arg.dtype or "f32"))
    if arg.kind == "ndarray":
        dtype = element_type(arg.dtype or "f32", arg.element_shape)
        return ti.graph.Arg(kinds.NDARRAY, arg.name, dtype, ndim=arg.ndim)
    if arg.kind == "matrix":
        return ti.graph.Arg(kinds.MATRIX, arg.name, element_type(arg.dtype or "f32", arg.element_shape))
    if arg.kind == "texture":
        return ti.graph.Arg(kinds.TEXTURE, arg.name, ndim=arg.ndim)
    return ti.graph.Arg(kinds.RWTEXTURE, arg.name, ndim=arg.ndim, fmt=getattr(ti.Format, arg.fmt or "r32f"))


@dataclass(frozen=True)
class AnnotationSpec:
    """What a kernel parameter annotation accepts; ``None`` fields are left open by the annotation."""

    kind: str
    dtype: str | None = None
    ndim: int | None = None
    element_shape: tuple[int, ...] | None = None
    fmt: str | None = None


def annotation_spec(annotation: Any) -> AnnotationSpec:
    """Classify a ``@ti.kernel`` parameter annotation."""
    if isinstance(annotation, ndarray_type.NdarrayType):
        if annotation.dtype is None:
            return AnnotationSpec("ndarray", None, annotation.ndim, None)
        dtype, element_shape = _open_split(annotation.dtype)
        return AnnotationSpec("ndarray", dtype, annotation.ndim, element_shape)
    if isinstance(annotation, texture_type.RWTextureType):
        return AnnotationSpec("rw_texture", None, annotation.num_dimensions, None, format_name(annotation.fmt))
    if isinstance(annotation, texture_type.TextureType):
        return AnnotationSpec("texture", None, annotation.num_dimensions, None)
    if isinstance(annotation, MatrixType):
        dtype, element_shape = _open_split(annotation)
        return AnnotationSpec("matrix", dtype, 0, element_shape)
    if isinstance(annotation, ti.template):
        return AnnotationSpec("template")
    if isinstance(annotation, StructType):
        return AnnotationSpec("struct")
    try:
        return AnnotationSpec("scalar", dtype_name(annotation), 0, ())
    except GraphError:
        return AnnotationSpec("unknown")


def _open_split(dtype: Any) -> tuple[str | None, tuple[int, ...] | None]:
    """Like split_dtype, but a vector/matrix type may leave its size or primitive open."""
    if isinstance(dtype, MatrixType):
        base = None if dtype.dtype is None else dtype_name(dtype.dtype)
        if dtype.ndim == 1:
            return base, None if dtype.n is None else (dtype.n,)
        if dtype.n is None or dtype.m is None:
            return base, None
        return base, (dtype.n, dtype.m)
    return dtype_name(dtype), ()


def kernel_primal(fn: Any) -> Any | None:
    """The ``taichi.lang.kernel_impl.Kernel`` behind a ``@ti.kernel`` function, or None."""
    if not getattr(fn, "_is_wrapped_kernel", False) or getattr(fn, "_is_classkernel", False):
        return None
    return getattr(fn, "_primal", None)


# --- values -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ValueSpec:
    """What a run value is, in the model's terms."""

    kind: str  # "ndarray", "matrix", "texture", "scalar_int", "scalar_float", "numpy", "other"
    dtype: str | None = None
    shape: tuple[int, ...] = ()
    element_shape: tuple[int, ...] = ()


def describe_value(value: Any) -> ValueSpec:
    """Inspect a value passed to ``run`` without copying it."""
    if isinstance(value, ti.lang._ndarray.Ndarray):
        return ValueSpec("ndarray", str(value.dtype), tuple(value.shape), tuple(value.element_shape))
    if isinstance(value, ti.lang._texture.Texture):
        return ValueSpec("texture", None, tuple(getattr(value, "shape", ()) or ()))
    if isinstance(value, ti.Matrix):
        shape = (value.n,) if value.ndim == 1 else (value.n, value.m)
        return ValueSpec("matrix", None, (), shape)
    return ValueSpec("other")


def texture_ndim(value: Any) -> int | None:
    """Number of dimensions of a ``ti.Texture`` value, if Taichi says."""
    shape = getattr(value, "shape", None)
    return len(shape) if shape is not None else None


def new_ndarray(dtype: str, shape: tuple[int, ...], element_shape: tuple[int, ...]) -> Any:
    """Allocate a Taichi ndarray on the current arch."""
    return ti.ndarray(element_type(dtype, element_shape), shape=shape)


def make_matrix(values: Any) -> Any:
    """A ``ti.Matrix`` from nested sequences or a numpy array."""
    return ti.Matrix(values.tolist() if hasattr(values, "tolist") else values)


def is_ndarray(value: Any) -> bool:
    """Whether ``value`` is a Taichi ndarray."""
    return isinstance(value, ti.lang._ndarray.Ndarray)


class RuntimeToken:
    """Remembers which Taichi runtime something was built for.

    ``ti.reset()`` and ``ti.init()`` replace Taichi's runtime object; a compiled graph used after
    that segfaults in Taichi 1.7.4, so graphlab checks the token before every run.
    """

    def __init__(self) -> None:
        self._runtime = weakref.ref(impl.get_runtime())
        self.arch = str(impl.current_cfg().arch).rsplit(".", 1)[-1]

    def is_current(self) -> bool:
        """Whether the runtime this was built for is still the live one."""
        live: Any = self._runtime()
        return live is not None and live is impl.get_runtime() and live.prog is not None


# --- which runtime an ndarray or texture belongs to ------------------------------------------------
#
# A Taichi ndarray or texture keeps no Python-visible link to its program, and its C++ object is freed
# with the program, so nothing on it can be read safely afterwards. Each one made after this module is
# imported records the runtime (the ``PyTaichi`` object, replaced by every ti.reset()/ti.init()) it was
# made in. One made before the import has no record: it counts as current only while the runtime that
# was live at the import still is (it may, rarely, come from a runtime replaced before the import).

_BORN = "_graphlab_runtime"


def _record_birth(cls: type) -> None:
    original = cls.__init__  # type: ignore[misc]
    if getattr(original, "_graphlab_records_birth", False):
        return

    @functools.wraps(original)
    def init_noting_runtime(self: Any, *args: Any, **kwargs: Any) -> None:
        self.__dict__[_BORN] = weakref.ref(impl.get_runtime())
        original(self, *args, **kwargs)

    init_noting_runtime._graphlab_records_birth = True  # type: ignore[attr-defined]
    cls.__init__ = init_noting_runtime  # type: ignore[misc]


_record_birth(ti.lang._ndarray.Ndarray)
_record_birth(ti.lang._texture.Texture)
_LIVE_AT_IMPORT: Any = weakref.ref(impl.get_runtime()) if impl.get_runtime().prog is not None else None


def value_is_current(value: Any) -> bool:
    """Whether a ``ti.ndarray``/``ti.Texture`` was made in the live Taichi runtime (False: it would crash)."""
    born = getattr(value, "__dict__", {}).get(_BORN, _LIVE_AT_IMPORT)
    live = impl.get_runtime()
    return born is not None and born() is live and live.prog is not None


def current_arch() -> str:
    """The arch of the current ``ti.init`` (``x64``, ``cuda``, ``vulkan``...)."""
    return str(impl.current_cfg().arch).rsplit(".", 1)[-1]


def sync() -> None:
    """Wait for the device to finish queued work."""
    ti.sync()


def parse_dtype(dtype: Any) -> tuple[str, tuple[int, ...]]:
    """Accept ``"f32"``, ``ti.f32``, ``ti.math.vec2``, ``float``/``int`` or a numpy dtype."""
    if isinstance(dtype, str):
        if dtype in DTYPES:
            return dtype, ()
        raise GraphError(f"dtype {dtype!r} is not one of {', '.join(DTYPES)}")
    numpy_name = getattr(getattr(dtype, "dtype", None), "name", None) or getattr(dtype, "__name__", None)
    from graphlab.spec import NUMPY_DTYPES

    for name, np_name in NUMPY_DTYPES.items():
        if numpy_name == np_name:
            return name, ()
    return split_dtype(dtype)


def read_flag(arr: Any) -> int:
    """Read a one-element ndarray on the host (waits for the device: the cost of a control decision)."""
    return int(arr[(0,) * len(arr.shape)] if arr.shape else arr[None])
