"""The stable fluid graph pair built with graphlab from Taichi's example kernels (shared by tests)."""

from __future__ import annotations

from types import ModuleType

import taichi as ti

import graphlab as gl


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
