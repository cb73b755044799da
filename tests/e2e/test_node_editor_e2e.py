"""The node editor canvas (React Flow + ELK) in a real JupyterLab and Chromium: drag and the position
kept through save and reload, a new node moving no other, drag-to-bind with a refusal that says why,
box select + Delete + Undo, copy/paste, the dark theme, Fit at 1280x800 with the file browser open,
the minimap beside the selection, and mpm88's labels readable in program order at 1920x1080.
Nodes are found by the canvas's ``data-node-id`` / ``data-port`` / ``data-edge`` / ``data-group``.
Screenshots go to test-artifacts/e2e/.
"""

from __future__ import annotations

import re

import pytest
from canvas_actions import drag, node, open_editor, save_and_reopen
from nbpage import Notebook
from playwright.sync_api import Locator, expect
from test_widget_e2e import python_value

pytestmark = pytest.mark.e2e

SMALL = """\
import taichi as ti
import graphlab as gl
ti.init(arch=ti.cpu, log_level=ti.WARN)

@ti.kernel
def fill(x: ti.types.ndarray(dtype=ti.f32, ndim=1), value: ti.f32):
    for i in x:
        x[i] = value

@ti.kernel
def twice(x: ti.types.ndarray(dtype=ti.f32, ndim=1), y: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in x:
        y[i] = 2 * x[i]

@ti.kernel
def count(n: ti.types.ndarray(dtype=ti.i32, ndim=1)):
    for i in n:
        n[i] += 1

g = gl.Graph("small")
x = g.ndarray("x", ti.f32, ndim=1)
y = g.ndarray("y", ti.f32, ndim=1)
k = g.ndarray("k", ti.i32, ndim=1)
g.dispatch(fill, x, g.scalar("value", ti.f32), name="init")
g.dispatch(twice, x, y, name="double")
ed = gl.editor(g, kernels=[fill, twice, count])
ed
"""

MPM88 = """\
import taichi as ti
import graphlab as gl
from graphlab.api.examples import load_taichi_example, mpm88_graph
ti.init(arch=ti.cpu, log_level=ti.WARN)
m = load_taichi_example("mpm88_graph")
ed = gl.editor(mpm88_graph(m, substeps=8))
ed
"""

BOX = "el => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; }"


def boxes(w: Locator) -> dict[str, list[float]]:
    return w.evaluate(f"""w => Object.fromEntries([...w.querySelectorAll('.gl-fnode[data-node-id]')]
                         .map(el => [el.dataset.nodeId, ({BOX})(el)]))""")  # fmt: skip


def placed(w: Locator) -> dict[str, str]:
    """Where React Flow draws each node in drawing units (its wrapper's transform), by node id."""
    return w.evaluate("""w => Object.fromEntries([...w.querySelectorAll('.gl-fnode[data-node-id]')]
                         .map(el => [el.dataset.nodeId, el.closest('.react-flow__node').style.transform]))""")  # fmt: skip


def open_small(lab, page, artifacts, size=(1600, 1000)) -> tuple[Notebook, Locator]:
    return open_editor(lab, page, artifacts, SMALL, "double", size=size)


def test_drag_save_reload_keeps_the_position_and_adding_moves_no_other(lab, page, artifacts):
    nb, w = open_small(lab, page, artifacts)
    for data in ("node-id='init'", "node-id='arg:x'", "port='double.x'", "edge='arg:x->double.x'"):
        expect(w.locator(f"[data-{data}]")).to_have_count(1)
    before = node(w, "init").bounding_box()
    drag(page, node(w, "init"), 180, 40)
    page.wait_for_function("() => true")
    nb.wait_idle()
    stored = python_value(nb, "[list(p) for p in [g.layout.positions['init']]]")[0]
    after = node(w, "init").bounding_box()
    assert abs(after["x"] - before["x"] - 180) < 4 and abs(after["y"] - before["y"] - 40) < 4, (before, after)
    nb.shot("node-editor-01-dragged", w)

    w2 = save_and_reopen(nb, "small.graph.json", "fill, twice, count", "init")
    assert python_value(nb, "list(g2.layout.positions['init'])") == stored
    # the same place relative to the rest of the drawing as before the save
    b1, b2 = boxes(w), boxes(w2)
    offset = lambda bs: (bs["init"][0] - bs["double"][0], bs["init"][1] - bs["double"][1])
    scale = (b2["double"][2] - b2["double"][0]) / (b1["double"][2] - b1["double"][0])
    assert abs(offset(b2)[0] - offset(b1)[0] * scale) < 3 and abs(offset(b2)[1] - offset(b1)[1] * scale) < 3

    # adding a kernel from the palette: no node already drawn moves
    before_add = python_value(nb, "{k: list(v) for k, v in ed2.model.layout.positions.items()}")
    drawn = placed(w2)
    w2.locator(".gl-kernel-item", has_text="count").first.click()
    expect(node(w2, "count")).to_be_visible()
    page.wait_for_timeout(300)
    after_add = placed(w2)
    assert len(after_add) == len(drawn) + 1
    for node_id, where in drawn.items():
        assert after_add[node_id] == where, f"{node_id} moved when a node was added"
    layout = python_value(nb, "{k: list(v) for k, v in ed2.model.layout.positions.items()}")
    assert "count" in layout and all(layout[k] == v for k, v in before_add.items())
    nb.shot("node-editor-02-added-nothing-moved", w2)


def test_drag_a_buffer_onto_a_port_binds_it_and_a_wrong_port_says_why(lab, page, artifacts):
    nb, w = open_small(lab, page, artifacts)
    w.locator(".gl-kernel-item", has_text="count").first.click()
    expect(node(w, "count")).to_have_count(1)
    # k is the only i32 ndarray: guessed, drawn dashed until accepted
    expect(w.locator("[data-edge='arg:k->count.n']")).to_have_class(re.compile(r"\bgl-guessed\b"), timeout=10_000)
    assert python_value(nb, "ed.graph['nodes'][-1].get('guessed')") == ["n"]

    handle = w.locator("[data-node-id='arg:y'] .react-flow__handle")
    port = w.locator("[data-port='count.n'] .react-flow__handle")
    # y is f32: n takes i32, refused at once with the reason
    _drag_between(page, handle, port)
    expect(w.locator(".gl-canvas-note")).to_contain_text("count.n refuses y: dtype f32 does not fit dtype i32")
    assert python_value(nb, "g.node('count').binding('n')") == "k"
    # x onto double.y: bound
    _drag_between(
        page,
        w.locator("[data-node-id='arg:x'] .react-flow__handle"),
        w.locator("[data-port='double.y'] .react-flow__handle"),
    )
    expect(w.locator("[data-edge='arg:x->double.y']")).to_have_count(1)
    assert python_value(nb, "g.node('double').binding('y')") == "x"
    nb.shot("node-editor-03-bound-by-drag", w)


def _drag_between(page, a: Locator, b: Locator) -> None:
    page.wait_for_timeout(400)  # the view settles (it fits the drawing again after an edit)
    ba, bb = a.bounding_box(), b.bounding_box()
    page.mouse.move(ba["x"] + ba["width"] / 2, ba["y"] + ba["height"] / 2)
    page.mouse.down()
    tx, ty = bb["x"] + bb["width"] / 2, bb["y"] + bb["height"] / 2
    for i in range(1, 11):
        page.mouse.move(ba["x"] + (tx - ba["x"]) * i / 10, ba["y"] + (ty - ba["y"]) * i / 10)
    page.mouse.up()


def test_box_select_delete_undo_and_copy_paste(lab, page, artifacts):
    nb, w = open_small(lab, page, artifacts)
    a, b = node(w, "init").bounding_box(), node(w, "double").bounding_box()
    x0, y0 = min(a["x"], b["x"]) - 12, min(a["y"], b["y"]) - 12
    x1, y1 = max(a["x"] + a["width"], b["x"] + b["width"]) + 12, max(a["y"] + a["height"], b["y"] + b["height"]) + 12
    page.keyboard.down("Shift")
    page.mouse.move(x0, y0)
    page.mouse.down()
    page.mouse.move((x0 + x1) / 2, (y0 + y1) / 2)
    page.mouse.move(x1, y1)
    page.mouse.up()
    page.keyboard.up("Shift")
    expect(w.locator(".gl-fdispatch.gl-selected")).to_have_count(2)
    page.keyboard.press("Delete")
    expect(node(w, "init")).to_have_count(0)
    expect(node(w, "double")).to_have_count(0)
    assert python_value(nb, "ed.history['undo'][-1]") == "delete 2 nodes"
    w.locator(".gl-flow-canvas").focus()  # the new cell took the focus; give it back to the canvas
    page.keyboard.press("Control+z")
    expect(node(w, "double")).to_be_visible()
    expect(node(w, "init")).to_be_visible()
    nb.shot("node-editor-04-delete-undone", w)

    node(w, "double").click()
    page.keyboard.press("Control+c")
    page.keyboard.press("Control+v")
    expect(node(w, "double#2")).to_be_visible()
    assert python_value(nb, "g.node('double#2').bound") == {"x": "x", "y": "y"}
    # Ctrl+A selects every dispatch; the right-click menu is the canvas's, not JupyterLab's cell menu
    w.locator(".gl-flow-canvas").focus()
    page.keyboard.press("Control+a")
    expect(w.locator(".gl-fdispatch.gl-selected")).to_have_count(3)
    node(w, "init").click(button="right")
    expect(w.locator(".gl-menu")).to_be_visible()
    expect(page.locator(".lm-Menu")).to_have_count(0)
    page.keyboard.press("Escape")
    expect(w.locator(".gl-menu")).to_be_hidden()
    nb.shot("node-editor-05-pasted", w)


def test_dark_theme_background_follows_the_jupyterlab_variable(lab, page, artifacts):
    nb, w = open_small(lab, page, artifacts)
    light = w.locator(".react-flow").evaluate("el => getComputedStyle(el).backgroundColor")
    nb.command("apputils:change-theme", {"theme": "JupyterLab Dark"})
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'", timeout=30_000)
    page.wait_for_timeout(500)
    dark, want = w.locator(".react-flow").evaluate(
        "el => [getComputedStyle(el).backgroundColor, "
        "(() => { const d = document.createElement('div'); d.style.background = 'var(--jp-layout-color0)'; "
        "document.body.append(d); const c = getComputedStyle(d).backgroundColor; d.remove(); return c; })()]"
    )
    nb.shot("node-editor-06-dark", w)
    nb.command("apputils:change-theme", {"theme": "JupyterLab Light"})
    assert dark == want and dark != light, (light, dark, want)


def test_mpm88_fit_at_1280_with_the_file_browser_and_labels_at_1920(lab, page, artifacts):
    nb, w = open_editor(lab, page, artifacts, MPM88, "substep/substep_g2p", size=(1280, 800), file_browser=True)
    w.locator("[data-canvas=fit]").click()
    page.wait_for_timeout(300)
    canvas = w.locator(".gl-canvas").evaluate(BOX)
    drawn = boxes(w)
    assert len(drawn) >= 10
    for node_id, (x0, y0, x1, y1) in drawn.items():
        assert canvas[0] - 0.5 <= x0 and x1 <= canvas[2] + 0.5 and canvas[1] - 0.5 <= y0 and y1 <= canvas[3] + 0.5, (
            f"{node_id} {drawn[node_id]} is outside the canvas {canvas} after Fit"
        )
    nb.shot("node-editor-07-mpm88-fit-1280", w)

    # zoomed in, part of the graph is out of view: the overview shows, away from the selected node
    w.locator(".gl-flow-canvas").focus()
    for _ in range(3):
        page.keyboard.press("+")
    expect(w.locator(".react-flow__minimap")).to_be_visible()
    for _ in range(6):  # walk the selection through the graph (arrow keys): the overview keeps clear of it
        page.keyboard.press("ArrowDown")
        page.wait_for_timeout(250)
        selected = python_value(nb, "ed.selected")
        w.locator(".gl-flow-canvas").focus()
        mm = w.locator(".react-flow__minimap").evaluate(BOX)
        # a group is marked by its title strip (its box may span the whole canvas)
        nb_box = node(w, selected).evaluate(
            f"el => ({BOX})(el.matches('.gl-fgroup') ? el.querySelector('.gl-fgroup-title') : el)"
        )
        apart = mm[2] <= nb_box[0] or nb_box[2] <= mm[0] or mm[3] <= nb_box[1] or nb_box[3] <= mm[1]
        assert apart, f"the minimap {mm} covers the selected {selected} {nb_box}"
    nb.shot("node-editor-07b-minimap-beside-selection", w)

    page.set_viewport_size({"width": 1920, "height": 1080})
    nb.command("filebrowser:toggle-main")
    w.scroll_into_view_if_needed()
    w.locator("[data-canvas=fit]").click()
    page.wait_for_timeout(300)
    labels = w.evaluate(f"""w => [...w.querySelectorAll('.gl-fdispatch, .gl-farg')].map(el => ({{
        id: el.dataset.nodeId, box: ({BOX})(el),
        texts: [...el.querySelectorAll('.gl-ftitle, .gl-ftype, .gl-fport')].map(t => {{
          const r = document.createRange(); r.selectNodeContents(t); const b = r.getBoundingClientRect();
          return {{text: t.textContent, box: [b.left, b.top, b.right, b.bottom],
                   px: parseFloat(getComputedStyle(t).fontSize) * (el.getBoundingClientRect().width / el.offsetWidth)}};
        }})}}))""")  # fmt: skip
    for item in labels:
        x0, y0, x1, y1 = item["box"]
        for t in item["texts"]:
            assert t["px"] >= 9, f"{item['id']}: {t['text']!r} drawn at {t['px']:.1f} px"
            tx0, ty0, tx1, ty1 = t["box"]
            assert x0 <= tx0 + 0.5 and tx1 <= x1 + 0.5 and y0 <= ty0 + 0.5 and ty1 <= y1 + 0.5, (
                f"{item['id']}: {t['text']!r} {t['box']} spills out of {item['box']}"
            )
    order = [
        "substep/substep_reset_grid",
        "substep/substep_p2g",
        "substep/substep_update_grid_v",
        "substep/substep_g2p",
    ]
    titles = {i["id"]: i["texts"][0]["text"] for i in labels}
    assert [titles[k].split(". ")[0] for k in order] == ["1", "2", "3", "4"], titles
    tops = [next(i["box"][1] for i in labels if i["id"] == k) for k in order]
    assert tops == sorted(tops), f"dispatches are not top to bottom in program order: {tops}"
    nb.shot("node-editor-08-mpm88-1920", w)


def test_double_click_renames_the_menu_makes_a_loop_event_and_esc_closes_the_help(lab, page, artifacts):
    nb, w = open_small(lab, page, artifacts)
    node(w, "double").dblclick()
    box = w.locator("[aria-label='new name for double']")
    expect(box).to_be_focused()
    box.fill("twice_x")
    box.press("Enter")
    expect(node(w, "twice_x")).to_be_visible()
    assert python_value(nb, "[n.name for n in g.body]") == ["init", "twice_x"]

    # "Make loop..." hands the chosen nodes to the loop form with a DOM event on the widget
    w.evaluate(
        "w => { window.__glLoop = null; w.addEventListener('graphlab:make-loop', e => { window.__glLoop = e.detail; }); }"
    )
    node(w, "init").click(button="right")
    w.locator(".gl-menu [data-action=make-loop]").click()
    assert page.evaluate("() => window.__glLoop") == {"nodes": ["init"]}
    expect(w.locator(".gl-menu")).to_be_hidden()
    # a right-click on the background: the canvas's menu, not JupyterLab's
    empty = w.locator(".react-flow__pane").evaluate("""pane => { const r = pane.getBoundingClientRect();
      for (let y = r.top + 40; y < r.bottom; y += 15) for (let x = r.left + 5; x < r.right; x += 15)
        if (document.elementFromPoint(x, y) === pane) return [x, y];
      return null; }""")  # fmt: skip
    page.mouse.click(empty[0], empty[1], button="right")
    expect(w.locator(".gl-menu [data-action=tidy]")).to_be_visible()
    expect(page.locator(".lm-Menu")).to_have_count(0)
    page.keyboard.press("Escape")
    expect(w.locator(".gl-menu")).to_be_hidden()

    # Tidy lays everything out again with ELK and stores every position (buffers too), one undo step
    w.locator("[data-canvas=tidy]").click()
    expect(w.locator(".gl-pending")).to_be_hidden()
    nb.wait_idle()
    layout = python_value(nb, "sorted(g.layout.positions)")
    assert layout == sorted(["init", "twice_x", "arg:x", "arg:y", "arg:k", "arg:value"]), layout
    assert python_value(nb, "ed.history['undo'][-1]") == "place 6 nodes"

    # Esc closes the shortcuts help
    w.locator(".gl-toolbar button", has_text="?").click()
    expect(w.locator(".gl-help")).to_be_visible()
    w.locator(".gl-flow-canvas").focus()
    page.keyboard.press("Escape")
    expect(w.locator(".gl-help")).to_be_hidden()
    nb.shot("node-editor-09-renamed", w)


#: A chain of 30 dispatches: a drawing taller than any window.
TALL = """import taichi as ti
import graphlab as gl
ti.init(arch=ti.cpu, log_level=ti.WARN)

@ti.kernel
def step(x: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in x:
        x[i] += 1

tall = gl.Graph("tall")
tall.ndarray("x", ti.f32, ndim=1, shape="n")
for k in range(30):
    tall.dispatch(step, "x", name=f"s{k}")
gl.editor(tall, kernels={"step": step}, access="ast")"""


def test_a_widget_first_drawn_in_a_tall_window_shrinks_with_the_window(lab, page, artifacts):
    page.set_viewport_size({"width": 1920, "height": 1080})
    nb = Notebook(page, artifacts)
    nb.open(lab.notebook_url("quickstart.ipynb"))
    nb.run_code(TALL)
    w = nb.widget()
    expect(w.locator(".gl-flow-canvas[data-elk-ms]")).to_have_count(1, timeout=30_000)  # ELK's layout is in
    page.wait_for_timeout(300)
    height = "el => el.getBoundingClientRect().height"
    tall = w.evaluate(height)
    assert tall > 800, f"a chain of 30 dispatches at 1920x1080 should be drawn taller than the smaller window: {tall}"
    page.set_viewport_size({"width": 1280, "height": 800})
    page.wait_for_timeout(500)
    short = w.evaluate(height)
    assert short <= 800, f"the widget stays {short} px tall in an 800 px window (it was {tall} px at 1080)"
    nb.shot("node-editor-09-mpm88-shrinks-with-the-window", w)
