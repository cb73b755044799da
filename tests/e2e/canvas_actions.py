"""What the canvas e2e tests do to the editor again and again: open it on a graph, find a node, drag.

One place for the steps whose details matter to React Flow (a drag starts only on a first pointer move that
it does not count; the view is fitted only after ELK's layout is in), so each test says what it checks.
"""

from __future__ import annotations

from nbpage import Notebook
from playwright.sync_api import Locator, Page, expect


def node(w: Locator, node_id: str) -> Locator:
    """A node of the canvas by its model id (the DOM's ``data-node-id``)."""
    return w.locator(f"[data-node-id='{node_id}']").first


def open_editor(
    lab, page: Page, artifacts, code: str, last: str, *, size: tuple[int, int], file_browser: bool = False
) -> tuple[Notebook, Locator]:
    """Run ``code`` (a cell that shows an editor) in the quickstart notebook at a window ``size``; return the
    notebook and the widget once node ``last`` is drawn, ELK's layout is in and the view is fitted to it.

    ``file_browser``: open JupyterLab's file browser first, so the notebook has the width a user's has.
    """
    page.set_viewport_size({"width": size[0], "height": size[1]})
    nb = Notebook(page, artifacts)
    nb.open(lab.notebook_url("quickstart.ipynb"))
    if file_browser:
        nb.command("filebrowser:activate")
    nb.run_code(code)
    w = nb.widget()
    expect(node(w, last)).to_be_visible()
    expect(w.locator(".gl-flow-canvas[data-elk-ms]")).to_have_count(1, timeout=30_000)  # ELK's layout is in
    w.scroll_into_view_if_needed()
    page.wait_for_timeout(300)  # and the view fitted to it
    return nb, w


def drag(page: Page, source: Locator, dx: float, dy: float, *, grab: tuple[float, float] | None = None) -> None:
    """Drag ``source`` by (``dx``, ``dy``) px with the mouse, in ten steps.

    ``grab``: where to hold it, from its box's top left (default: the middle of its top edge, 8 px down);
    a group is held by the left end of its title, since edges to its members cross the middle.
    """
    b = source.bounding_box()
    assert b is not None, "the element to drag is not on the page"
    x, y = (b["x"] + grab[0], b["y"] + grab[1]) if grab else (b["x"] + b["width"] / 2, b["y"] + 8)
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + 2, y)  # React Flow starts the drag on this first move, which it does not count
    for i in range(1, 11):
        page.mouse.move(x + 2 + dx * i / 10, y + dy * i / 10)
    page.mouse.up()


def save_and_reopen(nb: Notebook, file: str, kernels: str, last: str) -> Locator:
    """Save the notebook's graph ``g`` to ``file``, load it back as ``g2`` (with ``kernels``, as a cell writes
    them) and show it in a second editor ``ed2``; return that widget once node ``last`` is drawn and in view."""
    nb.run_code(
        f"g.save({file!r})\ng2 = gl.load({file!r}, kernels=[{kernels}])\ned2 = gl.editor(g2, kernels=[{kernels}])\ned2"
    )
    w2 = nb.widget()
    expect(node(w2, last)).to_be_visible()
    w2.scroll_into_view_if_needed()
    nb.page.wait_for_timeout(300)  # the view fitted to the reloaded layout
    return w2
