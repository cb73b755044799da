"""A graph file drawn without its kernels: what JupyterLab's file viewer shows for a ``.graph.json``.

A graph file names its kernels (``module:qualname``) and loading it needs them (:func:`graphlab.load`
never imports what a file names). The viewer runs in the Jupyter server, with no kernel and none of
the user's modules, so it loads the file against stand-ins made from the file itself: one per kernel
reference, with the parameters its dispatches bind. The drawing is then :func:`graphlab.analysis.render`'s,
without diagnostics and without read/write directions (both need the real kernels: the notebook the
viewer opens has them).

The server draws in a child process: drawing imports Taichi (the read/write analysis tries the
kernels), which the Jupyter server should not carry. The server opens the file itself (once, after
checking where it leads: :mod:`graphlab.fileview.opening`) and hands the child its bytes on stdin
(``--stdin NAME``); ``python -m graphlab.fileview.drawing FILE`` reads a file by name, for a shell.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from graphlab.analysis.render import to_svg
from graphlab.core.errors import GraphFileError, GraphlabError
from graphlab.core.names import name_problem
from graphlab.model.graphfile import MAX_FILE_BYTES, loads, read_graph_file
from graphlab.model.kernels import KernelInfo, KernelRegistry, Param

#: The suffix the viewer opens (the same as JupyterLab's file type pattern in labextension/).
SUFFIX = ".graph.json"


def draw_file(path: str | Path) -> str:
    """The SVG drawing of the graph file at ``path``; GraphFileError names the place of a problem."""
    return draw_text(read_graph_file(path, file=str(path)), file=str(path))


def draw_text(text: str | bytes, *, file: str) -> str:
    """The SVG drawing of a graph file's content, ``file`` naming it in errors."""
    graph = loads(text, kernels=KernelRegistry(stand_in_kernels(text)), file=file)
    return to_svg(graph, diagnostics=[])


USAGE = "usage: python -m graphlab.fileview.drawing FILE.graph.json  (or --stdin NAME, the content on stdin)"


def main(argv: list[str] | None = None) -> int:
    """Print ``{"svg": ..., "cell": ...}`` for the file named on the command line, or ``{"error": ...}``.

    ``--stdin NAME`` reads the content from stdin (at most :data:`MAX_FILE_BYTES`) and names it
    ``NAME``: the Jupyter server's way, so the child never opens a path itself.
    """
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (1, 2) or (len(args) == 2) != (args[0] == "--stdin"):
        print(json.dumps({"error": USAGE}))
        return 2
    name = args[-1]
    try:
        text = _stdin_text(name) if len(args) == 2 else read_graph_file(name, file=name)
        with contextlib.redirect_stdout(sys.stderr):  # Taichi's banner is no part of the answer
            answer = {"svg": draw_text(text, file=name), "cell": loader_cell(Path(name).name, text)}
    except GraphlabError as exc:
        print(json.dumps({"error": str(exc)}))
        return 1
    print(json.dumps(answer))
    return 0


def _stdin_text(name: str) -> bytes:
    """The content the server sent on stdin, refused past the graph file limit."""
    text = sys.stdin.buffer.read(MAX_FILE_BYTES + 1)
    if len(text) > MAX_FILE_BYTES:
        raise GraphFileError(f"file is over the {MAX_FILE_BYTES:,} limit", file=name)
    return text


def stand_in_kernels(text: str | bytes) -> list[KernelInfo]:
    """One stand-in per kernel reference, taking every parameter the file binds (any spec fits).

    Malformed files yield what can be read; :func:`graphlab.model.graphfile.loads` then names the problem.
    """
    data = _parsed(text)
    params: dict[str, dict[str, str]] = {}
    args = [a for a in _list(data, "args") if isinstance(a, dict) and isinstance(a.get("name"), str)]
    kinds = {a["name"]: a.get("kind") for a in args}  # a name of another type: loads() names its place
    for node in _dispatches(data):
        ref, bindings = node.get("kernel"), node.get("bindings")
        if not isinstance(ref, str):
            continue
        seen = params.setdefault(ref, {})
        for param, bound in bindings.items() if isinstance(bindings, dict) else ():
            kind = kinds.get(bound) if isinstance(bound, str) else None
            seen.setdefault(param, kind if kind in _KINDS else "ndarray")
    return [_stand_in(ref, found) for ref, found in params.items()]


def loader_cell(file_name: str, text: str | bytes) -> str:
    """The first cell of the notebook the viewer opens next to the file: load it, open the editor.

    The kernels come from the modules the file names (imported by the user running the cell, not
    by the viewer); kernels defined in a notebook (``__main__:k``) come from the notebook's globals.
    """
    found = {ref for ref in (n.get("kernel") for n in _dispatches(_parsed(text))) if isinstance(ref, str)}
    # only references whose every part passes the name grammar reach the cell (as code or as comment)
    refs = sorted(ref for ref in found if _is_reference(ref))
    modules = sorted({ref.split(":", 1)[0] for ref in refs} - {"__main__"})
    in_notebook = [ref.split(":", 1)[1] for ref in refs if ref.startswith("__main__:")]
    lines = ["import graphlab as gl", *(f"import {m}" for m in modules), ""]
    if len(refs) < len(found):
        lines.append(f"# {len(found) - len(refs)} kernel reference(s) in the file are not module:name and are left out")
    if in_notebook:
        lines.append(f"# defined in a notebook: define {', '.join(in_notebook)} in a cell above this one")
    if modules and not in_notebook:
        kernels = modules[0] if len(modules) == 1 else "{" + ", ".join(f"**vars({m})" for m in modules) + "}"
    else:
        kernels = "globals()" if not modules else "{**globals(), " + ", ".join(f"**vars({m})" for m in modules) + "}"
    lines += [f"g = gl.load({file_name!r}, kernels={kernels})", "gl.editor(g)"]
    return "\n".join(lines)


_KINDS = frozenset(("scalar", "ndarray", "matrix", "texture", "rw_texture"))


def _is_reference(ref: str) -> bool:
    """Whether ``ref`` is ``module:qualname`` with every dotted part a name (:mod:`graphlab.core.names`)."""
    module, colon, qualname = ref.partition(":")
    parts = [*module.split("."), *qualname.split(".")]
    return bool(colon) and all(name_problem(part) is None for part in parts)


def _stand_in(ref: str, params: dict[str, str]) -> KernelInfo:
    name = ref.rsplit(":", 1)[-1].rsplit(".", 1)[-1]

    def fn() -> None:  # never called: a distinct object per reference (KernelInfo compares by fn)
        raise AssertionError(f"the stand-in of {ref} is drawn, never run")

    return KernelInfo(fn, name, ref, tuple(Param(p, kind) for p, kind in params.items()), returns=False)


def _parsed(text: str | bytes) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _list(data: Any, key: str) -> list[Any]:
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, list) else []


def _dispatches(data: Any) -> Iterator[dict[str, Any]]:
    """Every dispatch node object in the file's body and sequences (no recursion: bodies are flat lists)."""
    bodies = [_list(data, "body"), *(_list(s, "body") for s in _list(data, "sequences") if isinstance(s, dict))]
    for body in bodies:
        for node in body:
            if isinstance(node, dict) and node.get("type") == "dispatch":
                yield node


if __name__ == "__main__":
    sys.exit(main())
