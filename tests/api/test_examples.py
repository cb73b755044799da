"""Taichi's own graph examples rebuilt with graphlab give the hand-built ti.graph's bits."""

from __future__ import annotations

import numpy as np
import taichi as ti
from graphs import fluid_graphs

from graphlab.api.examples import copy_buffers, hand_built_mpm88, mpm88_buffers, mpm88_graph


def test_mpm88_500_substeps_bit_identical_to_hand_built_graph(mpm88):
    ours = mpm88_buffers(mpm88)
    theirs = copy_buffers(ours)
    x0 = ours["x"].to_numpy()

    gl_graph = mpm88_graph(mpm88, substeps=500).compile()
    gl_graph.run(ours)
    hand_built_mpm88(mpm88, 500).run(theirs)

    for name in ("x", "v", "C", "J", "grid_v", "grid_m"):
        a, b = ours[name].to_numpy(), theirs[name].to_numpy()
        assert a.tobytes() == b.tobytes(), name
    moved = np.abs(ours["x"].to_numpy() - x0).max()
    assert moved > 1e-3, "the particles should have moved in 500 substeps"
    assert np.isfinite(ours["x"].to_numpy()).all()


def _hand_built_fluid(m, jacobi: int):
    A = ti.graph.ArgKind.NDARRAY
    s = {
        "velocities_pair_cur": ti.graph.Arg(A, "velocities_pair_cur", dtype=ti.math.vec2, ndim=2),
        "velocities_pair_nxt": ti.graph.Arg(A, "velocities_pair_nxt", dtype=ti.math.vec2, ndim=2),
        "dyes_pair_cur": ti.graph.Arg(A, "dyes_pair_cur", dtype=ti.math.vec3, ndim=2),
        "dyes_pair_nxt": ti.graph.Arg(A, "dyes_pair_nxt", dtype=ti.math.vec3, ndim=2),
        "pressures_pair_cur": ti.graph.Arg(A, "pressures_pair_cur", dtype=ti.f32, ndim=2),
        "pressures_pair_nxt": ti.graph.Arg(A, "pressures_pair_nxt", dtype=ti.f32, ndim=2),
        "velocity_divs": ti.graph.Arg(A, "velocity_divs", dtype=ti.f32, ndim=2),
        "mouse_data": ti.graph.Arg(A, "mouse_data", dtype=ti.f32, ndim=1),
    }
    built = []
    for a, b in (("cur", "nxt"), ("nxt", "cur")):
        gb = ti.graph.GraphBuilder()
        va, vb = s[f"velocities_pair_{a}"], s[f"velocities_pair_{b}"]
        gb.dispatch(m.advect, va, va, vb)
        gb.dispatch(m.advect, va, s[f"dyes_pair_{a}"], s[f"dyes_pair_{b}"])
        gb.dispatch(m.apply_impulse, vb, s[f"dyes_pair_{b}"], s["mouse_data"])
        gb.dispatch(m.divergence, vb, s["velocity_divs"])
        for _ in range(jacobi):
            gb.dispatch(m.pressure_jacobi, s["pressures_pair_cur"], s["pressures_pair_nxt"], s["velocity_divs"])
            gb.dispatch(m.pressure_jacobi, s["pressures_pair_nxt"], s["pressures_pair_cur"], s["velocity_divs"])
        gb.dispatch(m.subtract_gradient, vb, s["pressures_pair_cur"])
        built.append(gb.compile())
    return built


def _fluid_buffers(m):
    res = m.res
    rng = np.random.default_rng(3)
    buffers = {
        "velocities_pair_cur": ti.Vector.ndarray(2, ti.f32, shape=(res, res)),
        "velocities_pair_nxt": ti.Vector.ndarray(2, ti.f32, shape=(res, res)),
        "dyes_pair_cur": ti.Vector.ndarray(3, ti.f32, shape=(res, res)),
        "dyes_pair_nxt": ti.Vector.ndarray(3, ti.f32, shape=(res, res)),
        "pressures_pair_cur": ti.ndarray(ti.f32, shape=(res, res)),
        "pressures_pair_nxt": ti.ndarray(ti.f32, shape=(res, res)),
        "velocity_divs": ti.ndarray(ti.f32, shape=(res, res)),
        "mouse_data": ti.ndarray(ti.f32, shape=8),
    }
    for arr in buffers.values():
        arr.from_numpy(rng.standard_normal(tuple(arr.shape) + tuple(arr.element_shape)).astype(np.float32))
    mouse = np.array([1.0, 0.5, 200.0, 256.0, 1.0, 0.2, 0.3, 0.0], np.float32)  # dir, pos, colour
    buffers["mouse_data"].from_numpy(mouse)
    return buffers


def test_stable_fluid_two_graphs_bit_identical_to_hand_built(stable_fluid):
    ours = _fluid_buffers(stable_fluid)
    theirs = copy_buffers(ours)
    g1, g2 = fluid_graphs(stable_fluid, jacobi_iters=10)
    assert [d for g in (g1, g2) for d in g.validate() if d.code != "GL029"] == []  # GL029: an info
    c1, c2 = g1.compile(), g2.compile()
    h1, h2 = _hand_built_fluid(stable_fluid, 10)
    for ours_graph, their_graph in ((c1, h1), (c2, h2), (c1, h1)):
        ours_graph.run(ours)
        their_graph.run(theirs)
    for name in ours:
        assert ours[name].to_numpy().tobytes() == theirs[name].to_numpy().tobytes(), name
