"""Driving a notebook in JupyterLab from Playwright: open, run, add cells, read their output.

JupyterLab is started with ``--LabApp.expose_app_in_browser``, so the page has ``window.jupyterapp``;
waiting is done on the kernel's real state (busy/idle, execution counts), not on fixed sleeps.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from playwright.sync_api import Locator, Page

_NOTEBOOK = "window.jupyterapp.shell.currentWidget"

#: True once every code cell has run (none waiting) and the kernel is idle.
_SETTLED = f"""() => {{
  const nb = {_NOTEBOOK};
  if (!nb || !nb.content || !nb.sessionContext || !nb.sessionContext.session) return false;
  const kernel = nb.sessionContext.session.kernel;
  if (!kernel || kernel.status !== 'idle') return false;
  return ![...nb.content.node.querySelectorAll('.jp-InputArea-prompt')].some(p => p.textContent.includes('*'));
}}"""


class Notebook:
    """One open notebook tab."""

    def __init__(self, page: Page, artifacts: Path) -> None:
        self.page = page
        self.artifacts = artifacts

    def open(self, url: str) -> None:
        self.page.goto(url)
        self.page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget && "
                                    "window.jupyterapp.shell.currentWidget.sessionContext && "
                                    "window.jupyterapp.shell.currentWidget.sessionContext.session && "
                                    "window.jupyterapp.shell.currentWidget.sessionContext.session.kernel && "
                                    "window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status === 'idle'",
                                    timeout=120_000)  # fmt: skip

    def command(self, name: str, args: dict[str, Any] | None = None) -> None:
        self.page.evaluate("([n, a]) => window.jupyterapp.commands.execute(n, a)", [name, args or {}])

    def wait_idle(self, timeout: float = 180_000) -> None:
        # the kernel goes busy a moment after a run command: see it busy (or the cells counted) first
        self.page.wait_for_timeout(200)
        self.page.wait_for_function(_SETTLED, timeout=timeout)

    def run_all(self) -> None:
        self.command("notebook:run-all-cells")
        self.wait_idle()

    def errors(self) -> list[str]:
        """``ename: evalue`` of every error output in the notebook (from the cell models)."""
        return list(self.page.evaluate(
            """() => window.jupyterapp.shell.currentWidget.content.widgets
                 .filter(c => c.model.type === 'code')
                 .flatMap(c => c.model.outputs.toJSON())
                 .filter(o => o.output_type === 'error')
                 .map(o => `${o.ename}: ${o.evalue}`)"""
        ))  # fmt: skip

    def run_code(self, code: str, timeout: float = 120_000) -> str:
        """Append a code cell at the end, run it, and return its output text."""
        self.page.evaluate(
            """(code) => {
              const nb = window.jupyterapp.shell.currentWidget;
              nb.content.activeCellIndex = nb.content.widgets.length - 1;
            }""",
            code,
        )
        self.command("notebook:insert-cell-below")
        self.page.evaluate(
            """(code) => {
              const nb = window.jupyterapp.shell.currentWidget;
              nb.content.activeCell.model.sharedModel.setSource(code);
            }""",
            code,
        )
        self.command("notebook:run-cell")
        self.wait_idle(timeout)
        return str(self.page.evaluate(
            """() => {
              const nb = window.jupyterapp.shell.currentWidget;
              const cells = nb.content.widgets;
              const cell = cells[cells.length - 1];
              return cell.outputArea ? cell.outputArea.node.innerText : '';
            }"""
        ))  # fmt: skip

    def widget(self) -> Locator:
        return self.page.locator(".gl-editor").last

    def shot(self, name: str, target: Locator | None = None) -> None:
        path = self.artifacts / f"{name}.png"
        (target or self.page).screenshot(path=str(path))


def dumps(value: Any) -> str:
    return json.dumps(value)
