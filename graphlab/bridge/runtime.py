"""Everything graphlab does with a live Taichi runtime.

Which runtime is live and on which arch, allocating ndarrays, building ``ti.graph`` args, waiting
for the device, reading a flag back, and which runtime an ndarray or texture was made in.

Importing this module wraps ``Ndarray.__init__`` and ``Texture.__init__`` to note, on each new
object, the Taichi runtime it was made in (:func:`value_is_current`): an ndarray or texture made
before ``ti.reset()``/``ti.init()`` points at freed memory, and passing it to a graph segfaults.
``import graphlab`` arranges for this module to load right after ``import taichi``.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable
from typing import Any

import taichi as ti
from taichi.lang import _wrap_inspect, impl
from taichi.lang._ndarray import Ndarray, ScalarNdarray
from taichi.lang._texture import Texture

from graphlab.bridge import device_read
from graphlab.bridge.types import element_type, taichi_dtype
from graphlab.core.spec import Arg

__all__ = [
    "RuntimeToken",
    "cpu_max_threads",
    "current_arch",
    "make_matrix",
    "new_ndarray",
    "read_flag",
    "runtime_ready",
    "source_lines",
    "sync",
    "to_graph_arg",
    "value_is_current",
]


# --- the live runtime --------------------------------------------------------------------------
class RuntimeToken:
    """Remembers which Taichi runtime something was built for.

    ``ti.reset()`` and ``ti.init()`` replace Taichi's runtime object; a compiled graph used after
    that segfaults in Taichi 1.7.4, so graphlab checks the token before every run. Caches of
    device objects (scratch ndarrays, snapshots) keep one to know when to empty themselves.
    """

    def __init__(self) -> None:
        self._runtime = weakref.ref(impl.get_runtime())
        self.arch = current_arch()

    def is_current(self) -> bool:
        """Whether the runtime this was built for is still the live one."""
        live: Any = self._runtime()
        return live is not None and live is impl.get_runtime() and live.prog is not None


def runtime_ready() -> bool:
    """Whether ``ti.init`` has made the live runtime's program (False before it, and after ``ti.reset``)."""
    return impl.get_runtime().prog is not None


_ARCH: list[Any] = [None, 0, ""]  # (runtime, id of its program, arch): reading the config costs ~10 us


def current_arch() -> str:
    """The arch of the current ``ti.init`` (``x64``, ``cuda``, ``vulkan``...)."""
    runtime = impl.get_runtime()
    prog = runtime.prog
    cached_runtime = _ARCH[0]() if _ARCH[0] is not None else None
    if prog is not None and cached_runtime is runtime and _ARCH[1] == id(prog):
        return str(_ARCH[2])
    arch = str(impl.current_cfg().arch).rsplit(".", 1)[-1]
    if prog is not None:
        _ARCH[:] = [weakref.ref(runtime), id(prog), arch]
    return arch


def cpu_max_threads() -> int:
    """The current ``ti.init``'s ``cpu_max_num_threads`` (the threads a CPU arch runs kernels on)."""
    return int(impl.current_cfg().cpu_max_num_threads)


def sync() -> None:
    """Wait for the device to finish queued work."""
    ti.sync()


# --- values ------------------------------------------------------------------------------------
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


def new_ndarray(dtype: str, shape: tuple[int, ...], element_shape: tuple[int, ...]) -> Any:
    """Allocate a Taichi ndarray on the current arch."""
    return ti.ndarray(element_type(dtype, element_shape), shape=shape)


def make_matrix(values: Any) -> Any:
    """A ``ti.Matrix`` from nested sequences or a numpy array."""
    return ti.Matrix(values.tolist() if hasattr(values, "tolist") else values)


def read_flag(arr: Any) -> int:
    """Read a one-element ndarray on the host (waits for the device: the cost of a control decision).

    The fastest read the arch allows (:mod:`graphlab.bridge.device_read`): a CUDA driver copy into
    pinned memory, a host pointer on CPUs, Taichi's accessor elsewhere."""
    return device_read.read_flag(arr)


# --- kernels -----------------------------------------------------------------------------------
def source_lines(fn: Callable[..., Any]) -> list[str]:
    """The source lines of a function, with Taichi's inspect shim: it also finds notebook cells
    (IPython's linecache) and cells run under ``%%time``. Raises OSError or TypeError as
    :func:`inspect.getsourcelines` does."""
    lines, _ = _wrap_inspect.getsourcelines(fn)
    return list(lines)


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


def _delete_only_in_own_runtime(cls: type) -> None:
    """Taichi's ``ScalarNdarray.__del__`` asks the *live* program to delete the ndarray; one made in
    a runtime that ti.reset()/ti.init() replaced, collected later (a reference cycle, a cache), then
    hands the new program a pointer it may have reused for a live ndarray of its own. Its memory
    went with its own program: skip the call."""
    original = cls.__dict__.get("__del__")
    if original is None or getattr(original, "_graphlab_own_runtime", False):
        return

    @functools.wraps(original)
    def delete_in_own_runtime(self: Any) -> None:
        born = self.__dict__.get(_BORN)
        if born is not None and born() is not impl.get_runtime():
            return
        original(self)

    delete_in_own_runtime._graphlab_own_runtime = True  # type: ignore[attr-defined]
    cls.__del__ = delete_in_own_runtime  # type: ignore[attr-defined]


_record_birth(Ndarray)
_record_birth(Texture)
_delete_only_in_own_runtime(ScalarNdarray)
_LIVE_AT_IMPORT: Any = weakref.ref(impl.get_runtime()) if impl.get_runtime().prog is not None else None


def value_is_current(value: Any) -> bool:
    """Whether a ``ti.ndarray``/``ti.Texture`` was made in the live Taichi runtime (False: it would crash)."""
    born = getattr(value, "__dict__", {}).get(_BORN, _LIVE_AT_IMPORT)
    live = impl.get_runtime()
    return born is not None and born() is live and live.prog is not None
