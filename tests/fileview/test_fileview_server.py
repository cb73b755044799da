"""The viewer's server half: which files it reads, how, and the child that draws them.

``read_under_root`` is what the route runs before any drawing (tests/e2e/test_fileview_route_e2e.py
sends the same requests to a real Jupyter server); ``draw_in_child`` starts the real drawing child,
with real Graphviz, or with a ``dot`` that never ends to see that a stopped drawing takes it along.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from tornado import web

from graphlab.api import doc_kernels
from graphlab.fileview.handler import child_command, draw_in_child
from graphlab.fileview.opening import MAX_PATH_CHARS, PathRefusedError, read_under_root

SECRET = {"format": "graphlab.graph/1", "name": "secret_outside", "args": [], "sequences": [], "body": []}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A served folder with one graph file, next to a secret graph file outside it."""
    served = tmp_path / "served"
    served.mkdir()
    doc_kernels.demo_graph().save(served / "demo.graph.json")
    (tmp_path / "secret.graph.json").write_text(json.dumps(SECRET))
    return served.resolve()


def refused(root: Path, relative: str, **options: bool) -> tuple[int, str]:
    with pytest.raises(PathRefusedError) as caught:
        read_under_root(root, relative, **options)
    return caught.value.status, str(caught.value)


def test_a_file_under_the_root_is_read_and_one_outside_is_refused(root):
    assert read_under_root(root, "demo.graph.json") == (root / "demo.graph.json").read_bytes()
    assert read_under_root(root, "/demo.graph.json") == (root / "demo.graph.json").read_bytes()
    assert refused(root, "../secret.graph.json") == (400, "../secret.graph.json: not under the server's root directory")
    (root / "out.graph.json").symlink_to(root.parent / "secret.graph.json")
    status, message = refused(root, "out.graph.json")
    assert status == 400 and "a link that leads out" in message
    (root / "in.graph.json").symlink_to("demo.graph.json")  # a link that stays inside is drawn
    assert read_under_root(root, "in.graph.json") == (root / "demo.graph.json").read_bytes()
    assert refused(root, "missing.graph.json") == (404, "missing.graph.json: no such file")
    assert refused(root, "demo.json") == (400, "demo.json: the viewer draws .graph.json files only")


def test_a_link_loop_and_a_path_too_long_are_refused_with_a_reason(root):
    (root / "a.graph.json").symlink_to("b.graph.json")
    (root / "b.graph.json").symlink_to("a.graph.json")
    assert refused(root, "a.graph.json") == (400, "a.graph.json: the path is a loop of symbolic links")
    status, message = refused(root, "x" * 5000 + ".graph.json")
    assert status == 400 and f"5,011 characters, over {MAX_PATH_CHARS:,}" in message and len(message) < 400
    status, message = refused(root, "x" * 300 + ".graph.json")  # short enough, but a name too long
    assert status == 400 and "one of its names is too long" in message


def test_hidden_files_and_folders_are_hidden_unless_the_contents_manager_allows_them(root):
    (root / ".x.graph.json").write_bytes(b"{}")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "a.graph.json").write_bytes(b"{}")
    (root / "shown.graph.json").symlink_to(".hidden/a.graph.json")  # a visible name leading to a hidden file
    for relative in (".x.graph.json", ".hidden/a.graph.json", "shown.graph.json"):
        status, message = refused(root, relative)
        assert status == 404 and "ContentsManager.allow_hidden" in message
        assert read_under_root(root, relative, allow_hidden=True) == b"{}"


def test_what_is_not_a_regular_file_is_refused_without_blocking(root):
    os.mkfifo(root / "fifo.graph.json")
    status, message = refused(root, "fifo.graph.json")
    assert status == 400 and "not a regular file (a FIFO)" in message
    (root / "dir.graph.json").mkdir()
    assert "not a regular file (a folder)" in refused(root, "dir.graph.json")[1]
    (root / "zero.graph.json").symlink_to("/dev/zero")
    assert refused(root, "zero.graph.json")[0] == 400


def test_a_link_swapped_in_after_the_check_is_never_read(root):
    """A thread swaps the file for a link out and back 300 times as fast as it can; no read returns the secret."""
    regular, link = root / "race.graph.json", root / "race.link"
    regular.write_text(json.dumps({**SECRET, "name": "inside"}))
    inside = regular.read_bytes()
    link.symlink_to(root.parent / "secret.graph.json")
    stop, swaps = threading.Event(), [0]

    def swap() -> None:
        spare = root / "race.spare"
        while not stop.is_set():
            os.link(regular, spare)  # keep the regular file's inode to swap back
            os.replace(link, regular)  # now a link out
            link.symlink_to(root.parent / "secret.graph.json")
            os.replace(spare, regular)
            swaps[0] += 1

    thread = threading.Thread(target=swap)
    thread.start()
    answers: Counter[str] = Counter()
    try:
        deadline = time.monotonic() + 30
        while swaps[0] < 300 and time.monotonic() < deadline:
            try:
                content = read_under_root(root, "race.graph.json")
            except PathRefusedError as exc:
                answers[str(exc).split(": ", 1)[1]] += 1
                continue
            assert content == inside, "the secret outside the root was read"
            answers["read"] += 1
    finally:
        stop.set()
        thread.join()
    assert swaps[0] >= 300 and answers["read"] > 0, (swaps, answers)


def test_the_child_imports_nothing_from_the_served_folder(root, monkeypatch):
    """The served folder holds networkx.py, graphviz.py, taichi.py and graphlab/ that would leave a mark."""
    marker = root.parent / "imported"
    for name in ("networkx.py", "graphviz.py", "taichi.py", "jinja2.py"):
        (root / name).write_text(f"open({str(marker)!r}, 'a').write({name!r})\n")
    (root / "graphlab").mkdir()
    (root / "graphlab" / "__init__.py").write_text(f"open({str(marker)!r}, 'a').write('graphlab')\n")
    monkeypatch.chdir(root)  # the server runs in its root, the root on its import path (python -m jupyterlab)
    monkeypatch.syspath_prepend(str(root))
    command = child_command("demo.graph.json", root)
    assert command[1] == "-I" and str(root) not in json.loads(command[4])[0]
    answer = asyncio.run(draw_in_child((root / "demo.graph.json").read_bytes(), name="demo.graph.json", root=root))
    assert answer["svg"].lstrip().startswith("<?xml") and "gl.editor(g)" in answer["cell"]
    assert not marker.exists(), marker.read_text()


def test_a_drawing_stopped_for_taking_too_long_takes_its_dot_along(root, tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    pids = tmp_path / "dot.pids"
    dot = bin_dir / "dot"
    dot.write_text(f"#!/bin/sh\necho $$ >> {pids}\nexec sleep 300\n")  # a dot that never ends
    dot.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    content = (root / "demo.graph.json").read_bytes()
    with pytest.raises(web.HTTPError, match="drawing took over 8 s; stopped"):
        asyncio.run(draw_in_child(content, name="demo.graph.json", root=root, timeout=8))
    started = [int(pid) for pid in pids.read_text().split()]
    assert started, "the fake dot never ran"
    deadline = time.monotonic() + 10  # SIGKILL is delivered, not waited for
    while any(running(pid) for pid in started) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(running(pid) for pid in started), "dot outlived the drawing child"


def running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its new parent to reap it has stopped)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"
