"""Captures from the command line (``graphlab replay``, ``graphlab compare --against CAPTURE``) and in the
widget's compare panel: exit 0 agree, 1 diverged, 2 unusable input; the same sentences as ``dbg.compare``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from capture_kernels import stages_graph, steer_graph
from test_capture import record, stage_values
from test_widget_panels import debug, started
from widget_comm import recording_comm  # noqa: F401  (autouse fixture)

import graphlab as gl
from graphlab.cli import main
from graphlab.model.graphfile import save

KERNELS = str(Path(__file__).parent.parent / "capture_kernels.py")


@pytest.fixture
def field(ti_cpu, tmp_path) -> tuple[str, str, str]:
    """The notebook's graph file, a field build's module and a capture of it (segments recorded)."""
    graph = tmp_path / "stages.graph.json"
    save(stages_graph(), graph)
    record(stages_graph(field=True), tmp_path / "field", tmp_path / "cap", stage_values(), segments=True)
    return str(graph), str(tmp_path / "field"), str(tmp_path / "cap")


def test_replay_names_the_segment_dispatch_and_buffer(field, capsys):
    graph, _, capture = field
    assert main(["replay", capture, "--graph", graph, "--kernels", KERNELS]) == 1
    out = capsys.readouterr().out
    assert out.startswith("stages: x64 and x64 capture diverge at step 2 iterate/iter[0]/shift (node iterate/shift)")
    assert "in segment 1" in out and "buffer 'w'" in out


def test_replay_as_json_and_compare_against_the_capture(field, capsys):
    graph, _, capture = field
    assert main(["replay", capture, "--graph", graph, "--kernels", KERNELS, "--json"]) == 1
    answer = json.loads(capsys.readouterr().out)
    found = answer["divergence"]
    assert answer["agree"] is False and (found["segment"], found["buffer"], found["suspects"]) == (1, "w", None)
    assert main(["compare", graph, "--kernels", KERNELS, "--against", capture]) == 1
    assert "iterate/iter[0]/shift" in capsys.readouterr().out


def test_replay_of_the_same_build_exits_0(ti_cpu, tmp_path, capsys):
    graph = tmp_path / "stages.graph.json"
    save(stages_graph(), graph)
    record(stages_graph(), tmp_path / "same", tmp_path / "cap", stage_values(), segments=True)
    argv = ["replay", str(tmp_path / "cap"), "--graph", str(graph), "--kernels", KERNELS]
    assert main([*argv, "--module", str(tmp_path / "same")]) == 0
    assert "stages: x64 and the x64 capture agree on every decision and buffer (bit for bit)" in capsys.readouterr().out


def test_unusable_input_exits_2(field, tmp_path, capsys):
    graph, module, capture = field
    other = tmp_path / "steer.graph.json"
    save(steer_graph(), other)
    assert main(["replay", capture, "--graph", str(other), "--kernels", KERNELS]) == 2
    assert "$.graph: the capture is of graph 'stages', the graph given is 'steer'" in capsys.readouterr().err
    Path(module, "manifest.json").write_text(Path(module, "manifest.json").read_text() + "\n")
    assert main(["replay", capture, "--graph", graph, "--kernels", KERNELS, "--module", module]) == 2
    assert "$.manifest_sha256: the capture was recorded with another manifest.json" in capsys.readouterr().err
    np.savez(tmp_path / "v.npz", x=np.zeros(4, np.float32))
    argv = ["compare", graph, "--kernels", KERNELS, "--against", capture, "--values", str(tmp_path / "v.npz")]
    assert main(argv) == 2
    assert "is a capture: it holds the start values; drop --values/--dim" in capsys.readouterr().err
    assert main(["replay", str(tmp_path / "nowhere"), "--graph", graph, "--kernels", KERNELS]) == 2
    assert "no such folder" in capsys.readouterr().err


def test_the_compare_panel_takes_a_capture_folder(field):
    _, _, capture = field
    values = {k: v for k, v in stage_values().items() if k != "rounds"}
    widget = gl.editor(stages_graph(), kernels=[], access="ast", values={**values, "rounds": 3})
    try:
        started(widget)
        reply = debug(widget, "compare", request=5, against=capture)
        assert reply["ok"], reply
        found = widget.debugger["compare"]["divergence"]
        assert (found["step_id"], found["buffer"]) == ("iterate/iter[0]/shift", "w")
        assert found["archs"] == ["x64", "x64 capture"] and "in segment 1" in found["text"]
    finally:
        widget.close()
