"""The arg editor end to end: a click on a buffer's node opens its editor in the side panel, in a real
JupyterLab and Chromium on the quickstart notebook's graph (args ``x``, ``tmp``, ``k``).

A rename is drawn under the new name and every binding follows it; the form refuses a taken name
before asking; a role and a shape change reach the model; deleting an arg a dispatch still binds is
refused with the model's reason shown in the panel, and nothing changes. Screenshots go to
test-artifacts/e2e/.
"""

from __future__ import annotations

import re

import pytest
from nbpage import Notebook
from playwright.sync_api import expect
from test_widget_e2e import python_value

pytestmark = pytest.mark.e2e


def test_click_a_buffer_rename_it_change_it_and_see_a_bound_delete_refused(lab, page, artifacts):
    page.set_viewport_size({"width": 1280, "height": 800})
    nb = Notebook(page, artifacts)
    nb.open(lab.notebook_url("quickstart.ipynb"))
    nb.run_all()
    assert nb.errors() == []
    w = nb.widget()
    w.scroll_into_view_if_needed()

    # a click on the buffer selects it and opens its editor
    w.locator("[data-node-id='arg:tmp']").click()
    editor = w.locator(".gl-arg-editor [data-arg='tmp']")
    expect(editor).to_be_visible()
    expect(w.locator("[data-node-id='arg:tmp']")).to_have_class(re.compile(r"\bgl-selected\b"))
    expect(editor.locator(".gl-arg-uses li")).to_have_text(["step/smooth.dst", "step/copy_back.src"])
    nb.shot("arg-01-buffer-clicked", w)

    # rename: drawn under the new name, the bindings follow, the editor stays on it
    name = w.locator("[aria-label='arg name']")
    name.fill("scratch")
    name.press("Enter")
    expect(w.locator("[data-node-id='arg:scratch']")).to_have_count(1)
    expect(w.locator("[data-node-id='arg:scratch'] .gl-ftitle").first).to_contain_text("scratch")
    expect(w.locator("[data-node-id='arg:tmp']")).to_have_count(0)
    expect(w.locator(".gl-arg-editor [data-arg='scratch']")).to_be_visible()
    nb.shot("arg-02-renamed", w)
    assert python_value(nb, "list(g.args)") == ["x", "scratch", "k"]
    assert python_value(nb, "g.node('step/smooth').bound") == {"src": "x", "dst": "scratch", "k": "k"}

    # a taken name is refused by the form, with the reason, before anything is asked
    name = w.locator("[aria-label='arg name']")
    name.fill("x")
    name.press("Enter")
    expect(w.locator(".gl-arg-message")).to_have_text('rename: "x" is already declared: pick another name')
    assert python_value(nb, "list(g.args)") == ["x", "scratch", "k"]

    # role and shape reach the model
    w.locator("[aria-label='arg role']").select_option("state")
    expect(w.locator("[aria-label='arg role']")).to_have_value("state")
    shape = w.locator("[aria-label='arg shape']")
    expect(shape).to_have_value("n")
    shape.fill("")  # blank: any shape; the placeholder then shows what the kernels' loops need
    shape.press("Enter")
    expect(w.locator(".gl-arg-editor .gl-hint", has_text="any shape; the kernels' loops need")).to_be_visible()
    assert python_value(nb, "[g.args['scratch'].role, g.args['scratch'].shape]") == ["state", None]

    # deleting an arg a dispatch binds: the model's refusal in the panel, the graph unchanged
    version = python_value(nb, "g.version")
    w.locator(".gl-arg-editor button", has_text="Delete arg").click()
    message = w.locator(".gl-arg-message.gl-arg-error")
    expect(message).to_contain_text("deleting the arg refused: arg 'scratch' is still bound at step/smooth.dst")
    expect(message).to_contain_text("unbind it first")
    expect(w.locator("[data-node-id='arg:scratch']")).to_have_count(1)
    nb.shot("arg-03-delete-refused", w)
    assert python_value(nb, "[list(g.args), g.version]") == [["x", "scratch", "k"], version]

    # the arg edits undo like any other (the refused delete left nothing to undo): a temp of shape (n) again
    undo = w.locator(".gl-toolbar button", has_text="Undo")
    expect(undo).to_have_attribute("title", re.compile(r"^Undo arg scratch any shape"))
    undo.click()
    expect(w.locator("[aria-label='arg shape']")).to_have_value("n")
    expect(undo).to_have_attribute("title", re.compile(r"^Undo arg scratch role state"))
    undo.click()
    expect(w.locator("[aria-label='arg role']")).to_have_value("temp")
    assert python_value(nb, "[g.args['scratch'].role, g.args['scratch'].shape]") == ["temp", ["n"]]

    # while a debug session runs, a click on a buffer still inspects it, its editor over the values
    w.locator("[data-debug=start]").click()
    expect(w.locator(".gl-timeline")).to_be_visible(timeout=120_000)  # the session compiles its kernels first
    w.locator("[data-node-id='arg:x']").click()
    expect(w.locator(".gl-inspect")).to_have_attribute("data-buffer", "x")
    expect(w.locator(".gl-tab-page[data-tab=inspect] .gl-arg-editor [data-arg='x']")).to_be_visible()
    nb.shot("arg-04-debugging-editor-and-inspect", w)
