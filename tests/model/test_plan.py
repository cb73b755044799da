"""One plan for a graph with control flow: run(), the debugger, the manifest and the C host all follow it.

The graph below has a while-loop (the Jacobi body) and, after it, a conditional: four segments
(``both_seg0`` the loop body, ``both_seg1`` the static dispatch after it, ``both_seg2``/``both_seg3``
the two branches). Each consumer must name the same segments in the same order.
"""

import json
import re

import numpy as np
import taichi as ti
from test_compiled import add_one, halve, jacobi, residual_flag, threshold

import graphlab as gl
from graphlab.deploy.control import plan_to_json
from graphlab.deploy.exporter import exported_args
from graphlab.deploy.manifest import read_manifest
from graphlab.model import ids
from graphlab.model.plan import Branch, Cursor, Iterate, Repeat, Segment, build_plan

N = 16
ITERATIONS = 4  # tol=0 never clears the flag: max_iter ends the loop


def both_graph() -> gl.Graph:
    g = gl.Graph("both")
    u = g.ndarray("u", ti.f32, ndim=1, shape="n")
    f = g.ndarray("f", ti.f32, ndim=1, shape="n", role="input")
    u_new = g.ndarray("u_new", ti.f32, ndim=1, shape="n", role="temp")
    tol = g.scalar("tol", ti.f32)
    flag = g.ndarray("flag", ti.i32, ndim=1, shape=(1,))
    x = g.ndarray("x", ti.f32, ndim=1)
    limit = g.scalar("limit", ti.f32)
    big = g.ndarray("big", ti.i32, ndim=1, shape=(1,))
    body = g.define("iterate")
    body.dispatch(jacobi, u, f, u_new)
    body.dispatch(residual_flag, u, u_new, tol, flag)
    g.loop(body, while_=flag, max_iter=ITERATIONS, name="solve")
    g.dispatch(threshold, x, limit, big)
    too_big = g.define("too_big")
    too_big.dispatch(halve, x)
    small = g.define("small")
    small.dispatch(add_one, x)
    g.cond(big, then=too_big, else_=small, name="branch")
    return g


def values() -> dict:
    return {
        "u": np.zeros(N, np.float32), "f": np.full(N, 0.01, np.float32), "tol": 0.0,
        "flag": np.ones(1, np.int32), "x": np.array([4.0, 8.0], np.float32), "limit": 5.0,
        "big": np.zeros(1, np.int32),
    }  # fmt: skip


EXPECTED_RUN = ["both_seg0"] * ITERATIONS + ["both_seg1", "both_seg2"]


def test_the_plan_cuts_the_graph_at_its_control_points():
    plan = build_plan(both_graph())
    assert [s.name for s in plan.segments] == ["both_seg0", "both_seg1", "both_seg2", "both_seg3"]
    assert [s.id for s in plan.segments] == [0, 1, 2, 3]
    loop, after, branch = plan.body
    assert isinstance(loop, Iterate) and loop.node_id == "solve" and loop.body == (plan.segments[0],)
    assert isinstance(after, Segment) and [node_id for node_id, _ in after.nodes] == ["threshold"]
    assert isinstance(branch, Branch) and branch.then == (plan.segments[2],) and branch.else_ == (plan.segments[3],)
    assert [node_id for node_id, _ in plan.segments[2].nodes] == ["branch/then/halve"]
    assert plan.segments[0].args == ("u", "f", "u_new", "tol", "flag")


def test_a_graph_without_control_flow_is_one_segment_named_after_it():
    g = gl.Graph("plain")
    x = g.ndarray("x", ti.f32, ndim=1)
    with g.sequence("twice", repeat=2) as s:
        s.dispatch(add_one, x)
    plan = build_plan(g)
    assert not plan.control and [s.name for s in plan.segments] == ["plain"]
    assert plan.body == plan.segments


def test_the_cursor_gives_step_prefixes_and_reads_in_order():
    g = gl.Graph("nested")
    x = g.ndarray("x", ti.f32, ndim=1)
    n = g.scalar("n", ti.i32)
    body = g.define("body")
    body.dispatch(add_one, x)
    outer = g.sequence("outer", repeat=2)
    g.loop(body, count=n, name="again", into=outer)
    cursor = Cursor(build_plan(g))
    prefixes = []
    while (visit := cursor.advance(lambda name: 0, lambda name: 3)) is not None:
        prefixes.append(visit.frame.prefix)
    assert prefixes == [f"outer[{k}]/again/iter[{i}]/" for k in range(2) for i in range(3)]
    assert [(e.node, e.value) for e in cursor.events] == [("outer/again", 3)] * 2
    assert isinstance(cursor.plan.body[0], Repeat)
    assert ids.iteration("outer[1]/again", 2) == "outer[1]/again/iter[2]"


def test_run_debugger_and_manifest_name_the_same_segments_in_order(ti_cpu, tmp_path):
    """The C host runs the manifest's segments through the runtime library, whose control events
    ``tests/deploy/test_runtime_library.py`` holds to ``compiled.last_events``."""
    g = both_graph()
    plan = build_plan(g)
    names = [s.name for s in plan.segments]

    compiled = g.compile()
    assert [s.name for s in compiled.plan.segments] == names
    compiled.run(values())
    assert compiled.last_segments == EXPECTED_RUN

    dbg = g.debug(values())
    segment_of = {node_id: s.name for s in plan.segments for node_id, _ in s.nodes}
    visited: list[str] = []
    while (node := dbg.position.node_id) is not None:
        here = segment_of[node]
        if not visited or visited[-1] != here or node in ("solve/jacobi",):
            visited.append(here)
        dbg.step()
    assert visited == EXPECTED_RUN
    assert [(e.node, e.value) for e in dbg.events] == [(e.node, e.value) for e in compiled.last_events]

    control = plan_to_json(plan, [a.name for a in exported_args(g)])
    manifest_segments = re.findall(r'"graph": "(\w+)"', json.dumps(control))
    assert manifest_segments == names

    args = [{"name": a.name, "kind": a.kind, "dtype": a.dtype, "ndim": a.ndim} for a in exported_args(g)]
    (tmp_path / "manifest.json").write_text(json.dumps({
        "format": "graphlab.module/1", "arch": "x64", "taichi_version": "1.7.4",
        "graphs": [{"name": "both", "args": args, "control": control}],
    }))  # fmt: skip
    manifest = read_manifest(tmp_path)
    assert [s.name for s in manifest.graphs[0].plan.segments] == names
