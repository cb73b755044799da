"""The first Debug after an edit, on a fresh kernel, in a real JupyterLab and Chromium (issue 19, point 1).

The start takes seconds (it compiles), so until the session is there the widget says it is starting.

JupyterLab 4.4+ sends a widget's comm messages to a kernel subshell, and ipykernel 7 handles them on
that subshell's thread, while ``ti.init`` ran on the main thread. Nothing has been compiled since
``ti.init`` in this notebook, so the Debug click compiles first: it must run on the ``ti.init``
thread, or Taichi's LLVM backend asserts (``add_struct_module ... main_thread_id_``). The user's
steps exactly: Restart Kernel and Run All, open the palette, click a kernel, click Debug.
"""

from __future__ import annotations

import json
import re

import pytest
from nbpage import Notebook
from playwright.sync_api import expect
from test_widget_e2e import python_value

pytestmark = pytest.mark.e2e

#: The issue's notebook: ti.init, three small kernels, an editor on a graph with nothing in it yet.
CELL = """\
import numpy as np
import taichi as ti
import graphlab as gl

ti.init(arch=ti.cpu)


@ti.kernel
def fill(x: ti.types.ndarray(dtype=ti.f32, ndim=1), value: ti.f32):
    for i in x:
        x[i] = value


@ti.kernel
def double(x: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in x:
        x[i] *= 2.0


@ti.kernel
def shift(x: ti.types.ndarray(dtype=ti.f32, ndim=1), value: ti.f32):
    for i in x:
        x[i] += value


g = gl.Graph("clicks")
g.ndarray("x", ti.f32, ndim=1, role="output")
g.scalar("value", ti.f32, role="input")
ed = gl.editor(g, values={"x": np.zeros(64, np.float32), "value": 1.5})
ed
"""


#: Click Debug and report, in the same task, what the toolbar button and the debug panel say.
_CLICK_DEBUG = """w => {
  w.querySelector("[data-debug=start]").click();
  const status = w.querySelector(".gl-debug-starting");
  return {button: w.querySelector("[data-debug=start]").textContent, status: status ? status.textContent : ""};
}"""


def write_notebook(path, source: str) -> None:
    cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}
    kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook = {"cells": [cell], "metadata": {"kernelspec": kernelspec}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(notebook), encoding="utf-8")


def test_first_debug_after_an_edit_on_a_fresh_kernel_starts_the_debugger(lab, page, artifacts):
    write_notebook(lab.root / "clicks.ipynb", CELL)
    nb = Notebook(page, artifacts)
    nb.open(lab.notebook_url("clicks.ipynb"))

    # Restart Kernel and Run All: the Kernel menu, then the confirmation dialog
    page.locator(".lm-MenuBar-item", has_text="Kernel").click()
    page.locator(".lm-Menu-item", has_text="Restart Kernel and Run All Cells").click()
    page.locator(".jp-Dialog .jp-mod-accept").click()
    w = nb.widget()
    expect(w.locator(".gl-kernel-item")).to_have_count(3, timeout=180_000)
    nb.wait_idle()
    assert nb.errors() == []
    w.scroll_into_view_if_needed()

    # open the palette, click a kernel: the new node is drawn, its parameters bound to the args
    if w.locator("[data-layout=palette]").get_attribute("aria-pressed") == "true":
        w.locator("[data-layout=palette]").click()
    expect(w.locator(".gl-palette")).to_be_visible()
    w.locator(".gl-kernel-item[data-ref$=':fill']").click()
    expect(w.locator("[data-node-id='fill']")).to_have_count(1)
    nb.shot("fresh-kernel-01-kernel-added", w)

    # click Debug: until the session is there, the widget says it is starting (read in the click's
    # own task, before any reply can come); then the debugger shows, and nothing was refused
    during = w.evaluate(_CLICK_DEBUG)
    assert during["button"] == "Starting\u2026", during
    assert during["status"].startswith("Starting the debugger"), during
    expect(w.locator(".gl-timeline")).to_be_visible(timeout=120_000)
    expect(w.locator(".gl-debug-starting")).to_have_count(0)
    expect(w.locator("[data-debug=start]")).to_have_text("\u25a0 Stop")
    expect(w.locator(".gl-timeline-label")).to_have_text(re.compile(r"step 0/1\b"))
    expect(w.locator(".gl-banner")).to_be_hidden()
    nb.shot("fresh-kernel-02-debugging", w)
    assert python_value(nb, "ed.debugger['active'] and ed.session is not None") is True
    assert python_value(nb, "ed.model.node('fill').bound") == {"x": "x", "value": "value"}

    # the premise: JupyterLab really sent the widget's messages over a kernel subshell (its own thread)
    subshells = "get_ipython().kernel.shell_channel_thread.manager.list_subshell()"
    assert python_value(nb, subshells) != [], "JupyterLab sent the widget's messages on the main shell"
