"""The canvas owns the space (issue 21, point 5), in a real JupyterLab and Chromium at 1280x800 with
the file browser open: the palette and the side panel are drawers floating over the canvas, which
keeps the widget's whole width; Fit puts the whole of mpm88 in the part the drawers leave uncovered;
the selected node is never under a drawer or the minimap; an error banner takes its room from the
widget's height budget (the widget is never taller than the window); the drawers close and open by
their handles and by keyboard; a side panel taller than the canvas scrolls inside its drawer, its tabs kept
in view, down to its last control. Screenshots go to test-artifacts/e2e/.
"""

from __future__ import annotations

import re

import pytest
from canvas_actions import node
from canvas_actions import open_editor as open_at
from nbpage import Notebook
from playwright.sync_api import Locator, Page, expect
from test_node_editor_e2e import MPM88, SMALL

pytestmark = pytest.mark.e2e

#: SMALL with 14 more dispatches, each with its own ndarray and scalar: a Values tab many times the canvas's height.
MANY_ARGS = SMALL.replace(
    "ed = gl.editor",
    """for i in range(14):
    g.dispatch(fill, g.ndarray(f"a{i}", ti.f32, ndim=1), g.scalar(f"s{i}", ti.f32), name=f"f{i}")
ed = gl.editor""",
)

BOX = "el => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; }"


def box(locator: Locator) -> list[float]:
    return locator.evaluate(BOX)


def open_editor(lab, page: Page, artifacts, code: str, last: str) -> tuple[Notebook, Locator]:
    """The editor at 1280x800 with the file browser open: the narrow notebook this file is about."""
    return open_at(lab, page, artifacts, code, last, size=(1280, 800), file_browser=True)


def uncovered(w: Locator) -> list[float]:
    """The part of the canvas on screen that no open drawer covers: [left, top, right, bottom]."""
    return w.evaluate("""w => {
      const c = w.querySelector('.gl-canvas').getBoundingClientRect();
      let left = c.left, right = c.right;
      for (const d of w.querySelectorAll('.gl-drawer')) {
        if (getComputedStyle(d).visibility === 'hidden') continue;
        const r = d.getBoundingClientRect();
        if (d.classList.contains('gl-drawer-left')) left = Math.max(left, r.right);
        else right = Math.min(right, r.left);
      }
      return [left, c.top, right, c.bottom];
    }""")  # fmt: skip


#: A node's box on screen; a group's is its title's text (a group may be wider than the view).
MARK = """el => { let r = el.getBoundingClientRect();
  if (el.matches('.gl-fgroup')) { const t = document.createRange();
    t.selectNodeContents(el.querySelector('.gl-fgroup-title')); r = t.getBoundingClientRect(); }
  return [r.left, r.top, r.right, r.bottom]; }"""


def inside(b: list[float], room: list[float], slack: float = 0.5) -> bool:
    return room[0] - slack <= b[0] and b[2] <= room[2] + slack and room[1] - slack <= b[1] and b[3] <= room[3] + slack


def apart(a: list[float], b: list[float]) -> bool:
    return a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]


def test_mpm88_canvas_keeps_the_width_fit_and_selection_keep_clear_of_the_drawers(lab, page, artifacts):
    nb, w = open_editor(lab, page, artifacts, MPM88, "substep/substep_g2p")
    side = w.locator(".gl-side")
    expect(side).to_be_visible()
    # the side panel floats over the canvas: the canvas keeps the widget's whole width (the notebook's
    # output area at 1280 px with the file browser open is 848 px wide, so that is all a cell can have)
    canvas = box(w.locator(".gl-canvas"))
    area = box(w.locator("xpath=ancestor::div[contains(@class, 'jp-OutputArea-output')][1]"))
    width = canvas[2] - canvas[0]
    print(f"canvas {width:.0f} px wide in an output area of {area[2] - area[0]:.0f} px, side panel open")
    assert width >= area[2] - area[0] - 4, f"the canvas is {width} px of the output area's {area[2] - area[0]} px"
    assert width >= 840, f"the canvas is only {width} px wide with the side panel open"
    drawer = box(w.locator(".gl-drawer[data-drawer=side]"))
    assert canvas[0] < drawer[0] < drawer[2] <= canvas[2] + 0.5, (canvas, drawer)

    # Fit shows every node inside the uncovered part
    w.locator("[data-canvas=fit]").click()
    page.wait_for_timeout(300)
    room = uncovered(w)
    drawn = w.evaluate(f"""w => Object.fromEntries([...w.querySelectorAll('.gl-fnode[data-node-id]')]
                           .map(el => [el.dataset.nodeId, ({BOX})(el)]))""")  # fmt: skip
    assert len(drawn) >= 10
    for node_id, b in drawn.items():
        assert inside(b, room), f"{node_id} {b} is not in the uncovered part {room} of the canvas after Fit"
    nb.shot("canvas-space-01-mpm88-fit-beside-the-drawer", w)

    # zoomed in and walking the selection: the selected node is never under the drawer or the minimap,
    # and the minimap is never under the drawer
    w.locator(".gl-flow-canvas").focus()
    for _ in range(4):
        page.keyboard.press("+")
    expect(w.locator(".react-flow__minimap")).to_be_visible()
    seen = set()
    for _ in range(8):
        page.keyboard.press("ArrowDown")
        page.wait_for_timeout(250)
        selected = w.evaluate("w => w.querySelector('.gl-selected')?.dataset.nodeId ?? null")
        assert selected is not None, "ArrowDown selected nothing"
        seen.add(selected)
        target = node(w, selected)
        b = target.evaluate(MARK)
        room = uncovered(w)
        mm = box(w.locator(".react-flow__minimap"))
        assert inside(b, room), f"the selected {selected} {b} is under a drawer or out of view {room}"
        assert apart(mm, b), f"the minimap {mm} covers the selected {selected} {b}"
        assert inside(mm, room), f"the minimap {mm} is under a drawer {room}"
        w.locator(".gl-flow-canvas").focus()
    assert len(seen) >= 4, seen
    nb.shot("canvas-space-02-selection-beside-drawer-and-minimap", w)

    # the palette opens over the left edge: the selected node is panned out from under it
    w.locator("[data-drawer-handle=palette]").click()
    expect(w.locator(".gl-palette")).to_be_visible()
    page.wait_for_timeout(300)
    selected = w.evaluate("w => w.querySelector('.gl-selected')?.dataset.nodeId ?? null")
    b = node(w, selected).evaluate(MARK)
    assert inside(b, uncovered(w)), f"{selected} {b} is under the palette {uncovered(w)}"
    nb.shot("canvas-space-03-both-drawers-open", w)

    # a kernel added from the palette: the new node (selected) is neither under a drawer nor the minimap
    before = set(w.evaluate("w => [...w.querySelectorAll('.gl-fnode[data-node-id]')].map(el => el.dataset.nodeId)"))
    w.locator(".gl-kernel-item", has_text="substep_g2p").first.click()
    page.wait_for_function(
        "([w, n]) => w.querySelectorAll('.gl-fnode[data-node-id]').length > n", arg=[w.element_handle(), len(before)]
    )
    expect(w.locator(".gl-pending")).to_be_hidden()
    page.wait_for_timeout(300)
    added = w.evaluate("w => w.querySelector('.gl-selected')?.dataset.nodeId ?? null")
    assert added is not None and added not in before, (added, before)
    b = node(w, added).evaluate(MARK)
    assert inside(b, uncovered(w)), f"the added {added} {b} is under a drawer {uncovered(w)}"
    if w.locator(".react-flow__minimap").count() > 0:
        assert apart(box(w.locator(".react-flow__minimap")), b), f"the minimap covers the added {added}"
    nb.shot("canvas-space-03b-added-beside-the-drawers", w)


def test_the_drawers_close_and_open_by_handle_and_keyboard_and_keep_the_users_choice(lab, page, artifacts):
    nb, w = open_editor(lab, page, artifacts, SMALL, "double")
    side, handle = w.locator(".gl-side"), w.locator("[data-drawer-handle=side]")
    expect(side).to_be_visible()
    expect(handle).to_have_attribute("aria-expanded", "true")

    # by its handle: closed, the handle stays on the canvas's edge; the canvas is no wider or narrower
    canvas = box(w.locator(".gl-canvas"))
    handle.click()
    expect(side).to_be_hidden()
    expect(handle).to_be_visible()
    expect(handle).to_have_attribute("aria-expanded", "false")
    assert box(w.locator(".gl-canvas")) == canvas
    hb = box(handle)
    assert canvas[2] - 20 <= hb[0] and hb[2] <= canvas[2] + 1.5, (
        f"the closed drawer's handle {hb} is not at the edge {canvas}"
    )
    nb.shot("canvas-space-04-side-closed", w)

    # the user's choice is kept: selecting a node does not open it again; asking for a tab does
    node(w, "init").click()
    page.wait_for_timeout(200)
    expect(side).to_be_hidden()
    w.locator("[data-open=values]").click()
    expect(side).to_be_visible()
    expect(w.locator(".gl-tab-page[data-tab=values]")).to_be_visible()

    # by keyboard: Esc in the drawer closes it and leaves the focus on the handle; Enter opens it again
    # and moves the focus in
    w.locator(".gl-tab[data-tab=node]").focus()
    page.keyboard.press("Escape")
    expect(side).to_be_hidden()
    expect(handle).to_be_focused()
    page.keyboard.press("Enter")
    expect(side).to_be_visible()
    assert w.evaluate("w => w.querySelector('.gl-side').contains(document.activeElement)"), "focus is not in the panel"
    # Esc in a text field is the field's (it gives the keys back to the editor), the drawer stays open
    w.locator(".gl-tab[data-tab=node]").click()
    field = w.locator(".gl-tab-page[data-tab=node] .gl-node-editor input[type=text]").first
    expect(field).to_be_visible()  # the selected node's name
    field.focus()
    page.keyboard.press("Escape")
    expect(field).not_to_be_focused()
    expect(side).to_be_visible()

    # the palette is a drawer too (started closed: the widget is narrower than 900 px)
    palette, phandle = w.locator(".gl-palette"), w.locator("[data-drawer-handle=palette]")
    expect(palette).to_be_hidden()
    phandle.focus()
    page.keyboard.press("Enter")
    expect(palette).to_be_visible()
    expect(w.locator(".gl-palette .gl-search")).to_be_focused()
    page.keyboard.press("Tab")  # from the search field to the first kernel: Esc there closes the palette
    page.keyboard.press("Escape")
    expect(palette).to_be_hidden()
    expect(phandle).to_be_focused()
    nb.shot("canvas-space-05-keyboard", w)

    # the canvas's menu "Add a kernel..." opens the closed palette and puts the caret in its search
    spot = w.locator(".react-flow__pane").evaluate("""pane => { const r = pane.getBoundingClientRect();
      for (let y = r.top + 40; y < r.bottom; y += 15) for (let x = r.left + 5; x < r.right; x += 15)
        if (document.elementFromPoint(x, y) === pane) return [x, y];
      return null; }""")  # fmt: skip
    assert spot is not None
    page.mouse.click(spot[0], spot[1], button="right")
    w.locator(".gl-menu [data-action=add]").click()
    expect(palette).to_be_visible()
    expect(w.locator(".gl-palette .gl-search")).to_be_focused()


def test_an_error_banner_takes_its_room_from_the_widgets_height(lab, page, artifacts):
    nb, w = open_editor(lab, page, artifacts, SMALL, "double")
    page.wait_for_function("w => w.style.height !== ''", arg=w.element_handle())
    canvas_before = w.locator(".gl-canvas").evaluate("el => el.clientHeight")
    height_before = w.evaluate("w => w.offsetHeight")
    assert height_before < 600, "the small graph's widget should follow its drawing"

    # a one-line error: the widget grows by the banner's height, the canvas keeps its own
    nb.run_code("ed.error = 'ValueError: something went wrong'")
    banner = w.locator(".gl-banner")
    expect(banner).to_be_visible()
    w.scroll_into_view_if_needed()
    page.wait_for_function(
        "([w, h]) => Math.abs(w.querySelector('.gl-canvas').clientHeight - h) <= 2",
        arg=[w.element_handle(), canvas_before],
        timeout=5_000,
    )
    assert w.evaluate("w => w.offsetHeight") > height_before

    # a long one: the banner scrolls, and the widget is never taller than the window
    nb.run_code("ed.error = '\\n'.join(f'line {i} of a long error' for i in range(80))")
    expect(banner).to_contain_text("line 79")
    w.scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    sizes = w.evaluate("""w => ({widget: w.getBoundingClientRect().height, window: window.innerHeight,
                                 canvas: w.querySelector('.gl-canvas').clientHeight})""")  # fmt: skip
    assert sizes["widget"] <= sizes["window"], sizes
    assert sizes["canvas"] >= canvas_before - 2, f"the banner took the canvas's height: {sizes}"
    nb.shot("canvas-space-06-long-error", w)

    # mpm88 is taller than the window allows: the widget stays within it with the banner shown
    nb.run_code(MPM88)
    w2 = nb.widget()
    expect(node(w2, "substep/substep_g2p")).to_be_visible()
    nb.run_code("ed.error = 'ValueError: something went wrong'")
    expect(w2.locator(".gl-banner")).to_be_visible()
    w2.scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    sizes = w2.evaluate("w => ({widget: w.getBoundingClientRect().height, window: window.innerHeight})")
    assert sizes["widget"] <= sizes["window"], sizes


def test_a_side_panel_taller_than_the_canvas_scrolls_in_its_drawer_to_its_last_control(lab, page, artifacts):
    nb, w = open_editor(lab, page, artifacts, MANY_ARGS, "f13")
    w.locator("[data-open=values]").click()
    side, tabs = w.locator(".gl-side"), w.locator(".gl-tabs")
    values = w.locator(".gl-tab-page[data-tab=values]")
    expect(values.locator("[data-value-arg=s13]")).to_have_count(1)
    inner, outer = side.evaluate("s => [s.scrollHeight, s.clientHeight]")
    assert inner > 2 * outer, f"the Values tab ({inner} px) should be far taller than its drawer ({outer} px)"
    drawer = box(w.locator(".gl-drawer[data-drawer=side]"))
    widget = box(w)
    assert widget[3] - widget[1] <= page.viewport_size["height"], (
        "an inspector drawer scrolls: the widget keeps its size"
    )
    assert drawer[3] <= widget[3] + 0.5, f"the drawer {drawer} runs past the widget {widget}: its bottom is cut"

    # the last control is reached by scrolling the drawer, the tabs stay at its top, and it takes a click
    last_input = values.locator("input[aria-label='value of s13']")
    last = values.locator("[data-value-arg=s13] [data-value=set]")
    last.scroll_into_view_if_needed()
    b = box(last)
    assert inside(b, drawer), f"the last control {b} is not inside the drawer {drawer}"
    assert box(tabs)[1] == drawer[1], "the tabs scrolled away with the content"
    centre = [(b[0] + b[2]) / 2, (b[1] + b[3]) / 2]
    assert w.evaluate(
        '(w, [x, y]) => w.querySelector("[data-value-arg=s13] [data-value=set]") === document.elementFromPoint(x, y)',
        centre,
    ), "something covers the last control"
    last_input.fill("2.5")
    last.click()
    expect(values.locator("[data-value-arg=s13]")).to_have_attribute("data-state", "given")
    nb.shot("canvas-space-07-long-values-at-its-end", w)

    # from the end, "Give value..." scrolls back up to the first arg: its row shows below the tabs, not under them
    w.locator("[data-debug=start]").click()
    give = w.locator(".gl-banner [data-open=give-value]")
    expect(give).to_be_visible(timeout=60_000)
    give.click()
    first = values.locator("[data-value-arg=x]")
    expect(first).to_have_class(re.compile("gl-value-focus"))
    page.wait_for_timeout(200)
    row, under = box(first), box(tabs)
    assert under[3] <= row[1] + 0.5, f"the focused row {row} is under the sticky tabs {under}"
    assert inside(row, box(w.locator(".gl-drawer[data-drawer=side]")))
    nb.shot("canvas-space-08-give-value-below-the-tabs", w)


def test_an_empty_graphs_hint_is_read_in_full_beside_the_side_panel(lab, page, artifacts):
    """The hint of an empty graph ("add a kernel from the palette") sits in the part of the canvas the
    drawers leave uncovered: centred on the whole canvas, the open side panel cut it off."""
    page.set_viewport_size({"width": 1280, "height": 800})
    nb = Notebook(page, artifacts)
    nb.open(lab.notebook_url("quickstart.ipynb"))
    nb.command("filebrowser:activate")
    nb.run_code("import graphlab as gl\ned = gl.editor(gl.Graph('empty'), kernels=[])\ned")
    w = nb.widget()
    hint = w.locator(".gl-canvas-empty")
    expect(hint).to_be_visible()
    expect(w.locator(".gl-drawer[data-drawer=side]")).to_be_visible()
    w.scroll_into_view_if_needed()
    text = hint.evaluate("el => { const r = document.createRange(); r.selectNodeContents(el); "
                         "const b = r.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; }")  # fmt: skip
    room = uncovered(w)
    assert room[2] - room[0] > 200, f"the side panel leaves no room to check: {room}"
    assert inside(text, room), f"the empty graph's hint {text} is under a drawer {room}"
    nb.shot("canvas-space-empty-hint", w)


def test_the_toolbar_is_one_row_with_one_fit_at_1280_with_the_file_browser_open(lab, page, artifacts):
    _nb, w = open_editor(lab, page, artifacts, SMALL, "double")
    fits = w.locator("button", has_text=re.compile(r"^\s*Fit\s*$"))
    expect(fits).to_have_count(1)  # the canvas's tools row keeps Fit; the toolbar had a second one
    expect(w.locator("[data-canvas=fit]")).to_have_count(1)
    toolbar = w.locator(".gl-toolbar")
    tops = toolbar.evaluate(
        "t => [...t.children].filter(c => c.offsetParent !== null && !c.matches('.gl-help'))"
        ".map(c => Math.round(c.getBoundingClientRect().top + c.getBoundingClientRect().height / 2))"
    )
    assert tops and max(tops) - min(tops) <= 2, f"the toolbar wraps onto {len(set(tops))} rows: {tops}"
    help_button = toolbar.locator("button", has_text="?")
    assert inside(box(help_button), box(toolbar)), "the ? button is inside the toolbar's one row"
    page.screenshot(path=str(artifacts / "toolbar_1280.png"))
