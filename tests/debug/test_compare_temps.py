"""Comparing graphs with temps (issue 19, point 2): every path of ``compare`` (an arch, an exported
module, the CLI and the widget's panel) on graphs with temps sized by the inputs, by a dim only
temps use, and 0-d, with a scalar and a loop; textures are refused by each, saying why.
"""

import json
from pathlib import Path

import numpy as np
import pytest
import taichi as ti
from temps_kernels import M, N, issue_graph, painted_graph, slot_graph, temps_graph, temps_values, thrice
from test_widget_panels import debug, started
from widget_comm import recording_comm  # noqa: F401  (autouse fixture)

import graphlab as gl
from graphlab.cli import main
from graphlab.debug.compare import buffer_divergence, differ
from graphlab.model.graphfile import save

KERNELS = str(Path(__file__).parent.parent / "temps_kernels.py")


@pytest.fixture
def issue_module(ti_cpu, tmp_path: Path) -> Path:
    folder = tmp_path / "tmp_demo"
    gl.export(issue_graph(), folder, arch="x64", dims={"n": N}, cpu_threads=1, debug=True, progress=False)
    return folder


@pytest.fixture
def temps_module(ti_cpu, tmp_path: Path) -> Path:
    folder = tmp_path / "temps"
    gl.export(temps_graph(), folder, arch="x64", dims={"n": N, "m": M}, cpu_threads=1, progress=False)
    return folder


def test_the_issue_graph_agrees_with_its_module(issue_module):
    dbg = issue_graph().debug(x=np.arange(N, dtype=np.float32), y=np.zeros(N, np.float32))
    assert dbg.compare(issue_module) is None
    assert dbg.position.index == 0


def test_a_temp_that_differs_is_named_at_the_dispatch_that_wrote_it(issue_module):
    dbg = issue_graph(first=thrice).debug(x=np.arange(N, dtype=np.float32), y=np.zeros(N, np.float32))
    found = dbg.compare(issue_module)  # the module's recorded debug variant runs the exported kernels
    assert found is not None and found.kind == "buffer"
    assert (found.index, found.step_id, found.buffer) == (0, "double", "t")
    assert found.first_index == (1,) and found.values == (3.0, 2.0) and found.count == N - 1


def test_temps_0d_temps_scalars_and_a_loop_agree_with_the_module(temps_module):
    dbg = temps_graph().debug(temps_values(), m=M)
    assert dbg.compare(temps_module) is None
    dbg.continue_()
    assert [e.value for e in dbg.events] == [3]


def test_temps_0d_temps_scalars_and_a_loop_agree_with_another_process(ti_cpu):
    dbg = temps_graph().debug(temps_values(), m=M)
    assert dbg.compare("x64", keep=False) is None


@pytest.mark.parametrize("against", ["x64", "module"])
def test_temps_sharing_a_slot_stay_one_buffer_on_the_other_side(ti_cpu, tmp_path, against):
    g = slot_graph()
    assert g.memory_plan(n=N).buffer("t1").slot == g.memory_plan(n=N).buffer("t2").slot
    other = "x64"
    if against == "module":
        other = str(tmp_path / "slots")
        gl.export(g, other, arch="x64", dims={"n": N}, cpu_threads=1, progress=False)
    values = {"x": np.arange(N, dtype=np.float32), "y1": np.zeros(N, np.float32), "y2": np.zeros(N, np.float32)}
    dbg = g.debug(values)  # t1 and t2: one ndarray here; the other side must not split them
    assert dbg.compare(other, keep=False) is None


@pytest.fixture
def temps_file(tmp_path: Path) -> tuple[str, str]:
    graph, values = tmp_path / "temps.graph.json", tmp_path / "start.npz"
    save(temps_graph(), graph)
    np.savez(values, **{k: np.asarray(v) for k, v in temps_values().items()})
    return str(graph), str(values)


@pytest.mark.parametrize("against", ["module", "x64"])
def test_the_cli_sizes_temps_from_dim_and_agrees(temps_file, temps_module, against, capsys):
    graph, values = temps_file
    other = str(temps_module) if against == "module" else "x64"
    argv = ["compare", graph, "--kernels", KERNELS, "--against", other, "--values", values, "--dim", f"m={M}"]
    assert main([*argv, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"agree": True, "divergence": None}


def test_the_cli_without_the_temps_dim_exits_2_naming_it(temps_file, temps_module, capsys):
    graph, values = temps_file
    argv = ["compare", graph, "--kernels", KERNELS, "--against", str(temps_module), "--values", values]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "temp 'grid' has shape ('m',)" in err and "give --dim m=SIZE" in err


def test_the_issue_graph_on_the_cli_agrees_with_its_module(issue_module, tmp_path, capsys):
    graph = tmp_path / "tmp_demo.graph.json"
    save(issue_graph(), graph)
    argv = ["compare", str(graph), "--kernels", KERNELS, "--against", str(issue_module), "--dim", f"n={N}"]
    assert main(argv) == 0
    assert "x64 and " in capsys.readouterr().out


@pytest.mark.parametrize("against", ["module", "x64"])
def test_the_widget_compares_a_graph_with_temps(temps_module, against):
    values = {**temps_values(), "m": M}  # the editor's values size the temps as g.debug() does
    ed = gl.editor(temps_graph(), kernels=[], access="ast", values=values)
    try:
        started(ed)
        reply = debug(ed, "compare", against=str(temps_module) if against == "module" else "x64")
        assert reply["ok"], reply
        view = ed.debugger["compare"]
        assert view["state"] == "done" and view["divergence"] is None and view["error"] is None
    finally:
        ed.close()


def test_a_graph_with_a_texture_is_refused_by_every_compare_path(ti_vulkan, tmp_path, capsys):
    g = painted_graph()
    dbg = g.debug(tex=ti.Texture(ti.Format.r32f, (N,)), t=np.zeros(N, np.float32))
    refusal = "graph 'painted' binds textures, which compare cannot copy"
    for against in ("x64", str(tmp_path)):
        with pytest.raises(gl.GraphlabError, match=refusal):
            dbg.compare(against)
    path = tmp_path / "painted.graph.json"
    save(g, path)
    for against in ("x64", str(tmp_path)):  # the CLI, before it makes any value or starts Taichi
        assert main(["compare", str(path), "--kernels", KERNELS, "--against", against, "--dim", f"n={N}"]) == 2
        assert refusal in capsys.readouterr().err


def test_a_0d_buffer_is_compared_bit_for_bit():
    one, other = np.array(1.0, np.float32), np.array(1.0 + 2**-20, np.float32)
    assert differ(one, one.copy(), 0.0, 0.0) is None
    d = differ(one, other, 0.0, 0.0)
    assert d is not None and d.mask.shape == () and bool(d.mask)
    found = buffer_divergence(
        "total", one, other, d, 0, archs=("x64", "x64 module"), index=1, step_id=None, node_id=None
    )
    assert found.first_index == () and found.values == (1.0, float(other)) and found.count == 1
