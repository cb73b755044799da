"""``graphlab check`` and ``graphlab render`` on graph files."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

KERNELS = textwrap.dedent('''
    import taichi as ti

    @ti.kernel
    def fill(a: ti.types.ndarray(dtype=ti.f32, ndim=1)):
        for i in a:
            a[i] = 1.0

    @ti.kernel
    def copy(src: ti.types.ndarray(dtype=ti.f32, ndim=1), dst: ti.types.ndarray(dtype=ti.f32, ndim=1)):
        for i in src:
            dst[i] = src[i]
''')


def _files(tmp_path, bindings):
    (tmp_path / "kern.py").write_text(KERNELS)
    graph = {
        "format": "graphlab.graph/1", "name": "g", "sequences": [],
        "args": [{"name": n, "kind": "ndarray", "dtype": "f32", "ndim": 1, "element_shape": []} for n in ("a", "b")],
        "body": [{"type": "dispatch", "name": "fill", "kernel": "kern:fill", "bindings": {"a": "a"}},
                 {"type": "dispatch", "name": "copy", "kernel": "kern:copy", "bindings": bindings}],
    }
    (tmp_path / "g.json").write_text(json.dumps(graph))
    return str(tmp_path / "g.json"), str(tmp_path / "kern.py")


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "graphlab.cli", *args], capture_output=True, text=True, timeout=300)


def test_check_clean_exits_0(tmp_path):
    graph, kernels = _files(tmp_path, {"src": "a", "dst": "b"})
    out = _cli("check", graph, "--kernels", kernels)
    assert out.returncode == 0, out.stderr
    assert "is clean" in out.stdout


def test_check_errors_exit_1_with_json(tmp_path):
    graph, kernels = _files(tmp_path, {"src": "a", "dst": None})
    out = _cli("check", graph, "--kernels", kernels, "--json")
    assert out.returncode == 1, out.stderr
    found = {(d["code"], d["severity"], d["node"], d["arg"]) for d in json.loads(out.stdout)}
    assert found == {("GL001", "error", "copy", "dst"), ("GL007", "warning", None, "b")}


@pytest.mark.parametrize("broken", ["{", '{"format": "other"}'])
def test_unusable_input_exits_2(tmp_path, broken):
    graph, kernels = _files(tmp_path, {"src": "a", "dst": "b"})
    (tmp_path / "g.json").write_text(broken)
    out = _cli("check", graph, "--kernels", kernels)
    assert out.returncode == 2 and "graphlab check:" in out.stderr and "Traceback" not in out.stderr


def test_missing_kernel_module_exits_2(tmp_path):
    graph, _ = _files(tmp_path, {"src": "a", "dst": "b"})
    out = _cli("check", graph, "--kernels", str(tmp_path / "nope.py"))
    assert out.returncode == 2 and "no such file" in out.stderr


def test_render_writes_svg(tmp_path):
    graph, kernels = _files(tmp_path, {"src": "a", "dst": "b"})
    out = _cli("render", graph, "--kernels", kernels, "-o", str(tmp_path / "g.svg"))
    assert out.returncode == 0, out.stderr
    assert "<svg" in (tmp_path / "g.svg").read_text()


def test_check_clean_graph_with_a_loop_exits_0(tmp_path):
    graph, kernels = _files(tmp_path, {"src": "a", "dst": "b"})
    data = json.loads((tmp_path / "g.json").read_text())
    data["sequences"] = [{"name": "body", "body": data["body"][1:]}]
    data["body"] = [data["body"][0], {"type": "loop", "name": "again", "body": "body", "count": "n"}]
    data["args"].append({"name": "n", "kind": "scalar", "dtype": "i32", "ndim": 0, "element_shape": []})
    (tmp_path / "g.json").write_text(json.dumps(data))
    out = _cli("check", graph, "--kernels", kernels)
    assert out.returncode == 0, out.stderr
    assert "is clean (control flow)" in out.stdout


def test_kernels_by_module_name_are_found_in_the_current_folder(tmp_path):
    graph, _ = _files(tmp_path, {"src": "a", "dst": "b"})
    script = Path(sys.executable).with_name("graphlab")  # the console script, as a user runs it
    out = subprocess.run([str(script), "check", graph, "--kernels", "kern"], capture_output=True, text=True,
                         timeout=300, cwd=tmp_path)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "is clean" in out.stdout
