"""The notebook widget end to end: a real JupyterLab, a real headless Chromium, a real kernel.

Each test opens a notebook from a temporary copy of notebooks/, runs it, and drives the widget by
clicking, checking what it shows against what the Python side says (a code cell appended to the
notebook prints it). Screenshots of each stage go to test-artifacts/e2e/.
"""

from __future__ import annotations

import json
import re

import pytest
from nbpage import Notebook
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e


def python_value(nb: Notebook, expression: str) -> object:
    """Evaluate ``expression`` in the notebook's kernel (a new cell) and return it, through JSON."""
    out = nb.run_code(f"import json as _json\nprint('<<' + _json.dumps({expression}) + '>>')")
    match = re.search(r"<<(.*)>>", out, re.S)
    assert match, f"no value printed for {expression!r}; the cell said: {out!r}"
    return json.loads(match.group(1))


def test_quickstart_edit_step_inspect_break_and_export(lab, page, artifacts):
    nb = Notebook(page, artifacts)
    nb.open(lab.notebook_url("quickstart.ipynb"))
    nb.run_all()
    assert nb.errors() == []
    w = nb.widget()
    expect(w.locator(".react-flow")).to_be_visible()
    w.scroll_into_view_if_needed()
    nb.shot("01-quickstart-ran", w)

    # add a dispatch from the palette, and bind its parameters by choosing args
    w.locator(".gl-kernel-item", has_text="copy_back").click()
    editor = w.locator(".gl-node-editor [data-node='copy_back']")
    expect(editor).to_be_visible()
    w.locator("[aria-label='arg for src']").select_option("tmp")
    expect(w.locator("[aria-label='arg for src']")).to_have_value("tmp")
    w.locator("[aria-label='arg for dst']").select_option("x")
    expect(w.locator(".gl-summary")).to_have_text(re.compile(r"4 dispatches .* no problems"))
    nb.shot("02-dispatch-added", w)
    assert python_value(nb, "g.node('copy_back').bound") == {"src": "tmp", "dst": "x"}

    # debug: start, step twice (the button, then the S key), read a statistic off the inspector
    w.scroll_into_view_if_needed()
    w.locator("[data-debug=start]").click()
    expect(w.locator(".gl-timeline")).to_be_visible()
    expect(w.locator(".gl-timeline-label")).to_have_text(re.compile(r"step 0/102 . next seed"))
    w.locator(".gl-tab[data-tab=inspect]").click()
    w.locator("[data-debug=step]").click()
    expect(w.locator(".gl-inspect")).to_have_attribute("data-position", "1")
    # focus the widget (a click on the background, at the top right of the part no drawer covers)
    w.locator(".gl-canvas").click(position=w.locator(".gl-canvas").evaluate(
        "c => ({x: c.clientWidth - parseFloat(getComputedStyle(c).getPropertyValue('--gl-inset-right') || '0') - 8, y: 6})"
    ))  # fmt: skip
    page.keyboard.press("s")
    expect(w.locator(".gl-inspect")).to_have_attribute("data-position", "2")
    expect(w.locator(".gl-inspect .gl-plot[data-kind=line]")).to_be_visible()
    cell = w.locator(".gl-stats td[data-stat=max][data-of=all]")
    shown_max = float(cell.get_attribute("data-value"))
    shown_text = cell.inner_text()
    nb.shot("03-stepped-inspector", w)
    py_max = python_value(nb, "ed.session.inspect('x').stats.max")
    assert shown_max == py_max
    assert shown_text == python_value(nb, "format(ed.session.inspect('x').stats.max, '.6g')")
    assert python_value(nb, "ed.session.position.index") == 2

    # a breakpoint by clicking a node's dot, then Continue runs to it
    w.scroll_into_view_if_needed()
    dot = w.locator("[data-bp-node='step/copy_back']")
    dot.click()
    expect(w.locator("[data-bp-node='step/copy_back'].gl-bp-on")).to_be_visible()
    w.locator(".gl-tab[data-tab=debug]").click()
    w.locator("[data-debug=continue]").click()
    expect(w.locator(".gl-stop")).to_have_attribute("data-reason", "breakpoint")
    expect(w.locator(".gl-current[data-node-id='step/copy_back']")).to_have_count(1)
    expect(w.locator(".gl-bp-list li[data-breakpoint='step/copy_back']")).to_contain_text("1 hit")
    nb.shot("04-breakpoint", w)
    assert python_value(nb, "ed.session.position.step_id") == "step[1]/copy_back"

    # export by clicking; the verification passes
    w.scroll_into_view_if_needed()
    w.locator("[data-open=export]").click()
    w.locator("[aria-label='target']").select_option("x64")
    w.locator("[aria-label='output folder']").fill("out/e2e_x64")
    w.locator("[data-export=run]").click()
    expect(w.locator(".gl-export-status")).to_have_attribute("data-state", re.compile("done|failed"), timeout=300_000)
    nb.shot("05-exported", w)
    expect(w.locator(".gl-verdict")).to_have_attribute("data-verdict", "passed")
    assert (lab.root / "out" / "e2e_x64" / "manifest.json").is_file()
    files = w.locator(".gl-files summary").inner_text()
    assert re.match(r"\d+ files written", files)


def test_mpm88_debug_notebook_shows_the_nan_in_the_grid(lab, page, artifacts):
    nb = Notebook(page, artifacts)
    nb.open(lab.notebook_url("mpm88_debug.ipynb"))
    nb.run_all()
    assert nb.errors() == []
    w = page.locator(".gl-editor").first
    w.scroll_into_view_if_needed()
    expect(w.locator(".gl-stop")).to_have_attribute("data-reason", "nonfinite")
    expect(w.locator(".gl-fnode.gl-nonfinite")).to_have_count(1)
    w.locator(".gl-tab[data-tab=inspect]").click()
    inspect = w.locator(".gl-inspect")
    expect(inspect).to_have_attribute("data-buffer", "grid_v")
    expect(inspect.locator(":scope > figure .gl-plot[data-kind=heatmap]")).to_have_count(1)
    expect(inspect.locator(".gl-diff .gl-plot[data-kind=heatmap]")).to_have_count(1)
    nan = inspect.locator(".gl-stats td[data-stat=nan][data-of=all]")
    expect(nan).to_have_class(re.compile("gl-bad"))
    expect(inspect.locator(":scope > figure .gl-chip", has_text="NaN")).to_have_count(1)
    nb.shot("06-mpm88-nan-grid", w)
    assert int(nan.get_attribute("data-value")) == python_value(nb, "session.inspect('grid_v').stats.nan")
