"""``to_code`` gives plain ti.graph code that runs and computes what graphlab computes."""

import taichi as ti

import graphlab as gl
from graphlab.api.examples import copy_buffers, mpm88_buffers, mpm88_graph


def test_to_code_executes_and_gives_identical_results(mpm88):
    g = mpm88_graph(mpm88, substeps=25)
    code = g.to_code()
    assert "builder_update.append(seq_substep)" in code and "range(25)" in code
    namespace: dict = {}
    exec(compile(code, "<to_code>", "exec"), namespace)
    theirs_graph = namespace["graph_update"]

    ours = mpm88_buffers(mpm88)
    theirs = copy_buffers(ours)
    g.run(ours)
    theirs_graph.run(theirs)
    for name in ours:
        assert ours[name].to_numpy().tobytes() == theirs[name].to_numpy().tobytes(), name


@ti.kernel
def add_one(a: ti.types.ndarray(dtype=ti.i32, ndim=1)):
    for i in a:
        a[i] += 1


def test_nested_sequences_and_scalars_in_code(ti_cpu):
    g = gl.Graph("nested")
    a = g.ndarray("a", ti.i32, ndim=1)
    with g.sequence("outer", repeat=2) as outer:
        outer.dispatch(add_one, a)
        with outer.sequence("inner", repeat=3) as inner:
            inner.dispatch(add_one, a)
    code = g.to_code()
    namespace = {"add_one": add_one}
    exec(code.replace("from test_codegen import add_one", ""), namespace)
    arr = ti.ndarray(ti.i32, shape=2)
    namespace["graph_nested"].run({"a": arr})
    assert arr.to_numpy().tolist() == [8, 8]
