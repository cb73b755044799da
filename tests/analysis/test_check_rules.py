"""Every validation rule: a graph that triggers it, and a close one that does not."""

import pytest
import taichi as ti

import graphlab as gl
from graphlab.analysis.check.rules_bindings import binding_problem
from graphlab.api.examples import mpm88_graph
from graphlab.core.spec import Arg
from graphlab.model.kernels import Param

pytestmark = pytest.mark.usefixtures("ti_cpu")


@ti.kernel
def write_out(out: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in out:
        out[i] = 1.0


@ti.kernel
def copy(src: ti.types.ndarray(dtype=ti.f32, ndim=1), dst: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in src:
        dst[i] = src[i]


@ti.kernel
def read_two(a: ti.types.ndarray(dtype=ti.f32, ndim=1), b: ti.types.ndarray(dtype=ti.f32, ndim=1)) -> ti.f32:
    return a[0] + b[0]


@ti.kernel
def add_scaled(a: ti.types.ndarray(dtype=ti.f32, ndim=1), k: ti.f32):
    for i in a:
        a[i] += k


def codes(g, **options):
    return sorted({(d.code, d.node, d.arg) for d in g.validate(access="ast", **options)})


def test_clean_graph_has_no_diagnostics():
    g = gl.Graph("g")
    src = g.ndarray("src", ti.f32, ndim=1, role="input")
    tmp = g.ndarray("tmp", ti.f32, ndim=1, role="temp")
    out = g.ndarray("out", ti.f32, ndim=1, role="output")
    g.dispatch(copy, src, tmp)
    g.dispatch(copy, tmp, out)
    assert codes(g) == []
    assert codes(g, target="vulkan") == []


def test_gl001_unbound_parameter():
    g = gl.Graph("g")
    node = g.dispatch(copy, g.ndarray("a", ti.f32, ndim=1))
    assert ("GL001", node, "dst") in codes(g)
    g.rebind(node, "dst", g.ndarray("b", ti.f32, ndim=1))
    assert codes(g) == []


def test_gl002_kind_and_gl003_spec_mismatch_name_both_sides():
    g = gl.Graph("g")
    g.dispatch(add_scaled, g.ndarray("a", ti.f32, ndim=1), g.ndarray("k", ti.f32, ndim=1))
    [diag] = [d for d in g.validate(access="ast") if d.code == "GL002"]
    assert "expects scalar f32" in diag.message and "'k' is ndarray f32, ndim=1" in diag.message
    g2 = gl.Graph("g2")
    g2.dispatch(add_scaled, g2.ndarray("a", ti.math.vec2, ndim=1), g2.scalar("k", ti.f32))
    [diag] = [d for d in g2.validate(access="ast") if d.code == "GL003"]
    assert "element shape [2] does not fit element shape []" in diag.message


def test_gl005_template_kernel_from_a_state_and_gl006_return():
    g = gl.Graph("g")
    node = g.dispatch(read_two, g.ndarray("a", ti.f32, ndim=1), g.ndarray("b", ti.f32, ndim=1))
    assert ("GL006", node, None) in codes(g)
    g2 = gl.Graph("g2")
    g2.dispatch(copy, g2.ndarray("a", ti.f32, ndim=1), g2.ndarray("b", ti.f32, ndim=1))
    assert all(code != "GL006" for code, _, _ in codes(g2))


def test_gl007_unused_arg():
    g = gl.Graph("g")
    g.dispatch(write_out, g.ndarray("a", ti.f32, ndim=1))
    g.ndarray("spare", ti.f32, ndim=1)
    assert ("GL007", None, "spare") in codes(g)
    g.remove_arg("spare")
    assert codes(g) == []


def test_gl008_input_written():
    g = gl.Graph("g")
    node = g.dispatch(write_out, g.ndarray("a", ti.f32, ndim=1, role="input"))
    assert ("GL008", node, "a") in codes(g)
    g.set_role("a", "output")
    assert codes(g) == []


def test_gl009_temp_read_before_write():
    g = gl.Graph("g")
    tmp = g.ndarray("tmp", ti.f32, ndim=1, role="temp")
    out = g.ndarray("out", ti.f32, ndim=1, role="output")
    node = g.dispatch(copy, tmp, out)
    assert ("GL009", node, "tmp") in codes(g)
    g.insert(write_out, index=0, bindings={"out": "tmp"})
    assert codes(g) == []


def test_gl010_temp_dead_write_and_carried_reads_count():
    g = gl.Graph("g")
    tmp = g.ndarray("tmp", ti.f32, ndim=1, role="temp")
    node = g.dispatch(write_out, tmp)
    assert ("GL010", node, "tmp") in codes(g)
    # in a repeated sequence, a read at the top of the body sees the write at the bottom
    g2 = gl.Graph("g2")
    tmp = g2.ndarray("tmp", ti.f32, ndim=1, role="temp")
    out = g2.ndarray("out", ti.f32, ndim=1, role="output")
    g2.dispatch(write_out, tmp)
    with g2.sequence("loop", repeat=3) as s:
        s.dispatch(copy, tmp, out)
        s.dispatch(copy, out, tmp)
    assert all(code != "GL010" for code, _, _ in codes(g2))


def test_gl011_output_never_written():
    g = gl.Graph("g")
    src = g.ndarray("src", ti.f32, ndim=1, role="output")
    g.dispatch(copy, src, g.ndarray("dst", ti.f32, ndim=1))
    assert ("GL011", None, "src") in codes(g)


def test_gl012_aliasing_only_when_one_side_is_written():
    g = gl.Graph("g")
    a = g.ndarray("a", ti.f32, ndim=1)
    node = g.dispatch(copy, a, a)
    assert ("GL012", node, "a") in codes(g)
    g2 = gl.Graph("g2")
    a = g2.ndarray("a", ti.f32, ndim=1)
    g2.dispatch(read_two, a, a)  # both read: fine (stable fluid's advect does this)
    assert all(code != "GL012" for code, _, _ in codes(g2))


def test_gl013_empty_graph_and_sequence():
    g = gl.Graph("g")
    assert ("GL013", None, None) in codes(g)
    g.dispatch(write_out, g.ndarray("a", ti.f32, ndim=1))
    g.sequence("empty")
    assert ("GL013", "empty", None) in codes(g)


def test_gl014_and_gl015_are_refused_by_the_model():
    g = gl.Graph("g")
    with pytest.raises(gl.GraphError, match="GL014"):
        g.sequence("s", repeat=0)
    s = g.sequence("s", repeat=2)
    with pytest.raises(gl.GraphError, match="GL015"):
        s.append("s")


def test_gl016_names_that_cannot_survive_export():
    g = gl.Graph("g")
    g.dispatch(write_out, g.ndarray("int", ti.f32, ndim=1))
    assert ("GL016", None, "int") in codes(g)
    [diag] = [d for d in g.validate(access="ast") if d.code == "GL016"]
    assert diag.severity == "warning"  # it runs in Python; only export breaks
    [diag] = [d for d in g.validate(access="ast", target="x64") if d.code == "GL016"]
    assert diag.severity == "error"
    g.rename_arg("int", "counts")
    assert codes(g) == []
    assert "gl.Graph('static_')" in str(gl.Graph("static").validate(access="ast")[0]) or any(
        "gl.Graph('static_')" in (d.hint or "") for d in gl.Graph("static").validate(access="ast")
    )


def test_gl017_names_that_clash_after_mangling():
    g = gl.Graph("g")
    g.dispatch(copy, g.ndarray("X", ti.f32, ndim=1), g.ndarray("x", ti.f32, ndim=1))
    assert ("GL017", None, "x") in codes(g)


def test_gl018_target_limits_only_when_a_target_is_given():
    g = gl.Graph("g")
    g.dispatch(add_scaled, g.ndarray("a", ti.f32, ndim=1), g.scalar("k", ti.f32))
    g.redeclare(gl.Arg("a", "ndarray", "f64", 1))
    assert all(code != "GL018" for code, _, _ in codes(g))
    assert ("GL018", None, "a") in codes(g, target="vulkan")
    with pytest.raises(gl.GraphError, match="unknown target 'webgpu'"):
        g.validate(target="webgpu")


def test_check_raises_listing_errors_and_compile_refuses():
    g = gl.Graph("g")
    g.dispatch(copy, g.ndarray("a", ti.f32, ndim=1))
    with pytest.raises(gl.GraphError, match="1 error") as info:
        g.check()
    assert info.value.diagnostics[0].code == "GL001"
    with pytest.raises(gl.GraphError, match="GL001"):
        g.compile()


def test_mpm88_validates_clean_and_planted_mistakes_are_located(mpm88):
    g = mpm88_graph(mpm88, substeps=4)
    assert [d for d in g.validate() if d.code != "GL029"] == []  # GL029: grid[base + offset] is an info
    g.rebind("substep/substep_p2g", "grid_m", "grid_v")  # a vec2 grid where the mass grid goes
    found = codes(g)
    assert ("GL012", "substep/substep_p2g", "grid_v") in found
    g = mpm88_graph(mpm88, substeps=4)
    g.set_role("x", "input")  # g2p moves the particles
    assert ("GL008", "substep/substep_g2p", "x") in codes(g)
    g = mpm88_graph(mpm88, substeps=4)
    g.rebind("substep/substep_g2p", "C", None)
    assert ("GL001", "substep/substep_g2p", "C") in codes(g)


def test_stable_fluid_graphs_validate_clean(stable_fluid):
    from graphs import fluid_graphs

    g1, g2 = fluid_graphs(stable_fluid, jacobi_iters=3)
    assert [d for g in (g1, g2) for d in g.validate() if d.code != "GL029"] == []  # GL029: an info


def test_every_listed_code_is_reported_by_some_rule_or_refusal():
    from pathlib import Path

    from graphlab.analysis.check import RULES

    package = Path(gl.__file__).parent
    sources = "".join(p.read_text() for p in package.rglob("*.py") if p.name != "registry.py")
    missing = [code for code in RULES if f'"{code}' not in sources and f"'{code}" not in sources]
    assert missing == []


def test_a_kind_mismatch_says_an_ndarray_with_its_article():
    ndarray_param = Param("x", "ndarray", None, 1, None)
    assert binding_problem(ndarray_param, Arg("k", "scalar", "f32", 0)) == (
        "GL002",
        "a scalar arg cannot be passed to an ndarray parameter",
    )
