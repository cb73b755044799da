"""Reading a few bytes of an ndarray back to the host as fast as the device allows.

A while-loop or a branch decides on the host, so every decision waits for one i32 to come back. Taichi
1.7.4's element access (``arr[0]``) costs about 200 us on CUDA (it runs an accessor through the
runtime and synchronises); the device itself needs about 10 us. So, per arch:

- ``cuda``: an asynchronous device-to-host copy of the bytes into pinned host memory through the CUDA
  driver (the ``cuda-bindings`` package, the ``cuda`` extra), on the legacy default stream of the
  context Taichi made current, then a wait on that stream. The legacy stream orders the copy after
  every segment Taichi queued before it.
- ``x64``/``arm64``: kernels have finished when a launch returns, so the value is read at its host
  address.
- anything else (Vulkan, Metal, OpenGL), or CUDA without ``cuda-bindings``: Taichi's accessor, as
  before (Taichi 1.7.4 gives Python no mapping of a Vulkan ndarray).

:func:`fast_reads` switches the fast paths off, so tests can check that both decide the same.
"""

from __future__ import annotations

import contextlib
import ctypes
import weakref
from collections.abc import Callable, Iterator
from typing import Any, Literal

import numpy as np
from taichi.lang import impl

from graphlab.bridge.types import to_numpy_dtype

__all__ = ["ReadPath", "cuda_unavailable", "fast_reads", "read_array", "read_flag", "read_path"]

ReadPath = Literal["cuda-driver", "host-pointer", "accessor"]

_HOST_ARCHS = ("x64", "arm64")
_ENABLED = [True]
_CELL = "_graphlab_flag_reader"
_ARRAY = "_graphlab_array_reader"
_PINNED_BYTES = 1 << 20  # read_array of anything larger goes through to_numpy


@contextlib.contextmanager
def fast_reads(enabled: bool) -> Iterator[None]:
    """Use (True) or bypass (False) the fast read paths inside the ``with`` block."""
    before = _ENABLED[0]
    _ENABLED[0] = enabled
    try:
        yield
    finally:
        _ENABLED[0] = before


def _arch() -> str:
    return str(impl.current_cfg().arch).rsplit(".", 1)[-1]


class _Cuda:
    """The driver calls of the CUDA path, with one pinned host buffer per CUDA context."""

    def __init__(self) -> None:
        from cuda.bindings import driver  # import cost: CUDA only, and an optional extra

        self.driver = driver
        err, ctx = driver.cuCtxGetCurrent()
        if err != driver.CUresult.CUDA_SUCCESS or int(ctx) == 0:
            raise RuntimeError(f"no current CUDA context on this thread ({err})")
        self.context = int(ctx)
        err, ptr = driver.cuMemHostAlloc(_PINNED_BYTES, 0)
        if err != driver.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"cuMemHostAlloc failed: {err}")
        self.host = int(ptr)
        self.cell = ctypes.c_int32.from_address(self.host)

    def copy(self, device_ptr: int, nbytes: int) -> None:
        """Copy ``nbytes`` at ``device_ptr`` into the pinned buffer, after all queued work."""
        driver = self.driver
        (err,) = driver.cuMemcpyDtoHAsync(self.host, device_ptr, nbytes, 0)
        if err == driver.CUresult.CUDA_SUCCESS:
            (err,) = driver.cuStreamSynchronize(0)
        if err != driver.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"reading {nbytes} bytes at {device_ptr:#x} from the GPU failed: {err}")

    def is_current(self) -> bool:
        err, ctx = self.driver.cuCtxGetCurrent()
        return err == self.driver.CUresult.CUDA_SUCCESS and int(ctx) == self.context


_CUDA: list[_Cuda | None] = [None]
_CUDA_FAILED: list[str] = []


def _cuda() -> _Cuda | None:
    """The CUDA driver path for the current context, or None (no ``cuda-bindings``, no context)."""
    live = _CUDA[0]
    if live is not None and live.is_current():
        return live
    if _CUDA_FAILED:
        return None
    try:
        _CUDA[0] = _Cuda()
    except Exception as exc:  # no package, no driver, no context: Taichi's accessor, and say why once
        _CUDA_FAILED.append(f"{type(exc).__name__}: {exc}")
        return None
    return _CUDA[0]


def cuda_unavailable() -> str | None:
    """Why CUDA flag reads fall back to Taichi's accessor (e.g. ``pip install graphlab[cuda]``), or None."""
    return _CUDA_FAILED[0] if _CUDA_FAILED else None


def read_path() -> ReadPath:
    """Which path :func:`read_flag` takes on the current arch (``accessor`` when fast reads are off)."""
    arch = _arch()
    if not _ENABLED[0]:
        return "accessor"
    if arch in _HOST_ARCHS:
        return "host-pointer"
    if arch == "cuda" and _cuda() is not None:
        return "cuda-driver"
    return "accessor"


def _data_ptr(arr: Any) -> int:
    return int(impl.get_runtime().prog.get_ndarray_data_ptr_as_int(arr.arr))


def _accessor(arr: Any) -> int:
    return int(arr[(0,) * len(arr.shape)] if arr.shape else arr[None])


def _make_reader(arr: Any, path: ReadPath) -> Callable[[Any], int]:
    if path == "host-pointer":
        cell = (ctypes.c_int32 if str(arr.dtype) == "i32" else ctypes.c_uint32).from_address(_data_ptr(arr))
        return lambda _arr: int(cell.value)
    if path == "cuda-driver":
        cuda, ptr = _cuda(), _data_ptr(arr)
        assert cuda is not None  # read_path() said so
        signed = str(arr.dtype) == "i32"

        def read(_arr: Any) -> int:
            cuda.copy(ptr, 4)
            value = cuda.cell.value
            return value if signed else value & 0xFFFFFFFF

        return read
    return _accessor


def read_flag(arr: Any) -> int:
    """The value of a one-element i32/u32 ndarray, after everything queued before has run.

    The reader is made once per ndarray and runtime (it holds the address), so a decision costs the
    copy and little else. It is called with the ndarray rather than holding it: a reader kept on the
    ndarray that held it would make a cycle, freed by the garbage collector at some later ti.init."""
    held = arr.__dict__.get(_CELL)
    runtime = impl.get_runtime()
    if held is None or held[0]() is not runtime or held[1] != _ENABLED[0]:
        path = read_path() if str(arr.dtype) in ("i32", "u32") else "accessor"
        held = (weakref.ref(runtime), _ENABLED[0], _make_reader(arr, path))
        arr.__dict__[_CELL] = held
    return held[2](arr)


def read_array(arr: Any) -> np.ndarray:
    """A copy of a small ndarray (scratch rows, a few KiB) on the host, by the fast path where there is one.

    Like :func:`read_flag`, the reader is made once per ndarray and runtime."""
    held = arr.__dict__.get(_ARRAY)
    runtime = impl.get_runtime()
    if held is None or held[0]() is not runtime or held[1] != _ENABLED[0]:
        held = (weakref.ref(runtime), _ENABLED[0], _array_reader(arr))
        arr.__dict__[_ARRAY] = held
    return held[2](arr)


def _array_reader(arr: Any) -> Callable[[Any], np.ndarray]:
    path = read_path()
    dtype = np.dtype(to_numpy_dtype(arr.dtype))
    shape = tuple(arr.shape) + tuple(arr.element_shape)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if path == "accessor" or nbytes > _PINNED_BYTES or nbytes == 0:
        return lambda a: np.asarray(a.to_numpy())
    ptr = _data_ptr(arr)
    cuda = _cuda() if path == "cuda-driver" else None
    address = ptr if cuda is None else cuda.host
    view = np.frombuffer(memoryview((ctypes.c_char * nbytes).from_address(address)), dtype=dtype).reshape(shape)
    if cuda is None:
        return lambda _arr: view.copy()
    copy = cuda.copy

    def read(_arr: Any) -> np.ndarray:
        copy(ptr, nbytes)
        return view.copy()

    return read
