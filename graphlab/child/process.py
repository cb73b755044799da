"""Run one function in a fresh Python process, on JSON data, and bring its JSON result back.

graphlab runs Taichi work in child processes: Taichi allows one arch per ``ti.init`` and one
``ti.aot.Module`` per init, and a crash in Taichi must not kill the notebook. This module knows
nothing of kernels: :mod:`graphlab.child.carry` records how a child gets kernels back, and the function
run here rebuilds them (``payload.load_kernels``).
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from graphlab.core.errors import GraphlabError
from graphlab.core.leftovers import scratch_prefix
from graphlab.core.parentwatch import child_env, watch_parent

__all__ = ["ChildRunError", "run_child"]


class ChildRunError(GraphlabError, RuntimeError):
    """A child process failed; ``child_type`` is the child's exception type name (or ``None``)."""

    def __init__(self, message: str, *, child_type: str | None = None) -> None:
        super().__init__(message)
        self.child_type = child_type


_BOOT = "import sys; from graphlab.child.process import _child_main; sys.exit(_child_main(sys.argv[1:]))"


def run_child(
    entry: str,
    request: Mapping[str, Any],
    *,
    timeout: float = 600.0,
    sys_path: Sequence[str] = (),
) -> dict[str, Any]:
    """Run ``entry`` (``"module:function"``) on ``request`` in a fresh Python process.

    The function gets the request (JSON data) plus ``"workdir"``, a scratch folder deleted
    afterwards, and returns JSON data. The child shares nothing with this process: a Taichi crash
    or a second ``ti.init`` there cannot hurt the notebook. ``sys_path`` entries are importable there.
    The child dies with this process (:mod:`graphlab.core.parentwatch`), and a scratch folder a killed
    process left is deleted by the next call (:mod:`graphlab.core.leftovers`).

    Raises
    ------
    ChildRunError
        The child raised (its exception type and message are in the error), crashed or timed out.
    """
    package_root = str(Path(__file__).resolve().parents[2])  # the folder holding graphlab/
    env = child_env(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([package_root, *sys_path, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    with tempfile.TemporaryDirectory(prefix=scratch_prefix("child")) as tmp:
        req, out = Path(tmp, "request.json"), Path(tmp, "result.json")
        req.write_text(json.dumps({"entry": entry, "request": dict(request), "workdir": tmp}))
        try:
            proc = subprocess.run(
                [sys.executable, "-c", _BOOT, str(req), str(out)],
                capture_output=True,
                text=True,
                timeout=timeout,
                env=env,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise ChildRunError(f"child process for {entry} ran past {timeout:.0f} s; stopped") from exc
        tail = (proc.stdout + proc.stderr)[-3000:]
        if not out.is_file():
            how = (
                f"was killed by signal {-proc.returncode}"
                if proc.returncode < 0
                else (f"exited with status {proc.returncode}")
            )
            raise ChildRunError(f"child process for {entry} {how} without a result; its output:\n{tail}")
        result = json.loads(out.read_text())
    if "error" in result:
        err = result["error"]
        raise ChildRunError(
            f"child process for {entry} failed: {err['type']}: {err['message']}\n{err['traceback']}",
            child_type=err["type"],
        )
    return result["result"]


def _child_main(argv: Sequence[str]) -> int:
    """Entry point of the child: read the request, call the function, write the result atomically."""
    watch_parent()
    req_path, out_path = Path(argv[0]), Path(argv[1])
    message = json.loads(req_path.read_text())
    try:
        modname, _, fname = message["entry"].partition(":")
        request = dict(message["request"], workdir=message["workdir"])
        text = json.dumps({"result": getattr(importlib.import_module(modname), fname)(request)})
        status = 0
    except Exception as exc:  # reported to the parent, which raises ChildRunError
        error = {"type": type(exc).__name__, "message": str(exc), "traceback": traceback.format_exc()[-4000:]}
        text, status = json.dumps({"error": error}), 1
    tmp = out_path.with_suffix(".tmp")
    tmp.write_text(text)
    tmp.replace(out_path)
    return status
