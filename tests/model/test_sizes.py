"""One rule for dims and temps (issue 19, point 5; :func:`graphlab.model.sizes.resolve_sizes`).

``g.run()``, ``g.debug()``, ``gl.export``, ``load_module``, ``gl.verify`` and ``graphlab compare``
size a graph's temps alike: a temp sized by a dim only temps use (``grid``, dim ``m``) is sized by
that dim given by name (``m=4``, ``dims={'m': 4}``, ``--dim m=4``, or the manifest's dims), a 0-d
temp without ``shape=()`` holds one element, a temp may be given as a value, and the same bad
input is refused by each, before anything runs, naming the temp or the dim and the fix.
"""

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from temps_kernels import M, N, temps_expected, temps_graph, temps_values
from test_widget_export import export as export_message
from test_widget_panels import started
from widget_comm import recording_comm  # noqa: F401  (autouse fixture)

import graphlab as gl
from graphlab.cli import main
from graphlab.cli.compare import start_values
from graphlab.core.errors import GraphlabError
from graphlab.core.spec import Arg
from graphlab.deploy.errors import ExportError
from graphlab.model.sizes import resolve_sizes


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sizes") / "temps"
    gl.export(temps_graph(), out, arch="x64", dims={"n": N, "m": M}, cpu_threads=1, progress=False)
    return out


def _run(values: dict[str, Any], **dims: int) -> np.ndarray:
    temps_graph().run(values, **dims)
    return values["y"]


def _debug(values: dict[str, Any], **dims: int) -> np.ndarray:
    temps_graph().debug(values, **dims).continue_()  # numpy arrays get the results at the end
    return values["y"]


def _module(folder: Path) -> Any:
    def run(values: dict[str, Any], **dims: int) -> np.ndarray:
        with gl.load_module(folder) as module:
            return module.graphs["temps"].run(values, **dims)["y"]

    return run


# --- sizing the same way ----------------------------------------------------------------------------------


@pytest.mark.parametrize("entry", ["run", "debug", "load_module", "load_module with m="])
def test_every_runner_sizes_the_temps_alike(ti_cpu, folder, entry):
    runner = {"run": _run, "debug": _debug}.get(entry) or _module(folder)
    dims = {} if entry == "load_module" else {"m": M}  # the module's manifest has m = 4
    y = runner(temps_values(), **dims)
    np.testing.assert_array_equal(y, temps_expected())


@pytest.mark.parametrize("entry", ["run", "debug", "load_module"])
def test_every_runner_takes_a_temp_given_as_a_value(ti_cpu, folder, entry):
    runner = {"run": _run, "debug": _debug}.get(entry) or _module(folder)
    ys = [runner({**temps_values(), "grid": np.zeros(size, np.float32)}) for size in (M, 3)]
    np.testing.assert_array_equal(ys[0], temps_expected())
    assert not np.array_equal(ys[1], ys[0])  # a grid of 3 wraps i % 3: its shape sized it, not the manifest


def test_verify_takes_temps_and_dims_as_run_does(folder):
    given = {**temps_values(), "grid": np.zeros(3, np.float32)}
    assert gl.verify(folder, given).identical  # refused before: "the module has no such arg"
    report = gl.verify(folder, temps_values(), dims={"m": 6})  # the host's --dim and the child's dims
    assert report.identical and [o.name for o in report.outputs] == ["y", "it", "flag"]


def test_the_cli_verify_takes_dim_as_export_does(folder, tmp_path, capsys):
    assert main(["verify", str(folder), "--dim", "m=6"]) == 0
    assert "PASSED (identical)" in capsys.readouterr().out
    x = tmp_path / "x.npy"
    np.save(x, np.arange(N, dtype=np.float32))
    assert main(["verify", str(folder), "--input", f"x={x}", "--dim", f"n={N + 1}"]) == 2
    assert f"dim 'n' is given as {N + 1}, but the value of 'x' has 'n' = {N}" in capsys.readouterr().err
    assert main(["verify", str(folder), "--dim", "q=3"]) == 2
    assert "--dim: 'q' is not a dim of any arg's shape (the dims: 'n', 'm')" in capsys.readouterr().err


def test_the_cli_generates_values_with_dim_and_leaves_temps_to_the_runner(ti_cpu):
    g = temps_graph()
    values = start_values(g, {"c": np.asarray(0.5)}, {"n": N, "m": M}, seed=0)
    assert sorted(values) == ["c", "flag", "it", "x", "y"] and values["x"].shape == (N,)
    g.debug(values, m=M).continue_()  # what run_compare does with the --dim it got


def test_the_cli_run_sizes_temps_with_dim_as_compare_does(ti_cpu, tmp_path, capsys):
    """``graphlab run --dim m=4`` sized the generated values only, then refused temp 'grid' for want of 'm'."""
    temps_graph().save(tmp_path / "temps.graph.json")
    np.savez(tmp_path / "start.npz", **temps_values())
    kernels = str(Path(__file__).parent.parent / "temps_kernels.py")
    args = ["run", str(tmp_path / "temps.graph.json"), "--kernels", kernels, "--values", str(tmp_path / "start.npz")]
    assert main([*args, "--dim", f"m={M}", "-o", str(tmp_path / "out.npz")]) == 0, capsys.readouterr().err
    with np.load(tmp_path / "out.npz") as out:
        np.testing.assert_array_equal(out["y"], temps_expected())
    assert main(args) == 2
    assert "temp 'grid' has shape ('m',), but no value or dim sizes 'm'; give --dim m=SIZE" in capsys.readouterr().err


def test_the_widget_takes_the_temps_dim_among_its_values_for_debug_and_export(ti_cpu, tmp_path):
    ed = gl.editor(temps_graph(), kernels=[], access="ast", values={**temps_values(), "m": M})
    try:
        assert started(ed).position.index == 0  # the Debug button: g.debug(values), m among them
        reply = export_message(ed, tmp_path / "out", cpu_threads=1)  # and Export: m goes to dims=
        assert reply["ok"], reply
        assert ed.export["state"] == "done" and ed.export["verify"]["passed"], ed.export
        assert json.loads((tmp_path / "out" / "manifest.json").read_text())["dims"] == {"n": N, "m": M}
    finally:
        ed.close()


# --- refusing the same way ----------------------------------------------------------------------------


def _export_without_m(tmp_path: Path) -> None:
    gl.export(temps_graph(), tmp_path / "no_m", arch="x64", dims={"n": N}, progress=False)


REFUSALS = {
    "run": (lambda tmp: temps_graph().run(temps_values()), "pass m=SIZE to run()/debug()"),
    "debug": (lambda tmp: temps_graph().debug(temps_values()), "pass m=SIZE to run()/debug()"),
    "export": (_export_without_m, "pass dims={'m': SIZE} (CLI: --dim m=SIZE)"),
    "cli compare": (lambda tmp: start_values(temps_graph(), {"c": np.asarray(0.5)}, {"n": N}, 0), "give --dim m=SIZE"),
}


@pytest.mark.parametrize("entry", list(REFUSALS))
def test_a_temp_no_dim_sizes_is_refused_by_each_naming_the_dim(ti_cpu, tmp_path, entry):
    call, fix = REFUSALS[entry]
    with pytest.raises(GraphlabError) as caught:
        call(tmp_path)
    message = str(caught.value)
    assert "temp 'grid' has shape ('m',), but no value or dim sizes 'm'" in message and fix in message
    assert entry != "export" or isinstance(caught.value, ExportError)
    assert not (tmp_path / "no_m").exists()


CONFLICTS = {
    "run": lambda folder: temps_graph().run(temps_values(), m=M, n=N + 1),
    "debug": lambda folder: temps_graph().debug(temps_values(), m=M, n=N + 1),
    "load_module": lambda folder: _module(folder)(temps_values(), n=N + 1),
    "verify": lambda folder: gl.verify(folder, temps_values(), dims={"n": N + 1}),
    "cli compare": lambda folder: start_values(temps_graph(), temps_values(), {"n": N + 1, "m": M}, 0),
}


@pytest.mark.parametrize("entry", list(CONFLICTS))
def test_a_dim_given_against_the_values_is_refused_by_each(ti_cpu, folder, entry):
    before = temps_values()["y"].copy()
    with pytest.raises(GraphlabError, match=f"dim 'n' is given as {N + 1}, but the value of 'x' has 'n' = {N}"):
        CONFLICTS[entry](folder)
    np.testing.assert_array_equal(temps_values()["y"], before)


def test_a_name_that_is_no_dim_is_refused_naming_the_dims(ti_cpu, folder):
    with pytest.raises(gl.GraphRunError, match=r"unknown arg\(s\) 'q'.*its dims \(sizes for temps, as n=1024\): n, m"):
        temps_graph().run(temps_values(), q=3)
    with pytest.raises(GraphlabError, match=r"dims=: 'q' is not a dim of any arg's shape \(the dims: 'n', 'm'\)"):
        gl.verify(folder, temps_values(), dims={"q": 3})
    with pytest.raises(gl.GraphRunError, match=r"dim 'm' = -1 out of range"):
        temps_graph().run(temps_values(), m=-1)


# --- the rule itself ----------------------------------------------------------------------------------


def _error(message: str, arg: str | None) -> Exception:
    return GraphlabError(f"[{arg}] {message}")


def test_the_rule_orders_values_then_dims_then_defaults():
    args = [
        Arg("x", "ndarray", "f32", 1, shape=("n",), role="input"),
        Arg("grid", "ndarray", "f32", 2, shape=("m", 3), role="temp"),
        Arg("total", "ndarray", "f32", 0, role="temp"),
        Arg("given", "ndarray", "f32", 1, shape=("k",), role="temp"),
    ]
    sizes = resolve_sizes(args, {"n": 8}, given=["x", "given"], dims={"m": 5}, defaults={"m": 9, "n": 1}, error=_error)
    assert sizes.dims == {"n": 8, "m": 5} and sizes.temps == {"grid": (5, 3), "total": ()}
    assert resolve_sizes(args, {"n": 8}, given=["x", "given"], defaults={"m": 9}, error=_error).temps["grid"] == (9, 3)


def test_a_temp_with_no_declared_shape_is_refused_naming_it():
    args = [Arg("scratch", "ndarray", "f32", 2, role="temp")]
    with pytest.raises(GraphlabError, match=r"\[scratch\] temp 'scratch' declares no shape.*shape=\('n', 'n',\)"):
        resolve_sizes(args, {}, error=_error)
    assert resolve_sizes(args, {}, given=["scratch"], error=_error).temps == {}
