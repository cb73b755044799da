"""The widget in Jupyter Notebook 7: a real ``jupyter notebook`` server, headless Chromium, a real kernel.

A smoke test: the same anywidget front-end as in JupyterLab loads in Notebook 7's page and draws the
graph (its SVG nodes appear), and an edit made in Python reaches it.
"""

from __future__ import annotations

from collections.abc import Iterator

import nbformat
import pytest
from labserver import ARTIFACTS, Lab, running_lab
from nbpage import Notebook
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.e2e

CELLS = [
    "import graphlab as gl\nfrom graphlab.api import doc_kernels\n\ng = doc_kernels.demo_graph()\ned = gl.editor(g, kernels=doc_kernels)\ned",
]


@pytest.fixture(scope="module")
def notebook7(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """Jupyter Notebook 7 on a folder holding one notebook that opens the editor."""
    root = tmp_path_factory.mktemp("nb7")
    (root / "notebooks").mkdir()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nbformat.write(nb, root / "notebooks" / "smoke.ipynb")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with running_lab(root / "notebooks", root / "home", ARTIFACTS / "notebook7.log", app="notebook") as server:
        yield server


def notebook_own_error(exc) -> bool:
    """Notebook 7.6's keyboard-shortcut settings code (its own bundle) throws this on every page load,
    with or without graphlab's extensions (checked by disabling each of them); nothing else is let by."""
    return "reading 'schema'" in exc.message and "/static/notebook/notebook_core." in (exc.stack or "")


@pytest.fixture
def page(browser_context) -> Page:
    page = browser_context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: None if notebook_own_error(exc) else errors.append(str(exc)))
    yield page
    page.close()
    assert errors == [], "uncaught errors in the page"


def test_the_widget_draws_in_notebook_7(notebook7, page, artifacts):
    nb = Notebook(page, artifacts)
    nb.open(f"{notebook7.url}/notebooks/smoke.ipynb?token={notebook7.token}")
    assert page.evaluate("() => window.jupyterapp.name") == "Jupyter Notebook"
    nb.run_all()
    assert nb.errors() == []
    w = nb.widget()
    expect(w.locator("[data-node-id='steps/saxpy']")).to_have_count(1)
    expect(w.locator("[data-node-id='steps/again']")).to_have_count(1)
    nb.shot("20-notebook7-widget", w)

    nb.run_code("g.dispatch(doc_kernels.fill, x='x', value='a')")
    expect(w.locator("[data-node-id='fill']")).to_have_count(1)
