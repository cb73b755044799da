"""What crosses to a child process so that it gets kernels back, and how the child rebuilds them.

A :class:`KernelPayload` is plain JSON data: the modules the child imports (:class:`ModuleRef`),
the source carried from notebook cells or ``__main__`` (:class:`CarriedSource`) and, per kernel,
where it lives in the child and the digest of its source (:class:`KernelEntry`). The parent builds
one with :func:`graphlab.child.carry.carry_kernels`; the child calls :func:`load_kernels`, which imports
the modules, executes only the carried source, and refuses a kernel whose source changed since.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import linecache
import sys
import textwrap
import types
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from graphlab.bridge import is_wrapped_kernel, python_function
from graphlab.core.errors import KernelError

__all__ = [
    "Binding",
    "CarriedSource",
    "CarryError",
    "KernelEntry",
    "KernelPayload",
    "ModuleRef",
    "function_source",
    "load_kernels",
    "resolve",
    "source_digest",
]


class CarryError(KernelError):
    """A kernel cannot be taken to a child process; the message names the global and the fix."""


# ---------------------------------------------------------------- payload records (JSON-able)
@dataclass(frozen=True)
class ModuleRef:
    """How the child imports a module: by ``name`` (after adding ``sys_path``) or from ``file``."""

    name: str
    file: str | None = None
    sys_path: str | None = None
    by_path: bool = False


@dataclass(frozen=True)
class Binding:
    """A global of carried code bound to ``qualname`` in ``home`` (the module itself if ``None``)."""

    name: str
    home: str
    qualname: str | None = None


@dataclass(frozen=True)
class CarriedSource:
    """Code rebuilt in the child as one namespace: the carried part of a ``__main__``-like module."""

    key: str
    module: str
    code: str
    bindings: tuple[Binding, ...] = ()


@dataclass(frozen=True)
class KernelEntry:
    """One kernel: ``ref`` (``module:qualname``), where it lives in the child, its source digest."""

    ref: str
    home: str
    qualname: str
    sha256: str


@dataclass(frozen=True)
class KernelPayload:
    """Everything a child needs to rebuild a set of kernels; plain data, JSON-serialisable."""

    kernels: tuple[KernelEntry, ...] = ()
    modules: tuple[ModuleRef, ...] = ()
    sources: tuple[CarriedSource, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Return plain JSON data (lists, dicts, strings)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> KernelPayload:
        """Rebuild a payload from :meth:`to_dict`'s output (after a JSON round trip)."""
        return cls(
            kernels=tuple(KernelEntry(**k) for k in data.get("kernels", ())),
            modules=tuple(ModuleRef(**m) for m in data.get("modules", ())),
            sources=tuple(
                CarriedSource(
                    key=s["key"],
                    module=s["module"],
                    code=s["code"],
                    bindings=tuple(Binding(**b) for b in s.get("bindings", ())),
                )
                for s in data.get("sources", ())
            ),
        )

    @property
    def refs(self) -> list[str]:
        """The kernel refs, in the order they were given."""
        return [k.ref for k in self.kernels]


def function_source(fn: Callable[..., Any]) -> str:
    """Return the dedented source of a kernel or ``@ti.func``, decorators included.

    Uses Taichi's own inspect shim, which also finds notebook cells (IPython's linecache) and cells
    run under ``%%time``.
    """
    from graphlab.bridge.runtime import source_lines  # import cost: Taichi (loaded: fn is a kernel)

    orig = python_function(fn)
    try:
        lines = source_lines(orig)
    except (OSError, TypeError) as exc:
        raise CarryError(
            f"cannot read the source of {getattr(fn, '__qualname__', fn)!r}: {exc}; define it in a "
            "module file or a notebook cell"
        ) from exc
    return textwrap.dedent("".join(lines))


def source_digest(text: str) -> str:
    """The sha256 of a function's source, as :class:`KernelEntry` records it."""
    return hashlib.sha256(text.strip().encode()).hexdigest()


def resolve(root: object, qualname: str) -> object:
    """The object at dotted ``qualname`` inside ``root`` (a module), or None."""
    obj = root
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


# ---------------------------------------------------------------- the child side
def _import(ref: ModuleRef) -> types.ModuleType:
    if ref.name in sys.modules:
        return sys.modules[ref.name]
    if ref.sys_path and ref.sys_path not in sys.path:
        sys.path.insert(0, ref.sys_path)
    if not ref.by_path:
        return importlib.import_module(ref.name)
    spec = importlib.util.spec_from_file_location(ref.name, ref.file or "")
    if spec is None or spec.loader is None:
        raise CarryError(f"cannot import module {ref.name} from {ref.file}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[ref.name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[ref.name]
        raise
    return module


def _exec_source(src: CarriedSource, module: types.ModuleType, imported: Mapping[str, object]) -> None:
    """Execute carried code in ``module``'s namespace, its bindings to imported modules set first."""
    for b in src.bindings:
        if b.home in imported:
            home = imported[b.home]
            setattr(module, b.name, home if b.qualname is None else resolve(home, b.qualname))
    # Register the code so that inspect (and Taichi, which parses kernels from source) can read it.
    linecache.cache[src.key] = (len(src.code), None, src.code.splitlines(keepends=True), src.key)
    exec(compile(src.code, src.key, "exec", dont_inherit=True), module.__dict__)  # trusted: the parent produced it


def load_kernels(payload: KernelPayload | Mapping[str, Any]) -> dict[str, Callable[..., Any]]:
    """Rebuild the kernels of a payload in this (child) process: ``{ref: kernel}``.

    Imports the recorded modules and executes only the source the parent carried. A kernel whose
    module file changed since the parent imported it is refused (its source digest differs).
    """
    if not isinstance(payload, KernelPayload):
        payload = KernelPayload.from_dict(payload)
    imported = {m.name: _import(m) for m in payload.modules}
    carried = {s.key: types.ModuleType(s.module) for s in payload.sources}
    homes = {**imported, **carried}
    for src in payload.sources:
        _exec_source(src, carried[src.key], imported)
    for src in payload.sources:  # bindings between carried namespaces, now that all exist
        for b in src.bindings:
            if b.home in carried and b.qualname is not None:
                setattr(carried[src.key], b.name, resolve(carried[b.home], b.qualname))
    out: dict[str, Callable[..., Any]] = {}
    for entry in payload.kernels:
        kernel = resolve(homes[entry.home], entry.qualname)
        if not is_wrapped_kernel(kernel):
            raise CarryError(f"kernel {entry.ref}: {entry.home} has no kernel {entry.qualname!r}")
        if source_digest(function_source(kernel)) != entry.sha256:  # type: ignore[arg-type]
            raise CarryError(
                f"kernel {entry.ref}: its source in {entry.home} differs from the one the parent "
                "imported; the file changed since: reload the module (importlib.reload) and retry"
            )
        out[entry.ref] = kernel  # type: ignore[assignment]
    return out
