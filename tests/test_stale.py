"""A compiled graph outliving its Taichi runtime raises instead of crashing the process."""


import pytest
import taichi as ti

import graphlab as gl


@ti.kernel
def ones(a: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in a:
        a[i] = 1.0


@pytest.mark.parametrize("replace", ["reset", "init"])
def test_compiled_graph_after_reset_raises(ti_cpu, replace):
    g = gl.Graph("g")
    g.dispatch(ones, g.ndarray("a", ti.f32, ndim=1))
    compiled = g.compile()
    assert compiled.is_current()
    if replace == "reset":
        ti.reset()
    else:
        ti.init(arch=ti.cpu, log_level=ti.WARN)
    assert not compiled.is_current()
    with pytest.raises(gl.StaleGraphError, match=r"ti.reset\(\)/ti.init\(\).*g.compile\(\)"):
        compiled.run(a=None)
    assert "stale" in repr(compiled)


def test_graph_run_recompiles_for_a_new_runtime(ti_cpu):
    g = gl.Graph("g")
    g.dispatch(ones, g.ndarray("a", ti.f32, ndim=1))
    g.run(a=ti.ndarray(ti.f32, shape=2))
    ti.init(arch=ti.cpu, log_level=ti.WARN)
    a = ti.ndarray(ti.f32, shape=3)
    g.run(a=a)
    assert a.to_numpy().tolist() == [1.0, 1.0, 1.0]
