"""The REST handler behind the file viewer: a graph file's drawing and the notebook cell that loads it.

``GET graphlab/drawing?path=notebooks/mpm88.graph.json`` answers ``{"svg": ..., "cell": ...}``, or
400 with ``{"message": ...}`` naming the file and the JSON path of what is wrong. Paths are those of
the server's contents API (relative to its root directory) and cannot leave it.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from tornado import web

from graphlab.fileview.drawing import SUFFIX

#: Seconds a drawing may take (Taichi's import plus Graphviz; a big graph is folded past 200 nodes).
DRAW_TIMEOUT = 120


class DrawingHandler(APIHandler):
    """Draws in a child process (``python -m graphlab.fileview.drawing``), so the server stays light."""

    auth_resource = "contents"

    @web.authenticated
    @authorized
    async def get(self) -> None:
        root = Path(self.settings["server_root_dir"]).expanduser().resolve()
        path = self._resolve(root, self.get_query_argument("path"))
        # in the root, with the path under it: messages name the file as the file browser does
        child = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "graphlab.fileview.drawing", str(path.relative_to(root)),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=root,
        )  # fmt: skip
        try:
            out, err = await asyncio.wait_for(child.communicate(), DRAW_TIMEOUT)
        except asyncio.TimeoutError:
            child.kill()
            await child.wait()
            raise web.HTTPError(500, f"{path.name}: drawing took over {DRAW_TIMEOUT} s; stopped") from None
        try:
            answer = json.loads(out)
        except ValueError:
            tail = err.decode("utf-8", "replace").strip().splitlines()[-3:]
            raise web.HTTPError(500, f"{path.name}: the drawing process failed ({' | '.join(tail)})") from None
        if "error" in answer:
            raise web.HTTPError(400, answer["error"])
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(answer))

    def _resolve(self, root: Path, relative: str) -> Path:
        """The file under the server's root; 400 for anything else (no ``..`` out, no other suffix)."""
        path = (root / relative.lstrip("/")).resolve()
        if not path.is_relative_to(root):
            raise web.HTTPError(400, f"{relative}: not under the server's root directory")
        if not path.name.endswith(SUFFIX):
            raise web.HTTPError(400, f"{relative}: the viewer draws {SUFFIX} files only")
        if not path.is_file():
            raise web.HTTPError(404, f"{relative}: no such file")
        return path
