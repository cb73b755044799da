"""Keys while the canvas has focus, in a real JupyterLab and Chromium (issue 21, point 2): JupyterLab's
notebook keys stay out, and the editor's own keys still reach it after the focused element is removed.

In command mode JupyterLab binds single letters (``A`` inserts a cell, ``D D`` deletes one, ``M`` makes a
cell markdown) to ``.jp-Notebook.jp-mod-commandMode ... :focus``. Lumino walks from the key's target up
to the first ``data-lm-suppress-shortcuts`` and tests each element on the way, the target first: the
focused canvas (or node) itself matches ``:focus``, so the attribute on the widget's root alone did not
stop them. A click on the empty canvas and ``D D`` deleted the cell holding the editor.

A box selection puts the focus on React Flow's selection rectangle; Delete removes it with the nodes,
and the focus fell to the page, so the Ctrl+Z meant to undo the delete reached nothing.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect
from test_canvas_tools_e2e import SMALL_EDITOR, open_editor

pytestmark = pytest.mark.e2e

_CELLS = "() => window.jupyterapp.shell.currentWidget.content.widgets.map(c => c.model.type).join(',')"


def test_notebook_keys_do_not_fire_while_the_canvas_or_a_node_has_focus(lab, page, artifacts):
    nb, w = open_editor(page, artifacts, lab, SMALL_EDITOR, "c")
    cells = page.evaluate(_CELLS)
    canvas = w.locator(".gl-canvas")
    free = canvas.evaluate(
        "c => ({x: c.clientWidth - parseFloat(getComputedStyle(c).getPropertyValue('--gl-inset-right') || '0') - 8, y: 40})"
    )
    for target, click in (("the empty canvas", lambda: canvas.click(position=free)),
                          ("a node", lambda: w.locator("[data-node-id='b']").click())):  # fmt: skip
        click()
        assert page.evaluate("() => !!document.activeElement.closest('.gl-editor')"), f"{target} took no focus"
        for keys in (("a",), ("b",), ("m",), ("d", "d")):  # each would change the cells on its own
            for key in keys:
                page.keyboard.press(key)
            page.wait_for_timeout(300)  # a shortcut acts at once; nothing to wait on when it does not
            assert page.evaluate(_CELLS) == cells, f"{'+'.join(keys)} changed the notebook while {target} had focus"
    nb.shot("canvas-keys", w)


def test_keys_still_reach_the_editor_after_a_box_selection_is_deleted(lab, page, artifacts):
    # a box selection's focus sits on React Flow's selection rectangle, removed with the nodes it framed:
    # the focus fell to the page's body, so the Ctrl+Z that should undo the delete went nowhere
    nb, w = open_editor(page, artifacts, lab, SMALL_EDITOR, "c")
    boxes = [w.locator(f"[data-node-id='{n}']").bounding_box() for n in ("a", "b")]
    assert all(boxes)
    x0, y0 = min(b["x"] for b in boxes) - 12, min(b["y"] for b in boxes) - 12
    x1, y1 = max(b["x"] + b["width"] for b in boxes) + 12, max(b["y"] + b["height"] for b in boxes) + 12
    page.keyboard.down("Shift")
    page.mouse.move(x0, y0)
    page.mouse.down()
    for i in range(1, 11):
        page.mouse.move(x0 + (x1 - x0) * i / 10, y0 + (y1 - y0) * i / 10)
        page.wait_for_timeout(20)  # React Flow draws the box from pointer moves, one per frame
    page.mouse.up()
    page.keyboard.up("Shift")
    expect(w.locator("[data-node-id].gl-selected")).to_have_count(2)
    page.keyboard.press("Delete")
    expect(w.locator("[data-node-id='a']")).to_have_count(0)
    expect(w.locator("[data-node-id='c']")).to_have_count(1)
    assert page.evaluate("() => !!document.activeElement.closest('.gl-editor')"), "the focus left the editor"
    page.keyboard.press("Control+z")
    expect(w.locator("[data-node-id='a']")).to_have_count(1)
    expect(w.locator("[data-node-id='b']")).to_have_count(1)
    nb.shot("box-delete-undo", w)


def test_keys_still_reach_the_editor_after_a_context_menu_pick(lab, page, artifacts):
    # the menu's item had the focus and the menu hid itself after the pick: Ctrl+Z reached nothing
    nb, w = open_editor(page, artifacts, lab, SMALL_EDITOR, "c")
    w.locator("[data-node-id='b']").click(button="right")
    w.locator("[role=menu] >> text=Delete").click()
    expect(w.locator("[data-node-id='b']")).to_have_count(0)
    assert page.evaluate("() => !!document.activeElement.closest('.gl-editor')"), "the focus left the editor"
    page.keyboard.press("Control+z")
    expect(w.locator("[data-node-id='b']")).to_have_count(1)
    nb.shot("menu-delete-undo", w)
