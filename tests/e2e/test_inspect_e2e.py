"""The inspect panel's figures in a real JupyterLab and Chromium (issue 21, point 6): a 3-D buffer gets a
slider per leading axis and Python sends the chosen slice's picture; the heat map says the value and index
under the pointer; the colour bar sits in its figure, in the side panel (not over the canvas); while a buffer
is read the old figures stay, greyed, under a spinner.
"""

from __future__ import annotations

import pytest
from nbpage import Notebook
from playwright.sync_api import expect
from test_fresh_kernel_debug_e2e import write_notebook

pytestmark = pytest.mark.e2e

CELL = """\
import numpy as np
import taichi as ti
import graphlab as gl

ti.init(arch=ti.cpu)


@ti.kernel
def fill3(v: ti.types.ndarray(dtype=ti.f32, ndim=3)):
    for I in ti.grouped(v):
        v[I] = I[0] * 1000.0 + I[1] * 10.0 + I[2]


g = gl.Graph("cube")
g.dispatch(fill3, g.ndarray("v", ti.f32, ndim=3))
ed = gl.editor(g, values={"v": np.zeros((3, 20, 30), np.float32)})
ed
"""

#: Move the slider and report, in the same task, whether the panel shows it is reading.
_SLIDE = """(w, value) => {
  const slider = w.querySelector("[data-slice-axis='0']");
  slider.value = String(value);
  slider.dispatchEvent(new Event("input", {bubbles: true}));
  slider.dispatchEvent(new Event("change", {bubbles: true}));
  const panel = w.querySelector(".gl-inspect");
  return {stale: panel.classList.contains("gl-stale"), spinner: panel.querySelector("[data-spinner]") !== null};
}"""


def test_slices_hover_and_colour_bars_of_a_3d_buffer(lab, page, artifacts):
    write_notebook(lab.root / "cube.ipynb", CELL)
    nb = Notebook(page, artifacts)
    nb.open(lab.notebook_url("cube.ipynb"))
    nb.run_all()
    assert nb.errors() == []
    w = nb.widget()
    expect(w.locator(".gl-fnode[data-node-id]").first).to_be_visible(timeout=120_000)
    w.scroll_into_view_if_needed()
    w.locator("[data-debug=start]").click()
    expect(w.locator("[data-debug=start]")).to_have_text("\u25a0 Stop", timeout=120_000)
    w.locator("[data-debug=step]").click()
    w.locator(".gl-tab[data-tab=inspect]").click()
    panel = w.locator(".gl-tab-page[data-tab=inspect]")
    expect(panel.locator(".gl-inspect[data-position='1']")).to_have_count(1)
    expect(panel.locator(".gl-slices")).to_have_attribute("data-slices", "0")

    # the slider asks Python for slice 2; the panel reads meanwhile (greyed, a spinner), then shows it
    during = w.evaluate(_SLIDE, 2)
    assert during == {"stale": True, "spinner": True}, during
    expect(panel.locator(".gl-slices")).to_have_attribute("data-slices", "2")
    expect(panel.locator(".gl-inspect")).not_to_have_class("gl-stale")
    expect(panel.locator("figcaption").first).to_contain_text("slice [2, :, :] of (3, 20, 30)")

    # the value and index under the pointer: cell (7, 9) of slice 2 is 2079
    canvas = panel.locator("canvas.gl-plot").first
    box = canvas.bounding_box()
    assert box is not None
    canvas.hover(position={"x": box["width"] * 9.5 / 30, "y": box["height"] * 7.5 / 20})
    readout = panel.locator(".gl-plot-readout").first
    expect(readout).to_have_text("v(2, 7, 9) = 2079")
    expect(readout).to_have_attribute("data-index", "2,7,9")

    # the colour bar is in the figure, inside the side panel, not in the canvas corner
    bar = panel.locator(".gl-figure .gl-colorbar").first
    expect(bar).to_be_visible()
    side = w.locator(".gl-side").bounding_box()
    drawn = bar.bounding_box()
    assert side is not None and drawn is not None
    assert side["x"] <= drawn["x"] and drawn["x"] + drawn["width"] <= side["x"] + side["width"]
    assert w.locator(".gl-canvas .gl-plot-legend, .gl-canvas .gl-colorbar").count() == 0
    nb.shot("inspect-01-slice-hover", w)
