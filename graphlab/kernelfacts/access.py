"""Which ndarray parameters a kernel reads and writes.

The data-flow graph, the hazard checks and the debugger's "refresh what this dispatch wrote" all need
to know, per kernel, which buffers it reads and which it writes. Taichi computes this only in its
SPIR-V code generator, so there are two sources:

- ``"vulkan"``: compile the kernels into a Vulkan AOT module in a child process (the user's own
  ``ti.init`` stays untouched) and read ``ctx_attribs.arr_access`` from its ``metadata.json``;
- ``"ast"``: a conservative reading of the kernel's Python source, used when Vulkan is missing or
  a kernel cannot be compiled alone. Whatever it does not understand counts as read and written
  (:mod:`graphlab.kernelfacts.access_ast`, which also holds :class:`AccessFlag`).

Neither source says *when* a kernel reads: whether its first access to a buffer may read what was
there before the dispatch comes from the source code for both (:mod:`graphlab.kernelfacts.access_order`), and is
:attr:`FirstAccess.MAY_READ` wherever it is not proven.

Textures are not tracked by Taichi: a ``texture`` parameter is READ, an ``rw_texture`` READ_WRITE.

Examples
--------
>>> import contextlib
>>> with contextlib.redirect_stdout(None):  # Taichi prints a banner when first imported
...     import taichi as ti
>>> @ti.kernel
... def axpy(a: ti.f32, x: ti.types.ndarray(ndim=1), y: ti.types.ndarray(ndim=1)):
...     for i in x:
...         y[i] += a * x[i]
>>> dict(kernel_access(axpy, source="ast"))
{'x': <AccessFlag.READ: 1>, 'y': <AccessFlag.READ_WRITE: 3>}
>>> kernel_access(axpy, source="ast").first_access("y")  # ``+=`` reads before it writes
<FirstAccess.READ: 'read'>
"""

import contextlib
import hashlib
import json
import os
import tempfile
import time
import warnings
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType
from typing import Any, Literal, NamedTuple

from graphlab.bridge import is_taichi_function, is_wrapped_kernel, python_function
from graphlab.bridge.aot_files import metadata_file
from graphlab.child.carry import carry_kernels, kernel_ref, referenced_globals
from graphlab.child.payload import CarryError, function_source, load_kernels
from graphlab.child.process import ChildRunError, run_child
from graphlab.core.errors import GraphError, GraphlabError, KernelError, ToolMissingError
from graphlab.kernelfacts.access_ast import AccessFlag, ast_access, buffer_params, module_of, texture_access
from graphlab.kernelfacts.access_order import FirstAccess, KernelOrder, first_from_flags, kernel_order

__all__ = [
    "AccessError", "AccessFlag", "AccessReport", "ArraySpec", "CacheInfo", "FirstAccess", "kernel_access",
    "kernels_access", "source_cache_info",
]  # fmt: skip

Source = Literal["auto", "vulkan", "ast"]
_CACHE_FORMAT = 1
_CHILD_TIMEOUT_S = 600.0


class AccessError(GraphlabError, RuntimeError):
    """Taichi's compiler could not answer for a kernel (``source="vulkan"`` was asked for)."""


@dataclass(frozen=True)
class ArraySpec:
    """The element type and ``ndim`` an ndarray parameter will get, for annotations that leave them open.

    Any object with ``dtype``, ``ndim`` and ``element_shape`` attributes (a graph ``Arg``) works too.
    """

    dtype: str
    ndim: int
    element_shape: tuple[int, ...] = ()


@dataclass(frozen=True, eq=False)
class AccessReport(Mapping[str, AccessFlag]):
    """Access per buffer parameter of one kernel, and where the answer came from.

    It is a read-only mapping ``{param: AccessFlag}``; ``source`` is ``"vulkan"`` or ``"ast"``,
    ``note`` says why the source code was used where Vulkan was wanted. ``first`` says per parameter
    whether the kernel's first access may read the incoming contents (see :meth:`first_access`);
    ``shaped_like`` names, per parameter, the buffers whose shape would make it write-first
    (:class:`graphlab.kernelfacts.access_order.KernelOrder`).
    """

    ref: str
    params: Mapping[str, AccessFlag]
    source: Literal["vulkan", "ast"]
    note: str | None = None
    first: Mapping[str, FirstAccess] = field(default_factory=dict)
    shaped_like: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def first_access(self, name: str) -> FirstAccess:
        """READ (certain), MAY_READ (not proven either way) or WRITE (never reads what it did not write)."""
        return self.first.get(name) or first_from_flags(self.params[name])

    def may_read_first(self, name: str) -> bool:
        """Whether the kernel may read ``name``'s contents from before the dispatch."""
        return self.first_access(name).may_read

    def __getitem__(self, name: str) -> AccessFlag:
        return self.params[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.params)

    def __len__(self) -> int:
        return len(self.params)

    @property
    def provenance(self) -> str:
        """Words for a diagnostic: where the read/write facts come from."""
        if self.source == "vulkan":
            return "from Taichi's compiler (Vulkan metadata)"
        return "inferred from the source code"


# ---------------------------------------------------------------- source: vulkan (child side)
def _example(annotation: Any, spec: Mapping[str, Any] | None) -> Any:
    """An ndarray that fits the parameter: the annotation first, the spec for what it leaves open."""
    from graphlab.bridge.runtime import new_ndarray  # import cost: Taichi
    from graphlab.bridge.types import annotation_spec  # import cost: Taichi

    spec = spec or {}
    fixed = annotation_spec(annotation)
    ndim = fixed.ndim if fixed.ndim is not None else spec.get("ndim", 1)
    dtype = fixed.dtype or spec.get("dtype", "f32")
    element = fixed.element_shape if fixed.element_shape is not None else tuple(spec.get("element_shape", ()))
    return new_ndarray(dtype, (2,) * ndim, element)


def _template_args(kernel: Callable[..., Any], specs: Mapping[str, Any]) -> dict[str, Any]:
    import taichi as ti  # import cost: Taichi

    from graphlab.bridge.types import annotation_kind, kernel_parameters  # import cost: Taichi

    args: dict[str, Any] = {}
    for name, annotation in kernel_parameters(kernel):
        kind = annotation_kind(annotation)
        if kind == "ndarray":
            args[name] = _example(annotation, specs.get(name))
        elif kind == "texture":
            args[name] = ti.Texture(ti.Format.rgba8, (2,) * annotation.num_dimensions)
        elif kind == "template":
            raise KernelError(f"parameter {name!r} is a ti.template(); it cannot be compiled alone")
    return args


def _vulkan_child(request: Mapping[str, Any]) -> dict[str, Any]:
    """In the child: compile the kernels for Vulkan and return ``arr_access`` per kernel and arg index."""
    import taichi as ti  # import cost: Taichi

    from graphlab.bridge.runtime import current_arch  # import cost: Taichi

    kernels = load_kernels(request["payload"])  # before ti.init: a module may call ti.init itself
    # no offline cache: 1.7.4 hands back a structurally identical kernel compiled earlier under other
    # parameter names, and the metadata would then name the wrong parameters
    ti.init(arch=ti.vulkan, log_level=ti.WARN, offline_cache=False)
    if current_arch() != "vulkan":
        return {"vulkan": False}
    module = ti.aot.Module(ti.vulkan)
    names, errors = {}, {}
    for i, ref in enumerate(request["refs"]):
        try:
            examples = _template_args(kernels[ref], request["specs"].get(ref, {}))
            module.add_kernel(kernels[ref], examples, f"k{i}")
            names[f"k{i}"] = ref
        except Exception as exc:  # reported per kernel; the parent falls back or raises
            errors[ref] = f"{type(exc).__name__}: {str(exc).strip()}"
    folder = Path(request["workdir"], "aot")
    folder.mkdir()
    module.save(str(folder))
    meta = json.loads((folder / metadata_file("vulkan")).read_text())
    access = {}
    for k in meta["kernels"]:
        ctx = k["ctx_attribs"]
        flags = [e for e in ctx["arr_access"] if len(e["key"]) == 1]  # by key: 1.7.4 writes them reversed
        args = [e for e in ctx["arg_attribs_vec_"] if len(e["key"]) == 1]
        access[names[k["name"]]] = {
            "flags": {str(e["key"][0]): e["value"] for e in flags},
            "names": {str(e["key"][0]): e["value"]["name"] for e in args},
        }
    return {"vulkan": True, "access": access, "errors": errors}


# ---------------------------------------------------------------- source: vulkan (parent side)
def _spec_json(spec: Any, where: str) -> dict[str, Any]:
    """What the child needs of an :class:`ArraySpec`, a graph ``Arg`` or an ndarray, as JSON."""
    dtype: Any = getattr(spec, "dtype", None)
    element = tuple(getattr(spec, "element_shape", None) or ())
    if hasattr(dtype, "n"):  # a vector/matrix type carries the element shape itself
        element = (dtype.n,) if dtype.ndim == 1 else (dtype.n, dtype.m)
        dtype = dtype.dtype
    ndim = getattr(spec, "ndim", None)
    if ndim is None and hasattr(spec, "shape"):
        ndim = len(spec.shape)
    if ndim is None:
        raise KernelError(f"{where}: {spec!r} gives no ndim; pass ArraySpec(dtype, ndim, element_shape)")
    out: dict[str, Any] = {"ndim": int(ndim), "element_shape": [int(d) for d in element]}
    if dtype is not None:
        out["dtype"] = dtype if isinstance(dtype, str) else dtype.to_string()
    return out


def _from_metadata(kernel: Callable[..., Any], entry: Mapping[str, Any]) -> dict[str, AccessFlag]:
    """Map Vulkan's ``{arg index: flags}`` to parameter names: the index is the parameter's position."""
    out: dict[str, AccessFlag] = {}
    from graphlab.bridge.types import kernel_parameters  # import cost: Taichi

    kinds = buffer_params(kernel)
    for index, (name, _) in enumerate(kernel_parameters(kernel)):
        kind = kinds.get(name)
        if kind is None:
            continue
        if kind != "ndarray":
            out[name] = texture_access(kind)
            continue
        meta_name = entry["names"].get(str(index))
        if meta_name not in (name, "_" + name):
            raise AccessError(
                f"kernel {kernel_ref(kernel)}: Vulkan metadata names argument {index} {meta_name!r}, "
                f"expected {name!r}; this Taichi version lays out metadata.json differently: use "
                "source='ast'"
            )
        out[name] = AccessFlag(entry["flags"].get(str(index), AccessFlag.READ_WRITE))
    return out


def _vulkan_access(
    kernels: list[Callable[..., Any]], specs: Mapping[str, Mapping[str, Any]]
) -> tuple[dict[str, dict[str, AccessFlag]], dict[str, str]]:
    """Run one child for all ``kernels``: access per ref, and the Taichi error per failed ref."""
    refs = [kernel_ref(k) for k in kernels]
    request = {
        "payload": carry_kernels(kernels).to_dict(),
        "refs": refs,
        "specs": {r: _specs_json(r, specs.get(r)) for r in refs},
    }
    start = time.perf_counter()
    answer = run_child("graphlab.kernelfacts.access:_vulkan_child", request, timeout=_CHILD_TIMEOUT_S)
    _STATE["last_child_s"] = time.perf_counter() - start
    if not answer["vulkan"]:
        raise ToolMissingError(
            "Vulkan is not available (ti.init(arch=ti.vulkan) fell back to another arch); install a "
            "Vulkan driver, e.g. on Debian: apt-get install mesa-vulkan-drivers libvulkan1"
        )
    by_ref = {kernel_ref(k): k for k in kernels}
    access = {ref: _from_metadata(by_ref[ref], entry) for ref, entry in answer["access"].items()}
    return access, answer["errors"]


# ---------------------------------------------------------------- caches
_MEMO: dict[str, dict[str, AccessFlag]] = {}  # fingerprint -> Vulkan's answer
_NO_VULKAN: dict[str, str] = {}  # fingerprint + specs -> why Vulkan could not answer
_STATE: dict[str, Any] = {"broken": None, "last_child_s": None}


def _fingerprint(kernel: Callable[..., Any]) -> tuple[str, tuple[Callable[..., Any], ...]]:
    """sha256 of the kernel's source, the ``@ti.func``'s and constants it uses, and Taichi's version; and
    every function it read (the kernel and the ``@ti.func``'s it reaches)."""
    import taichi as ti  # import cost: Taichi

    digest = hashlib.sha256(f"graphlab-access/{_CACHE_FORMAT}/taichi-{ti.__version__}\n".encode())
    todo, seen, read = [kernel], set(), []
    while todo:
        fn = todo.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        read.append(fn)
        digest.update(function_source(fn).encode())
        for name, value in sorted(referenced_globals(fn).items()):
            if is_taichi_function(value) and not module_of(value).startswith("taichi"):
                todo.append(value)  # type: ignore[arg-type]
            plain = isinstance(value, (bool, int, float, str, tuple))
            line = f"\n{name}={value!r}" if plain else f"\n{name}:{type(value).__name__}"
            digest.update(line.encode())
    return digest.hexdigest(), tuple(read)


# ---------------------------------------------------------------- per-kernel source facts, kept between edits
_MISSING = object()


class CacheInfo(NamedTuple):
    """How often :func:`kernels_access` found a kernel's source facts kept (``hits``) or read them again."""

    hits: int
    misses: int
    kernels: int


@dataclass(frozen=True)
class _Stamp:
    """What one function's facts were read from: its code, its source file's time, and the globals it names.

    Checked by identity in microseconds. A kernel redefined in a notebook cell is a new object (a
    new entry); a ``@ti.func`` or constant it uses rebound in its module, or its file edited on disk,
    makes the stamp differ, so the kernel is read again.
    """

    fn: Any  # the plain Python function
    code: CodeType
    mtime: int | None
    names: tuple[tuple[str, object], ...]

    @classmethod
    def of(cls, fn: Callable[..., Any]) -> "_Stamp":
        orig = python_function(fn)
        code = orig.__code__
        names = set(code.co_names) | set(code.co_freevars) | set(referenced_globals(fn))
        return cls(orig, code, _mtime(code), tuple((n, _lookup(orig, n)) for n in sorted(names)))

    def holds(self) -> bool:
        orig = self.fn
        if orig.__code__ is not self.code or _mtime(self.code) != self.mtime:
            return False
        return all(_lookup(orig, name) is value for name, value in self.names)


def _mtime(code: CodeType) -> int | None:
    try:
        return Path(code.co_filename).stat().st_mtime_ns
    except (OSError, ValueError):  # a notebook cell: its source lives in IPython's line cache, not a file
        return None


def _lookup(orig: Any, name: str) -> object:
    """What ``name`` means to the function now: its closure cell, else its module's global."""
    closure = getattr(orig, "__closure__", None) or ()
    for var, cell in zip(orig.__code__.co_freevars, closure):
        if var == name:
            try:
                return cell.cell_contents
            except ValueError:  # an empty cell
                return _MISSING
    return getattr(orig, "__globals__", {}).get(name, _MISSING)


@dataclass
class _SourceFacts:
    """What a kernel's source says, read once and kept while its :class:`_Stamp`'s hold.

    Validation runs after every edit in the editor and asks for every kernel of the graph; reading
    and parsing the sources again each time was most of an edit's Python time.
    """

    fingerprint: str
    stamps: tuple[_Stamp, ...]
    ast: dict[str, AccessFlag] | None = None
    orders: dict[tuple[tuple[str, int], ...], KernelOrder] = field(default_factory=dict)

    def flags(self, kernel: Callable[..., Any]) -> dict[str, AccessFlag]:
        if self.ast is None:
            self.ast = ast_access(kernel)
        return dict(self.ast)

    def order(self, kernel: Callable[..., Any], params: Mapping[str, AccessFlag]) -> KernelOrder:
        key = tuple((name, int(flag)) for name, flag in params.items())
        found = self.orders.get(key)
        if found is None:
            found = self.orders[key] = kernel_order(kernel, params)
        return KernelOrder(dict(found.first), dict(found.shaped_like))


_SOURCE_FACTS: "weakref.WeakKeyDictionary[Callable[..., Any], _SourceFacts]" = weakref.WeakKeyDictionary()
_COUNTS = {"hits": 0, "misses": 0}


def _source_facts(kernel: Callable[..., Any]) -> _SourceFacts:
    """The kernel's kept facts, read again when it or anything it names has changed since."""
    try:
        facts = _SOURCE_FACTS.get(kernel)
    except TypeError:  # not hashable or weakly referable: read every time
        facts = None
    if facts is not None and all(stamp.holds() for stamp in facts.stamps):
        _COUNTS["hits"] += 1
        return facts
    _COUNTS["misses"] += 1
    fingerprint, read = _fingerprint(kernel)
    facts = _SourceFacts(fingerprint, tuple(_Stamp.of(fn) for fn in read))
    with contextlib.suppress(TypeError):
        _SOURCE_FACTS[kernel] = facts
    return facts


def _source_facts_or_none(kernel: Callable[..., Any]) -> _SourceFacts | None:
    """For the source reading alone: a ``@ti.func`` whose source cannot be read need not stop it."""
    try:
        return _source_facts(kernel)
    except CarryError:
        return None


def source_cache_info() -> CacheInfo:
    """Hits and misses of the per-kernel source facts since the process started, and the kernels kept."""
    return CacheInfo(_COUNTS["hits"], _COUNTS["misses"], len(_SOURCE_FACTS))


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "graphlab" / "access"


def _disk_get(key: str) -> dict[str, AccessFlag] | None:
    try:
        data = json.loads((_cache_dir() / f"{key}.json").read_text())
        if data.get("format") != _CACHE_FORMAT:
            return None
        return {name: AccessFlag(flags) for name, flags in data["params"].items()}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _disk_put(key: str, ref: str, params: Mapping[str, AccessFlag]) -> None:
    """Write one entry atomically (temp file + rename); a read-only cache folder is not an error."""
    folder = _cache_dir()
    record = {"format": _CACHE_FORMAT, "ref": ref, "params": {k: int(v) for k, v in params.items()}}
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{key}.", suffix=".tmp")
    except OSError:
        return
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(record, f)
        Path(tmp).replace(folder / f"{key}.json")
    except OSError:
        Path(tmp).unlink(missing_ok=True)


# ---------------------------------------------------------------- public API
def kernels_access(
    kernels: Iterable[Callable[..., Any]],
    *,
    source: Source = "auto",
    arg_specs: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, AccessReport]:
    """Access per buffer parameter for several kernels, with one Vulkan child for all of them.

    Parameters
    ----------
    kernels
        ``@ti.kernel`` functions (from modules or notebook cells).
    source
        ``"vulkan"``: Taichi's compiler, or an error; ``"ast"``: the source code only; ``"auto"``:
        Vulkan where it can answer, the source code elsewhere (a warning the first time Vulkan fails).
    arg_specs
        ``{ref: {param: ArraySpec}}`` for ndarray parameters whose annotation leaves the dtype,
        element shape or ndim open; without it, they are compiled as scalar ``f32``.

    Returns
    -------
    dict
        ``{"module:qualname": AccessReport}``, in the order of ``kernels``.
    """
    if source not in ("auto", "vulkan", "ast"):
        raise ValueError(f"source={source!r}: expected 'auto', 'vulkan' or 'ast'")
    kernels = list({kernel_ref(_check_kernel(k)): k for k in kernels}.values())
    kept: dict[str, _SourceFacts | None] = {}
    answers: dict[str, tuple[dict[str, AccessFlag] | None, str | None]] = {}
    if source != "ast":
        kept = {kernel_ref(k): _source_facts(k) for k in kernels}
        keys = {ref: facts.fingerprint for ref, facts in kept.items() if facts is not None}
        answers = _vulkan_answers(kernels, keys, arg_specs or {}, strict=source == "vulkan")
    reports = {}
    for k in kernels:
        ref = kernel_ref(k)
        facts = kept[ref] if ref in kept else _source_facts_or_none(k)
        params, note = answers.get(ref, (None, None))
        if params is not None:
            order = facts.order(k, params) if facts is not None else kernel_order(k, params)
            reports[ref] = AccessReport(ref, params, "vulkan", None, order.first, order.shaped_like)
        else:
            flags = facts.flags(k) if facts is not None else ast_access(k)
            order = facts.order(k, flags) if facts is not None else kernel_order(k, flags)
            reports[ref] = AccessReport(ref, flags, "ast", note, order.first, order.shaped_like)
    return reports


def kernel_access(
    kernel: Callable[..., Any],
    *,
    source: Source = "auto",
    arg_specs: Mapping[str, Any] | None = None,
) -> AccessReport:
    """Access per buffer parameter of one kernel: a mapping ``{param: AccessFlag}`` with a ``source``.

    ``arg_specs`` is ``{param: ArraySpec}``; see :func:`kernels_access`.
    """
    ref = kernel_ref(_check_kernel(kernel))
    specs = {ref: arg_specs} if arg_specs else None
    return kernels_access([kernel], source=source, arg_specs=specs)[ref]


def _check_kernel(kernel: Any) -> Callable[..., Any]:
    if not is_wrapped_kernel(kernel):
        raise KernelError(f"{kernel!r} is not a @ti.kernel: decorate it with @ti.kernel")
    return kernel  # type: ignore[no-any-return]


def _vulkan_answers(
    kernels: list[Callable[..., Any]], keys: Mapping[str, str], specs: Mapping[str, Mapping[str, Any]], *, strict: bool
) -> dict[str, tuple[dict[str, AccessFlag] | None, str | None]]:
    """Vulkan's answer per ref from the caches or one child; ``(None, why)`` where it has none."""
    out: dict[str, tuple[dict[str, AccessFlag] | None, str | None]] = {}
    todo = []
    for k in kernels:
        ref, key = kernel_ref(k), keys[kernel_ref(k)]
        cached = _MEMO[key] if key in _MEMO else _disk_get(key)
        if cached is not None:
            _MEMO[key] = cached
            out[ref] = (dict(cached), None)
        elif not strict and _failure_key(key, ref, specs.get(ref)) in _NO_VULKAN:
            out[ref] = (None, _NO_VULKAN[_failure_key(key, ref, specs.get(ref))])
        else:
            todo.append(k)
    if not todo:
        return out
    if not strict and _STATE["broken"] is not None:
        return out | {kernel_ref(k): (None, _STATE["broken"]) for k in todo}
    carriable = []
    for k in todo:
        try:
            carry_kernels([k])
            carriable.append(k)
        except CarryError as exc:
            if strict:
                raise
            out[kernel_ref(k)] = (None, f"cannot be compiled in a child process: {exc}")
    try:
        access, errors = _vulkan_access(carriable, specs) if carriable else ({}, {})
    except (ChildRunError, ToolMissingError, AccessError) as exc:
        if strict:
            raise
        _STATE["broken"] = f"the Vulkan child process failed: {str(exc).splitlines()[0]}"
        warnings.warn(
            f"graphlab: {_STATE['broken']}; read/write access is inferred from the source code instead "
            "(conservative: unknown uses count as read and written)",
            RuntimeWarning,
            stacklevel=4,
        )
        return out | {kernel_ref(k): (None, _STATE["broken"]) for k in carriable}
    for k in carriable:
        ref, key = kernel_ref(k), keys[kernel_ref(k)]
        if ref in access:
            _MEMO[key] = access[ref]
            _disk_put(key, ref, access[ref])
            out[ref] = (dict(access[ref]), None)
            continue
        why = f"Taichi could not compile it for Vulkan: {errors.get(ref, 'no metadata')}"
        open_params = [p for p in _open_params(k) if p not in specs.get(ref, {})]
        hint = (
            f"parameters {', '.join(open_params)} leave the dtype or ndim open: pass arg_specs"
            if open_params
            else "use source='ast'"
        )
        if strict:
            raise AccessError(f"kernel {ref}: {why}\n{hint}")
        _NO_VULKAN[_failure_key(key, ref, specs.get(ref))] = f"{why}\n{hint}"
        out[ref] = (None, f"{why}\n{hint}")
    return out


def _open_params(kernel: Callable[..., Any]) -> list[str]:
    """The ndarray parameters whose annotation leaves the dtype (or its shape) or ndim open."""
    from graphlab.bridge.types import annotation_spec, kernel_parameters  # import cost: Taichi

    out = []
    for name, annotation in kernel_parameters(kernel):
        try:
            spec = annotation_spec(annotation)
        except GraphError:  # an ndarray of structs: nothing a spec could fill in
            continue
        if spec.kind == "ndarray" and None in (spec.dtype, spec.ndim, spec.element_shape):
            out.append(name)
    return out


def _specs_json(ref: str, specs: Mapping[str, Any] | None) -> dict[str, Any]:
    return {p: _spec_json(spec, f"arg_specs[{ref!r}][{p!r}]") for p, spec in (specs or {}).items()}


def _failure_key(key: str, ref: str, specs: Mapping[str, Any] | None) -> str:
    return key + json.dumps(_specs_json(ref, specs), sort_keys=True)
