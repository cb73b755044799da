"""The drawing route of a real Jupyter server, asked what an attacker or a damaged folder would ask.

No browser: the route is the server's REST API (``GET graphlab/drawing?path=...``), as the file
viewer calls it. The server runs in its root (as ``jupyter lab`` started in a folder does), so a
child that imported from its working folder would pick up the modules planted there.
"""

from __future__ import annotations

import json
import os
import threading
import time

import pytest
from test_fileview_e2e import drawing_request

from graphlab.api import doc_kernels

pytestmark = pytest.mark.e2e

SECRET = {"format": "graphlab.graph/1", "name": "secret_outside", "args": [], "sequences": [], "body": []}


def test_the_drawing_child_imports_nothing_from_the_served_folder(lab):
    marker = lab.root.parent / "planted-module-ran"
    planted = [lab.root / f"{name}.py" for name in ("networkx", "graphviz", "taichi", "jinja2")]
    for path in planted:
        path.write_text(f"open({str(marker)!r}, 'a').write({path.stem!r})\n")
    try:
        doc_kernels.demo_graph().save(lab.root / "planted.graph.json")
        status, body = drawing_request(lab, "planted.graph.json")
        assert status == 200 and "gl.editor(g)" in body["cell"], body
        assert not marker.exists(), f"the drawing ran {marker.read_text()} from the served folder"
    finally:
        for path in planted:
            path.unlink()


def test_a_list_valued_arg_name_is_a_400_naming_its_json_path(lab):
    (lab.root / "listname.graph.json").write_text(json.dumps({
        "format": "graphlab.graph/1", "name": "g", "sequences": [],
        "args": [{"name": ["x"], "kind": "ndarray", "dtype": "f32", "ndim": 1, "element_shape": []}],
        "body": [{"type": "dispatch", "name": "k", "kernel": "m:k", "bindings": {"u": "x"}}],
    }))  # fmt: skip
    status, body = drawing_request(lab, "listname.graph.json")
    assert (status, body["message"]) == (400, "listname.graph.json: $.args[0].name: expected a string, got a list")


def test_a_path_too_long_and_a_link_loop_are_400s_with_a_reason(lab):
    status, body = drawing_request(lab, "x" * 5000 + ".graph.json")
    assert status == 400 and "characters, over 4,096" in body["message"]
    (lab.root / "loop.graph.json").symlink_to("loop.graph.json")
    status, body = drawing_request(lab, "loop.graph.json")
    assert (status, body["message"]) == (400, "loop.graph.json: the path is a loop of symbolic links")


def test_hidden_files_and_folders_are_not_drawn(lab):
    """Jupyter's contents API hides them (ContentsManager.allow_hidden is False by default); so does the route."""
    doc_kernels.demo_graph().save(lab.root / ".x.graph.json")
    (lab.root / ".hidden").mkdir()
    doc_kernels.demo_graph().save(lab.root / ".hidden" / "a.graph.json")
    for relative in (".x.graph.json", ".hidden/a.graph.json"):
        status, body = drawing_request(lab, relative)
        assert status == 404 and "hidden files are not shown" in body["message"], (relative, body)


def test_a_link_swapped_in_while_a_drawing_starts_is_never_drawn(lab):
    """The file flips between a graph file and a link to one outside the root while the route is asked 16 times."""
    (lab.root.parent / "secret.graph.json").write_text(json.dumps(SECRET))
    regular, link, spare = lab.root / "race.graph.json", lab.root / "race.link", lab.root / "race.spare"
    doc_kernels.demo_graph().save(regular)
    link.symlink_to(lab.root.parent / "secret.graph.json")
    stop = threading.Event()

    def swap() -> None:  # a fifth of a second each way: a check and a later reopen by name often disagree
        while not stop.is_set():
            os.link(regular, spare)
            os.replace(link, regular)
            stop.wait(0.2)
            link.symlink_to(lab.root.parent / "secret.graph.json")
            os.replace(spare, regular)
            stop.wait(0.2)

    thread = threading.Thread(target=swap)
    thread.start()
    answers = []
    try:
        for i in range(16):
            time.sleep(0.05 * (i % 8))  # a refusal comes back at once: spread the asks over the flips
            answers.append(drawing_request(lab, "race.graph.json"))
    finally:
        stop.set()
        thread.join()
    assert not [body for _, body in answers if "secret_outside" in json.dumps(body)], (
        "a file outside the root was drawn"
    )
    assert {status for status, _ in answers} <= {200, 400}, answers
    assert 200 in {status for status, _ in answers}, answers
