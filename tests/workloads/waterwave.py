"""Shallow-water ripples: an ndarray port of Taichi's ``examples/simulation/waterwave.py``.

What it exercises: ``ti.ndrange`` with offset ranges over the interior, f32 scalar args, a kernel of
two loops (velocity, then height), stencil reads through ``ti.func`` helpers, and an image kernel
whose output is fully written from state and a read-only background.

Where it differs from the example:
- the fields ``height``, ``velocity``, ``background`` and ``pixels`` are 2-D f32 ndarray parameters;
  the grid size comes from their shape (64x64 instead of 512x512);
- ``reset`` runs once from Python to make the initial state; a frame is ``create_wave`` (its
  amplitude and centre are scalar args, where the example takes them from a mouse click), then
  ``update`` and ``visualize_wave``;
- ``gradient`` tests the borders with ``if`` statements: the example's conditional expressions
  evaluate both sides, which would read an ndarray out of range at the border;
- the GUI is removed.
"""

import sys
from types import ModuleType
from typing import Any

import taichi as ti

import graphlab as gl

LIGHT_COLOR = 1.0
GRAVITY = 2.0
DAMPING = 0.2
DX = 0.02
DT = 0.01
SHAPE = (64, 64)
FRAMES = 3

Image = ti.types.ndarray(dtype=ti.f32, ndim=2)


@ti.kernel
def reset(height: Image, velocity: Image, background: Image):
    for i, j in height:
        t = i // 16 + j // 16
        if t % 2 == 0:
            background[i, j] = 0.0
        else:
            background[i, j] = 0.25
        height[i, j] = 0
        velocity[i, j] = 0


@ti.func
def laplacian(height: ti.template(), i, j):
    return (-4 * height[i, j] + height[i, j - 1] + height[i, j + 1] + height[i + 1, j] + height[i - 1, j]) / (4 * DX**2)


@ti.func
def gradient(height: ti.template(), i, j):
    nx, ny = height.shape[0], height.shape[1]
    right, left, up, down = 0.0, 0.0, 0.0, 0.0
    if i < nx - 1:
        right = height[i + 1, j]
    if i > 1:
        left = height[i - 1, j]
    if j < ny - 1:
        up = height[i, j + 1]
    if j > 1:
        down = height[i, j - 1]
    return ti.Vector([right - left, up - down]) * (0.5 / DX)


@ti.kernel
def create_wave(height: Image, amplitude: ti.f32, x: ti.f32, y: ti.f32):
    for i, j in ti.ndrange((1, height.shape[0] - 1), (1, height.shape[1] - 1)):
        r2 = (i - x) ** 2 + (j - y) ** 2
        height[i, j] = height[i, j] + amplitude * ti.exp(-0.02 * r2)


@ti.kernel
def update(height: Image, velocity: Image):
    for i, j in ti.ndrange((1, height.shape[0] - 1), (1, height.shape[1] - 1)):
        acceleration = GRAVITY * laplacian(height, i, j) - DAMPING * velocity[i, j]
        velocity[i, j] = velocity[i, j] + acceleration * DT
    for i, j in ti.ndrange((1, height.shape[0] - 1), (1, height.shape[1] - 1)):
        height[i, j] = height[i, j] + velocity[i, j] * DT


@ti.kernel
def visualize_wave(height: Image, background: Image, pixels: Image):
    for i, j in pixels:
        g = gradient(height, i, j)
        cos_i = 1 / ti.sqrt(1 + g.norm_sqr())
        brightness = pow(1 - cos_i, 2)
        color = background[i, j]
        pixels[i, j] = (1 - brightness) * color + brightness * LIGHT_COLOR


def kernels() -> ModuleType:
    return sys.modules[__name__]


def graphs(m: ModuleType) -> list[gl.Graph]:
    g = gl.Graph("waterwave")
    grid = ("w", "h")
    height = g.ndarray("height", ti.f32, ndim=2, shape=grid)
    velocity = g.ndarray("velocity", ti.f32, ndim=2, shape=grid)
    background = g.ndarray("background", ti.f32, ndim=2, shape=grid, role="input")
    pixels = g.ndarray("pixels", ti.f32, ndim=2, shape=grid, role="output")
    g.dispatch(
        m.create_wave, height, g.scalar("amplitude", ti.f32), g.scalar("wave_x", ti.f32), g.scalar("wave_y", ti.f32)
    )
    g.dispatch(m.update, height, velocity)
    g.dispatch(m.visualize_wave, height, background, pixels)
    return [g]


def by_hand(m: ModuleType, v: dict[str, Any]) -> None:
    m.create_wave(v["height"], v["amplitude"], v["wave_x"], v["wave_y"])
    m.update(v["height"], v["velocity"])
    m.visualize_wave(v["height"], v["background"], v["pixels"])


def values(m: ModuleType) -> dict[str, Any]:
    """The example's ``reset`` state, then a wave of amplitude 3 left of the centre each frame."""
    height, velocity, background, pixels = (ti.ndarray(ti.f32, shape=SHAPE) for _ in range(4))
    m.reset(height, velocity, background)
    state = {"height": height, "velocity": velocity, "background": background, "pixels": pixels}
    out: dict[str, Any] = {name: arr.to_numpy() for name, arr in state.items()}
    out.update(amplitude=3.0, wave_x=20.0, wave_y=36.0)
    return out
