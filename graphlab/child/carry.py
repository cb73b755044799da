"""Take ``@ti.kernel``'s to a child Python process.

graphlab runs Taichi work in child processes: Taichi allows one arch per ``ti.init`` and one
``ti.aot.Module`` per init, and a crash in Taichi must not kill the notebook. A kernel reaches the
child in one of two ways:

- it lives in a module file: the child imports that module (by name, or by file path) and takes
  the attribute ``qualname``;
- it was defined in a notebook cell or in ``__main__``: its source is carried, together with what
  its body uses from its globals (the ``@ti.func``'s it calls, plain constants, modules, Taichi types).

What cannot be carried (a field, an ndarray, any live object, a closure cell) is refused with a
:class:`CarryError` that names the kernel, the global and the fix.

This module is the parent's side: it collects what each kernel needs. The payload records and
their rebuilding in the child are :mod:`graphlab.child.payload`'s, running the child is
:mod:`graphlab.child.process`'s: import those names from there.

Examples
--------
For example, in a notebook cell (this module's own ``from __future__`` import keeps it out of doctests)::

    import taichi as ti

    @ti.kernel
    def fill(x: ti.types.ndarray(dtype=ti.f32, ndim=1)):
        for i in x:
            x[i] = 1.0

    payload = carry_kernels([fill])
    run_child("mypkg.work:compute", {"payload": payload.to_dict()})

where ``mypkg.work.compute(request)`` calls ``load_kernels(request["payload"])["__main__:fill"]``.
"""

from __future__ import annotations

import ast
import contextlib
import math
import sys
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from graphlab.bridge import is_class_kernel, is_taichi_function, is_wrapped_kernel, python_function
from graphlab.child.payload import (
    Binding,
    CarriedSource,
    CarryError,
    KernelEntry,
    KernelPayload,
    ModuleRef,
    function_source,
    resolve,
    source_digest,
)

__all__ = ["carry_kernels", "kernel_ref", "referenced_globals"]

_TAICHI = "_graphlab_taichi"  # the name the carried code uses for the taichi module
_PLAIN = (bool, int, float, str, type(None))


# ---------------------------------------------------------------- introspection helpers
def kernel_ref(kernel: Callable[..., Any]) -> str:
    """Return ``"module:qualname"``, the name graphlab uses for a kernel across processes."""
    return f"{kernel.__module__}:{kernel.__qualname__}"


def _function_def(source: str, where: str) -> ast.FunctionDef:
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            return node
    raise CarryError(f"{where}: its source holds no function definition")


def _loaded_names(fdef: ast.FunctionDef) -> list[str]:
    """Names the function reads that are not its parameters or locals, in order of first use."""
    params = {a.arg for a in (*fdef.args.posonlyargs, *fdef.args.args, *fdef.args.kwonlyargs)}
    stored = {n.id for n in ast.walk(fdef) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    seen: dict[str, None] = {}
    for node in ast.walk(fdef):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in params | stored:
            seen.setdefault(node.id, None)
    return list(seen)


def referenced_globals(fn: Callable[..., Any]) -> dict[str, object]:
    """Return the globals (and closure cells) a kernel or ``@ti.func`` reads, by name.

    Builtins that the function's globals do not shadow are left out. Closure cells come back too;
    :func:`carry_kernels` refuses them, other callers may just inspect them.
    """
    orig = python_function(fn)
    fdef = _function_def(function_source(fn), orig.__qualname__)
    scope: dict[str, object] = dict(getattr(orig, "__globals__", {}))
    closure = getattr(orig, "__closure__", None) or ()
    for name, cell in zip(orig.__code__.co_freevars, closure):
        with contextlib.suppress(ValueError):
            scope[name] = cell.cell_contents
    return {n: scope[n] for n in _loaded_names(fdef) if n in scope}


# ---------------------------------------------------------------- values as code
def _literal(value: object) -> str | None:
    """Python code for a plain constant, or ``None`` if it is not one."""
    if type(value) is float and not math.isfinite(value):
        return f"float({str(value)!r})"
    if type(value) in _PLAIN:
        return repr(value)
    if type(value) is tuple:
        items = [_literal(v) for v in value]
        if any(i is None for i in items):
            return None
        return f"({items[0]},)" if len(items) == 1 else "(" + ", ".join(items) + ")"  # type: ignore[arg-type]
    return None


def _type_expr(value: object) -> str | None:
    """Code (over ``_graphlab_taichi``) that rebuilds a Taichi type, or ``None``."""
    import taichi as ti  # import cost: Taichi
    from taichi.types.ndarray_type import NdarrayType  # import cost: Taichi
    from taichi.types.texture_type import RWTextureType, TextureType  # import cost: Taichi

    from graphlab.bridge.types import is_matrix_type, is_struct_type, is_vector_type  # import cost: Taichi

    t = _TAICHI
    if value is None:
        return "None"
    if isinstance(value, type(ti.f32)):
        name = value.to_string()
        return f"{t}.{name}" if getattr(ti, name, None) == value else None
    if is_vector_type(value):
        return f"{t}.types.vector({value.n!r}, {_type_expr(value.dtype)})"
    if is_matrix_type(value):
        return f"{t}.types.matrix({value.n!r}, {value.m!r}, {_type_expr(value.dtype)})"
    if is_struct_type(value) and not value.methods:
        members = {k: _type_expr(v) for k, v in value.members.items()}
        if any(v is None for v in members.values()):
            return None
        return f"{t}.types.struct(**{{" + ", ".join(f"{k!r}: {v}" for k, v in members.items()) + "})"
    if isinstance(value, NdarrayType):
        dtype = _type_expr(value.dtype)
        boundary = "clamp" if value.boundary.name == "CLAMP" else "unsafe"
        return (
            f"{t}.types.ndarray(dtype={dtype}, ndim={value.ndim!r}, needs_grad={value.needs_grad!r}, "
            f"boundary={boundary!r})"
        )
    if isinstance(value, RWTextureType):
        return (
            f"{t}.types.rw_texture(num_dimensions={value.num_dimensions!r}, "
            f"fmt={t}.Format.{value.fmt.name}, lod={value.lod!r})"
        )
    if isinstance(value, TextureType):
        return f"{t}.types.texture(num_dimensions={value.num_dimensions!r})"
    return None


def _module_ref(module: types.ModuleType) -> ModuleRef | None:
    """How a child can import ``module``, or ``None`` where it cannot (``__main__``, a cell)."""
    name = module.__name__
    if name == "__main__":
        return None
    file = getattr(module, "__file__", None)
    if file is None:
        spec = getattr(module, "__spec__", None)
        origin = getattr(spec, "origin", None)
        return ModuleRef(name) if origin in ("built-in", "frozen") else None
    path = Path(file).resolve()
    base = path.name.split(".")[0]
    if not path.is_file() or path.suffix not in (".py", ".pyc", ".so", ".pyd"):
        return None
    parts = name.split(".")
    module_path = path.parent if base == "__init__" else path.parent / base
    if len(parts) > len(module_path.parents):
        return ModuleRef(name, str(path), None, by_path=True)
    root = module_path.parents[len(parts) - 1]
    if root.joinpath(*parts) != module_path:
        return ModuleRef(name, str(path), None, by_path=True)
    return ModuleRef(name, str(path), str(root))


def _describe(value: object) -> str:
    kind = type(value)
    for cls in kind.__mro__:
        if cls.__module__.startswith("taichi") and cls.__name__.endswith("Field"):
            return f"a Taichi field ({kind.__name__})"
        if cls.__module__.startswith("taichi") and "Ndarray" in cls.__name__:
            return f"a Taichi ndarray ({kind.__name__})"
    if isinstance(value, types.FunctionType):
        return f"a plain Python function ({value.__qualname__})"
    if isinstance(value, type):
        return f"the class {value.__qualname__} of {value.__module__}"
    return f"an object of type {kind.__module__}.{kind.__qualname__}"


# ---------------------------------------------------------------- the parent side
@dataclass
class _Namespace:
    key: str
    module: str
    consts: dict[str, str] = field(default_factory=dict)
    defs: dict[str, tuple[object, str]] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    bindings: dict[str, Binding] = field(default_factory=dict)


class _Carrier:
    """Collects modules and carried namespaces while walking kernels and what they use."""

    def __init__(self) -> None:
        self.modules: dict[str, ModuleRef] = {}
        self.namespaces: dict[int, _Namespace] = {}
        self.entries: list[KernelEntry] = []

    def add_kernel(self, kernel: Callable[..., Any]) -> None:
        if not is_wrapped_kernel(kernel):
            raise CarryError(
                f"{getattr(kernel, '__qualname__', kernel)!r} is not a @ti.kernel; only kernels can be "
                "carried to a child process"
            )
        ref, qualname = kernel_ref(kernel), kernel.__qualname__
        if is_class_kernel(kernel):
            raise CarryError(
                f"kernel {ref}: a method of a @ti.data_oriented class cannot be carried; "
                "make it a module-level @ti.kernel"
            )
        if "<locals>" in qualname:
            raise CarryError(
                f"kernel {ref} is defined inside a function; define it at the top level of a module "
                "file or a notebook cell, passing what it closes over as kernel arguments"
            )
        sha = source_digest(function_source(kernel))
        module = sys.modules.get(kernel.__module__)
        mref = _module_ref(module) if module is not None else None
        if mref is not None and resolve(module, qualname) is kernel:
            self.modules.setdefault(mref.name, mref)
            self.entries.append(KernelEntry(ref, mref.name, qualname, sha))
            return
        if mref is not None:
            raise CarryError(
                f"kernel {ref}: {kernel.__module__}.{qualname} is no longer this kernel (was the module "
                "reloaded or the name reassigned?); dispatch the current definition"
            )
        ns = self._carry_function(kernel, ref)
        self.entries.append(KernelEntry(ref, ns.key, qualname, sha))

    def _namespace(self, fn: Callable[..., Any]) -> _Namespace:
        scope = python_function(fn).__globals__
        ns = self.namespaces.get(id(scope))
        if ns is None:
            ns = _Namespace(f"<graphlab-carried-{len(self.namespaces)}:{fn.__module__}>", fn.__module__)
            self.namespaces[id(scope)] = ns
        return ns

    def _carry_function(self, fn: Callable[..., Any], ref: str) -> _Namespace:
        """Add ``fn``'s source to its namespace, then what it uses, recursively."""
        ns = self._namespace(fn)
        orig = python_function(fn)
        name = orig.__name__
        if name in ns.defs:
            if ns.defs[name][0] is not fn:
                raise CarryError(
                    f"kernel {ref}: two different functions named {name!r} live in {fn.__module__}; "
                    "re-run the cell that defines it and dispatch the current definition"
                )
            return ns
        if orig.__code__.co_freevars:
            cell = orig.__code__.co_freevars[0]
            raise CarryError(
                f"kernel {ref}: {orig.__qualname__} reads {cell!r} from an enclosing function (a closure "
                "cell); define it at the top level, or pass the value as a kernel argument"
            )
        source = function_source(fn)
        ns.defs[name] = (fn, source if source.endswith("\n") else source + "\n")
        for gname, value in referenced_globals(fn).items():
            self._carry_global(ns, gname, value, ref)
        return ns

    def _carry_global(self, ns: _Namespace, gname: str, value: object, ref: str) -> None:
        if gname in ns.consts or gname in ns.bindings or gname in ns.aliases:
            return
        if gname in ns.defs and ns.defs[gname][0] is value:
            return
        where = f"kernel {ref} uses global {gname!r}"
        if isinstance(value, types.ModuleType):
            mref = _module_ref(value)
            if mref is None:
                raise CarryError(
                    f"{where}, the module {value.__name__} that has no file; import a module that lives in a file"
                )
            self.modules.setdefault(mref.name, mref)
            ns.bindings[gname] = Binding(gname, mref.name)
            return
        code = _literal(value)
        if code is None:
            code = _type_expr(value)
        if code is not None:
            ns.consts[gname] = code
            return
        if is_wrapped_kernel(value):
            raise CarryError(f"{where}, another kernel; a kernel cannot call a kernel: make it a @ti.func")
        home = self._importable_home(value)
        if home is not None:
            ns.bindings[gname] = Binding(gname, home, value.__qualname__)  # type: ignore[attr-defined]
            return
        if is_taichi_function(value):
            owner = self._carry_function(value, ref)  # type: ignore[arg-type]
            fname = python_function(value).__name__  # type: ignore[arg-type]
            if owner is not ns:
                ns.bindings[gname] = Binding(gname, owner.key, fname)
            elif fname != gname:
                ns.aliases[gname] = fname
            return
        raise CarryError(
            f"{where}, {_describe(value)}, which cannot be carried to a child process; make it a constant "
            "(int, float, bool, str or a tuple of those), pass it as a kernel argument, or move the kernel "
            "into a module file"
        )

    def _importable_home(self, value: object) -> str | None:
        """The module a function/class can be imported from, registered, or ``None``."""
        modname = getattr(value, "__module__", None)
        qualname = getattr(value, "__qualname__", None)
        if not isinstance(modname, str) or not isinstance(qualname, str) or "<locals>" in qualname:
            return None
        module = sys.modules.get(modname)
        mref = _module_ref(module) if module is not None else None
        if mref is None or resolve(module, qualname) is not value:
            return None
        self.modules.setdefault(mref.name, mref)
        return mref.name

    def payload(self) -> KernelPayload:
        sources = []
        for ns in self.namespaces.values():
            head = "".join(f"{k} = {v}\n" for k, v in ns.consts.items())
            tail = "".join(f"{k} = {v}\n" for k, v in ns.aliases.items())
            code = head + _defs_at_their_lines(head.count("\n"), list(ns.defs.values())) + tail
            bindings = (Binding(_TAICHI, "taichi"), *ns.bindings.values())
            sources.append(CarriedSource(ns.key, ns.module, code, bindings))
        if self.namespaces:
            self.modules.setdefault("taichi", ModuleRef("taichi"))
        return KernelPayload(tuple(self.entries), tuple(self.modules.values()), tuple(sources))


def _defs_at_their_lines(taken: int, defs: list[tuple[object, str]]) -> str:
    """The carried functions' sources, each on the line it has in its file where they all fit.

    A kernel rebuilt in a child then reports the lines its author sees (a race or a random draw
    named by ``gl.verify`` at line 36 of the script, as ``validate()`` names it in the notebook).
    Sources from several files (notebook cells each number from 1) or out of order cannot all keep
    their lines: they are then placed one after another, as before.
    """
    codes = [python_function(cast("Callable[..., Any]", fn)).__code__ for fn, _ in defs]
    starts = [(code.co_filename, code.co_firstlineno, src) for code, (_, src) in zip(codes, defs, strict=True)]
    placed: list[str] = []
    line = taken + 1  # the line the next source would start on
    for file, first, src in sorted(starts, key=lambda s: s[1]):
        if file != starts[0][0] or first < line:
            return "".join(src for _, src in defs)
        placed.append("\n" * (first - line) + src)
        line = first + src.count("\n")
    return "".join(placed)


def carry_kernels(kernels: Iterable[Callable[..., Any]]) -> KernelPayload:
    """Record how a child process gets each kernel back.

    Parameters
    ----------
    kernels
        ``@ti.kernel`` functions, from module files or from notebook cells / ``__main__``.

    Raises
    ------
    CarryError
        A kernel is not a kernel, is nested in a function, or uses a global that cannot be carried.
    """
    carrier = _Carrier()
    done: set[int] = set()
    for kernel in kernels:
        if id(kernel) not in done:  # the same ref twice for two objects is refused by add_kernel
            done.add(id(kernel))
            carrier.add_kernel(kernel)
    return carrier.payload()
