"""A compiled graph outliving its Taichi runtime raises instead of crashing the process."""

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
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


NO_INIT = """
import numpy as np, taichi as ti, graphlab as gl
from graphlab.api import doc_kernels
try:
    doc_kernels.demo_graph().run(x=np.zeros(4, np.float32), y=np.zeros(4, np.float32), value=1.0, a=2.0)
except gl.GraphRunError as exc:
    print("refused:", exc)
"""


@pytest.mark.parametrize("how", ["reset", "never"])
def test_compiling_with_no_runtime_names_ti_init(ti_cpu, how):
    """With no ti.init (or after ti.reset) compile, run and debug raised AttributeError from Taichi's config."""
    fix = "Taichi has no runtime (no ti.init yet, or ti.reset since); call ti.init(arch=...) first"
    if how == "never":
        root = str(Path(__file__).resolve().parent.parent.parent)
        env = {**os.environ, "PYTHONPATH": root}
        done = subprocess.run([sys.executable, "-c", NO_INIT], capture_output=True, text=True, timeout=120, env=env)
        assert f"refused: graph 'demo' cannot compile: {fix}" in done.stdout, done.stderr[-2000:]
        return
    g = gl.Graph("g")
    g.dispatch(ones, g.ndarray("a", ti.f32, ndim=1))
    ti.reset()
    for attempt in (g.compile, lambda: g.run(a=np.zeros(2, np.float32)), lambda: g.debug(a=np.zeros(2, np.float32))):
        with pytest.raises(gl.GraphRunError, match=re.escape(fix)):
            attempt()
