"""Taichi's type objects to and from graphlab's plain data.

The model keeps dtypes as names (``"f32"``), element shapes as tuples and texture formats as
strings, so a graph can be built, saved and checked without a Taichi runtime. Where a user hands
the model a Taichi object (a dtype, a kernel's annotations, an ndarray to take a spec from), this
module reads it; where a Taichi object must be built from the model's data, this module builds it.

Imports Taichi (the model imports this module only inside the functions that need it, so
``import graphlab`` stays free of Taichi).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeGuard

import numpy as np
import taichi as ti
from taichi.lang import impl
from taichi.lang._ndarray import Ndarray
from taichi.lang._texture import Texture
from taichi.lang.expr import Expr
from taichi.lang.matrix import MatrixType, VectorType
from taichi.lang.struct import StructType
from taichi.types import ndarray_type, texture_type

from graphlab.bridge import kernel_primal
from graphlab.core.errors import GraphError, KernelError
from graphlab.core.spec import DTYPES, NUMPY_DTYPES

__all__ = [
    "AnnotationSpec",
    "ValueDescription",
    "annotation_kind",
    "annotation_spec",
    "describe_value",
    "dtype_name",
    "element_type",
    "expression_dtype",
    "format_name",
    "is_matrix_type",
    "is_ndarray",
    "is_struct_type",
    "is_vector_type",
    "kernel_parameters",
    "kernel_returns",
    "parse_dtype",
    "split_dtype",
    "taichi_dtype",
    "texture_format",
    "texture_ndim",
    "to_numpy_dtype",
]

_TAICHI_DTYPES: dict[str, Any] = {name: getattr(ti, name) for name in DTYPES}


# --- dtypes ------------------------------------------------------------------------------------
def dtype_name(dtype: Any) -> str:
    """Canonical name (``"f32"``) of a Taichi primitive dtype, or of Python ``int``/``float``.

    ``float`` and ``int`` mean the current ``ti.init``'s ``default_fp``/``default_ip``.
    """
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


def to_numpy_dtype(dtype: Any) -> np.dtype[Any]:
    """The numpy dtype of a Taichi primitive dtype (``ti.f32`` -> ``float32``)."""
    return np.dtype(NUMPY_DTYPES[dtype_name(dtype)])


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


def parse_dtype(dtype: Any) -> tuple[str, tuple[int, ...]]:
    """Accept ``"f32"``, ``ti.f32``, ``ti.math.vec2``, ``float``/``int`` or a numpy dtype."""
    if isinstance(dtype, str):
        if dtype in DTYPES:
            return dtype, ()
        raise GraphError(f"dtype {dtype!r} is not one of {', '.join(DTYPES)}")
    numpy_name = getattr(getattr(dtype, "dtype", None), "name", None) or getattr(dtype, "__name__", None)
    for name, np_name in NUMPY_DTYPES.items():
        if numpy_name == np_name:
            return name, ()
    return split_dtype(dtype)


def format_name(fmt: Any) -> str:
    """Name of a ``ti.Format`` (``"r32f"``); strings pass through after a check."""
    name = fmt if isinstance(fmt, str) else getattr(fmt, "name", None)
    if not isinstance(name, str) or not hasattr(ti.Format, name) or name == "unknown":
        raise GraphError(f"texture format {fmt!r} is not a ti.Format (e.g. ti.Format.r32f)")
    return name


def is_vector_type(t: object) -> TypeGuard[VectorType]:
    """Whether ``t`` is a ``ti.types.vector(...)`` type (its size and primitive may be left open)."""
    return isinstance(t, VectorType)


def is_matrix_type(t: object) -> TypeGuard[MatrixType]:
    """Whether ``t`` is a ``ti.types.matrix(...)`` type; vector types are matrix types too."""
    return isinstance(t, MatrixType)


def is_struct_type(t: object) -> TypeGuard[StructType]:
    """Whether ``t`` is a ``ti.types.struct(...)`` type."""
    return isinstance(t, StructType)


# --- kernel parameters -------------------------------------------------------------------------
def _primal(fn: Callable[..., Any]) -> Any:
    primal = kernel_primal(fn, class_kernels=True)
    if primal is None:
        raise KernelError(f"{getattr(fn, '__qualname__', fn)!r} is not a @ti.kernel; decorate it with @ti.kernel")
    return primal


def kernel_parameters(fn: Callable[..., Any]) -> list[tuple[str, Any]]:
    """``(name, annotation)`` of each parameter of a ``@ti.kernel`` (a class kernel's too), in order.

    Raises
    ------
    KernelError
        If ``fn`` is not a ``@ti.kernel`` (a ``@ti.func``, a plain function, any other object).
    """
    return [(argument.name, argument.annotation) for argument in _primal(fn).arguments]


def kernel_returns(fn: Callable[..., Any]) -> bool:
    """Whether a ``@ti.kernel`` declares a return type."""
    return bool(getattr(_primal(fn), "return_type", None))


@dataclass(frozen=True)
class AnnotationSpec:
    """What a kernel parameter annotation accepts; ``None`` fields are left open by the annotation."""

    kind: str
    dtype: str | None = None
    ndim: int | None = None
    element_shape: tuple[int, ...] | None = None
    fmt: str | None = None


def annotation_kind(annotation: Any) -> str:
    """``"ndarray"``, ``"texture"``, ``"rw_texture"``, ``"matrix"``, ``"template"``, ``"struct"``,
    ``"scalar"`` or ``"unknown"``: what a ``@ti.kernel`` parameter annotation declares, nothing read further."""
    if isinstance(annotation, ndarray_type.NdarrayType):
        return "ndarray"
    if isinstance(annotation, texture_type.RWTextureType):
        return "rw_texture"
    if isinstance(annotation, texture_type.TextureType):
        return "texture"
    if isinstance(annotation, MatrixType):
        return "matrix"
    if isinstance(annotation, ti.template):
        return "template"
    if isinstance(annotation, StructType):
        return "struct"
    try:
        dtype_name(annotation)
    except GraphError:
        return "unknown"
    return "scalar"


def annotation_spec(annotation: Any) -> AnnotationSpec:
    """Classify a ``@ti.kernel`` parameter annotation and read what it fixes.

    Raises GraphError for an ndarray whose dtype is not a primitive, vector or matrix type, and for
    a ``rw_texture`` whose format is not a ``ti.Format``.
    """
    kind = annotation_kind(annotation)
    if kind == "ndarray":
        if annotation.dtype is None:
            return AnnotationSpec("ndarray", None, annotation.ndim, None)
        dtype, element_shape = _open_split(annotation.dtype)
        return AnnotationSpec("ndarray", dtype, annotation.ndim, element_shape)
    if kind == "rw_texture":
        return AnnotationSpec("rw_texture", None, annotation.num_dimensions, None, format_name(annotation.fmt))
    if kind == "texture":
        return AnnotationSpec("texture", None, annotation.num_dimensions, None)
    if kind == "matrix":
        dtype, element_shape = _open_split(annotation)
        return AnnotationSpec("matrix", dtype, 0, element_shape)
    if kind == "scalar":
        return AnnotationSpec("scalar", dtype_name(annotation), 0, ())
    return AnnotationSpec(kind)


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


# --- values ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ValueDescription:
    """What a run value is, in the model's terms."""

    kind: str  # "ndarray", "matrix", "texture", "other"
    dtype: str | None = None
    shape: tuple[int, ...] = ()
    element_shape: tuple[int, ...] = ()


def is_ndarray(value: Any) -> bool:
    """Whether ``value`` is a Taichi ndarray."""
    return isinstance(value, Ndarray)


def describe_value(value: Any) -> ValueDescription:
    """Inspect a value passed to ``run`` (or ``arg_like``) without copying it."""
    if isinstance(value, Ndarray):
        return ValueDescription("ndarray", str(value.dtype), tuple(value.shape), tuple(value.element_shape))
    if isinstance(value, Texture):
        return ValueDescription("texture", None, tuple(getattr(value, "shape", ()) or ()))
    if isinstance(value, ti.Matrix):
        shape = (value.n,) if value.ndim == 1 else (value.n, value.m)
        return ValueDescription("matrix", None, (), shape)
    return ValueDescription("other")


def texture_format(value: Any) -> str | None:
    """The ``ti.Format`` name of a ``ti.Texture`` value (``"r32f"``), if Taichi says."""
    name = getattr(getattr(value, "fmt", None), "name", None)
    return name if isinstance(name, str) else None


def texture_ndim(value: Any) -> int | None:
    """Number of dimensions of a ``ti.Texture`` value, if Taichi says."""
    shape = getattr(value, "shape", None)
    return len(shape) if shape is not None else None


def expression_dtype(value: Any) -> str:
    """The dtype of a value that a ``@ti.func`` receives while its kernel compiles, as Taichi names it.

    ``"i32"``, ``"f32"``, a vector ``"[Tensor (2) i32]"``; a Python number ``"int"`` or ``"float"``; any
    other object its type name. Lets a ``@ti.func`` refuse an argument before Taichi casts it silently.
    """
    if isinstance(value, Expr):
        return str(value.ptr.get_rvalue_type().to_string())
    return type(value).__name__
