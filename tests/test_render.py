"""Graphviz drawings: clusters with repeat counts, args with specs, read/write edges, diagnostics."""

import pytest
import taichi as ti

import graphlab as gl
from graphlab.examples import mpm88_graph
from graphlab.render import to_svg, write


def test_program_view_draws_a_sequence_once_with_its_repeat(mpm88):
    source = mpm88_graph(mpm88, substeps=2500).render().source
    assert "substep ×2,500" in source
    assert source.count("substep_p2g") < 20  # one node and its edges, never 2,500 unrolled nodes
    assert "ndarray vec2 f32, ndim=1 [n]" in source
    assert "RW grid_m" in source and "W C" in source and "R x" in source


def test_diagnostics_colour_nodes_with_tooltips(mpm88):
    g = mpm88_graph(mpm88, substeps=2)
    g.rebind("substep/substep_g2p", "C", None)
    source = g.render().source
    assert "GL001: parameter 'C'" in source and "#d62728" in source


def test_svg_ids_are_node_ids_and_highlight(mpm88):
    svg = to_svg(mpm88_graph(mpm88, substeps=2), highlight="substep/substep_p2g")
    assert 'id="substep/substep_p2g"' in svg and 'id="arg:grid_v"' in svg
    assert "#fff3b0" in svg


def test_dataflow_and_unrolled_views(mpm88):
    g = mpm88_graph(mpm88, substeps=3)
    assert "RAW" in g.render(view="dataflow").source
    unrolled = g.render(view="unrolled").source
    assert "substep[2]/substep_g2p" in unrolled
    with pytest.raises(gl.GraphError, match="12 steps, over max_steps=5"):
        g.render(view="unrolled", max_steps=5)


def test_notebook_display_and_files(mpm88, tmp_path):
    g = mpm88_graph(mpm88, substeps=2)
    bundle = g._repr_mimebundle_()
    assert bundle["image/svg+xml"].lstrip().startswith("<?xml") or "<svg" in bundle["image/svg+xml"]
    for suffix in ("svg", "png", "dot"):
        assert write(g, tmp_path / f"g.{suffix}").stat().st_size > 100
    with pytest.raises(gl.GraphError, match="use a .svg, .png"):
        write(g, tmp_path / "g.jpg")


def test_missing_dot_says_how_to_install(mpm88, monkeypatch):
    monkeypatch.setattr("shutil.which", lambda name: None)
    bundle = mpm88_graph(mpm88, substeps=2)._repr_mimebundle_()
    assert "apt-get install graphviz" in bundle["text/plain"]
    with pytest.raises(gl.ToolMissingError, match="apt-get install graphviz"):
        to_svg(mpm88_graph(mpm88, substeps=2))


def test_render_ignores_a_failing_access_analysis(ti_cpu):
    @ti.kernel
    def fill(a: ti.types.ndarray(dtype=ti.f32, ndim=1)):
        for i in a:
            a[i] = 1

    g = gl.Graph("g")
    g.dispatch(fill, g.ndarray("a", ti.f32, ndim=1))
    assert "W a" in g.render(access="ast").source


def test_long_bodies_fold_past_the_drawing_budget(ti_cpu):
    @ti.kernel
    def fill(a: ti.types.ndarray(dtype=ti.f32, ndim=1)):
        for i in a:
            a[i] = 1

    g = gl.Graph("flat")
    a = g.ndarray("a", ti.f32, ndim=1)
    for _ in range(250):
        g.dispatch(fill, a)
    source = g.render(access="ast").source
    assert "... 50 more nodes" in source
    assert "fill#250" not in source.split("not drawn:")[0].split("... 50 more")[0].split("fill#200")[-1]
