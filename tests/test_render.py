"""Graphviz drawings: clusters with repeat counts, args with specs, read/write edges, diagnostics."""

import itertools
import re

import graphviz
import pytest
import taichi as ti
from test_control_flow import add_one, halve, threshold

import graphlab as gl
from graphlab.examples import mpm88_graph
from graphlab.render import MAX_DRAWN_NODES, to_svg, write


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
    assert f"... {250 - MAX_DRAWN_NODES} more nodes" in source
    assert f'"fill#{MAX_DRAWN_NODES}"' in source and f'"fill#{MAX_DRAWN_NODES + 1}"' not in source


def test_dataflow_edges_are_labelled_per_buffer(ti_cpu):
    f32_1d = ti.types.ndarray(dtype=ti.f32, ndim=1)

    @ti.kernel
    def produce(b: f32_1d, a: f32_1d):
        for i in a:
            a[i] = b[i] + 1.0

    @ti.kernel
    def consume(a: f32_1d, b: f32_1d):
        for i in a:
            b[i] = a[i] * 2.0

    g = gl.Graph("g")
    a, b = g.ndarray("a", ti.f32, ndim=1), g.ndarray("b", ti.f32, ndim=1)
    g.dispatch(produce, b=b, a=a)
    g.dispatch(consume, a=a, b=b)
    source = g.render(view="dataflow", access="ast").source
    assert 'label="a: RAW\nb: WAR"' in source
    assert 'tooltip="a: read after write; b: write after read"' in source


def _drawn_centres(source: str) -> dict[str, tuple[float, float]]:
    """Node name -> centre (x, y) as dot lays it out (``plain`` output: y grows upwards)."""
    plain = graphviz.Source(source).pipe(format="plain").decode()
    centres = {}
    for line in plain.splitlines():
        match = re.match(r'node ("[^"]+"|\S+) (\S+) (\S+)', line)
        if match:
            centres[match.group(1).strip('"')] = (float(match.group(2)), float(match.group(3)))
    return centres


def test_mpm88_dispatches_are_drawn_top_to_bottom_in_program_order_and_numbered(mpm88):
    g = mpm88_graph(mpm88, substeps=50)
    source = g.render().source
    names = ("substep_reset_grid", "substep_p2g", "substep_update_grid_v", "substep_g2p")
    order = [f"substep/{name}" for name in names]
    for number, node_id in enumerate(order, 1):
        assert f'label="{number}. {node_id.split("/")[1]}"' in source
    heights = [_drawn_centres(source)[node_id][1] for node_id in order]
    assert heights == sorted(heights, reverse=True), f"not top to bottom in program order: {heights}"


def test_control_flow_is_drawn_where_it_runs(ti_cpu):
    g = gl.Graph("control")
    x = g.ndarray("x", ti.f32, ndim=1)
    flag = g.ndarray("flag", ti.i32, ndim=1, shape=(1,))
    limit = g.scalar("limit", ti.f32)
    g.dispatch(add_one, x, name="first")
    g.dispatch(threshold, x, limit, flag)
    big, small, body = g.define("big"), g.define("small"), g.define("body")
    big.dispatch(halve, x)
    small.dispatch(add_one, x)
    g.cond(flag, then=big, else_=small, name="decide")
    body.dispatch(add_one, x, name="inc")
    body.dispatch(threshold, x, limit, flag, name="check")
    g.loop(body, while_=flag, max_iter=10, name="again")
    g.dispatch(halve, x, name="last")  # writes x, which the first dispatch reads: a cycle dot must cut
    source = g.render(access="ast").source
    y = {name: centre[1] for name, centre in _drawn_centres(source).items()}
    runs = ["first", "threshold", "decide", "decide/then/halve", "again", "again/inc", "again/check", "last"]
    assert [y[a] > y[b] for a, b in itertools.pairwise(runs)] == [True] * (len(runs) - 1), y
    assert y["decide/else/add_one"] < y["decide"] and y["decide/else/add_one"] > y["again"]
    assert 'label="4. add_one"' in source and 'label="7. last' in source
