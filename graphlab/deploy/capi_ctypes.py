"""Taichi 1.7.4's C library through :mod:`ctypes`: its structs and signatures, loading it, device memory.

The structs mirror ``taichi/taichi_core.h`` (C-API 1.7; ``tests/deploy/test_cruntime.py`` compares their
sizes and offsets with the header's, compiled by gcc). :func:`c_api` loads ``libtaichi_c_api.so``
from the taichi wheel once per process, located with :func:`importlib.util.find_spec` so taichi
is never imported; :meth:`CApi.call` follows every call with ``ti_get_last_error``. :class:`Memory`
allocates a runtime's buffers and copies numpy arrays in and out of them. The enum values these
calls take are in :mod:`graphlab.deploy.capi`; :mod:`graphlab.deploy.cruntime` runs modules with all this.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from graphlab.core.errors import GraphlabError
from graphlab.deploy.errors import CRuntimeError

__all__ = [
    "Buffer",
    "CApi",
    "Memory",
    "TiArgument",
    "TiArgumentValue",
    "TiImageAllocateInfo",
    "TiImageExtent",
    "TiMemoryAllocateInfo",
    "TiMemorySlice",
    "TiNamedArgument",
    "TiNdArray",
    "TiNdShape",
    "TiScalar",
    "TiScalarValue",
    "TiTensor",
    "TiTensorValueWithLength",
    "TiTexture",
    "c_api",
    "taichi_c_api_dir",
]


class TiNdShape(ctypes.Structure):
    _fields_ = [("dim_count", ctypes.c_uint32), ("dims", ctypes.c_uint32 * 16)]


class TiNdArray(ctypes.Structure):
    _fields_ = [("memory", ctypes.c_void_p), ("shape", TiNdShape), ("elem_shape", TiNdShape),
                ("elem_type", ctypes.c_uint32)]  # fmt: skip


class TiScalarValue(ctypes.Union):
    _fields_ = [
        ("x8", ctypes.c_uint8),
        ("x16", ctypes.c_uint16),
        ("x32", ctypes.c_uint32),
        ("x64", ctypes.c_uint64),
    ]


class TiScalar(ctypes.Structure):
    _fields_ = [("type", ctypes.c_uint32), ("value", TiScalarValue)]


class TiTensorValueWithLength(ctypes.Structure):  # TiTensorValue (a union of arrays) as 16 x u64
    _fields_ = [("length", ctypes.c_uint32), ("data", ctypes.c_uint64 * 16)]


class TiTensor(ctypes.Structure):
    _fields_ = [("type", ctypes.c_uint32), ("contents", TiTensorValueWithLength)]


class TiImageExtent(ctypes.Structure):
    _fields_ = [("width", ctypes.c_uint32), ("height", ctypes.c_uint32), ("depth", ctypes.c_uint32),
                ("array_layer_count", ctypes.c_uint32)]  # fmt: skip


class TiImageAllocateInfo(ctypes.Structure):
    _fields_ = [("dimension", ctypes.c_uint32), ("extent", TiImageExtent), ("mip_level_count", ctypes.c_uint32),
                ("format", ctypes.c_uint32), ("export_sharing", ctypes.c_uint32),
                ("usage", ctypes.c_uint32)]  # fmt: skip


class TiTexture(ctypes.Structure):
    _fields_ = [("image", ctypes.c_void_p), ("sampler", ctypes.c_void_p), ("dimension", ctypes.c_uint32),
                ("extent", TiImageExtent), ("format", ctypes.c_uint32)]  # fmt: skip


class TiArgumentValue(ctypes.Union):
    _fields_ = [("i32", ctypes.c_int32), ("f32", ctypes.c_float), ("ndarray", TiNdArray), ("texture", TiTexture),
                ("scalar", TiScalar), ("tensor", TiTensor)]  # fmt: skip


class TiArgument(ctypes.Structure):
    _fields_ = [("type", ctypes.c_uint32), ("value", TiArgumentValue)]


class TiNamedArgument(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("argument", TiArgument)]


class TiMemoryAllocateInfo(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint64), ("host_write", ctypes.c_uint32), ("host_read", ctypes.c_uint32),
                ("export_sharing", ctypes.c_uint32), ("usage", ctypes.c_uint32)]  # fmt: skip


class TiMemorySlice(ctypes.Structure):
    _fields_ = [("memory", ctypes.c_void_p), ("offset", ctypes.c_uint64), ("size", ctypes.c_uint64)]


_P, _H, _U32 = ctypes.POINTER, ctypes.c_void_p, ctypes.c_uint32
_SIGNATURES: dict[str, tuple[Any, list[Any]]] = {
    "ti_get_version": (_U32, []),
    "ti_get_last_error": (ctypes.c_int32, [_P(ctypes.c_uint64), ctypes.c_char_p]),
    "ti_set_last_error": (None, [ctypes.c_int32, ctypes.c_char_p]),
    "ti_create_runtime": (_H, [_U32, _U32]),
    "ti_destroy_runtime": (None, [_H]),
    "ti_allocate_memory": (_H, [_H, _P(TiMemoryAllocateInfo)]),
    "ti_free_memory": (None, [_H, _H]),
    "ti_map_memory": (_H, [_H, _H]),
    "ti_unmap_memory": (None, [_H, _H]),
    "ti_copy_memory_device_to_device": (None, [_H, _P(TiMemorySlice), _P(TiMemorySlice)]),
    "ti_allocate_image": (_H, [_H, _P(TiImageAllocateInfo)]),
    "ti_free_image": (None, [_H, _H]),
    "ti_load_aot_module": (_H, [_H, ctypes.c_char_p]),
    "ti_destroy_aot_module": (None, [_H]),
    "ti_get_aot_module_compute_graph": (_H, [_H, ctypes.c_char_p]),
    "ti_launch_compute_graph": (None, [_H, _H, _U32, _P(TiNamedArgument)]),
    "ti_wait": (None, [_H]),
}


def taichi_c_api_dir() -> Path:
    """The wheel's ``taichi/_lib/c_api`` folder (headers, library, LLVM runtime), without importing taichi."""
    spec = importlib.util.find_spec("taichi")
    if spec is None or not spec.submodule_search_locations:
        raise GraphlabError("the taichi wheel is not installed in this Python; run: pip install taichi==1.7.4")
    return Path(next(iter(spec.submodule_search_locations))) / "_lib" / "c_api"


class CApi:
    """``libtaichi_c_api.so`` with typed functions and a ``call`` that checks ``ti_get_last_error``."""

    def __init__(self, library: Path) -> None:
        self.lib = ctypes.CDLL(str(library))
        for name, (restype, argtypes) in _SIGNATURES.items():
            fn = getattr(self.lib, name)
            fn.restype, fn.argtypes = restype, argtypes

    def last_error(self) -> tuple[int, str]:
        size = ctypes.c_uint64(0)
        code = int(self.lib.ti_get_last_error(ctypes.byref(size), None))  # asks for the message size
        buf = ctypes.create_string_buffer(int(size.value) + 1)
        self.lib.ti_get_last_error(ctypes.byref(ctypes.c_uint64(len(buf))), buf)
        return code, buf.value.decode(errors="replace")

    def call(self, name: str, *args: Any, hint: str = "") -> Any:
        """Call ``name``; raise :class:`CRuntimeError` if it set an error or returned a null handle.

        The error is cleared first: 1.7.4 keeps the last error until the next failure, so a stale
        one would be blamed on a call that succeeded.
        """
        self.lib.ti_set_last_error(0, None)
        out = getattr(self.lib, name)(*args)
        code, detail = self.last_error()
        if code < 0 or (out is None and _SIGNATURES[name][0] is _H):
            self.lib.ti_set_last_error(0, None)
            raise CRuntimeError(name, code, detail or "returned a null handle", hint)
        return out


_API: list[CApi] = []


def c_api() -> CApi:
    """Load the C library once per process; ``TI_LIB_DIR`` must name its LLVM runtime for x64."""
    if not _API:
        root = taichi_c_api_dir()
        library = root / "lib" / "libtaichi_c_api.so"
        if not library.is_file():
            raise GraphlabError(f"{library} is missing; run: pip install --force-reinstall taichi==1.7.4")
        # ti_create_runtime(x64) loads runtime_x64.bc from there and fails without it.
        os.environ["TI_LIB_DIR"] = str(root / "runtime")
        _API.append(CApi(library))
    return _API[0]


# --- device memory -------------------------------------------------------------------------------


@dataclass
class Buffer:
    """One allocation of a runtime, with its host-visible staging twin where it needs one."""

    memory: int
    nbytes: int
    staging: int | None  # host-visible twin where device memory cannot be mapped


class Memory:
    """Allocations of one runtime, and copies between them and numpy arrays.

    The LLVM archs map their memory directly (x64 memory is host memory; CUDA's map copies through
    a host buffer) and answer ``ti_copy_memory_device_to_device`` with "Not supported". On Vulkan,
    device-local memory cannot be mapped on a real GPU, so each buffer has a host-visible staging
    twin and copies go through ``ti_copy_memory_device_to_device``, queued in order with launches.
    """

    def __init__(self, api: CApi, runtime: int, arch: str) -> None:
        self.api, self.runtime, self.arch, self.direct = api, runtime, arch, arch in ("x64", "cuda")

    def _allocate(self, nbytes: int, *, host: bool) -> int:
        info = TiMemoryAllocateInfo(max(nbytes, 4), host, host, 0, 1)  # usage: TI_MEMORY_USAGE_STORAGE_BIT
        return self.api.call("ti_allocate_memory", self.runtime, ctypes.byref(info))

    def buffer(self, nbytes: int) -> Buffer:
        staging = None if self.direct else self._allocate(nbytes, host=True)
        return Buffer(self._allocate(nbytes, host=self.direct), nbytes, staging)

    def free(self, buf: Buffer) -> None:
        if self.arch == "x64":  # 1.7.4 cannot free x64 memory ("Not supported"): it goes with the runtime
            return
        for memory in (buf.memory, buf.staging):
            if memory is not None:
                self.api.call("ti_free_memory", self.runtime, memory)

    def _host_copy(self, memory: int | None, array: np.ndarray, *, to_device: bool) -> None:
        ptr = self.api.call("ti_map_memory", self.runtime, memory)
        try:
            dst, src = (ptr, array.ctypes.data) if to_device else (array.ctypes.data, ptr)
            ctypes.memmove(dst, src, array.nbytes)
        finally:
            self.api.call("ti_unmap_memory", self.runtime, memory)

    def _device_copy(self, buf: Buffer, nbytes: int, *, to_device: bool) -> None:
        device, staging = TiMemorySlice(buf.memory, 0, nbytes), TiMemorySlice(buf.staging, 0, nbytes)
        dst, src = (device, staging) if to_device else (staging, device)
        self.api.call("ti_copy_memory_device_to_device", self.runtime, ctypes.byref(dst), ctypes.byref(src))

    def upload(self, buf: Buffer, array: np.ndarray) -> None:
        """Copy a C-contiguous array in; ordered before later launches. One upload per buffer per wait."""
        self._host_copy(buf.memory if self.direct else buf.staging, array, to_device=True)
        if not self.direct:
            self._device_copy(buf, array.nbytes, to_device=True)

    def queue_download(self, buf: Buffer, nbytes: int) -> None:
        if not self.direct:
            self._device_copy(buf, nbytes, to_device=False)

    def copy(self, dst: Buffer, src: Buffer) -> None:
        """Copy ``src`` into ``dst`` on the device, in order with the launches before it (a guarded
        loop's save and restore). Vulkan queues a device copy; the LLVM archs, which refuse one, wait
        for the device and copy through their mappings."""
        nbytes = min(dst.nbytes, src.nbytes)
        if not self.direct:
            to, source = TiMemorySlice(dst.memory, 0, nbytes), TiMemorySlice(src.memory, 0, nbytes)
            self.api.call("ti_copy_memory_device_to_device", self.runtime, ctypes.byref(to), ctypes.byref(source))
            return
        self.api.call("ti_wait", self.runtime)
        source_ptr = self.api.call("ti_map_memory", self.runtime, src.memory)
        try:
            to_ptr = self.api.call("ti_map_memory", self.runtime, dst.memory)
            try:
                ctypes.memmove(to_ptr, source_ptr, nbytes)
            finally:
                self.api.call("ti_unmap_memory", self.runtime, dst.memory)
        finally:
            self.api.call("ti_unmap_memory", self.runtime, src.memory)

    def download(self, buf: Buffer, out: np.ndarray) -> None:
        """Read a buffer after ``queue_download`` and ``ti_wait``."""
        self._host_copy(buf.memory if self.direct else buf.staging, out, to_device=False)
