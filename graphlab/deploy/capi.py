"""What Taichi 1.7.4's C-API can take, declared once for everything that talks to it.

The ctypes runner (:mod:`graphlab.deploy.cruntime`, :mod:`graphlab.deploy.capi_ctypes`), the export checks
(:func:`graphlab.deploy.exporter.check_c_runtime`) and the C host generator
(:mod:`graphlab.deploy.hostgen`) all refuse the same scalars and pass them the same way; they read
these tables rather than keeping copies that could drift apart.
"""

from __future__ import annotations

__all__ = [
    "ARG_F32",
    "ARG_I32",
    "ARG_NDARRAY",
    "ARG_SCALAR",
    "ARG_TENSOR",
    "ARG_TEXTURE",
    "C_SCALARS",
    "SCALAR_PASSING",
    "TI_ARCH",
    "TI_DATA_TYPE",
    "TI_FORMAT",
]

#: ``TiArch`` of taichi/taichi_core.h (C-API 1.7), for the arches graphlab exports.
TI_ARCH = {"vulkan": 1, "cuda": 3, "x64": 4}
#: ``TiDataType`` of taichi/taichi_core.h (C-API 1.7): graphlab dtype name -> enum value.
TI_DATA_TYPE = {"f16": 0, "f32": 1, "f64": 2, "i8": 3, "i16": 4, "i32": 5, "i64": 6,
                "u8": 8, "u16": 9, "u32": 10, "u64": 11}  # fmt: skip
#: ``TiArgumentType`` values (C-API 1.7).
ARG_I32, ARG_F32, ARG_NDARRAY, ARG_TEXTURE, ARG_SCALAR, ARG_TENSOR = 0, 1, 2, 3, 4, 5
#: ``TiFormat`` of taichi/taichi_core.h (C-API 1.7), for the texel formats an export can pass
#: (:data:`graphlab.bridge.texture_formats.TEXEL_CHANNELS`).
TI_FORMAT = {"r8": 1, "rg8": 2, "rgba8": 3, "r16": 13, "rg16": 14, "rgba16": 16, "r16f": 25, "rg16f": 26,
             "rgba16f": 28, "r32f": 37, "rg32f": 38, "rgba32f": 40}  # fmt: skip
#: How a scalar of each dtype crosses the 1.7.4 C-API: I32/F32 for 32-bit values; SCALAR takes only
#: 16-bit types (f32 through it gives -6), and Taichi's graphs refuse f16 scalars anyway. A dtype
#: missing here cannot be passed as a scalar at all (the generated C host follows the same rule).
SCALAR_PASSING = {"f32": ARG_F32, "i32": ARG_I32, "i16": ARG_SCALAR, "u16": ARG_SCALAR}
#: The scalar dtypes the C-API can pass, in the order messages list them.
C_SCALARS = tuple(SCALAR_PASSING)
