"""graphlab installs like a real extension (issue 21, point 7): the built wheel, ``pip install``-ed into a fresh
venv on a PATH with no npm, gives a working widget and graph file viewer in JupyterLab, and the widget in
Notebook 7.

Everything the browser loads must come from the wheel: the widget's bundle (``graphlab/widget/static``), the
file viewer's prebuilt lab extension and its server extension's config (pyproject's ``shared-data``). The
servers run the fresh venv's Python with no ``PYTHONPATH``, so nothing of this checkout leaks in; the test
checks the kernel imported graphlab from that venv. ``make test`` builds the wheel once and passes it in
``GRAPHLAB_WHEEL``; run alone, the test builds one (``pip wheel``, which needs the front-end built first:
``make frontend``). Dependencies are pinned to this environment's versions (``pip freeze``), so the test
installs what the suite was run with.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from labserver import ARTIFACTS, ROOT, Lab, running_lab
from nbpage import Notebook
from playwright.sync_api import Page, expect
from test_widget_e2e import python_value

from graphlab.api import doc_kernels

pytestmark = pytest.mark.e2e

_PASSED = ("LANG", "LC_ALL", "TMPDIR", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE")

#: Tools the servers may call besides the venv's own: Graphviz's ``dot`` draws the file viewer's pictures.
TOOLS = ("dot",)

CELL = (
    "import shutil\nimport graphlab as gl\nfrom graphlab.api import doc_kernels\n\n"
    "g = doc_kernels.demo_graph()\ned = gl.editor(g, kernels=doc_kernels)\ned"
)


def _wheel(tmp: Path) -> Path:
    given = os.environ.get("GRAPHLAB_WHEEL")
    if given:
        return Path(given)
    for needed in ("graphlab/widget/static/widget.js", "labextension/dist/package.json"):
        if not (ROOT / needed).is_file():
            pytest.fail(f"{needed} is not built, so no wheel can be: run `make frontend` first")
    out = tmp / "wheel"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(ROOT)], check=True)
    (wheel,) = out.glob("graphlab-*.whl")
    return wheel


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """A fresh venv with the wheel installed; yields the environment its servers run in (no npm on PATH)."""
    tmp = tmp_path_factory.mktemp("wheel-install")
    wheel = _wheel(tmp)
    venv = tmp / "venv"
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", str(venv)], check=True)
    tools = tmp / "tools"
    tools.mkdir()
    for tool in TOOLS:
        found = shutil.which(tool)
        if found:
            (tools / tool).symlink_to(found)
    path = os.pathsep.join([str(venv / "bin"), str(tools)])
    assert shutil.which("npm", path=path) is None and shutil.which("node", path=path) is None
    freeze = subprocess.run(
        [sys.executable, "-m", "pip", "freeze", "--exclude-editable"], check=True, capture_output=True, text=True
    ).stdout
    pins = tmp / "constraints.txt"
    pins.write_text("".join(line + "\n" for line in freeze.splitlines() if not line.startswith("graphlab")))
    environ = {
        "PATH": path,
        "HOME": str(tmp / "home"),
        "JUPYTER_DATA_DIR": str(tmp / "data"),
        "PYTHONNOUSERSITE": "1",
        "TI_OFFLINE_CACHE_FILE_PATH": str(tmp / "ticache"),
        # the locale, temp folder, and how this machine reaches the package index (pip's settings, CA files, proxies)
        **{k: v for k, v in os.environ.items() if k in _PASSED or k.startswith("PIP_") or "PROXY" in k.upper()},
    }
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, "-c", str(pins), str(wheel), "ipykernel", "notebook"], check=True, env=environ)
    environ["VENV"] = str(venv)
    yield environ


def _serve(environ: dict[str, str], tmp: Path, app: str, log: str):
    root = tmp / "root"
    root.mkdir()
    doc_kernels.demo_graph().save(root / "demo.graph.json")
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(CELL)])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nbformat.write(notebook, root / "smoke.ipynb")
    python = str(Path(environ["VENV"]) / "bin" / "python")
    server = {k: v for k, v in environ.items() if k != "VENV"}
    return running_lab(root, tmp / "home", ARTIFACTS / log, app=app, python=python, environ=server)


@pytest.fixture(scope="module")
def lab(installed: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    with _serve(installed, tmp_path_factory.mktemp("wheel-lab"), "jupyterlab", "wheel-jupyterlab.log") as server:
        yield server


def _check_kernel(nb: Notebook, venv: str) -> None:
    assert python_value(nb, "gl.__file__").startswith(venv), "the kernel imported graphlab from elsewhere"
    assert python_value(nb, "shutil.which('npm')") is None


def test_the_wheel_gives_jupyterlab_the_widget_and_the_file_viewer(lab, installed, page: Page, artifacts):
    page.goto(f"{lab.url}/lab?token={lab.token}&reset")
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell", timeout=120_000)
    page.locator(".jp-DirListing-item", has_text="demo.graph.json").dblclick()
    view = page.locator(".gl-fileview")
    expect(view).to_have_attribute("data-state", "drawn", timeout=120_000)
    expect(view.locator("svg g.node[id='steps/saxpy']")).to_have_count(1)
    view.screenshot(path=str(artifacts / "wheel-01-file-viewer.png"))

    nb = Notebook(page, artifacts)
    nb.open(lab.notebook_url("smoke.ipynb"))
    nb.run_all()
    assert nb.errors() == []
    expect(nb.widget().locator("[data-node-id='steps/saxpy']")).to_have_count(1, timeout=120_000)
    nb.shot("wheel-02-widget", nb.widget())
    _check_kernel(nb, installed["VENV"])


def test_the_wheel_gives_notebook_7_the_widget(installed, browser_context, artifacts, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wheel-nb7")
    with _serve(installed, tmp, "notebook", "wheel-notebook7.log") as server:
        page = browser_context.new_page()
        try:
            nb = Notebook(page, artifacts)
            nb.open(f"{server.url}/notebooks/smoke.ipynb?token={server.token}")
            assert page.evaluate("() => window.jupyterapp.name") == "Jupyter Notebook"
            nb.run_all()
            assert nb.errors() == []
            expect(nb.widget().locator("[data-node-id='steps/saxpy']")).to_have_count(1, timeout=120_000)
            _check_kernel(nb, installed["VENV"])
        finally:
            page.close()
