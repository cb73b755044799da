"""The editor in its own JupyterLab tab, end to end: a real JupyterLab with graphlab's lab extension,
a real Chromium, a real kernel.

The widget's "Open in tab" button asks the extension (a DOM event handshake) to open the cell's output
in a main-area tab: a second live view of the same widget model, so an edit made in either view shows
in the other. The view in the tab has no such button (it is not in a notebook cell), nor has the
widget in Jupyter Notebook 7, where graphlab's extension loads but does not offer tabs.
"""

from __future__ import annotations

import pytest
from nbpage import Notebook
from playwright.sync_api import expect
from test_notebook7_e2e import notebook7, notebook_own_error  # noqa: F401 (notebook7: a fixture)
from test_widget_e2e import python_value

pytestmark = pytest.mark.e2e

EDITOR = """\
import taichi as ti
import graphlab as gl
ti.init(arch=ti.cpu, cpu_max_num_threads=1, log_level=ti.WARN)

@ti.kernel
def fill(x: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in x:
        x[i] = 1.0

@ti.kernel
def twice(x: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in x:
        x[i] = 2.0 * x[i]

tabbed = gl.Graph("tabbed")
x = tabbed.ndarray("x", ti.f32, ndim=1, shape="n", role="state")
tabbed.dispatch(fill, x)
tabbed.dispatch(twice, x)
ed = gl.editor(tabbed)
ed
"""


def test_open_in_tab_shows_a_second_live_view(lab, page, artifacts):
    page.set_viewport_size({"width": 1280, "height": 800})
    nb = Notebook(page, artifacts)
    nb.open(lab.notebook_url("quickstart.ipynb"))
    nb.run_code(EDITOR)
    in_cell = page.locator(".jp-Notebook .gl-editor").last
    expect(in_cell.locator("[data-node-id='twice']")).to_have_count(1)

    button = in_cell.locator("[data-layout=tab]")
    expect(button).to_be_visible()
    button.click()

    tab = page.locator(".lm-TabBar-tab", has_text="graph tabbed")
    expect(tab).to_have_count(1)
    in_tab = page.locator(".gl-own-tab .gl-editor")
    expect(in_tab).to_have_count(1)
    expect(in_tab.locator("[data-node-id='twice']")).to_have_count(1)
    expect(in_tab.locator("[data-node-id='arg:x']")).to_have_count(1)
    assert in_tab.locator("[data-node-id='twice']").bounding_box()["width"] > 50, "the graph is not drawn in the tab"
    room = page.locator(".gl-own-tab .jp-LinkedOutputView").bounding_box()
    assert in_tab.bounding_box()["height"] >= 0.9 * room["height"], "the editor should fill its tab"
    expect(in_tab.locator("[data-layout=tab]")).to_be_hidden()  # the tab's own view offers no tab again
    nb.shot("own-tab-01-opened")

    # an edit in the tab's view (delete 'twice') shows in the notebook's view
    in_tab.locator("[data-node-id='twice']").click()
    in_tab.locator(".gl-node-editor button", has_text="Delete").click()
    expect(in_cell.locator("[data-node-id='twice']")).to_have_count(0)
    expect(in_tab.locator("[data-node-id='twice']")).to_have_count(0)
    # and one in the notebook's view (undo) shows in the tab's
    in_cell.locator(".gl-btn", has_text="Undo").click()
    expect(in_tab.locator("[data-node-id='twice']")).to_have_count(1)
    expect(in_cell.locator("[data-node-id='twice']")).to_have_count(1)
    nb.shot("own-tab-02-edits-synced")
    page.locator(".lm-TabBar-tab", has_text="quickstart.ipynb").click()  # the notebook's kernel, for python_value
    assert python_value(nb, "[n.name for n in tabbed.body]") == ["fill", "twice"]


def test_notebook_7_offers_no_tab(notebook7, browser_context, artifacts):  # noqa: F811 (the fixture)
    page = browser_context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: None if notebook_own_error(exc) else errors.append(str(exc)))
    nb = Notebook(page, artifacts)
    nb.open(f"{notebook7.url}/notebooks/smoke.ipynb?token={notebook7.token}")
    nb.run_all()
    w = nb.widget()
    expect(w.locator("[data-node-id='steps/saxpy']")).to_have_count(1)
    # laid out and drawn: the widget has asked for a host by now (its first layout), and none answered
    expect(w.locator("[data-layout=maximise]")).to_be_visible()
    expect(w.locator("[data-layout=tab]")).to_be_hidden()
    page.close()
    assert errors == [], "uncaught errors in the page"
