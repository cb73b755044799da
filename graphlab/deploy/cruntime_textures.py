"""Texture args in ``gl.load_module``: texels as numpy arrays, images in Taichi's C runtime.

As in the generated C host (see :mod:`graphlab.bridge.texture_formats`): a texture's value is a float32 array of
its dims plus one axis of channels; it goes into the arg's device buffer, and the module's copy
graph moves it into an image of the texture's format before the graph runs, and back after. Taichi's
C API has no copy between memory and an image, hence the copy graphs.
"""

from __future__ import annotations

import ctypes
from collections.abc import Mapping
from typing import Any

import numpy as np

from graphlab.bridge.texture_formats import TEXEL_CHANNELS, TEXTURE_KINDS, download_graph, texel_format, upload_graph
from graphlab.core.errors import GraphRunError
from graphlab.core.spec import Arg
from graphlab.deploy.capi import ARG_NDARRAY, ARG_TEXTURE, TI_DATA_TYPE, TI_FORMAT
from graphlab.deploy.capi_ctypes import Buffer, CApi, TiImageAllocateInfo, TiNamedArgument, TiTexture
from graphlab.deploy.manifest import Manifest
from graphlab.run.values import dims_problem

__all__ = ["Images", "check_texels", "texture_formats"]

#: TI_IMAGE_USAGE_STORAGE_BIT | TI_IMAGE_USAGE_SAMPLED_BIT: what a kernel argument image needs.
_USAGE = 1 | 2


def texture_formats(manifest: Manifest) -> dict[str, str]:
    """The image format of every texture arg of the module, by name."""
    out = {}
    for arg in (a for g in manifest.graphs for a in g.args if a.kind in TEXTURE_KINDS):
        sample = manifest.samples.get(arg.name)
        out[arg.name] = texel_format(arg.kind, arg.fmt, sample.fmt if sample else None)
    return out


def check_texels(
    where: str, arg: Arg, fmt: str, value: Any, dims: dict[str, int], owners: dict[str, str]
) -> np.ndarray:
    """A texture's value: a writable float32 numpy array of its dims then its format's channels."""
    channels = TEXEL_CHANNELS[fmt]
    shape = f"({', '.join(['...'] * arg.ndim)}, {channels})"
    fix = f"pass float32 texels of shape {shape} ({arg.ndim} dims, then the {channels} channel(s) of {fmt})"
    if not isinstance(value, np.ndarray) or value.dtype != np.float32 or value.ndim != arg.ndim + 1:
        got = f"a {value.dtype} array of shape {value.shape}" if isinstance(value, np.ndarray) else type(value).__name__
        raise GraphRunError(f"{where}: a {arg.kind} of {fmt}, got {got}; {fix}", arg=arg.name)
    if value.shape[-1] != channels or 0 in value.shape:
        raise GraphRunError(f"{where}: a {arg.kind} of {fmt}, got shape {value.shape}; {fix}", arg=arg.name)
    if not value.flags.writeable:
        raise GraphRunError(f"{where}: the array is read-only, but texels are copied back; pass np.array(value)")
    mismatch = dims_problem(arg, value.shape[: arg.ndim], dims, owners)
    if mismatch is not None:
        raise GraphRunError(f"{where}: {mismatch}", arg=arg.name)
    return value


class Images:
    """The images of one run: allocated for the texels' shapes, filled from and read back into buffers."""

    def __init__(self, api: CApi, runtime: int, module: int, formats: Mapping[str, str]) -> None:
        self.api, self.runtime, self.module, self.formats = api, runtime, module, formats
        self.textures: dict[str, TiTexture] = {}
        self.shapes: dict[str, tuple[int, ...]] = {}

    def allocate(self, arg: Arg, shape: tuple[int, ...]) -> None:
        """An image for ``arg`` with the texels' ``shape`` (its dims then channels)."""
        extent = (*shape[: arg.ndim], 1, 1)[:3]
        texture = TiTexture()
        texture.dimension = arg.ndim - 1  # TI_IMAGE_DIMENSION_1D, _2D, _3D
        texture.extent.width, texture.extent.height, texture.extent.depth = extent
        texture.extent.array_layer_count = 1
        texture.format = TI_FORMAT[self.formats[arg.name]]
        info = TiImageAllocateInfo(texture.dimension, texture.extent, 1, texture.format, 0, _USAGE)
        texture.image = self.api.call("ti_allocate_image", self.runtime, ctypes.byref(info))
        self.textures[arg.name], self.shapes[arg.name] = texture, shape

    def fill(self, named: TiNamedArgument, name: str) -> None:
        """Pass the image of texture arg ``name``."""
        named.name, named.argument.type = name.encode(), ARG_TEXTURE
        named.argument.value.texture = self.textures[name]

    def copy(self, arg: Arg, buffer: Buffer, *, to_image: bool) -> None:
        """Queue the module's copy graph from the arg's buffer into its image, or back."""
        fmt, shape = self.formats[arg.name], self.shapes[arg.name]
        graph_name = upload_graph(fmt, arg.ndim) if to_image else download_graph(fmt, arg.ndim)
        hint = f"; the module lacks its texture copy graph {graph_name!r}: re-export it"
        graph = self.api.call("ti_get_aot_module_compute_graph", self.module, graph_name.encode(), hint=hint)
        args = (TiNamedArgument * 2)()
        args[0].name, args[0].argument.type = (b"src" if to_image else b"dst"), ARG_NDARRAY
        texels = args[0].argument.value.ndarray
        texels.memory, texels.elem_type, texels.shape.dim_count = buffer.memory, TI_DATA_TYPE["f32"], len(shape)
        texels.shape.dims[: len(shape)] = shape
        self.fill(args[1], arg.name)
        args[1].name = b"tex"
        self.api.call("ti_launch_compute_graph", self.runtime, graph, 2, args)

    def free(self) -> None:
        """Free the images (after the run's last wait)."""
        for texture in self.textures.values():
            self.api.call("ti_free_image", self.runtime, texture.image)
        self.textures.clear()
