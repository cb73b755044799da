"""The canvas's tools in a real JupyterLab and Chromium: the overview of a graph too tall for the
readable zoom (a click on it pans the view), the pending box of a kernel being added (drawn at
once, gone only when the drawing with the new node is shown), and the form asking a new sequence's
name when nodes are grouped. Screenshots go to test-artifacts/e2e/.
"""

from __future__ import annotations

import re

import pytest
from nbpage import Notebook
from playwright.sync_api import Locator, Page, expect
from test_widget_e2e import python_value

pytestmark = pytest.mark.e2e

KERNELS = """\
import taichi as ti
import graphlab as gl
ti.init(arch=ti.cpu, cpu_max_num_threads=1, log_level=ti.WARN)

@ti.kernel
def step(x: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in x:
        x[i] += 1.0
"""


def column_editor(name: str, count: int, editor: str) -> str:
    """A cell showing ``editor``: graph ``name`` of ``count`` dispatches s0, s1, ... one under the other, each bound to x."""
    return (
        KERNELS
        + f"""
{name} = gl.Graph("{name}")
x = {name}.ndarray("x", ti.f32, ndim=1, shape="n", role="state")
for k in range({count}):
    {name}.dispatch(step, x, name=f"s{{k}}")
{editor} = gl.editor({name}, kernels={{"step": step}})
{editor}
"""
    )


#: 24 dispatches one under the other: about 1,900 px tall at the readable zoom, in an 800 px window.
TALL_EDITOR = column_editor("tall", 24, "ed")

SMALL_EDITOR = (
    KERNELS
    + """
small = gl.Graph("small")
y = small.ndarray("y", ti.f32, ndim=1, shape="n", role="state")
for k in "abc":
    small.dispatch(step, y, name=k)
ed2 = gl.editor(small, kernels={"step": step})
ed2
"""
)


def open_editor(page: Page, artifacts, lab, code: str, last_node: str) -> tuple[Notebook, Locator]:
    page.set_viewport_size({"width": 1280, "height": 800})
    nb = Notebook(page, artifacts)
    nb.open(lab.notebook_url("quickstart.ipynb"))
    nb.run_code(code)
    w = nb.widget()
    expect(w.locator(f"[data-node-id='{last_node}']")).to_have_count(1)
    w.scroll_into_view_if_needed()
    return nb, w


def box(locator: Locator) -> dict[str, float]:
    b = locator.bounding_box()
    assert b is not None
    return b


def test_a_graph_too_tall_to_read_whole_shows_an_overview_that_pans(lab, page, artifacts):
    nb, w = open_editor(page, artifacts, lab, TALL_EDITOR, "s23")
    canvas = box(w.locator(".gl-canvas"))
    last = w.locator("[data-node-id='s23']")
    first = w.locator("[data-node-id='s0']")
    # Fit shows the whole graph; zoomed in to read it, its end is out of view
    w.locator("[data-canvas=fit]").click()
    page.wait_for_timeout(300)
    canvas = box(w.locator(".gl-canvas"))
    assert box(last)["y"] + box(last)["height"] <= canvas["y"] + canvas["height"] + 1
    expect(w.locator(".react-flow__minimap")).to_have_count(0)  # all in view: no overview over the nodes
    w.locator(".gl-flow-canvas").focus()
    for _ in range(4):
        page.keyboard.press("+")
    page.wait_for_timeout(200)
    readable = box(first)["height"]
    overview = w.locator(".react-flow__minimap")
    expect(overview).to_be_visible()
    o = box(overview)
    overview.click(position={"x": o["width"] / 2, "y": 6})
    page.wait_for_timeout(200)
    assert box(last)["y"] > canvas["y"] + canvas["height"], "the last dispatch should be out of view"
    nb.shot("canvas-tools-01-overview", w)

    # a click near the overview's bottom brings the end of the graph into view
    o = box(overview)
    overview.click(position={"x": o["width"] / 2, "y": o["height"] - 6})
    page.wait_for_function("el => el.getBoundingClientRect().bottom <= el.closest('.gl-canvas').getBoundingClientRect().bottom",
                           arg=last.element_handle(), timeout=10_000)  # fmt: skip
    nb.shot("canvas-tools-02-overview-clicked", w)

    # dragging on it moves the view back up, at the same zoom
    o = box(overview)
    page.mouse.move(o["x"] + o["width"] / 2, o["y"] + o["height"] / 2)
    page.mouse.down()
    page.mouse.move(o["x"] + o["width"] / 2, o["y"] + o["height"] / 2 + 5, steps=2)
    page.mouse.move(o["x"] + o["width"] / 2, o["y"] - 400, steps=8)
    page.mouse.up()
    page.wait_for_timeout(200)
    assert box(first)["y"] >= canvas["y"] - 1
    assert abs(box(first)["height"] - readable) < 0.5, "the overview must pan, not zoom"


#: Click a palette kernel and report what is on screen in the same task (before any reply can
#: come); a MutationObserver records, when the pending box goes, whether the new node was drawn.
_ADD_AND_WATCH = """w => new Promise((resolve) => {
  const log = window.__glPending = {gone: false};
  const r = (el) => { const b = el.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };
  w.querySelector(".gl-kernel-item[data-ref$=':step'], .gl-kernel-item[data-ref$='.step']").click();
  // React draws the pending node in its next commit (still before any reply): report it then, and
  // from then on watch for it to go
  const seen = new MutationObserver(() => {
    const pending = w.querySelector('.gl-pending-node');
    if (!pending) return;
    seen.disconnect();
    resolve({shown: true, text: pending.textContent, box: r(pending),
             placed: pending.closest('.react-flow__node').style.transform,
             after: r(w.querySelector("[data-node-id='b']")),
             newNodeDrawn: w.querySelector("[data-node-id='step']") !== null});
    const gone = new MutationObserver(() => {
      if (w.querySelector('.gl-pending-node')) return;
      log.gone = true;
      log.newNodeDrawn = w.querySelector("[data-node-id='step']") !== null;
      gone.disconnect();
    });
    gone.observe(w, {subtree: true, childList: true});
  });
  seen.observe(w, {subtree: true, childList: true});
})"""


def test_adding_a_kernel_draws_a_pending_node_until_the_new_one_lands(lab, page, artifacts):
    nb, w = open_editor(page, artifacts, lab, SMALL_EDITOR, "c")
    if w.locator("[data-layout=palette]").get_attribute("aria-pressed") == "true":
        w.locator("[data-layout=palette]").click()
    w.locator("[data-node-id='b']").click()
    expect(w.locator(".gl-node-editor [data-node='b']")).to_be_visible()
    during = w.evaluate(_ADD_AND_WATCH)
    assert during["shown"] and during["text"] == "Adding step\u2026", during
    assert not during["newNodeDrawn"], during
    y0 = during["box"][1]
    by1 = during["after"][3]
    assert y0 >= by1, f"the pending node {during['box']} should sit below b {during['after']}"
    # (not centred under b any more: c is there, and a new node moves no other, so it lands beside)
    page.wait_for_function("() => window.__glPending.gone", timeout=30_000)
    assert page.evaluate("() => window.__glPending.newNodeDrawn"), "the pending node went before the new node was drawn"
    expect(w.locator("[data-node-id='step']")).to_have_count(1)
    expect(w.locator(".gl-pending-node")).to_be_hidden()
    landed = w.locator("[data-node-id='step']").evaluate("el => el.closest('.react-flow__node').style.transform")
    assert landed == during["placed"], "the new node lands where its pending box was (in drawing units)"
    assert python_value(nb, "[n.name for n in small.body]") == ["a", "b", "step", "c"]

    # a refused add drops its pending box and says why: delete the selected last node and, before
    # the reply, add after it (the add's position no longer exists when Python gets it)
    w.locator("[data-node-id='c']").click()
    expect(w.locator(".gl-node-editor [data-node='c']")).to_be_visible()
    shown = w.evaluate("""w => new Promise((resolve) => {
      [...w.querySelectorAll('.gl-node-editor button')].find(b => b.textContent === 'Delete').click();
      w.querySelector(".gl-kernel-item[data-ref$=':step']").click();
      const seen = new MutationObserver(() => {
        if (w.querySelector('.gl-pending-node')) { seen.disconnect(); resolve(true); }
      });
      seen.observe(w, {subtree: true, childList: true});
    })""")  # fmt: skip
    assert shown
    expect(w.locator(".gl-banner-text")).to_contain_text("index 4 is out of range")
    expect(w.locator(".gl-pending-node")).to_be_hidden()
    expect(w.locator(".gl-pending")).to_be_hidden()
    expect(w.locator("[data-node-id='c']")).to_have_count(0)
    assert python_value(nb, "[n.name for n in small.body]") == ["a", "b", "step"]


def test_grouping_asks_for_the_sequence_name(lab, page, artifacts):
    nb, w = open_editor(page, artifacts, lab, SMALL_EDITOR, "c")
    if w.locator("[data-layout=side]").get_attribute("aria-pressed") == "true":
        w.locator("[data-layout=side]").click()
    w.locator("[data-node-id='a']").click()
    w.locator("[data-node-id='b']").click(modifiers=["Shift"])
    w.locator(".gl-side button", has_text="Group into a sequence").click()
    form = w.locator(".gl-group-form")
    name = form.locator("[aria-label='sequence name']")
    expect(form).to_be_visible()
    expect(name).to_have_value("group")
    expect(name).to_be_focused()

    # a bad name is refused as it is typed, in the model's words; Enter does nothing
    name.fill("2nd pass")
    expect(form.locator(".gl-group-error")).to_contain_text("is not a valid identifier (it starts with a digit)")
    expect(form.locator("button[type=submit]")).to_be_disabled()
    name.press("Enter")
    expect(w.locator("[data-group]")).to_have_count(0)
    nb.shot("canvas-tools-03-group-name-refused", w)

    # Escape cancels, keeping the selection
    name.press("Escape")
    expect(form).to_be_hidden()
    expect(w.locator(".gl-side button", has_text="Group into a sequence")).to_be_visible()

    # what Python refuses (here the nodes changed meanwhile) is said in the form, in Python's words
    w.locator(".gl-side button", has_text="Group into a sequence").click()
    name.fill("warmup")
    nb.run_code("small.remove('b')")
    name.press("Enter")
    expect(form.locator(".gl-group-error")).to_contain_text("node 'b' no longer exists")
    expect(form).to_be_visible()
    name.press("Escape")

    w.locator("[data-node-id='a']").click()
    w.locator("[data-node-id='c']").click(modifiers=["Shift"])
    w.locator(".gl-side button", has_text="Group into a sequence").click()
    name.fill("warmup")
    name.press("Enter")
    cluster = w.locator("[data-group='warmup']")
    expect(cluster).to_have_count(1)
    expect(cluster.locator(".gl-fgroup-title").first).to_contain_text("warmup")
    expect(form).to_be_hidden()
    nb.shot("canvas-tools-04-grouped", w)
    assert python_value(nb, "[n.name for n in small.body]") == ["warmup"]


#: 150 dispatches in one column, each bound to `x`: at Fit a node is a few pixels tall.
LONG_EDITOR = column_editor("long", 150, "ed3")


def test_zoomed_out_the_canvas_draws_boxes_and_says_so_and_zoomed_in_draws_everything(lab, page, artifacts):
    """Zoomed out, labels and then bindings are left out (painting them dropped frames while panning
    500 nodes); the boxes stay where they are and still take a click; zoomed in, everything is back."""
    nb, w = open_editor(page, artifacts, lab, LONG_EDITOR, "s149")
    canvas = w.locator(".gl-flow-canvas")
    w.locator("[data-canvas=fit]").click()
    expect(canvas).to_have_attribute("data-detail", "overview")
    expect(w.locator(".react-flow__edge")).to_have_count(0)
    expect(w.locator(".gl-detail-note")).to_contain_text("bindings")
    expect(w.locator("[data-node-id='s0'] .gl-ftitle")).to_be_hidden()
    expect(w.locator(".gl-fdispatch[data-node-id]")).to_have_count(150)
    nb.shot("canvas-overview", w)

    w.locator("[data-node-id='s75']").click()
    expect(w.locator("[data-node-id='s75']")).to_have_class(re.compile(r"\bgl-selected\b"))

    pane = box(w.locator(".react-flow__pane"))
    at = box(w.locator("[data-node-id='s75']"))  # panned clear of the side panel that the click opened
    page.mouse.move(at["x"] + at["width"] / 2, at["y"] + at["height"] / 2)
    for _ in range(16):  # each wheel step zooms by about 1.18 around the pointer: from Fit past 30%
        page.mouse.wheel(0, -120)
        page.wait_for_timeout(20)
    expect(canvas).to_have_attribute("data-detail", "full")
    expect(w.locator(".gl-detail-note")).to_be_hidden()
    expect(w.locator(".react-flow__edge")).to_have_count(150)
    zoom = w.evaluate("(w) => w.querySelector('.react-flow__viewport').style.transform")
    titles = w.locator(".gl-fdispatch .gl-ftitle")
    nb.shot("canvas-zoomed-in", w)
    shown = [t for t in titles.all() if t.is_visible() and _on_screen(t, pane)]
    assert shown, f"no dispatch title is drawn in view at {zoom}"


def _on_screen(locator: Locator, area: dict[str, float]) -> bool:
    b = locator.bounding_box()
    return (
        b is not None
        and area["x"] <= b["x"] < area["x"] + area["width"]
        and area["y"] <= b["y"] < area["y"] + area["height"]
    )


def test_elks_worker_starts_once_a_page_and_is_timed_apart_from_the_layouts(lab, page, artifacts):
    """The worker's start (parsing ELK, a warm-up) is paid by the page's first layout only, and is not
    counted in any layout's time: a second editor on the page lays out on the running worker."""
    nb, w = open_editor(page, artifacts, lab, TALL_EDITOR, "s23")
    laid_out = re.compile(r"^\d+\.\d$")
    expect(w.locator(".gl-flow-canvas")).to_have_attribute("data-elk-ms", laid_out, timeout=30_000)
    nb.run_code(SMALL_EDITOR)
    canvases = page.locator(".gl-editor .gl-flow-canvas")
    expect(canvases).to_have_count(2)
    expect(canvases.nth(1)).to_have_attribute("data-elk-ms", laid_out, timeout=30_000)
    first, second = (float(canvases.nth(k).get_attribute("data-elk-start-ms") or "nan") for k in range(2))
    assert first > 0, f"the page's first layout should have waited for the worker to start, waited {first} ms"
    assert second == 0, f"the second editor's layout waited {second} ms for a worker already running"
