"""Conditionals and loops: a Jacobi solve that loops until its residual flag clears, and branches."""

import numpy as np
import pytest
import taichi as ti

import graphlab as gl

N = 32


@ti.kernel
def jacobi(u: ti.types.ndarray(dtype=ti.f32, ndim=1), f: ti.types.ndarray(dtype=ti.f32, ndim=1),
           u_new: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    n = u.shape[0]
    for i in u:
        if 0 < i < n - 1:
            u_new[i] = 0.5 * (u[i - 1] + u[i + 1] + f[i])
        else:
            u_new[i] = 0.0


@ti.kernel
def residual_flag(u: ti.types.ndarray(dtype=ti.f32, ndim=1), u_new: ti.types.ndarray(dtype=ti.f32, ndim=1),
                  tol: ti.f32, flag: ti.types.ndarray(dtype=ti.i32, ndim=1)):
    flag[0] = 0
    for i in u:
        if ti.abs(u_new[i] - u[i]) > tol:
            flag[0] = 1
        u[i] = u_new[i]


@ti.kernel
def init_flag(flag: ti.types.ndarray(dtype=ti.i32, ndim=1)):
    flag[0] = 1


@ti.kernel
def threshold(x: ti.types.ndarray(dtype=ti.f32, ndim=1), limit: ti.f32, flag: ti.types.ndarray(dtype=ti.i32, ndim=1)):
    flag[0] = 0
    for i in x:
        if x[i] > limit:
            flag[0] = 1


@ti.kernel
def halve(x: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in x:
        x[i] *= 0.5


@ti.kernel
def add_one(x: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in x:
        x[i] += 1.0


def jacobi_graph(max_iter: int = 5000) -> gl.Graph:
    g = gl.Graph("poisson")
    u = g.ndarray("u", ti.f32, ndim=1, shape="n")
    f = g.ndarray("f", ti.f32, ndim=1, shape="n", role="input")
    u_new = g.ndarray("u_new", ti.f32, ndim=1, shape="n", role="temp")
    tol = g.scalar("tol", ti.f32)
    flag = g.ndarray("flag", ti.i32, ndim=1, shape=(1,))
    body = g.define("iterate")
    body.dispatch(jacobi, u, f, u_new)
    body.dispatch(residual_flag, u, u_new, tol, flag)
    g.loop(body, while_=flag, max_iter=max_iter, name="solve")
    return g


def reference_iterations(f: np.ndarray, tol: float, max_iter: int) -> tuple[int, np.ndarray]:
    u = np.zeros_like(f)
    for k in range(1, max_iter + 1):
        new = np.zeros_like(u)
        new[1:-1] = (0.5 * (u[:-2] + u[2:] + f[1:-1])).astype(np.float32)
        changed = np.abs(new - u) > tol
        u = new
        if not changed.any():
            return k, u
    return max_iter, u


@pytest.mark.parametrize("fixture", ["ti_cpu", "ti_vulkan"])
def test_jacobi_loops_until_the_residual_flag_clears(request, fixture):
    request.getfixturevalue(fixture)
    g = jacobi_graph()
    assert [d for d in g.validate(access="ast") if d.code != "GL029"] == []  # GL029: an info
    compiled = g.compile()
    f = np.full(N, 0.01, np.float32)
    u = np.zeros(N, np.float32)
    compiled.run(u=u, f=f, tol=1e-4, flag=np.ones(1, np.int32))
    [event] = compiled.last_events
    expected_iterations, expected_u = reference_iterations(f, 1e-4, 5000)
    assert event.node == "solve" and event.kind == "loop" and not event.limit_reached
    assert abs(event.value - expected_iterations) <= 2  # float rounding may move the stop by an iteration
    assert np.allclose(u, expected_u, rtol=1e-4, atol=1e-6)
    assert len(compiled.plan.segments) == 1  # the body is one compiled ti.graph


def test_max_iter_bounds_a_loop_and_says_so(ti_cpu):
    compiled = jacobi_graph(max_iter=3).compile()
    compiled.run(u=np.zeros(N, np.float32), f=np.full(N, 0.01, np.float32), tol=0.0, flag=np.ones(1, np.int32))
    [event] = compiled.last_events
    assert event.value == 3 and event.limit_reached


def _branch_graph() -> gl.Graph:
    g = gl.Graph("branchy")
    x = g.ndarray("x", ti.f32, ndim=1)
    flag = g.ndarray("flag", ti.i32, ndim=1, shape=(1,))
    limit = g.scalar("limit", ti.f32)
    g.dispatch(threshold, x, limit, flag)
    too_big = g.define("too_big")
    too_big.dispatch(halve, x)
    small = g.define("small")
    small.dispatch(add_one, x)
    g.cond(flag, then=too_big, else_=small, name="branch")
    return g


def test_conditional_takes_each_branch_on_different_inputs(ti_cpu):
    compiled = _branch_graph().compile()
    big = np.array([4.0, 8.0], np.float32)
    compiled.run(x=big, flag=np.zeros(1, np.int32), limit=5.0)
    assert big.tolist() == [2.0, 4.0] and compiled.last_events[0].value == "then"
    small = np.array([1.0, 2.0], np.float32)
    compiled.run(x=small, flag=np.zeros(1, np.int32), limit=5.0)
    assert small.tolist() == [2.0, 3.0] and compiled.last_events[0].value == "else"


def test_both_branches_are_checked_by_the_validator(ti_cpu):
    g = _branch_graph()
    assert [d for d in g.validate(access="ast") if d.code != "GL029"] == []  # GL029: an info
    g.rebind("branch/else/add_one", "x", None)
    g.rebind("branch/then/halve", "x", "flag")  # an i32 flag into an f32 parameter
    found = {(d.code, d.node) for d in g.validate(access="ast")}
    assert ("GL001", "branch/else/add_one") in found and ("GL003", "branch/then/halve") in found


def test_ids_and_nodes_of_control_flow(ti_cpu):
    g = jacobi_graph()
    assert [node_id for node_id, _ in g.nodes()] == ["solve", "solve/jacobi", "solve/residual_flag"]
    assert isinstance(g.node("solve"), gl.Loop)
    assert g.has_control_flow
    with pytest.raises(gl.GraphError, match="depend on flags read at run time"):
        g.steps()
    assert "control flow" in repr(g)
    b = _branch_graph()
    assert [node_id for node_id, _ in b.nodes()][-2:] == ["branch/then/halve", "branch/else/add_one"]
    with pytest.raises(gl.GraphError, match="name a branch"):
        b.node("branch/halve")


CONTROL_MISTAKES = [
    ("flag_dtype", "GL020"),
    ("cond_flag_unwritten", "GL021"),
    ("loop_flag_unwritten", "GL023"),
    ("count_not_int", "GL020"),
]


@pytest.mark.parametrize(("case", "code"), CONTROL_MISTAKES)
def test_control_flow_rules(ti_cpu, case, code):
    g = gl.Graph("g")
    x = g.ndarray("x", ti.f32, ndim=1)
    body = g.define("body")
    body.dispatch(halve, x)
    if case == "flag_dtype":
        g.dispatch(halve, x)
        g.cond(g.ndarray("f32flag", ti.f32, ndim=1), then=body)
    elif case == "cond_flag_unwritten":
        g.cond(g.ndarray("flag", ti.i32, ndim=1), then=body, name="c")
    elif case == "loop_flag_unwritten":
        g.loop(body, while_=g.ndarray("flag", ti.i32, ndim=1), max_iter=10)
    else:
        g.loop(body, count=g.scalar("n", ti.f32))
    assert code in {d.code for d in g.validate(access="ast")}


def test_while_loop_needs_max_iter_and_one_mode(ti_cpu):
    g = gl.Graph("g")
    body = g.define("body")
    flag = g.ndarray("flag", ti.i32, ndim=1)
    with pytest.raises(gl.GraphError, match="GL022"):
        g.loop(body, while_=flag)
    with pytest.raises(gl.GraphError, match="exactly one of"):
        g.loop(body, while_=flag, count="n", max_iter=3)


def test_count_loop_and_nested_control_in_a_sequence(ti_cpu):
    g = gl.Graph("g")
    x = g.ndarray("x", ti.f32, ndim=1)
    n = g.scalar("n", ti.i32)
    body = g.define("inc")
    body.dispatch(add_one, x)
    with g.sequence("outer", repeat=2) as outer:
        g.loop(body, count=n, name="times", into=outer)
    values = np.zeros(3, np.float32)
    g.run(x=values, n=4)
    assert values.tolist() == [8.0, 8.0, 8.0]


def test_control_flow_round_trips_through_the_file(ti_cpu, tmp_path):
    g = _branch_graph()
    j = jacobi_graph()
    for graph in (g, j):
        path = tmp_path / f"{graph.name}.json"
        graph.save(path)
        loaded = gl.load(path, kernels=[threshold, halve, add_one, jacobi, residual_flag])
        assert [i for i, _ in loaded.nodes()] == [i for i, _ in graph.nodes()]
        assert loaded.to_dict() == graph.to_dict()


def test_render_gives_control_nodes_their_own_shapes(ti_cpu):
    source = _branch_graph().render(access="ast").source
    assert "diamond" in source and "then" in source and "else" in source
    loop_source = jacobi_graph().render(access="ast").source
    assert "while flag" in loop_source and "max 5,000" in loop_source


def test_to_code_refuses_control_flow_clearly(ti_cpu):
    with pytest.raises(gl.GraphError, match="plain ti.graph cannot express"):
        jacobi_graph().to_code()


def test_graph_without_control_flow_is_still_one_ti_graph(ti_cpu):
    g = gl.Graph("plain")
    x = g.ndarray("x", ti.f32, ndim=1)
    g.dispatch(add_one, x)
    compiled = g.compile()
    assert len(compiled.plan.segments) == 1 and not compiled.plan.control
    assert compiled.last_events == []
