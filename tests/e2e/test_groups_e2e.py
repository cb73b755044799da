"""Groups on the canvas in a real JupyterLab and Chromium: a loop copied and pasted (Ctrl+C, Ctrl+V) is a second loop
group with its own body, and a group dragged by its title moves its members together, one undo step, kept through
save and reload. Groups are found by ``data-group``, nodes by ``data-node-id``. Screenshots go to test-artifacts/e2e/.
"""

from __future__ import annotations

import re

import pytest
from canvas_actions import drag, node, open_editor, save_and_reopen
from nbpage import Notebook
from playwright.sync_api import Locator, expect
from test_node_editor_e2e import boxes
from test_widget_e2e import python_value

pytestmark = pytest.mark.e2e

LOOPED = """\
import taichi as ti
import graphlab as gl
ti.init(arch=ti.cpu, log_level=ti.WARN)

@ti.kernel
def add_one(x: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in x:
        x[i] += 1.0

@ti.kernel
def halve(x: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in x:
        x[i] *= 0.5

g = gl.Graph("looped")
x = g.ndarray("x", ti.f32, ndim=1)
n = g.scalar("n", ti.i32)
body = g.define("bump")
body.dispatch(add_one, x)
body.dispatch(halve, x)
g.loop(body, count=n, name="times")
g.dispatch(add_one, x, name="after")
ed = gl.editor(g, kernels=[add_one, halve])
ed
"""


def group(w: Locator, group_id: str) -> Locator:
    return w.locator(f"[data-group='{group_id}']").first


def title(w: Locator, group_id: str) -> Locator:
    return group(w, group_id).locator(".gl-fgroup-title")


def open_looped(lab, page, artifacts) -> tuple[Notebook, Locator]:
    return open_editor(lab, page, artifacts, LOOPED, "times/halve", size=(1600, 1000))


def test_copy_and_paste_a_loop_gives_a_second_loop_group(lab, page, artifacts):
    nb, w = open_looped(lab, page, artifacts)
    expect(w.locator(".gl-fgroup-loop[data-group]")).to_have_count(1)
    title(w, "times").click(position={"x": 12, "y": 9})  # the title's left end: edges cross its middle
    w.locator(".gl-flow-canvas").focus()
    page.keyboard.press("Control+c")
    page.keyboard.press("Control+v")
    expect(w.locator(".gl-fgroup-loop[data-group]")).to_have_count(2)
    expect(group(w, "times#2")).to_be_visible()
    expect(node(w, "times#2/add_one")).to_be_visible()
    expect(node(w, "times#2/halve")).to_be_visible()
    assert python_value(nb, "[n.name for n in g.body]") == ["times", "times#2", "after"]
    assert python_value(nb, "(g.node('times#2').body, g.node('times#2').count)") == ["bump_2", "n"]
    assert python_value(nb, "ed.history['undo'][-1]") == "paste times#2"
    # the copy lands beside the original where it covers nothing, not a few pixels off it
    copy = group(w, "times#2").bounding_box()
    for other in (group(w, "times"), node(w, "after")):
        b = other.bounding_box()
        assert copy and b
        apart = (
            copy["x"] >= b["x"] + b["width"] or b["x"] >= copy["x"] + copy["width"]
            or copy["y"] >= b["y"] + b["height"] or b["y"] >= copy["y"] + copy["height"]
        )  # fmt: skip
        assert apart, f"the pasted loop {copy} covers {b}"
    nb.shot("groups-01-loop-pasted", w)
    # the group's right-click menu duplicates it too
    title(w, "times#2").click(button="right", position={"x": 12, "y": 9})
    w.locator(".gl-menu [data-action=duplicate]").click()
    expect(w.locator(".gl-fgroup-loop[data-group]")).to_have_count(3)
    assert python_value(nb, "[n.name for n in g.body]") == ["times", "times#2", "times#3", "after"]


def test_dragging_a_group_moves_its_members_together_and_is_kept_through_save_and_reload(lab, page, artifacts):
    nb, w = open_looped(lab, page, artifacts)
    before = boxes(w)
    drag(page, title(w, "times"), 160, 70, grab=(12, 9))  # the title's left end: edges cross its middle
    nb.wait_idle()
    after = boxes(w)
    for member in ("times/add_one", "times/halve"):
        assert abs(after[member][0] - before[member][0] - 160) < 4, (member, before[member], after[member])
        assert abs(after[member][1] - before[member][1] - 70) < 4, (member, before[member], after[member])
    assert after["after"] == before["after"], "a node outside the group stayed"
    assert python_value(nb, "ed.history['undo'][-1]") == "move times"
    stored = python_value(nb, "{k: list(v) for k, v in g.layout.positions.items()}")
    assert set(stored) == {"times/add_one", "times/halve"}, stored
    nb.shot("groups-02-dragged", w)

    w2 = save_and_reopen(nb, "looped.graph.json", "add_one, halve", "times/halve")
    assert python_value(nb, "{k: list(v) for k, v in g2.layout.positions.items()}") == stored
    b1, b2 = boxes(w), boxes(w2)
    scale = (b2["times/halve"][2] - b2["times/halve"][0]) / (b1["times/halve"][2] - b1["times/halve"][0])
    for axis in (0, 1):  # the members keep their offsets from each other after the reload
        gap1 = b1["times/halve"][axis] - b1["times/add_one"][axis]
        gap2 = b2["times/halve"][axis] - b2["times/add_one"][axis]
        assert abs(gap2 - gap1 * scale) < 3, (axis, gap1, gap2, scale)
    nb.shot("groups-03-reloaded", w2)


def test_select_all_takes_groups_too_so_delete_leaves_no_empty_loop_and_undo_brings_all_back(lab, page, artifacts):
    """Ctrl+A selects the groups with the dispatches: a Delete took the dispatches out of their loop and left
    the loop empty (an error on the canvas). With many nodes selected, the menu offers no Rename."""
    nb, w = open_looped(lab, page, artifacts)
    w.locator(".gl-flow-canvas").focus()
    page.keyboard.press("Control+a")
    expect(group(w, "times")).to_have_class(re.compile(r"\bgl-selected\b"))
    expect(node(w, "after")).to_have_class(re.compile(r"\bgl-selected\b"))
    node(w, "after").click(button="right")
    expect(w.locator(".gl-menu [data-action=delete]")).to_be_visible()
    expect(w.locator(".gl-menu [data-action=rename]")).to_have_count(0)
    page.keyboard.press("Escape")
    w.locator(".gl-flow-canvas").focus()
    page.keyboard.press("Delete")
    expect(w.locator(".gl-fdispatch")).to_have_count(0)
    expect(w.locator("[data-group]")).to_have_count(0)
    page.keyboard.press("Control+z")
    expect(group(w, "times")).to_have_count(1)
    expect(node(w, "after")).to_have_count(1)
    # (asked last: a cell run moves the focus to the notebook)
    assert python_value(nb, "[n.name for n in g.body]") == ["times", "after"]
