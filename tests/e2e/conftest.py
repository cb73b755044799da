"""A real JupyterLab server and a real headless Chromium for the widget's end-to-end tests.

One server and one browser per test module (this runs on 2-core CI machines; module scope, so
Playwright's event loop is gone before the rest of the suite runs: widget code checks for a running
loop to decide when to redraw): the server serves a
temporary copy of ``notebooks/`` on 127.0.0.1, a free port and a random token, with the JupyterLab
app exposed to the page (``--LabApp.expose_app_in_browser``) so tests can wait on its kernel
instead of on fixed sleeps. Chromium is Debian's (``/usr/bin/chromium``; ``playwright install``
needs a network this project does not assume), launched headless with a fresh profile. Screenshots
go to ``test-artifacts/e2e/``.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from labserver import ARTIFACTS, ROOT, Lab, chromium, running_lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """JupyterLab on a copy of notebooks/, shut down when the session ends."""
    root = tmp_path_factory.mktemp("lab")
    shutil.copytree(ROOT / "notebooks", root / "notebooks", ignore=shutil.ignore_patterns("out", "*.graph.json", ".ipynb_checkpoints"))
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with running_lab(root / "notebooks", root / "home", ARTIFACTS / "jupyterlab.log") as server:
        yield server


@pytest.fixture(scope="module")
def browser_context(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """Headless Chromium with a fresh profile."""
    with chromium(tmp_path_factory.mktemp("chromium-profile")) as context:
        yield context


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.fixture
def page(browser_context: Any) -> Iterator[Any]:
    """A new page of the module's browser; the test fails if the page raised an uncaught error."""
    page = browser_context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    page.close()
    assert errors == [], "uncaught errors in the page"
