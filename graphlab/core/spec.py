"""Argument specs: what a symbolic graph argument is, as plain data.

The model stores dtypes as canonical strings (``"f32"``) and shapes as tuples, so a graph can be
built, saved, loaded and checked without a Taichi runtime; conversion to Taichi objects happens
only in :mod:`graphlab.bridge`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from graphlab.core.errors import GraphError
from graphlab.core.limits import MAX_NDIM as MAX_NDIM  # re-exported: the limit has always been importable here
from graphlab.core.limits import element_shape_problem, fmt_problem, ndim_problem
from graphlab.core.names import check_dim_size, check_name, name_problem, shown

ArgKind = Literal["scalar", "ndarray", "matrix", "texture", "rw_texture"]
Role = Literal["input", "output", "state", "temp"]
ARG_KINDS: tuple[str, ...] = get_args(ArgKind)
ROLES: tuple[str, ...] = get_args(Role)

#: Canonical primitive dtype names and their numpy equivalents.
NUMPY_DTYPES: dict[str, str] = {
    "f16": "float16", "f32": "float32", "f64": "float64",
    "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
    "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64",
}  # fmt: skip
DTYPES: tuple[str, ...] = tuple(NUMPY_DTYPES)
DTYPE_BYTES: dict[str, int] = {name: int(name[1:]) // 8 for name in DTYPES}
Dim = int | str


def is_float(dtype: str | None) -> bool:
    """Whether a canonical dtype is a floating-point type."""
    return dtype is not None and dtype.startswith("f")


@dataclass(frozen=True)
class Arg:
    """A symbolic argument of a graph: a name and what value it takes at run time.

    ``shape`` is optional: ``None`` accepts any shape; a tuple of ints and symbolic dim names
    (``("n",)``, ``("G", "G")``) is checked before a run, and a dim name must have the same value
    wherever it appears.
    """

    name: str
    kind: ArgKind
    dtype: str | None
    ndim: int = 0
    element_shape: tuple[int, ...] = ()
    fmt: str | None = None
    role: Role = "state"
    shape: tuple[Dim, ...] | None = None

    def __post_init__(self) -> None:
        check_name(self.name, "arg")
        if self.kind not in ARG_KINDS:
            raise GraphError(f"arg {self.name!r}: kind {self.kind!r} is not one of {', '.join(ARG_KINDS)}")
        if self.role not in ROLES:
            raise GraphError(f"arg {self.name!r}: role {self.role!r} is not one of {', '.join(ROLES)}")
        if self.dtype is not None and self.dtype not in DTYPES:
            raise GraphError(f"arg {self.name!r}: dtype {self.dtype!r} is not one of {', '.join(DTYPES)}")
        if self.kind in ("scalar", "ndarray", "matrix") and self.dtype is None:
            raise GraphError(f"arg {self.name!r}: a {self.kind} needs a dtype")
        # the graph file loader asks the same functions (graphlab.core.limits): what is built here, loads
        problem = ndim_problem(self.ndim) or element_shape_problem(self.element_shape)
        problem = problem or fmt_problem(self.kind, self.fmt)
        if problem is not None:
            raise GraphError(f"arg {self.name!r}: {problem}")
        if isinstance(self.element_shape, list):  # a frozen Arg holds tuples (hashable, equal to a loaded one)
            object.__setattr__(self, "element_shape", tuple(self.element_shape))
        if isinstance(self.shape, list):
            object.__setattr__(self, "shape", tuple(self.shape))
        if self.kind == "matrix" and not self.element_shape:
            raise GraphError(f"arg {self.name!r}: a matrix arg needs a vector or matrix dtype")
        if self.kind in ("scalar", "matrix") and self.ndim:
            raise GraphError(f"arg {self.name!r}: a {self.kind} has no ndim (got {self.ndim})")
        # as the builders make them (g.scalar, g.texture, g.rw_texture), so a loaded file holds nothing else
        if self.kind == "scalar" and self.element_shape:
            raise GraphError(
                f"arg {self.name!r}: a scalar has no element shape (got {self.element_shape}); "
                "declare a vector or matrix arg with g.matrix"
            )
        if self.kind in ("texture", "rw_texture") and (self.dtype is not None or self.element_shape):
            raise GraphError(
                f"arg {self.name!r}: a {self.kind} has no dtype or element shape (got dtype={self.dtype!r}, "
                f"element_shape={self.element_shape}); a texture's texel format is its fmt (or its value's)"
            )
        if self.shape is not None:
            self._check_shape(self.shape)

    def _check_shape(self, shape: tuple[Dim, ...]) -> None:
        if self.kind != "ndarray":
            raise GraphError(f"arg {self.name!r}: only ndarray args take a shape")
        if len(shape) != self.ndim:
            raise GraphError(f"arg {self.name!r}: shape {shape!r} has {len(shape)} dims but ndim is {self.ndim}")
        for axis, dim in enumerate(shape):
            if isinstance(dim, str):
                problem = name_problem(dim)
                if problem is not None:
                    raise GraphError(
                        f"arg {self.name!r}: shape[{axis}] {shown(dim)} is not a dim name ({problem}); "
                        "give a non-negative int or a name of ASCII letters, digits and '_'"
                    )
            else:
                check_dim_size(dim, f"arg {self.name!r}: shape[{axis}]")

    @property
    def is_buffer(self) -> bool:
        """Whether the arg is memory a kernel can read and write (ndarray or texture)."""
        return self.kind in ("ndarray", "texture", "rw_texture")

    def replace(self, **changes: object) -> Arg:
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]

    def same_spec(self, other: Arg) -> bool:
        """Whether two args take the same values (role and declared shape aside)."""
        return (self.kind, self.dtype, self.ndim, self.element_shape, self.fmt) == (
            other.kind,
            other.dtype,
            other.ndim,
            other.element_shape,
            other.fmt,
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain, JSON-ready data (the graph file and the widget use it)."""
        return {
            "name": self.name,
            "kind": self.kind,
            "dtype": self.dtype,
            "ndim": self.ndim,
            "element_shape": list(self.element_shape),
            "fmt": self.fmt,
            "role": self.role,
            "shape": None if self.shape is None else list(self.shape),
        }

    def describe(self) -> str:
        """A short human description: ``ndarray f32 vec2, ndim=1``."""
        return describe_spec(self.kind, self.dtype, self.ndim, self.element_shape, self.fmt)


def element_label(dtype: str | None, element_shape: Sequence[int] | None) -> str:
    """``f32``, ``vec2 f32`` or ``mat2x2 f32``; ``any`` for an open dtype."""
    base = dtype or "any"
    if not element_shape:
        return base
    if len(element_shape) == 1:
        return f"vec{element_shape[0]} {base}"
    return f"mat{element_shape[0]}x{element_shape[1]} {base}"


def describe_spec(
    kind: str,
    dtype: str | None,
    ndim: int | None,
    element_shape: Sequence[int] | None,
    fmt: str | None = None,
) -> str:
    """Describe an arg or parameter spec for messages."""
    if kind in ("texture", "rw_texture"):
        extra = f", fmt={fmt}" if fmt else ""
        return f"{kind}, ndim={ndim if ndim is not None else 'any'}{extra}"
    label = element_label(dtype, element_shape)
    if kind == "ndarray":
        return f"ndarray {label}, ndim={ndim if ndim is not None else 'any'}"
    return f"{kind} {label}"


def numel(shape: Sequence[int]) -> int:
    """Number of elements of a concrete shape."""
    total = 1
    for dim in shape:
        total *= dim
    return total
