"""The debug panel's "Compare with..." end to end: a real JupyterLab, headless Chromium and kernel.

The notebook builds a graph whose x64 and Vulkan (Mesa lavapipe) results really differ (``ti.sin``'s
last bit, as in ``tests/compare_kernels.py``), starts a debug session, and the test clicks "Compare
with..." for Vulkan: the progress shows, the diverging node is marked on the graph, the session
stands before it, and the Inspect tab shows both sides and the difference.
"""

from __future__ import annotations

import re
import time

import nbformat
import pytest
from nbpage import Notebook
from playwright.sync_api import expect
from test_widget_e2e import python_value

pytestmark = pytest.mark.e2e

CELLS = [
    """import numpy as np
import taichi as ti
import graphlab as gl
ti.init(arch=ti.cpu, cpu_max_num_threads=1, log_level=ti.WARN)
F1 = ti.types.ndarray(dtype=ti.f32, ndim=1)

@ti.kernel
def halve(x: F1, y: F1):
    for i in x:
        y[i] = x[i] * 0.5

@ti.kernel
def wobble(y: F1, w: F1):
    for i in y:
        w[i] = ti.sin(y[i])

@ti.kernel
def settle(w: F1, x: F1):
    for i in x:
        x[i] += w[i] * 0.001
""",
    """g = gl.Graph("planted")
x, y, w = (g.ndarray(n, ti.f32, ndim=1, shape="n") for n in "xyw")
with g.sequence("rounds", repeat=2) as s:
    s.dispatch(halve, x, y)
    s.dispatch(wobble, y, w)
    s.dispatch(settle, w, x)
values = {n: ti.ndarray(ti.f32, 4096) for n in "xyw"}
values["x"].from_numpy(np.linspace(-20, 3e4, 4096).astype(np.float32))
ed = gl.editor(g, kernels=[halve, wobble, settle], values=values)
ed""",
]


def test_compare_with_vulkan_marks_the_diverging_node(lab, page, artifacts):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nbformat.write(nb, lab.root / "compare_e2e.ipynb")
    book = Notebook(page, artifacts)
    book.open(lab.notebook_url("compare_e2e.ipynb"))
    book.run_all()
    assert book.errors() == []
    w = book.widget()
    expect(w.locator(".react-flow")).to_be_visible()
    w.scroll_into_view_if_needed()
    expect(w.locator(".gl-fnode.gl-diverged")).to_have_count(0)

    w.locator("[data-debug=start]").click()
    expect(w.locator(".gl-timeline")).to_be_visible()
    w.locator(".gl-tab[data-tab=debug]").click()
    expect(w.locator(".gl-timeline-label")).to_have_text(re.compile(r"step 0/6"))
    against = w.locator("[aria-label='compare against']")
    expect(against).to_have_value("vulkan")
    # a timeout that is not a number of seconds > 0 is refused next to the field; nothing is sent
    timeout = w.locator("[aria-label='timeout']")
    timeout.fill("0")
    expect(w.locator(".gl-compare-timeout-error")).to_contain_text("greater than 0")
    timeout.fill("soon")
    expect(w.locator(".gl-compare-timeout-error")).to_contain_text('"soon" is not a number')
    w.locator(".gl-compare-go").click()
    expect(w.locator(".gl-compare")).to_have_attribute("data-state", "idle")
    timeout.fill("300")
    expect(w.locator(".gl-compare-timeout-error")).to_have_text("")
    # picking the arch starts its process before Compare is clicked; the comparison then uses it
    against.fill("")
    against.fill("vulkan")
    pid = None
    for _ in range(20):
        pid = python_value(book, "ed.session.compare_pid('vulkan')")
        if pid is not None:
            break
        time.sleep(0.5)
    assert isinstance(pid, int), "picking vulkan started its process"
    w.locator(".gl-compare-go").click()
    expect(w.locator(".gl-compare")).to_have_attribute("data-state", "running")  # the progress shows
    expect(w.locator(".gl-compare")).to_have_attribute("data-state", re.compile("done|failed"), timeout=180_000)
    book.shot("compare-01-diverged", w)
    result = w.locator(".gl-compare-result")
    expect(result).to_contain_text("rounds[0]/wobble")
    expect(result).to_have_attribute("data-node", "rounds/wobble")
    # the diverging node is marked on the graph, and the session stands before it
    expect(w.locator(".gl-fnode.gl-diverged")).to_have_count(1)
    expect(w.locator(".gl-diverged[data-node-id='rounds/wobble']")).to_have_count(1)
    expect(w.locator(".gl-current[data-node-id='rounds/wobble']")).to_have_count(1)
    expect(w.locator(".gl-timeline-label")).to_have_text(re.compile(r"step 1/6 . next rounds\[0\]/wobble"))
    assert python_value(book, "ed.session.position.step_id") == "rounds[0]/wobble"
    assert python_value(book, "ed.session.compare_pid('vulkan')") == pid  # the prepared process ran it

    # the Inspect tab shows both sides where they first differ, and the difference drawn
    w.locator(".gl-tab[data-tab=inspect]").click()
    inspect = w.locator(".gl-inspect")
    expect(inspect).to_have_attribute("data-buffer", "w")
    sides = inspect.locator(".gl-compare-sides")
    expect(sides.locator("tr[data-arch=x64]")).to_have_count(1)
    expect(sides.locator("tr[data-arch=vulkan]")).to_have_count(1)
    expect(sides.locator("img.gl-compare-picture")).to_be_visible()
    book.shot("compare-02-inspect-both-sides", w)
    x64 = sides.locator("tr[data-arch=x64] td").inner_text()
    vulkan = sides.locator("tr[data-arch=vulkan] td").inner_text()
    assert x64 != vulkan
    found = python_value(book, "ed.debugger['compare']['divergence']['values']")
    assert [float(x64), float(vulkan)] == found  # every digit shows: they differ in the last bit
