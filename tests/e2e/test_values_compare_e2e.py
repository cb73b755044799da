"""Compare with the values given by clicking, in a real JupyterLab and Chromium (issue 21, point 4): a graph whose
temp is sized by a dim no value sizes (``m``) gets its values in the Values tab (arrays allocated, ``m`` given by
name in the Dims list; Export before that names ``m`` and opens its row), is exported from the Export panel with them, and the debugger's Compare runs the session
against that exported module: they agree to the end, and the session ran on the panel's seeded numbers.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect
from test_values_loop_e2e import _open
from test_widget_e2e import python_value

pytestmark = pytest.mark.e2e

SPREAD = """\
import numpy as np
import taichi as ti
import graphlab as gl

ti.init(arch=ti.cpu, cpu_max_num_threads=1)
F1 = ti.types.ndarray(dtype=ti.f32, ndim=1)


@ti.kernel
def ramp(grid: F1):
    for j in grid:
        grid[j] = 0.5 * j


@ti.kernel
def spread(x: F1, grid: F1, y: F1):
    m = grid.shape[0]
    for i in y:
        y[i] = 2.0 * x[i] + grid[i % m]


g = gl.Graph("spread")
g.ndarray("x", ti.f32, ndim=1, shape="n", role="input")
g.ndarray("grid", ti.f32, ndim=1, shape="m", role="temp")
g.ndarray("y", ti.f32, ndim=1, shape="n", role="output")
g.dispatch(ramp, "grid")
g.dispatch(spread, "x", "grid", "y")
ed = gl.editor(g)
ed
"""


def test_values_and_a_dim_given_by_clicking_are_used_by_export_and_compare(lab, page, artifacts):
    nb, w = _open(lab, page, artifacts, "spread.ipynb", SPREAD)
    w.locator("[data-open=values]").click()
    values = w.locator(".gl-tab-page[data-tab=values]")
    m_row = values.locator("[data-value-dim=m]")
    expect(m_row).to_have_attribute("data-state", "missing")  # only the temp names m: no value will size it
    for arg, fill in (("x", "random"), ("y", "zeros")):
        row = values.locator(f"[data-value-arg={arg}]")
        row.locator(f"input[aria-label='shape of {arg}']").fill("16")
        row.locator(f"select[aria-label='fill of {arg}']").select_option(fill)
        row.locator(f"input[aria-label='seed of {arg}']").fill("3")
        row.locator("[data-value=allocate]").click()
        expect(row).to_have_attribute("data-state", "given")
    expect(values.locator("[data-value-dim=n]")).to_have_attribute("data-state", "set")
    expect(m_row).to_have_attribute("data-state", "missing")
    expect(values.locator(".gl-values-summary")).to_have_text("Missing: dim m \u2014 Debug needs these.")
    # Debug without m: the banner's "Give value..." opens the Dims list at m
    w.locator("[data-debug=start]").click()
    expect(w.locator(".gl-banner")).to_contain_text("Debug needs a size for dim 'm'", timeout=60_000)
    w.locator(".gl-banner [data-open=give-value]").click()
    expect(m_row).to_have_class(re.compile("gl-value-focus"))
    expect(m_row.locator("input[aria-label='size of dim m']")).to_be_focused()
    # Export without m is refused before anything runs, in the panels' terms, with a button to m's row
    w.locator("[data-open=export]").click()
    w.locator("[aria-label='target']").select_option("x64")
    w.locator("[data-export=run]").click()
    status = w.locator(".gl-export-status")
    expect(status).to_have_attribute("data-state", "failed", timeout=60_000)
    refusal = status.locator(".gl-diag-error")
    expect(refusal).to_contain_text("Export needs a size for dim 'm'")
    expect(refusal).to_contain_text("give it in the Values panel, under Dims (m=64)")
    expect(refusal).not_to_contain_text("pass dims=")
    refusal.locator("[data-open=give-value]").click()
    expect(m_row).to_be_visible()
    expect(m_row).to_have_class(re.compile("gl-value-focus"))
    expect(m_row.locator("input[aria-label='size of dim m']")).to_be_focused()
    # a size that is not one is refused in the row, before anything is sent; then m = 4
    m_row.locator("input[aria-label='size of dim m']").fill("0")
    m_row.locator("[data-value=dim-set]").click()
    expect(m_row.locator(".gl-value-error")).to_have_text("dim m takes a size, a whole number >= 1 (e.g. m=64)")
    m_row.locator("input[aria-label='size of dim m']").fill("4")
    m_row.locator("[data-value=dim-set]").click()
    expect(m_row).to_have_attribute("data-state", "given")
    expect(values.locator(".gl-values-summary")).to_have_text("Every value Debug needs is given.")
    nb.shot("values-compare-01-given", w)

    # Export with those values (they size n and m), verified
    w.locator("[data-open=export]").click()
    w.locator("[aria-label='target']").select_option("x64")
    w.locator("[aria-label='output folder']").fill("out/spread_x64")
    w.locator("[data-export=run]").click()
    expect(w.locator(".gl-export-status")).to_have_attribute("data-state", re.compile("done|failed"), timeout=300_000)
    expect(w.locator(".gl-verdict")).to_have_attribute("data-verdict", "passed")
    assert python_value(nb, "__import__('json').load(open('out/spread_x64/manifest.json')).get('dims')") == {
        "m": 4,
        "n": 16,
    }

    # Debug on the panel's values, then Compare against the exported module: they agree to the end
    w.locator("[data-debug=start]").click()
    expect(w.locator("[data-debug=start]")).to_have_text("\u25a0 Stop", timeout=120_000)
    w.locator(".gl-tab[data-tab=debug]").click()
    against = w.locator("[aria-label='compare against']")
    against.fill("out/spread_x64")
    w.locator(".gl-compare-go").click()
    expect(w.locator(".gl-compare")).to_have_attribute("data-state", re.compile("done|failed"), timeout=300_000)
    nb.shot("values-compare-02-agree", w)
    expect(w.locator(".gl-compare-result[data-agree]")).to_contain_text("agrees to the end")
    seeded = "np.random.default_rng(3).random(16).astype(np.float32)"
    assert python_value(nb, f"bool((ed.session.inspect('x').numpy() == {seeded}).all())") is True
    assert python_value(nb, "list(ed.session.inspect('grid').numpy().shape)") == [4]
