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
import hashlib
import importlib
import importlib.util
import json
import linecache
import math
import os
import subprocess
import sys
import tempfile
import textwrap
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from graphlab.bridge import is_class_kernel, is_taichi_function, is_wrapped_kernel, python_function
from graphlab.errors import GraphlabError, KernelError

__all__ = [
    "Binding",
    "CarriedSource",
    "CarryError",
    "ChildRunError",
    "KernelEntry",
    "KernelPayload",
    "ModuleRef",
    "carry_kernels",
    "function_source",
    "kernel_ref",
    "load_kernels",
    "referenced_globals",
    "run_child",
]

_TAICHI = "_graphlab_taichi"  # the name the carried code uses for the taichi module
_PLAIN = (bool, int, float, str, type(None))


class CarryError(KernelError):
    """A kernel cannot be taken to a child process; the message names the global and the fix."""


class ChildRunError(GraphlabError, RuntimeError):
    """A child process failed; ``child_type`` is the child's exception type name (or ``None``)."""

    def __init__(self, message: str, *, child_type: str | None = None) -> None:
        super().__init__(message)
        self.child_type = child_type


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


# ---------------------------------------------------------------- introspection helpers
def kernel_ref(kernel: Callable[..., Any]) -> str:
    """Return ``"module:qualname"``, the name graphlab uses for a kernel across processes."""
    return f"{kernel.__module__}:{kernel.__qualname__}"


def function_source(fn: Callable[..., Any]) -> str:
    """Return the dedented source of a kernel or ``@ti.func``, decorators included.

    Uses Taichi's own inspect shim, which also finds notebook cells (IPython's linecache) and cells
    run under ``%%time``.
    """
    from graphlab.bridge.runtime import source_lines  # Taichi is loaded: fn is a kernel or a @ti.func

    orig = python_function(fn)
    try:
        lines = source_lines(orig)
    except (OSError, TypeError) as exc:
        raise CarryError(
            f"cannot read the source of {getattr(fn, '__qualname__', fn)!r}: {exc}; define it in a "
            "module file or a notebook cell"
        ) from exc
    return textwrap.dedent("".join(lines))


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


def _digest(text: str) -> str:
    return hashlib.sha256(text.strip().encode()).hexdigest()


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
    import taichi as ti
    from taichi.types.ndarray_type import NdarrayType
    from taichi.types.texture_type import RWTextureType, TextureType

    from graphlab.bridge.types import is_matrix_type, is_struct_type, is_vector_type

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
            raise CarryError(f"kernel {ref}: a method of a @ti.data_oriented class cannot be carried; "
                             "make it a module-level @ti.kernel")
        if "<locals>" in qualname:
            raise CarryError(
                f"kernel {ref} is defined inside a function; define it at the top level of a module "
                "file or a notebook cell, passing what it closes over as kernel arguments"
            )
        sha = _digest(function_source(kernel))
        module = sys.modules.get(kernel.__module__)
        mref = _module_ref(module) if module is not None else None
        if mref is not None and _resolve(module, qualname) is kernel:
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
                raise CarryError(f"{where}, the module {value.__name__} that has no file; import a module "
                                 "that lives in a file")
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
        if mref is None or _resolve(module, qualname) is not value:
            return None
        self.modules.setdefault(mref.name, mref)
        return mref.name

    def payload(self) -> KernelPayload:
        sources = []
        for ns in self.namespaces.values():
            lines = [f"{k} = {v}" for k, v in ns.consts.items()]
            lines += [src for _, src in ns.defs.values()]
            lines += [f"{k} = {v}" for k, v in ns.aliases.items()]
            code = "\n".join(lines) + "\n"
            bindings = (Binding(_TAICHI, "taichi"), *ns.bindings.values())
            sources.append(CarriedSource(ns.key, ns.module, code, bindings))
        if self.namespaces:
            self.modules.setdefault("taichi", ModuleRef("taichi"))
        return KernelPayload(tuple(self.entries), tuple(self.modules.values()), tuple(sources))


def _resolve(root: object, qualname: str) -> object:
    obj = root
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


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
            setattr(module, b.name, home if b.qualname is None else _resolve(home, b.qualname))
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
                setattr(carried[src.key], b.name, _resolve(carried[b.home], b.qualname))
    out: dict[str, Callable[..., Any]] = {}
    for entry in payload.kernels:
        kernel = _resolve(homes[entry.home], entry.qualname)
        if not is_wrapped_kernel(kernel):
            raise CarryError(f"kernel {entry.ref}: {entry.home} has no kernel {entry.qualname!r}")
        if _digest(function_source(kernel)) != entry.sha256:  # type: ignore[arg-type]
            raise CarryError(
                f"kernel {entry.ref}: its source in {entry.home} differs from the one the parent "
                "imported; the file changed since: reload the module (importlib.reload) and retry"
            )
        out[entry.ref] = kernel  # type: ignore[assignment]
    return out


# ---------------------------------------------------------------- running a child
_BOOT = "import sys; from graphlab.carry import _child_main; sys.exit(_child_main(sys.argv[1:]))"


def run_child(
    entry: str,
    request: Mapping[str, Any],
    *,
    timeout: float = 600.0,
    sys_path: Sequence[str] = (),
) -> dict[str, Any]:
    """Run ``entry`` (``"module:function"``) on ``request`` in a fresh Python process.

    The function gets the request (JSON data) plus ``"workdir"``, a scratch folder deleted
    afterwards, and returns JSON data. The child shares nothing with this process: a Taichi crash
    or a second ``ti.init`` there cannot hurt the notebook. ``sys_path`` entries are importable there.

    Raises
    ------
    ChildRunError
        The child raised (its exception type and message are in the error), crashed or timed out.
    """
    package_root = str(Path(__file__).resolve().parent.parent)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([package_root, *sys_path, env.get("PYTHONPATH", "")]).rstrip(
        os.pathsep
    )
    with tempfile.TemporaryDirectory(prefix="graphlab-child-") as tmp:
        req, out = Path(tmp, "request.json"), Path(tmp, "result.json")
        req.write_text(json.dumps({"entry": entry, "request": dict(request), "workdir": tmp}))
        try:
            proc = subprocess.run(
                [sys.executable, "-c", _BOOT, str(req), str(out)],
                capture_output=True, text=True, timeout=timeout, env=env, check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise ChildRunError(f"child process for {entry} ran past {timeout:.0f} s; stopped") from exc
        tail = (proc.stdout + proc.stderr)[-3000:]
        if not out.is_file():
            how = f"was killed by signal {-proc.returncode}" if proc.returncode < 0 else (
                f"exited with status {proc.returncode}")
            raise ChildRunError(f"child process for {entry} {how} without a result; its output:\n{tail}")
        result = json.loads(out.read_text())
    if "error" in result:
        err = result["error"]
        raise ChildRunError(
            f"child process for {entry} failed: {err['type']}: {err['message']}\n{err['traceback']}",
            child_type=err["type"],
        )
    return result["result"]


def _child_main(argv: Sequence[str]) -> int:
    """Entry point of the child: read the request, call the function, write the result atomically."""
    import traceback

    req_path, out_path = Path(argv[0]), Path(argv[1])
    message = json.loads(req_path.read_text())
    try:
        modname, _, fname = message["entry"].partition(":")
        request = dict(message["request"], workdir=message["workdir"])
        text = json.dumps({"result": getattr(importlib.import_module(modname), fname)(request)})
        status = 0
    except Exception as exc:  # reported to the parent, which raises ChildRunError
        error = {"type": type(exc).__name__, "message": str(exc), "traceback": traceback.format_exc()[-4000:]}
        text, status = json.dumps({"error": error}), 1
    tmp = out_path.with_suffix(".tmp")
    tmp.write_text(text)
    tmp.replace(out_path)
    return status
