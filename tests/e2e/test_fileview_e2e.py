"""The graph file viewer end to end: a real JupyterLab with graphlab's lab and server extensions.

Double-clicking a ``.graph.json`` in the file browser opens it drawn (the server draws it, no kernel),
and its "Open in notebook" button writes a notebook next to it whose first cell loads it into
``gl.editor``; running that notebook shows the editor on the same graph.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.parse
import urllib.request

import pytest
from nbpage import Notebook
from playwright.sync_api import Page, expect

from graphlab.api import doc_kernels
from graphlab.fileview.drawing import loader_cell
from graphlab.model.nodes import Dispatch

pytestmark = pytest.mark.e2e


def open_lab(lab, page: Page) -> None:
    page.goto(f"{lab.url}/lab?token={lab.token}&reset")
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell", timeout=120_000)


def drawn_ids(page: Page) -> list[str]:
    view = page.locator(".gl-fileview")
    expect(view).to_have_attribute("data-state", "drawn", timeout=120_000)
    return sorted(view.locator("svg g.node").evaluate_all("nodes => nodes.map(n => n.id)"))


def test_double_click_draws_the_file_and_opens_it_in_a_notebook(lab, page, artifacts):
    graph = doc_kernels.demo_graph()
    graph.save(lab.root / "demo.graph.json")
    open_lab(lab, page)
    page.locator(".jp-DirListing-item", has_text="demo.graph.json").dblclick()

    expected = [node_id for node_id, node in graph.nodes() if isinstance(node, Dispatch)]
    assert drawn_ids(page) == sorted([*expected, *(f"arg:{name}" for name in graph.args)])
    # drawn without the kernels: buffers have no read/write direction (a scalar is always read)
    tips = page.locator(".gl-fileview svg g.edge a").evaluate_all(
        "links => links.map(a => a.getAttributeNS('http://www.w3.org/1999/xlink', 'title'))"
    )
    unknown = "{}: whether the kernel reads or writes it is unknown"
    assert sorted(set(tips)) == ["R a", unknown.format("x"), unknown.format("y")]
    expect(page.locator(".gl-fileview-note")).to_contain_text("Drawn from the file alone")
    page.locator(".gl-fileview").screenshot(path=str(artifacts / "10-graph-file-drawn.png"))

    page.locator(".jp-ToolbarButtonComponent", has_text="Open in notebook").click()
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget?.context?.path === 'demo.ipynb'", timeout=60_000
    )
    written = json.loads((lab.root / "demo.ipynb").read_text())
    source = written["cells"][0]["source"]
    assert "".join(source) == loader_cell("demo.graph.json", (lab.root / "demo.graph.json").read_bytes())

    nb = Notebook(page, artifacts)
    nb.open(lab.notebook_url("demo.ipynb"))
    nb.run_all()
    assert nb.errors() == []
    editor = nb.widget()
    for node_id in expected:
        expect(editor.locator(f"[data-node-id='{node_id}']")).to_have_count(1)
    nb.shot("11-graph-file-in-editor", editor)


def test_a_broken_file_shows_where_it_is_broken(lab, page):
    (lab.root / "broken.graph.json").write_text(
        json.dumps({"format": "graphlab.graph/1", "name": "b", "args": [], "sequences": [],
                    "body": [{"type": "dispatch", "name": "k", "kernel": "m:k", "bindings": 3}]})
    )  # fmt: skip
    open_lab(lab, page)
    page.locator(".jp-DirListing-item", has_text="broken.graph.json").dblclick()
    view = page.locator(".gl-fileview")
    expect(view).to_have_attribute("data-state", "error", timeout=120_000)
    # named as the file browser names it (not by the server's own path), with the JSON path
    message = re.compile(r"^broken\.graph\.json: \$\.body\[0\]\.bindings: expected an object, got an integer$")
    expect(view.locator(".gl-fileview-error")).to_have_text(message)


def drawing_request(lab, path: str, *, token: bool = True) -> tuple[int, dict]:
    query = urllib.parse.urlencode({"path": path, **({"token": lab.token} if token else {})})
    try:
        with urllib.request.urlopen(f"{lab.url}/graphlab/drawing?{query}", timeout=120) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        body = exc.read()
        return exc.code, json.loads(body) if body.startswith(b"{") else {}


def test_the_drawing_route_refuses_what_it_must_not_draw(lab):
    doc_kernels.demo_graph().save(lab.root / "ok.graph.json")
    status, body = drawing_request(lab, "../outside.graph.json")
    assert status == 400 and "not under the server's root directory" in body["message"]
    status, body = drawing_request(lab, "quickstart.ipynb")
    assert status == 400 and "draws .graph.json files only" in body["message"]
    status, body = drawing_request(lab, "missing.graph.json")
    assert status == 404 and "no such file" in body["message"]
    status, _ = drawing_request(lab, "ok.graph.json", token=False)
    assert status == 403
