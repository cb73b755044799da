"""Graphs built with graphlab from Taichi's own example kernels (shared by several test modules)."""

from __future__ import annotations

from types import ModuleType

import taichi as ti

import graphlab as gl
from graphlab.taichi_bridge import new_ndarray


def mpm88_graph(m: ModuleType, substeps: int = 500) -> gl.Graph:
    """Taichi's mpm88 update graph: a 4-kernel sequence repeated ``substeps`` times."""
    g = gl.Graph("update")
    x = g.ndarray("x", ti.math.vec2, ndim=1, shape="n")
    v = g.ndarray("v", ti.math.vec2, ndim=1, shape="n")
    C = g.ndarray("C", ti.math.mat2, ndim=1, shape="n")
    J = g.ndarray("J", ti.f32, ndim=1, shape="n")
    grid_v = g.ndarray("grid_v", ti.math.vec2, ndim=2, shape=("G", "G"))
    grid_m = g.ndarray("grid_m", ti.f32, ndim=2, shape=("G", "G"))
    with g.sequence("substep", repeat=substeps) as s:
        s.dispatch(m.substep_reset_grid, grid_v, grid_m)
        s.dispatch(m.substep_p2g, x, v, C, J, grid_v, grid_m)
        s.dispatch(m.substep_update_grid_v, grid_v=grid_v, grid_m=grid_m)
        s.dispatch(m.substep_g2p, x=x, v=v, C=C, J=J, grid_v=grid_v)
    return g


def mpm88_buffers(m: ModuleType) -> dict[str, object]:
    """Fresh mpm88 buffers with particles initialised by the example's own init kernel."""
    n, grid = m.n_particles, m.n_grid
    buffers = {
        "x": ti.Vector.ndarray(2, ti.f32, shape=n),
        "v": ti.Vector.ndarray(2, ti.f32, shape=n),
        "C": ti.Matrix.ndarray(2, 2, ti.f32, shape=n),
        "J": ti.ndarray(ti.f32, shape=n),
        "grid_v": ti.Vector.ndarray(2, ti.f32, shape=(grid, grid)),
        "grid_m": ti.ndarray(ti.f32, shape=(grid, grid)),
    }
    return buffers


def copy_buffers(source: dict[str, object]) -> dict[str, object]:
    """Device copies of a dict of ndarrays (same content, new memory)."""
    copies = {}
    for name, arr in source.items():
        twin = new_ndarray(str(arr.dtype), tuple(arr.shape), tuple(arr.element_shape))
        twin.copy_from(arr)
        copies[name] = twin
    return copies


def fluid_graphs(m: ModuleType, jacobi_iters: int) -> tuple[gl.Graph, gl.Graph]:
    """Taichi's stable fluid ping-pong pair: g1 advances cur->nxt, g2 nxt->cur."""
    graphs = []
    for name, (a, b) in (("g1", ("cur", "nxt")), ("g2", ("nxt", "cur"))):
        g = gl.Graph(name)
        vel_a = g.ndarray(f"velocities_pair_{a}", ti.math.vec2, ndim=2)
        vel_b = g.ndarray(f"velocities_pair_{b}", ti.math.vec2, ndim=2)
        dye_a = g.ndarray(f"dyes_pair_{a}", ti.math.vec3, ndim=2)
        dye_b = g.ndarray(f"dyes_pair_{b}", ti.math.vec3, ndim=2)
        p_cur = g.ndarray("pressures_pair_cur", ti.f32, ndim=2)
        p_nxt = g.ndarray("pressures_pair_nxt", ti.f32, ndim=2)
        divs = g.ndarray("velocity_divs", ti.f32, ndim=2)
        mouse = g.ndarray("mouse_data", ti.f32, ndim=1)
        g.dispatch(m.advect, vel_a, vel_a, vel_b)  # one Arg passed twice, both only read
        g.dispatch(m.advect, vel_a, dye_a, dye_b)
        g.dispatch(m.apply_impulse, vel_b, dye_b, mouse)
        g.dispatch(m.divergence, vel_b, divs)
        with g.sequence("jacobi", repeat=jacobi_iters) as s:
            s.dispatch(m.pressure_jacobi, p_cur, p_nxt, divs)
            s.dispatch(m.pressure_jacobi, p_nxt, p_cur, divs)
        g.dispatch(m.subtract_gradient, vel_b, p_cur)
        graphs.append(g)
    return graphs[0], graphs[1]
