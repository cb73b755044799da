"""Taichi's ``examples/graph/texture_graph.py``, loaded from the installed wheel and built with graphlab.

Not a port: the kernels are the example's own (``graphlab.api.examples.load_taichi_example``), so this
file only builds its two graphs as the example's ``main`` does with ``ti.graph``: ``g_init`` writes a
128x128 r32f texture through a ``rw_texture`` parameter, ``g`` samples and fetches it into an image.
What it exercises: rw_texture and texture args bound to one texture, an f32 scalar, and two graphs
in one module. Textures need Vulkan (x64 AOT modules cannot take them), so it runs on ``ti.vulkan``.

What differs from the example's ``main``: the image is 384x32 instead of 512x512 (the kernel divides
by the example's ``res``, so rows past 256 still take the ``sample_lod`` branch and the others the
``fetch`` branch); the window and the ``copy_to_field`` display kernel are left out.
"""

from types import ModuleType
from typing import Any

import numpy as np
import taichi as ti

import graphlab as gl
from graphlab.api.examples import load_taichi_example

ARCH = "vulkan"
EXPORT_ARCHS = ("vulkan",)
FRAMES = 2
IMAGE = (384, 32)


def kernels() -> ModuleType:
    return load_taichi_example("texture_graph")


def graphs(m: ModuleType) -> list[gl.Graph]:
    init = gl.Graph("g_init")
    init.dispatch(m.make_texture, init.rw_texture("rw_tex", 2, ti.Format.r32f, role="output"))
    g = gl.Graph("g")
    g.dispatch(
        m.paint,
        g.scalar("t", ti.f32),
        g.ndarray("pixels_arr", ti.math.vec4, ndim=2, role="output"),
        g.texture("tex", 2, role="input"),
    )
    return [init, g]


def by_hand(m: ModuleType, v: dict[str, Any]) -> None:
    m.make_texture(v["rw_tex"])
    m.paint(v["t"], v["pixels_arr"], v["tex"])


def values(m: ModuleType) -> dict[str, Any]:
    """One texture behind both texture args, as in the example."""
    texture = ti.Texture(ti.Format.r32f, (128, 128))
    return {"rw_tex": texture, "tex": texture, "t": 0.3, "pixels_arr": np.zeros((*IMAGE, 4), np.float32)}
