"""Graphviz drawings: clusters with repeat counts, args with specs, read/write edges, diagnostics."""

import itertools
import re

import graphviz
import pytest
import taichi as ti
from test_compiled import add_one, halve, threshold

import graphlab as gl
from graphlab.analysis.render import MAX_DRAWN_NODES, to_svg, write
from graphlab.api.examples import mpm88_graph


def test_program_view_draws_a_sequence_once_with_its_repeat(mpm88):
    source = mpm88_graph(mpm88, substeps=2500).render().source
    assert "substep ×2,500" in source
    assert source.count("substep_p2g") < 20  # one node and its edges, never 2,500 unrolled nodes
    assert "RW grid_m" in source and "W C" in source and "R x" in source


def _attrs(source: str, name: str) -> dict[str, str]:
    """The quoted attributes of one DOT node statement (values unescaped as dot reads them)."""
    statement = re.search(rf'^\s*"{re.escape(name)}" \[((?:[^"\]]|"(?:[^"\\]|\\.)*")*)\]', source, re.M)
    assert statement, f"no node {name!r} in the DOT"
    return {k: v.replace('\\"', '"') for k, v in re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', statement.group(1))}


def test_buffer_labels_are_short_with_the_full_declaration_on_hover(mpm88):
    source = mpm88_graph(mpm88, substeps=8).render().source
    x, grid_v, c = (_attrs(source, f"arg.{name}") for name in ("x", "grid_v", "C"))
    assert (x["label"], grid_v["label"], c["label"]) == ("x  f32[n,2]", "grid_v  f32[G,G,2]", "C  f32[n,2,2]")
    assert x["tooltip"].splitlines() == [
        "x: ndarray vec2 f32, ndim=1", "kind: ndarray", "dtype: f32", "element shape: 2 (each value a vec2)",
        "dims: [n] (declared)", "role: state",
    ]  # fmt: skip
    assert "element shape: 2x2 (each value a mat2x2)" in c["tooltip"]
    assert "inferred: C.shape[0] >= x.shape[0]" in c["tooltip"]


def test_undeclared_and_non_state_args_keep_their_facts_on_hover(ti_cpu):
    @ti.kernel
    def scale(a: ti.types.ndarray(dtype=ti.f32, ndim=2), k: ti.f32):
        for i, j in a:
            a[i, j] *= k

    g = gl.Graph("g")
    g.dispatch(scale, g.ndarray("a", ti.f32, ndim=2, role="output"), g.scalar("k", ti.f32, role="input"))
    source = g.render(access="ast").source
    a, k = _attrs(source, "arg.a"), _attrs(source, "arg.k")
    assert (a["label"], k["label"]) == ("a  f32[?,?]\noutput", "k  f32\ninput")
    assert "dims: not declared (any shape with ndim=2)" in a["tooltip"] and "role: output" in a["tooltip"]
    assert k["tooltip"].splitlines() == ["k: scalar f32", "kind: scalar", "dtype: f32", "role: input"]


def test_dispatch_labels_are_short_with_the_bindings_on_hover(mpm88):
    source = mpm88_graph(mpm88, substeps=8).render().source
    g2p = _attrs(source, "substep/substep_g2p")
    assert g2p["label"] == "4. substep_g2p"
    assert g2p["tooltip"].splitlines() == [
        "4. substep/substep_g2p: kernel substep_g2p", "in substep ×8",
        "  x = x (reads and writes)", "  v = v (writes)", "  C = C (writes)", "  J = J (reads and writes)",
        "  grid_v = grid_v (reads)",
    ]  # fmt: skip


def test_diagnostics_colour_nodes_with_tooltips(mpm88):
    g = mpm88_graph(mpm88, substeps=2)
    g.rebind("substep/substep_g2p", "C", None)
    source = g.render().source
    assert "GL001: parameter 'C'" in source and "#d62728" in source
    hover = _attrs(source, "substep/substep_g2p")["tooltip"]  # the problem first, then what it is about
    assert hover.startswith("GL001: parameter 'C'")
    assert hover.endswith("  C: unbound\n  J = J (reads and writes)\n  grid_v = grid_v (reads)")


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


def test_a_top_level_run_of_dispatches_is_drawn_as_one_column(ti_cpu):
    """Dispatches of one body share a Graphviz group, so a run of them on one buffer stays a straight
    column instead of the diagonal dot draws when every node has an edge to the same buffer."""
    g = gl.Graph("tall")
    x = g.ndarray("x", ti.f32, ndim=1)
    for i in range(12):
        g.dispatch(add_one, x, name=f"s{i}")
    centres = _drawn_centres(g.render(access="ast").source)
    xs = {round(centres[f"s{i}"][0], 2) for i in range(12)}
    assert len(xs) == 1, f"dispatches drawn at {len(xs)} different x positions: {sorted(xs)}"


def test_a_loop_that_reads_its_flag_every_k_iterations_says_so(ti_cpu):
    g = gl.Graph("every")
    x = g.ndarray("x", ti.f32, ndim=1)
    flag = g.ndarray("flag", ti.i32, ndim=1, shape=(1,))
    limit = g.scalar("limit", ti.f32)
    body = g.define("body")
    body.dispatch(add_one, x)
    body.dispatch(threshold, x, limit, flag)
    g.loop(body, while_=flag, max_iter=64, check_every=8, name="solve")
    assert "solve: while flag ≠ 0 (max 64, flag read every 8)" in g.render(access="ast").source
    g.loop(body, while_=flag, max_iter=64, name="plain")
    assert "plain: while flag ≠ 0 (max 64)" in g.render(access="ast").source
    g.loop(body, while_=flag, max_iter=64, check_every=4, guarded=True, name="exact")
    assert "exact: while flag ≠ 0 (max 64, flag read every 4, guarded)" in g.render(access="ast").source
