"""Without code, in a real JupyterLab and Chromium (issue 21, point 4): give the missing run values from the
Values tab (opened by the error's "Give value..." button) and Debug; make a while loop with ``check_every``
from the loop form (opened by the ``graphlab:make-loop`` event the canvas's context menu sends) and Debug it
to the end. The first Debug start shows a spinner while it compiles.
"""

from __future__ import annotations

import re

import pytest
from nbpage import Notebook
from playwright.sync_api import expect
from test_fresh_kernel_debug_e2e import write_notebook
from test_widget_e2e import python_value

pytestmark = pytest.mark.e2e

KERNELS = """\
import numpy as np
import taichi as ti
import graphlab as gl

ti.init(arch=ti.cpu)


@ti.kernel
def init_flag(flag: ti.types.ndarray(dtype=ti.i32, ndim=1)):
    flag[0] = 1


@ti.kernel
def halve(x: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in x:
        x[i] *= 0.5


@ti.kernel
def threshold(x: ti.types.ndarray(dtype=ti.f32, ndim=1), limit: ti.f32, flag: ti.types.ndarray(dtype=ti.i32, ndim=1)):
    flag[0] = 0
    for i in x:
        if x[i] > limit:
            flag[0] = 1


@ti.kernel
def add_one(x: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in x:
        x[i] += 1.0


def build():
    g = gl.Graph("shrink")
    g.ndarray("x", ti.f32, ndim=1)
    g.ndarray("flag", ti.i32, ndim=1, shape=(1,))
    g.scalar("limit", ti.f32)
    g.dispatch(init_flag, "flag")
    g.dispatch(halve, "x")
    g.dispatch(threshold, "x", "limit", "flag")
    g.dispatch(add_one, "x")
    return g


g = build()
"""

MISSING = KERNELS + "ed = gl.editor(g)\ned\n"
LOOP = (
    KERNELS
    + "x0 = np.linspace(0, 100, 32, dtype=np.float32)\n"
    + "ed = gl.editor(g, values={'x': x0.copy(), 'flag': np.zeros(1, np.int32), 'limit': 2.0})\ned\n"
)

#: Click Debug and report, in the click's own task, whether the toolbar button turns a spinner.
_CLICK_DEBUG = """w => {
  w.querySelector("[data-debug=start]").click();
  const button = w.querySelector("[data-debug=start]");
  return {text: button.textContent, spinner: button.querySelector("[data-spinner]") !== null};
}"""


def _open(lab, page, artifacts, name, source):
    write_notebook(lab.root / name, source)
    nb = Notebook(page, artifacts)
    nb.open(lab.notebook_url(name))
    nb.run_all()
    assert nb.errors() == []
    w = nb.widget()
    expect(w.locator(".gl-fdispatch").first).to_be_visible(timeout=120_000)
    w.scroll_into_view_if_needed()
    return nb, w


def test_give_the_missing_values_from_the_values_panel_and_debug(lab, page, artifacts):
    nb, w = _open(lab, page, artifacts, "missing.ipynb", MISSING)

    # Debug with nothing given: the error speaks the widget's terms, and offers "Give value..."
    w.locator("[data-debug=start]").click()
    banner = w.locator(".gl-banner")
    expect(banner).to_contain_text("Debug needs values for 'x', 'flag', 'limit'")
    expect(banner).to_contain_text("give them in the Values panel (in Python: gl.editor(g, values=")
    give = w.locator("[data-open=give-value]")
    expect(give).to_be_visible()
    give.click()
    x_row = w.locator(".gl-tab-page[data-tab=values] [data-value-arg=x]")
    expect(x_row).to_be_visible()
    expect(x_row).to_have_class(re.compile(r"\bgl-value-focus\b"))
    expect(x_row).to_have_attribute("data-state", "missing")
    nb.shot("values-01-missing", w)

    # a bad shape is refused in the row, before anything is sent
    x_row.locator("input[aria-label='shape of x']").fill("0")
    x_row.locator("[data-value=allocate]").click()
    expect(x_row.locator(".gl-value-error")).to_contain_text("whole sizes >= 1")

    # x: 32 random numbers from seed 5; flag: zeros of its declared shape (prefilled); limit: typed in
    x_row.locator("input[aria-label='shape of x']").fill("32")
    x_row.locator("select[aria-label='fill of x']").select_option("random")
    x_row.locator("input[aria-label='seed of x']").fill("5")
    x_row.locator("[data-value=allocate]").click()
    expect(x_row).to_have_attribute("data-state", "given")
    expect(x_row.locator(".gl-value-status")).to_contain_text("random, seed 5")
    flag_row = w.locator("[data-value-arg=flag]")
    expect(flag_row.locator("input[aria-label='shape of flag']")).to_have_value("1")
    flag_row.locator("[data-value=allocate]").click()
    limit_row = w.locator("[data-value-arg=limit]")
    limit_row.locator("input[aria-label='value of limit']").fill("0.5")
    limit_row.locator("[data-value=set]").click()
    expect(w.locator(".gl-values-summary")).to_have_text("Every value Debug needs is given.")
    nb.shot("values-02-given", w)

    # the canvas's context menu on an arg opens the tab at that arg (the graphlab:give-value event)
    w.locator(".gl-tab[data-tab=node]").click()
    expect(limit_row).to_be_hidden()
    w.locator("[data-canvas=fit]").click()
    w.locator("[data-node-id='arg:limit']").click(button="right")
    w.locator(".gl-menu [data-action=give-value]").click()
    expect(w.locator(".gl-menu")).to_be_hidden()
    expect(limit_row).to_be_visible()
    expect(limit_row).to_have_class(re.compile(r"\bgl-value-focus\b"))
    expect(limit_row.locator("input[aria-label='value of limit']")).to_be_focused()

    # Debug runs with them: to the end, x is the seeded numbers halved, plus one
    w.locator("[data-debug=start]").click()
    expect(w.locator("[data-debug=start]")).to_have_text("\u25a0 Stop", timeout=120_000)
    w.locator("[data-debug=continue]").click()
    expect(w.locator(".gl-timeline-label")).to_have_text(re.compile(r"^end \(4/4\)"))
    expected = "(np.random.default_rng(5).random(32).astype(np.float32) * np.float32(0.5) + 1)"
    same = f"bool((ed.session.inspect('x').numpy() == {expected}).all())"
    assert python_value(nb, same) is True


def test_make_a_while_loop_with_check_every_from_the_form_and_debug_it_to_the_end(lab, page, artifacts):
    nb, w = _open(lab, page, artifacts, "loop.ipynb", LOOP)

    # the canvas's context menu asks with an event on the widget's root
    w.evaluate(
        """w => w.dispatchEvent(new CustomEvent("graphlab:make-loop",
             {detail: {nodes: ["halve", "threshold"]}, bubbles: true}))"""
    )
    form = w.locator(".gl-loop-form")
    expect(form).to_be_visible()
    expect(form.locator("[data-loop=flag]")).to_have_value("flag")  # the one flag there is, picked
    form.locator("input[aria-label='max_iter']").fill("40")
    form.locator("input[aria-label='check_every']").fill("4")
    form.locator("input[aria-label='guarded']").check()
    nb.shot("loop-01-form", w)
    form.locator("[data-loop=make]").click()
    expect(form).to_be_hidden()
    expect(w.locator("[data-group='loop']").first).to_be_visible()  # the loop is drawn
    assert python_value(nb, "[n for n, _ in ed.model.nodes()]") == [
        "init_flag",
        "loop",
        "loop/halve",
        "loop/threshold",
        "add_one",
    ]
    assert python_value(nb, "[ed.model.node('loop').check_every, ed.model.node('loop').guarded]") == [4, True]

    # the first Debug start compiles: the button turns a spinner at once; then continue to the end
    during = w.evaluate(_CLICK_DEBUG)
    assert during == {"text": "Starting\u2026", "spinner": True}, during
    expect(w.locator("[data-debug=start]")).to_have_text("\u25a0 Stop", timeout=120_000)
    w.locator("[data-debug=continue]").click()
    expect(w.locator(".gl-timeline-label")).to_have_text(re.compile(r"^end \((\d+)/\1\)"))
    nb.shot("loop-02-debugged", w)

    # what the session ran is what the same loop built in Python gives
    check = """
def _by_hand():
    h = gl.Graph("shrink")
    h.ndarray("x", ti.f32, ndim=1); h.ndarray("flag", ti.i32, ndim=1, shape=(1,)); h.scalar("limit", ti.f32)
    h.dispatch(init_flag, "flag")
    b = h.define("body"); b.dispatch(halve, "x"); b.dispatch(threshold, "x", "limit", "flag")
    h.loop(b, while_="flag", max_iter=40, check_every=4, guarded=True)
    h.dispatch(add_one, "x")
    x = x0.copy(); h.run(x=x, flag=np.zeros(1, np.int32), limit=2.0)
    return x
"""
    nb.run_code(check)
    assert python_value(nb, "bool((ed.session.inspect('x').numpy() == _by_hand()).all())") is True
