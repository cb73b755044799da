"""Introspection of ``@ti.kernel`` functions and a registry to find them by reference.

A graph file names kernels as ``module:qualname``; loading resolves those names only against the
kernels the caller hands over (a module, a dict, a list or a notebook namespace), never by importing
anything the file names.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from graphlab.bridge import is_kernel as is_kernel  # re-exported: "is this a plain @ti.kernel" was asked here
from graphlab.bridge import kernel_primal
from graphlab.core.errors import KernelError
from graphlab.core.spec import describe_spec


@dataclass(frozen=True)
class Param:
    """One kernel parameter; ``None`` fields are left open by its annotation (any value fits)."""

    name: str
    kind: str  # scalar | ndarray | matrix | texture | rw_texture | template | struct | unknown
    dtype: str | None = None
    ndim: int | None = None
    element_shape: tuple[int, ...] | None = None
    fmt: str | None = None

    @property
    def graphable(self) -> bool:
        """Whether a ti.graph can pass a value to this parameter."""
        return self.kind in ("scalar", "ndarray", "matrix", "texture", "rw_texture")

    def describe(self) -> str:
        """``ndarray vec2 f32, ndim=1``, ``template`` ..."""
        if not self.graphable:
            return self.kind
        return describe_spec(self.kind, self.dtype, self.ndim, self.element_shape, self.fmt)


@dataclass(frozen=True, eq=False)
class KernelInfo:
    """What graphlab knows about a ``@ti.kernel``: its reference, parameters and return."""

    fn: Callable[..., Any] = field(repr=False)
    name: str
    ref: str
    params: tuple[Param, ...]
    returns: bool

    @property
    def dispatchable(self) -> bool:
        """Whether a ti.graph can dispatch it (no template or struct parameters)."""
        return self.why_not is None

    @property
    def why_not(self) -> str | None:
        """Why the kernel cannot go into a ti.graph, or None."""
        bad = [p for p in self.params if not p.graphable]
        if not bad:
            return None
        listed = ", ".join(f"{p.name!r} ({p.kind})" for p in bad)
        return (
            f"kernel {self.name!r} has parameters a ti.graph cannot pass: {listed}; "
            "use ti.types.ndarray, scalar or matrix parameters instead "
            "(ti.template() and structs are resolved at compile time, outside a graph)"
        )

    def param(self, name: str) -> Param:
        """The parameter called ``name``, or a KernelError listing the parameters."""
        for param in self.params:
            if param.name == name:
                return param
        names = ", ".join(p.name for p in self.params) or "none"
        raise KernelError(f"kernel {self.name!r} has no parameter {name!r}; its parameters: {names}")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, KernelInfo) and other.fn is self.fn

    def __hash__(self) -> int:
        return hash(id(self.fn))


_INFO_CACHE: dict[int, KernelInfo] = {}


def kernel_info(fn: Any) -> KernelInfo:
    """Introspect a ``@ti.kernel`` (cached per function object).

    Raises
    ------
    KernelError
        If ``fn`` is not a ``@ti.kernel`` function (a ``@ti.func``, a plain function, a class kernel).
    """
    if isinstance(fn, KernelInfo):
        return fn
    cached = _INFO_CACHE.get(id(fn))
    if cached is not None and cached.fn is fn:
        return cached
    if kernel_primal(fn) is None:
        what = getattr(fn, "__qualname__", type(fn).__name__)
        raise KernelError(
            f"{what!r} is not a @ti.kernel function; decorate it with @ti.kernel "
            "(@ti.func and methods of @ti.data_oriented classes cannot be dispatched in a graph)"
        )
    from graphlab.bridge import types as bridge  # import cost: Taichi (fn is a kernel, so it is loaded)

    params = []
    for name, annotation in bridge.kernel_parameters(fn):
        spec = bridge.annotation_spec(annotation)
        params.append(Param(name, spec.kind, spec.dtype, spec.ndim, spec.element_shape, spec.fmt))
    returns = bridge.kernel_returns(fn)
    info = KernelInfo(fn, fn.__name__, f"{fn.__module__}:{fn.__qualname__}", tuple(params), returns)
    _INFO_CACHE[id(fn)] = info
    return info


KernelSource = Any  # a module, a Mapping[str, kernel], an iterable of kernels, or a KernelRegistry


class KernelRegistry:
    """Kernels by reference (``module:qualname``) and by short name.

    >>> KernelRegistry({}).refs()
    []
    """

    def __init__(self, source: KernelSource = None) -> None:
        self._by_ref: dict[str, KernelInfo] = {}
        if source is not None:
            self.add(source)

    def add(self, source: KernelSource) -> KernelRegistry:
        """Collect kernels from a module, a dict (a notebook's ``globals()``), a list, or a registry."""
        if isinstance(source, KernelRegistry):
            self._by_ref.update(source._by_ref)
        elif isinstance(source, types.ModuleType):
            self._add_all(vars(source).values())
        elif isinstance(source, Mapping):
            self._add_all(source.values())
        elif is_kernel(source) or isinstance(source, KernelInfo):
            self._add_all([source])
        elif isinstance(source, Iterable) and not isinstance(source, (str, bytes)):
            items = list(source)
            for item in items:
                if not (is_kernel(item) or isinstance(item, KernelInfo)):
                    raise KernelError(f"kernels= list holds {item!r}, which is not a @ti.kernel")
            self._add_all(items)
        else:
            raise KernelError(
                f"kernels= must be a module, a dict of kernels, a list of kernels or a KernelRegistry, "
                f"got {type(source).__name__}"
            )
        return self

    def _add_all(self, objects: Iterable[Any]) -> None:
        for obj in objects:
            if isinstance(obj, KernelInfo) or is_kernel(obj):
                info = kernel_info(obj)
                self._by_ref[info.ref] = info

    def refs(self) -> list[str]:
        """All references, sorted."""
        return sorted(self._by_ref)

    def __iter__(self) -> Iterator[KernelInfo]:
        return iter(self._by_ref[ref] for ref in self.refs())

    def __len__(self) -> int:
        return len(self._by_ref)

    def resolve(self, ref: str) -> KernelInfo:
        """Find a kernel by ``module:qualname``; else by qualname or name when that is unambiguous.

        A kernel defined in a notebook (``__main__:k``) is thus found again when the same kernel now
        lives in a module, and the reverse.
        """
        exact = self._by_ref.get(ref)
        if exact is not None:
            return exact
        qualname = ref.rsplit(":", 1)[-1]
        matches = [info for r, info in self._by_ref.items() if r.rsplit(":", 1)[-1] == qualname]
        if len(matches) == 1:
            return matches[0]
        available = ", ".join(self.refs()) or "no kernels"
        if len(matches) > 1:
            raise KeyError(f"kernel {ref!r} is ambiguous: {', '.join(m.ref for m in matches)}")
        raise KeyError(f"kernel {ref!r} is not among the kernels given ({available})")
