"""The REST handler behind the file viewer: a graph file's drawing and the notebook cell that loads it.

``GET graphlab/drawing?path=notebooks/mpm88.graph.json`` answers ``{"svg": ..., "cell": ...}``, or
400 with ``{"message": ...}`` naming the file and the JSON path of what is wrong. Paths are those of
the server's contents API (relative to its root directory) and cannot leave it; the server reads
the file (:mod:`graphlab.fileview.opening`) and the drawing child gets its bytes.

The child imports nothing from the served folder, whatever it holds (a ``networkx.py`` there would
otherwise run when any file is drawn): it runs isolated (``python -I``: no current folder, no
``PYTHON*`` variables, no user site) in a private empty folder, with the server's own import path
less the server's working folder and the root, and graphlab loaded from the server's own copy.
It leads a process group of its own, so a drawing stopped for taking too long takes Graphviz's
``dot`` with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import tempfile
from pathlib import Path

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from tornado import web

from graphlab.fileview.opening import PathRefusedError, read_under_root

#: Seconds a drawing may take (Taichi's import plus Graphviz; a big graph is folded past 200 nodes).
DRAW_TIMEOUT = 120

#: What the isolated child runs: the import path and graphlab's folder come as its first argument.
CHILD_BOOT = """\
import importlib.util, json, sys
path, package = json.loads(sys.argv.pop(1))
sys.path[:] = path
init = package + "/__init__.py"
spec = importlib.util.spec_from_file_location("graphlab", init, submodule_search_locations=[package])
sys.modules["graphlab"] = module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
from graphlab.fileview.drawing import main
sys.exit(main())
"""


def child_command(name: str, root: Path) -> list[str]:
    """The drawing child's command line: isolated Python, graphlab from here, no import path into ``root``."""
    unsafe = {Path.cwd().resolve(), root.resolve()}
    path = [str(Path(p).resolve()) for p in sys.path if p and Path(p).resolve() not in unsafe]
    package = str(Path(__file__).resolve().parents[1])  # this graphlab, wherever the server found it
    return [sys.executable, "-I", "-c", CHILD_BOOT, json.dumps([path, package]), "--stdin", name]


class DrawingHandler(APIHandler):
    """Draws in a child process (``graphlab.fileview.drawing``), so the server stays light."""

    auth_resource = "contents"

    @web.authenticated
    @authorized
    async def get(self) -> None:
        root = Path(self.settings["server_root_dir"]).expanduser().resolve()
        relative = self.get_query_argument("path")
        try:
            allow_hidden = bool(getattr(self.contents_manager, "allow_hidden", False))
            content = read_under_root(root, relative, allow_hidden=allow_hidden)
        except PathRefusedError as exc:
            raise web.HTTPError(exc.status, str(exc)) from None
        # messages name the file as the file browser does: by its path under the root
        answer = await draw_in_child(content, name=relative.lstrip("/"), root=root)
        if "error" in answer:
            raise web.HTTPError(400, answer["error"])
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(answer))


async def draw_in_child(content: bytes, *, name: str, root: Path, timeout: float = DRAW_TIMEOUT) -> dict[str, str]:
    """The child's answer for ``content`` (``{"svg", "cell"}`` or ``{"error"}``); 500 past ``timeout`` seconds.

    However the wait ends (an answer, the timeout, the request dropped), a child still running is
    killed with its whole process group before this returns.
    """
    with tempfile.TemporaryDirectory(prefix="graphlab-drawing-") as private:
        child = await asyncio.create_subprocess_exec(
            *child_command(name, root), cwd=private, start_new_session=True,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        try:
            out, err = await asyncio.wait_for(child.communicate(content), timeout)
        except asyncio.TimeoutError:
            raise web.HTTPError(500, f"{name}: drawing took over {timeout:g} s; stopped") from None
        finally:
            if child.returncode is None:  # not reaped yet, so its pid still names its group
                _kill_group(child.pid)
                await child.wait()
    try:
        answer = json.loads(out)
    except ValueError:
        tail = err.decode("utf-8", "replace").strip().splitlines()[-3:]
        raise web.HTTPError(500, f"{name}: the drawing process failed ({' | '.join(tail)})") from None
    return dict(answer)


def _kill_group(pgid: int) -> None:
    """Kill what is left of the child's process group (``dot`` outlives a killed child otherwise)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
