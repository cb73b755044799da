"""Debug with "check bounds first", in a real JupyterLab and Chromium (issue 19, point 4: the widget's checked run).

The user ticks the option by the Debug button and clicks Debug: the start message carries
``bounds: "check"``, the widget says it is checking bounds while the child process runs (seconds),
and a kernel that writes one past the end of an array shows as the ``OutOfBoundsError`` in the debug
panel, naming the dispatch, the arg and the index; no session starts and nothing ran in the kernel.
With a long enough array the same click starts the session.
"""

from __future__ import annotations

import pytest
from nbpage import Notebook
from playwright.sync_api import expect
from test_fresh_kernel_debug_e2e import write_notebook
from test_widget_e2e import python_value

pytestmark = pytest.mark.e2e

#: A kernel that writes y[i + 1] for every i of x: with x and y of 8, y[8] is out of bounds.
CELL = """\
import numpy as np
import taichi as ti
import graphlab as gl

ti.init(arch=ti.cpu)


@ti.kernel
def shift(x: ti.types.ndarray(dtype=ti.f32, ndim=1), y: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in x:
        y[i + 1] = x[i]


g = gl.Graph("shifted")
g.dispatch(shift, g.ndarray("x", ti.f32, ndim=1), g.ndarray("y", ti.f32, ndim=1))
y = np.zeros(8, np.float32)
ed = gl.editor(g, values={"x": np.arange(8, dtype=np.float32), "y": y})
ed
"""

#: Click Debug and report, in the same task, what the toolbar button and the debug panel say.
_CLICK_DEBUG = """w => {
  w.querySelector("[data-debug=start]").click();
  const status = w.querySelector(".gl-bounds-checking");
  return {button: w.querySelector("[data-debug=start]").textContent, status: status ? status.textContent : ""};
}"""


def test_debug_with_check_bounds_first_shows_the_out_of_bounds_index(lab, page, artifacts):
    write_notebook(lab.root / "bounds.ipynb", CELL)
    nb = Notebook(page, artifacts)
    nb.open(lab.notebook_url("bounds.ipynb"))
    nb.run_all()
    assert nb.errors() == []
    w = nb.widget()
    expect(w.locator("[data-node-id='shift']")).to_have_count(1, timeout=120_000)
    w.scroll_into_view_if_needed()

    option = w.locator(".gl-debug-bar .gl-check-bounds-input")
    expect(option).not_to_be_checked()
    option.check()
    during = w.evaluate(_CLICK_DEBUG)
    assert during == {
        "button": "Checking bounds\u2026",
        "status": "Checking bounds\u2026 (runs once in a child process)",
    }, during
    error = w.locator(".gl-bounds-error")
    expect(error).to_be_visible(timeout=120_000)
    expect(error).to_contain_text("Bounds check failed; no session started: OutOfBoundsError:")
    expect(error).to_contain_text("dispatch 'shift' (kernel shift) indexes arg 'y' (param 'y') at [8]")
    expect(w.locator(".gl-bounds-checking")).to_have_count(0)
    expect(w.locator("[data-debug=start]")).to_have_text("\u25b6 Debug")
    expect(w.locator(".gl-timeline")).to_be_hidden()
    expect(w.locator(".gl-banner")).to_be_hidden()  # said once, in the panel
    nb.shot("bounds-check-01-out-of-bounds", w)
    assert python_value(nb, "[ed.session is None, ed.debugger['bounds']['state'], y.tolist()]") == [
        True, "failed", [0.0] * 8,
    ]  # fmt: skip

    # values that fit (a session started from Python makes them the editor's, then Stop): with the
    # option still ticked, the same click checks again and starts the session
    out = nb.run_code("_ = ed.debug(x=np.arange(8, dtype=np.float32), y=np.zeros(9, np.float32))")
    assert nb.errors() == [], out
    start = w.locator("[data-debug=start]")
    expect(start).to_have_text("\u25a0 Stop", timeout=60_000)
    start.click()
    expect(start).to_have_text("\u25b6 Debug", timeout=60_000)
    expect(option).to_be_checked()
    start.click()
    expect(w.locator(".gl-timeline")).to_be_visible(timeout=120_000)
    expect(start).to_have_text("\u25a0 Stop")
    expect(w.locator(".gl-bounds-passed")).to_contain_text("Bounds checked before the start: no index out of bounds")
    expect(w.locator(".gl-bounds-error")).to_have_count(0)
    expect(w.locator(".gl-banner")).to_be_hidden()
    nb.shot("bounds-check-02-passed", w)
    assert python_value(nb, "[ed.session is not None, ed.debugger['bounds']['state']]") == [True, "passed"]
