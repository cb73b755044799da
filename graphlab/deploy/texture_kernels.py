"""The kernels that fill a texture from an ndarray and read it back (see :mod:`graphlab.bridge.texture_formats`).

The exporter puts them into the module as small graphs for the C host, and ``gl.verify``'s Python
run uses the same kernels, so both sides move texels the same way. This module imports Taichi:
load it only where Taichi runs (the export and verify child processes).
"""

import functools
from typing import Any

import taichi as ti

from graphlab.bridge.texture_formats import TEXEL_CHANNELS, download_graph, upload_graph

__all__ = ["copy_graphs", "download_kernel", "read_texture", "upload_kernel", "write_texture"]


@functools.cache
def upload_kernel(fmt: str, ndim: int) -> Any:
    """A kernel ``(src: ndarray f32 of ndim + 1 dims, tex: rw_texture of fmt)`` copying src's channels in."""
    channels = TEXEL_CHANNELS[fmt]
    texel_format = getattr(ti.Format, fmt)

    @ti.kernel
    def upload(
        src: ti.types.ndarray(dtype=ti.f32, ndim=ndim + 1),
        tex: ti.types.rw_texture(num_dimensions=ndim, fmt=texel_format, lod=0),
    ):
        for I in ti.grouped(tex):
            texel = ti.Vector([0.0, 0.0, 0.0, 0.0])
            for c in ti.static(range(channels)):
                texel[c] = src[I, c]
            tex.store(I, texel)

    return upload


@functools.cache
def download_kernel(fmt: str, ndim: int) -> Any:
    """A kernel ``(tex: rw_texture of fmt, dst: ndarray f32 of ndim + 1 dims)`` copying texels out.

    It loads through a storage image rather than sampling: exact texels, and a sampled fetch of a
    1-D rgba8 texture reads zeros in Taichi 1.7.4 on lavapipe.
    """
    channels = TEXEL_CHANNELS[fmt]
    texel_format = getattr(ti.Format, fmt)

    @ti.kernel
    def download(
        tex: ti.types.rw_texture(num_dimensions=ndim, fmt=texel_format, lod=0),
        dst: ti.types.ndarray(dtype=ti.f32, ndim=ndim + 1),
    ):
        for I in ti.grouped(tex):
            texel = tex.load(I)
            for c in ti.static(range(channels)):
                dst[I, c] = texel[c]

    return download


def copy_graphs(formats: set[tuple[str, int]]) -> dict[str, Any]:
    """The compiled copy graphs for textures of these (format, dims), by module graph name."""
    arg = ti.graph.Arg
    kind = ti.graph.ArgKind
    graphs: dict[str, Any] = {}
    for fmt, ndim in sorted(formats):
        builder = ti.graph.GraphBuilder()
        builder.dispatch(
            upload_kernel(fmt, ndim),
            arg(kind.NDARRAY, "src", ti.f32, ndim=ndim + 1),
            arg(kind.RWTEXTURE, "tex", fmt=getattr(ti.Format, fmt), ndim=ndim),
        )
        graphs[upload_graph(fmt, ndim)] = builder.compile()
        builder = ti.graph.GraphBuilder()
        builder.dispatch(
            download_kernel(fmt, ndim),
            arg(kind.RWTEXTURE, "tex", fmt=getattr(ti.Format, fmt), ndim=ndim),
            arg(kind.NDARRAY, "dst", ti.f32, ndim=ndim + 1),
        )
        graphs[download_graph(fmt, ndim)] = builder.compile()
    return graphs


def write_texture(values: Any, fmt: str) -> Any:
    """A new ``ti.Texture`` of ``fmt`` holding ``values`` (float32, the texture's dims then channels)."""
    ndim = values.ndim - 1
    staging = ti.ndarray(ti.f32, shape=values.shape)
    staging.from_numpy(values)
    texture = ti.Texture(getattr(ti.Format, fmt), values.shape[:ndim])
    upload_kernel(fmt, ndim)(staging, texture)
    return texture


def read_texture(texture: Any, fmt: str) -> Any:
    """The texels of a ``ti.Texture`` as a float32 numpy array (its dims then channels)."""
    shape = tuple(texture.shape)
    staging = ti.ndarray(ti.f32, shape=(*shape, TEXEL_CHANNELS[fmt]))
    download_kernel(fmt, len(shape))(texture, staging)
    return staging.to_numpy()
