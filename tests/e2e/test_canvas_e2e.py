"""The graph canvas on a real graph (Taichi's mpm88: 4 kernels in one sequence, 6 buffers) in a real
JupyterLab and Chromium, at the window sizes of the issue: every label readable and inside its shape,
dispatches drawn in program order, and the drawing following the window's size with no click.
Screenshots go to test-artifacts/e2e/.
"""

from __future__ import annotations

import re

import pytest
from nbpage import Notebook
from playwright.sync_api import Locator, expect
from test_widget_e2e import python_value

pytestmark = pytest.mark.e2e

MPM88_EDITOR = """\
import taichi as ti
import graphlab as gl
from graphlab.api.examples import load_taichi_example, mpm88_graph
ti.init(arch=ti.cpu, log_level=ti.WARN)
m = load_taichi_example("mpm88_graph")
ed = gl.editor(mpm88_graph(m, substeps=8))
ed
"""

#: Per node of the drawing: its id, its box on screen, and each text's box on screen, its size in px on
#: screen, and whether it had to be cut (its text wider than its box: the node was sized without
#: measuring the label in the browser's font).
_NODES = """(w) => [...w.querySelectorAll('.gl-fnode[data-node-id]')].map(el => {
  const box = (r) => [r.left, r.top, r.right, r.bottom];
  const scale = el.getBoundingClientRect().width / el.offsetWidth;
  return {id: el.dataset.nodeId, shape: box(el.getBoundingClientRect()),
          texts: [...el.querySelectorAll('.gl-ftitle, .gl-ftype')].map(t => {
            const range = document.createRange(); range.selectNodeContents(t);
            return {text: t.textContent, box: box(range.getBoundingClientRect()),
                    px: parseFloat(getComputedStyle(t).fontSize) * scale, squeezed: t.scrollWidth > t.clientWidth};
          })};
})"""

#: The box on screen of everything drawn (the union of the nodes' boxes).
_DRAWING = """(w) => { const rs = [...w.querySelectorAll('.react-flow__node')].map(n => n.getBoundingClientRect());
  const x0 = Math.min(...rs.map(r => r.left)), y0 = Math.min(...rs.map(r => r.top));
  const x1 = Math.max(...rs.map(r => r.right)), y1 = Math.max(...rs.map(r => r.bottom));
  return {x: x0, y: y0, width: x1 - x0, height: y1 - y0}; }"""


def drawing_box(w: Locator) -> dict[str, float]:
    return w.evaluate(_DRAWING)


def wait_width(w: Locator, compare: str, width: float) -> None:
    """Wait until the drawing's on-screen width compares (``>`` or ``<``) with ``width``: no fixed sleeps."""
    w.page.wait_for_function(f"([w, width]) => ({_DRAWING})(w).width {compare} width",
                             arg=[w.element_handle(), width], timeout=10_000)  # fmt: skip


def check_readable_and_in_order(w: Locator) -> list[dict]:
    nodes = w.evaluate(_NODES)
    assert {n["id"] for n in nodes} >= {"arg:x", "arg:grid_v", "substep/substep_p2g"}
    for node in nodes:
        x0, y0, x1, y1 = node["shape"]
        for text in node["texts"]:
            tx0, ty0, tx1, ty1 = text["box"]
            assert text["px"] >= 9, f"{node['id']}: label {text['text']!r} is {text['px']:.1f} px"
            assert x0 <= tx0 and tx1 <= x1 and y0 <= ty0 and ty1 <= y1, (
                f"{node['id']}: label {text['text']!r} {text['box']} spills out of its shape {node['shape']}"
            )
            # the node was sized from the label measured in the font the browser draws: nothing is cut
            assert not text["squeezed"], f"{node['id']}: label {text['text']!r} had to be cut to fit"
            assert tx0 - x0 >= 3 and x1 - tx1 >= 3, f"{node['id']}: {text['text']!r} leaves no margin in its shape"
    numbered = {}
    for node in nodes:
        match = re.match(r"(\d+)\. ", node["texts"][0]["text"]) if node["texts"] else None
        if match:
            numbered[int(match.group(1))] = node
    assert [numbered[k]["id"] for k in sorted(numbered)] == [
        "substep/substep_reset_grid", "substep/substep_p2g", "substep/substep_update_grid_v", "substep/substep_g2p"
    ]  # fmt: skip
    centres = [(numbered[k]["shape"][1] + numbered[k]["shape"][3]) / 2 for k in sorted(numbered)]
    assert centres == sorted(centres), f"dispatch centres are not top to bottom in program order: {centres}"
    return nodes


def test_mpm88_is_readable_in_program_order_and_follows_the_window(lab, page, artifacts):
    page.set_viewport_size({"width": 1280, "height": 800})
    nb = Notebook(page, artifacts)
    nb.open(lab.notebook_url("quickstart.ipynb"))
    nb.run_code(MPM88_EDITOR)
    w = nb.widget()
    expect(w.locator("[data-node-id='substep/substep_g2p']")).to_have_count(1)
    w.scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    check_readable_and_in_order(w)
    small = drawing_box(w)
    nb.shot("canvas-01-mpm88-1280x800", w)

    page.set_viewport_size({"width": 1920, "height": 1080})
    w.scroll_into_view_if_needed()
    wait_width(w, ">", small["width"] + 1)  # the canvas's ResizeObserver fits it again: no click
    check_readable_and_in_order(w)
    big = drawing_box(w)
    nb.shot("canvas-02-mpm88-1920x1080", w)
    assert big["width"] > small["width"] and big["height"] > small["height"], (small, big)

    # the widget was narrow at 1280 px, so the palette started hidden; hiding the side panel gives
    # the canvas its room too, and the drawing grows again
    expect(w.locator("[data-layout=palette]")).to_have_attribute("aria-pressed", "true")
    expect(w.locator(".gl-palette")).to_be_hidden()
    page.set_viewport_size({"width": 1280, "height": 800})
    w.scroll_into_view_if_needed()
    wait_width(w, "<", big["width"] - 1)
    before = drawing_box(w)
    w.locator("[data-layout=side]").click()
    expect(w.locator(".gl-side")).to_be_hidden()
    wait_width(w, ">", before["width"] + 1)
    after = drawing_box(w)
    nb.shot("canvas-03-mpm88-1280x800-panels-hidden", w)
    assert after["width"] > before["width"], (before, after)
    check_readable_and_in_order(w)

    # adding a kernel from the palette: until the reply comes, the selected node's editor is inert
    # (a binding chosen meanwhile cannot land on it) and the canvas says what is pending; then the
    # new node is selected
    w.locator("[data-layout=palette]").click()
    w.locator("[data-layout=side]").click()
    w.locator("[data-node-id='substep/substep_p2g']").click()
    expect(w.locator(".gl-node-editor [data-node='substep/substep_p2g']")).to_be_visible()
    during = w.evaluate("""w => {
      w.querySelector('.gl-kernel-item').click();  // same task: the reply cannot have come yet
      return {inert: w.querySelector('.gl-node-editor').inert, pending: w.querySelector('.gl-pending').textContent};
    }""")  # fmt: skip
    assert during == {"inert": True, "pending": "Adding substep_g2p\u2026"}
    expect(w.locator(".gl-pending")).to_be_hidden()
    expect(w.locator(".gl-node-editor")).not_to_have_attribute("inert", "")
    new = python_value(nb, "ed.selected")
    assert new.startswith("substep/substep_g2p") and new != "substep/substep_g2p", new
    nb.shot("canvas-04-mpm88-kernel-added", w)


SQUARES_EDITOR = """\
import numpy as np
import taichi as ti
import graphlab as gl
ti.init(arch=ti.cpu, cpu_max_num_threads=1, log_level=ti.WARN)

@ti.kernel
def ramp(x: ti.types.ndarray(dtype=ti.f32, ndim=1), scale: ti.f32):
    for i in x:
        x[i] = scale * i

@ti.kernel
def square(x: ti.types.ndarray(dtype=ti.f32, ndim=1), y: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in x:
        y[i] = x[i] * x[i]

sq = gl.Graph("squares")
x = sq.ndarray("x", ti.f32, ndim=1, shape="n", role="state")
sq.dispatch(ramp, x, sq.scalar("scale", ti.f32, role="input"))
sq.dispatch(square, x, sq.ndarray("y", ti.f32, ndim=1, shape="n", role="output"))
ed2 = gl.editor(sq)  # no values=
ed2
"""


def test_export_from_an_editor_without_values_uses_the_debug_sessions_values(lab, page, artifacts):
    page.set_viewport_size({"width": 1920, "height": 1080})
    nb = Notebook(page, artifacts)
    nb.open(lab.notebook_url("quickstart.ipynb"))
    nb.run_code(SQUARES_EDITOR)
    w = nb.widget()
    expect(w.locator("[data-node-id='square']")).to_have_count(1)
    # the widget's height follows its small drawing (it was a fixed 620 px), and shows it whole
    page.wait_for_function("w => w.style.height !== ''", arg=w.element_handle())
    assert 320 <= w.evaluate("w => w.offsetHeight") < 620
    svg, canvas = drawing_box(w), w.locator(".gl-canvas").bounding_box()
    assert canvas["y"] <= svg["y"] and svg["y"] + svg["height"] <= canvas["y"] + canvas["height"]
    nb.run_code("s = ed2.debug(x=np.zeros(16, np.float32), y=np.zeros(16, np.float32), scale=0.5)")
    expect(w.locator(".gl-timeline")).to_be_visible()

    # a click on a buffer's node while debugging inspects it
    w.scroll_into_view_if_needed()
    w.locator("[data-node-id='arg:y']").click()
    expect(w.locator(".gl-inspect")).to_have_attribute("data-buffer", "y")

    w.locator("[data-open=export]").click()
    w.locator("[aria-label='target']").select_option("x64")
    w.locator("[aria-label='output folder']").fill("out/e2e_from_session")
    w.locator("[data-export=run]").click()
    expect(w.locator(".gl-export-status")).to_have_attribute("data-state", re.compile("done|failed"), timeout=300_000)
    nb.shot("canvas-05-export-with-session-values", w)
    expect(w.locator(".gl-verdict")).to_have_attribute("data-verdict", "passed")
    assert (lab.root / "out" / "e2e_from_session" / "manifest.json").is_file()


def test_the_new_arg_form_declares_a_shape(lab, page, artifacts):
    page.set_viewport_size({"width": 1920, "height": 1080})
    nb = Notebook(page, artifacts)
    nb.open(lab.notebook_url("quickstart.ipynb"))
    nb.run_code(
        "import taichi as ti\nimport graphlab as gl\nti.init(arch=ti.cpu, log_level=ti.WARN)\n\n"
        "@ti.kernel\ndef fill(x: ti.types.ndarray(dtype=ti.f32, ndim=2)):\n    for i, j in x:\n        x[i, j] = 1.0\n\n"
        "g3 = gl.Graph('shaped')\ng3.dispatch(fill, name='fill')\ned3 = gl.editor(g3)\ned3"
    )
    w = nb.widget()
    w.locator("[data-node-id='fill']").click()
    w.locator("[aria-label='arg for x']").select_option(label="\uff0b new arg from annotation\u2026")
    w.locator("[aria-label='shape']").fill("n")  # one entry for a 2-d arg: refused, nothing declared
    w.locator(".gl-new-arg button", has_text="Create").click()
    expect(w.locator(".gl-new-arg .gl-hint")).to_contain_text("shape: give 2 sizes or dim names")
    w.locator("[aria-label='shape']").fill("G, 64")
    w.locator(".gl-new-arg button", has_text="Create").click()
    expect(w.locator("[aria-label='arg for x']")).to_have_value("x")
    nb.shot("canvas-06-new-arg-with-shape", w)
    assert python_value(nb, "list(g3.args['x'].shape)") == ["G", 64]
