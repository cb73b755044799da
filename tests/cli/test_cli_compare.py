"""``graphlab compare``: exit 0 agree, 1 diverged, 2 unusable input; text or JSON."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import compare_kernels
import numpy as np
import pytest
from compare_kernels import SIN_SPLIT, loop_graph, planted_graph

from graphlab.cli import compare as cli_compare
from graphlab.cli import main
from graphlab.debug import compare
from graphlab.model.graphfile import save

KERNELS = str(Path(__file__).parent.parent / "compare_kernels.py")
N = 4096


@pytest.fixture
def planted(tmp_path: Path) -> tuple[str, str]:
    """The planted graph's file and an .npz of its start values."""
    graph = tmp_path / "planted.graph.json"
    save(planted_graph(), graph)
    values = tmp_path / "start.npz"
    zeros = np.zeros(N, np.float32)
    np.savez(values, x=np.linspace(-20, 3e4, N).astype(np.float32), y=zeros, z=zeros, w=zeros)
    return str(graph), str(values)


def test_a_divergence_exits_1_and_names_the_dispatch(planted, capsys):
    graph, values = planted
    assert main(["compare", graph, "--kernels", KERNELS, "--against", "vulkan", "--values", values]) == 1
    out = capsys.readouterr().out
    assert out.startswith("planted: x64 and vulkan diverge at step 1 rounds[0]/wobble")
    assert "buffer 'w'" in out and "bit for bit" in out


def test_json_with_a_tolerance(planted, capsys):
    graph, values = planted
    argv = ["compare", graph, "--kernels", KERNELS, "--against", "vulkan", "--values", values, "--rtol", "1e-4"]
    assert main([*argv, "--json"]) == 1
    answer = json.loads(capsys.readouterr().out)
    assert answer["agree"] is False
    found = answer["divergence"]
    assert (found["kind"], found["index"], found["step_id"], found["buffer"]) == (
        "buffer",
        2,
        "rounds[0]/scramble",
        "z",
    )
    assert found["archs"] == ["x64", "vulkan"] and found["count"] > 0 and found["rtol"] == 1e-4


def test_agreement_exits_0(planted, capsys):
    graph, values = planted
    assert main(["compare", graph, "--kernels", KERNELS, "--against", "x64", "--values", values]) == 0
    assert "x64 and x64 agree on every buffer to the end (bit for bit)" in capsys.readouterr().out


def test_generated_start_values_from_dims(planted, capsys):
    graph, _ = planted
    assert main(["compare", graph, "--kernels", KERNELS, "--against", "x64", "--dim", "n=64", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"agree": True, "divergence": None}


def test_a_loop_divergence_in_json(tmp_path, capsys):
    graph = tmp_path / "counted.graph.json"
    save(loop_graph(), graph)
    values = tmp_path / "start.npz"
    np.savez(values, c=np.float32(SIN_SPLIT), it=np.zeros(1, np.int32), flag=np.zeros(1, np.int32))
    argv = ["compare", str(graph), "--kernels", KERNELS, "--against", "vulkan", "--values", str(values), "--json"]
    assert main(argv) == 1
    found = json.loads(capsys.readouterr().out)["divergence"]
    assert found["kind"] == "control" and found["control_node"] == "solve"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--rtol", "-1"], "compare(rtol=-1.0): give a number >= 0"),
        (["--against", "webgpu"], "compare(against='webgpu'): give an arch name, one of x64"),
        (["--threads", "0"], "--threads 0: give 1 or more"),
        (["--dim", "n=many"], "--dim n=many: give NAME=SIZE"),
        ([], "arg 'x' has shape dim 'n': give --dim n=SIZE or the array in --values"),
        (["--values", "{bad}"], "cannot read it as a numpy .npz"),
        (["--values", "{extra}"], "--values: q is not an arg of graph 'planted'"),
    ],
)
def test_unusable_input_exits_2_naming_the_fix(planted, tmp_path, capsys, extra, message):
    graph, _ = planted
    bad = tmp_path / "bad.npz"
    bad.write_text("not a zip")
    other = tmp_path / "extra.npz"
    np.savez(other, q=np.zeros(3))
    extra = [item.format(bad=bad, extra=other) for item in extra]
    assert main(["compare", graph, "--kernels", KERNELS, "--against", "vulkan", *extra]) == 2  # the last wins
    assert message in capsys.readouterr().err


def test_a_missing_scalar_and_a_missing_file_exit_2(tmp_path, capsys):
    graph = tmp_path / "counted.graph.json"
    save(loop_graph(), graph)
    assert main(["compare", str(graph), "--kernels", KERNELS, "--against", "vulkan"]) == 2
    assert "arg 'c' is a scalar with no value: give it in --values" in capsys.readouterr().err
    assert main(["compare", str(tmp_path / "none.json"), "--kernels", KERNELS, "--against", "vulkan"]) == 2
    assert "none.json: no such graph file" in capsys.readouterr().err


def test_the_cli_offers_the_archs_compare_takes():
    assert cli_compare.ARCHS == compare.ARCHS


def test_against_an_exported_module_folder(planted, tmp_path, capsys):
    graph, values = planted
    folder = tmp_path / "planted_vulkan"
    assert main(["export", graph, "--kernels", KERNELS, "--arch", "vulkan", "-o", str(folder), "--dim", "n=4096"]) == 0
    capsys.readouterr()
    argv = ["compare", graph, "--kernels", KERNELS, "--against", str(folder), "--values", values, "--json"]
    assert main(argv) == 1
    found = json.loads(capsys.readouterr().out)["divergence"]
    assert (found["archs"], found["step_id"], found["buffer"]) == (["x64", "vulkan module"], "rounds[0]/wobble", "w")


def test_an_imported_kernels_file_is_reused_not_imported_again(planted, capsys):
    """main() in-process must not replace the module the caller's graphs were built from."""
    graph, values = planted
    main(["compare", graph, "--kernels", KERNELS, "--against", "x64", "--values", values])
    capsys.readouterr()
    assert sys.modules["compare_kernels"] is compare_kernels


def test_export_debug_writes_the_per_dispatch_variant_into_the_manifest(planted, tmp_path, capsys):
    graph, _ = planted
    plain, debug = tmp_path / "plain", tmp_path / "debug"
    argv = ["export", graph, "--kernels", KERNELS, "--arch", "x64", "--dim", "n=4096"]
    assert main([*argv, "-o", str(plain)]) == 0
    assert main([*argv, "-o", str(debug), "--debug"]) == 0
    capsys.readouterr()
    assert "debug_steps" not in json.loads((plain / "manifest.json").read_text())
    steps = json.loads((debug / "manifest.json").read_text())["debug_steps"]
    assert list(steps) == ["planted"] and steps["planted"]
