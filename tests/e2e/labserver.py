"""Start a JupyterLab server and a headless Chromium (the e2e tests' fixtures and bench/widget_latency.py).

The server runs this interpreter's JupyterLab on 127.0.0.1, a free port and a random token, with its
own config, runtime and settings folders (no news or update pop-ups over the widget), and
``--LabApp.expose_app_in_browser`` so a page can wait on its kernel. Chromium is Debian's
(``/usr/bin/chromium``, or ``GRAPHLAB_CHROMIUM``): ``playwright install`` needs a network.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "e2e"
CHROMIUM = Path(os.environ.get("GRAPHLAB_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Lab:
    """A running JupyterLab: its URL, token and the folder it serves."""

    def __init__(self, url: str, token: str, root: Path, log: Path) -> None:
        self.url = url
        self.token = token
        self.root = root
        self.log = log

    def notebook_url(self, name: str) -> str:
        return f"{self.url}/lab/tree/{name}?token={self.token}&reset"




@contextlib.contextmanager
def running_lab(
    root: Path,
    home: Path,
    log: Path,
    *,
    timeout: float = 90,
    app: str = "jupyterlab",
    python: str = sys.executable,
    environ: dict[str, str] | None = None,
) -> Iterator[Lab]:
    """JupyterLab serving ``root`` until the block ends (then terminated, killed if it lingers).

    ``app="notebook"`` starts Jupyter Notebook 7 instead (the same server, Notebook's pages).
    ``python`` and ``environ`` (in place of this process's environment): another installation's server,
    as the wheel test runs the one it installed.
    """
    (home / "config").mkdir(parents=True, exist_ok=True)
    notification = home / "settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    notification.parent.mkdir(parents=True, exist_ok=True)
    notification.write_text('{"fetchNews": "false", "checkForUpdates": false}')
    port, token = free_port(), secrets.token_hex(16)
    env = {
        **(os.environ if environ is None else environ),
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
        "PYTHONUNBUFFERED": "1",
    }
    cmd = [
        python, "-m", app, "--no-browser", "--ip=127.0.0.1", f"--port={port}",
        f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}", "--ServerApp.allow_root=True",
        *(["--LabApp.expose_app_in_browser=True", "--LabApp.news_url="] if app == "jupyterlab" else
          ["--JupyterNotebookApp.expose_app_in_browser=True"]),
    ]  # fmt: skip
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"JupyterLab exited with {proc.returncode}; see {log}")
            with contextlib.suppress(OSError), urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2) as r:
                if r.status == 200:
                    break
            if time.monotonic() > deadline:
                raise TimeoutError(f"JupyterLab did not answer on {url} within {timeout:.0f} s; see {log}")
            time.sleep(0.3)
        yield Lab(url, token, root, log)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextlib.contextmanager
def chromium(profile: Path) -> Iterator[Any]:
    """A Playwright browser context of headless Chromium with a fresh profile in ``profile``."""
    if not CHROMIUM.is_file():
        raise FileNotFoundError(f"no Chromium at {CHROMIUM}: apt-get install chromium (make test installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(profile),
            executable_path=str(CHROMIUM),
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1400, "height": 1000},
        )
        context.set_default_timeout(60_000)
        try:
            yield context
        finally:
            context.close()
