"""An exported folder edited after export: refused, or at least named as untrusted, before anything of it runs.

A module is signed by the user who exported it (an HMAC keyed by a secret in their config folder,
``$XDG_CONFIG_HOME/graphlab/seal.key``); the tests play two users by pointing ``XDG_CONFIG_HOME``
at two folders. Then:

- a kernel edited and its hash updated in ``manifest.json``: refused for the user who exported it,
  loaded with an ``UnsealedModuleWarning`` for anyone else (the seal cannot vouch for it);
- ``manifest.json``'s graphs edited (a dropped shape relation and a renamed dim, which once
  segfaulted ``run()``; a scalar's dtype changed, which once ran with wrong numbers): refused
  against the sealed copy gl.export writes beside it, and, where that copy is forged too, against
  the module's own graph table (Taichi's ``graphs.tcb`` on x64, ``graphs.json`` on Vulkan).

Each refusal names the manifest, the JSON path and the fix; a run that would crash runs in a child
process so that a regression cannot take the test runner down with it.
"""

# No `from __future__ import annotations`: Taichi reads kernel annotations as objects.

import hashlib
import json
import os
import shutil
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import taichi as ti

import graphlab as gl
from graphlab.deploy.errors import ManifestError, UnsealedModuleWarning

ROOT = str(Path(__file__).resolve().parent.parent.parent)


@ti.kernel
def scaled(a: ti.f32, x: ti.types.ndarray(dtype=ti.f32, ndim=1), y: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in x:
        y[i] = a * x[i]


def tamper_graph() -> gl.Graph:
    g = gl.Graph("tamper")
    x = g.ndarray("x", ti.f32, ndim=1, shape="n", role="input")
    g.dispatch(scaled, g.scalar("a", ti.f32), x, g.ndarray("y", ti.f32, ndim=1, shape="n"))
    return g


@pytest.fixture(scope="module")
def users(tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("users")
    return {"me": base / "me", "other": base / "other"}


def act_as(monkeypatch, users, who: str) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(users[who]))


@pytest.fixture(scope="module", params=["x64", "vulkan"])
def exported(request, tmp_path_factory, users) -> Path:
    arch = request.param
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CONFIG_HOME", str(users["me"]))
        ti.init(arch=ti.cpu, cpu_max_num_threads=1, log_level=ti.WARN)
        out = tmp_path_factory.mktemp(f"tamper-{arch}") / "tamper"
        gl.export(tamper_graph(), out, arch, dims={"n": 8}, cpu_threads=1 if arch == "x64" else None, progress=False)
    return out


@pytest.fixture
def copy_of(exported, tmp_path) -> Path:
    return Path(shutil.copytree(exported, tmp_path / "tamper", symlinks=True))


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def edit_json(folder: Path, name: str, change: Callable[[dict], None]) -> None:
    """Edit a JSON file of the folder, and update its hash in the manifest as a forger would."""
    path = folder / name
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2))
    if name != "manifest.json":
        manifest = json.loads((folder / "manifest.json").read_text())
        manifest["files"][name] = sha256(path)
        (folder / "manifest.json").write_text(json.dumps(manifest, indent=2))


def arg_index(data: dict, name: str) -> int:
    return next(j for j, a in enumerate(data["graphs"][0]["args"]) if a["name"] == name)


def run_once(folder: Path) -> np.ndarray:
    with gl.load_module(folder) as module:
        y = np.zeros(8, np.float32)
        module.graphs["tamper"].run(a=2.0, x=np.arange(8, dtype=np.float32), y=y)
        return y


def test_a_folder_the_user_exported_loads_without_a_word(exported, users, monkeypatch):
    act_as(monkeypatch, users, "me")
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnsealedModuleWarning)
        assert run_once(exported).tolist() == [2.0 * i for i in range(8)]


def test_another_users_folder_loads_with_a_warning_naming_it(exported, users, monkeypatch):
    act_as(monkeypatch, users, "other")
    with pytest.warns(UnsealedModuleWarning, match=r"was not exported by this user \(it was signed with another") as w:
        assert run_once(exported).tolist() == [2.0 * i for i in range(8)]
    assert str(exported) in str(w[0].message) and "export it again" in str(w[0].message)


def test_an_unsigned_folder_loads_with_a_warning(copy_of, users, monkeypatch):
    act_as(monkeypatch, users, "me")
    edit_json(copy_of, "manifest.json", lambda data: data.pop("signature"))
    with pytest.warns(UnsealedModuleWarning, match=r"it has no signature"):
        run_once(copy_of)


def module_code_file(folder: Path) -> Path:
    return next(p for p in sorted((folder / "module").iterdir()) if p.suffix in (".ll", ".spv"))


def test_an_edited_kernel_with_its_hash_updated_is_refused_for_the_user_who_exported_it(copy_of, users, monkeypatch):
    act_as(monkeypatch, users, "me")
    code = module_code_file(copy_of)
    code.write_bytes(code.read_bytes() + (b"\n; edited\n" if code.suffix == ".ll" else b"\0\0\0\0"))
    edit_json(
        copy_of,
        "manifest.json",
        lambda data: data["files"].update({code.relative_to(copy_of).as_posix(): sha256(code)}),
    )
    with pytest.raises(ManifestError) as caught:
        gl.load_module(copy_of)
    assert caught.value.json_path == "$.signature" and caught.value.file == str(copy_of / "manifest.json")
    assert "changed since you exported it; export the module again" in str(caught.value)


def test_gl_verify_refuses_the_same_before_building_anything(copy_of, users, monkeypatch):
    act_as(monkeypatch, users, "me")
    edit_json(copy_of, "manifest.json", lambda data: data["dims"].update({"n": 9}))
    with pytest.raises(ManifestError, match=r"\$\.signature: does not match this user's signature"):
        gl.verify(copy_of)
    assert not (copy_of / "host" / "build").exists()


def drop_relation_and_rename_dim(data: dict) -> None:
    graph = data["graphs"][0]
    graph.pop("shape_relations", None)
    graph["args"][arg_index(data, "y")]["shape"] = ["m"]


CRASH = """
import sys, numpy as np, graphlab as gl
try:
    module = gl.load_module(sys.argv[1])
except gl.GraphlabError as exc:
    print("REFUSED", type(exc).__name__, exc)
    sys.exit(0)
y = np.zeros(1, np.float32)
module.graphs["tamper"].run(a=2.0, x=np.ones(1 << 22, np.float32), y=y)
print("RAN")
"""


def test_a_dropped_relation_and_a_renamed_dim_are_refused_not_segfaulted(copy_of, users):
    edit_json(copy_of, "manifest.json", drop_relation_and_rename_dim)
    env = {**os.environ, "XDG_CONFIG_HOME": str(users["other"]),
           "PYTHONPATH": os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")])}  # fmt: skip
    done = subprocess.run([sys.executable, "-c", CRASH, str(copy_of)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, f"the run crashed (status {done.returncode}): {done.stderr[-2000:]}"
    assert "REFUSED ManifestError" in done.stdout and "RAN" not in done.stdout, done.stdout
    assert "$.graphs[0]" in done.stdout and "source/contract.json" in done.stdout


def test_a_scalar_dtype_changed_in_the_manifest_is_refused_against_the_sealed_copy(copy_of, users, monkeypatch):
    act_as(monkeypatch, users, "other")  # no signature of this user's to catch it first
    edit_json(
        copy_of, "manifest.json", lambda data: data["graphs"][0]["args"][arg_index(data, "a")].update(dtype="i32")
    )
    j = arg_index(json.loads((copy_of / "manifest.json").read_text()), "a")
    with pytest.warns(UnsealedModuleWarning), pytest.raises(ManifestError) as caught:
        gl.load_module(copy_of)
    assert caught.value.json_path == f"$.graphs[0].args[{j}].dtype"
    assert "differs from the sealed copy in source/contract.json" in caught.value.reason


@pytest.mark.parametrize(
    ("arg", "field", "value", "module_says"),
    [
        ("a", "dtype", "i32", "f32"),
        ("x", "ndim", 2, "1"),
        ("y", "dtype", "i32", "f32"),
        ("a", "kind", "ndarray", "scalar"),
    ],
)
def test_a_manifest_and_copy_both_forged_are_refused_against_the_modules_own_table(
    copy_of, users, monkeypatch, arg, field, value, module_says
):
    act_as(monkeypatch, users, "other")

    def forge(data: dict) -> None:
        entry = data["graphs"][0]["args"][arg_index(data, arg)]
        entry[field] = value
        if field == "ndim":
            entry["shape"] = ["n", "n"]
        if field == "kind":
            entry.update(ndim=1, shape=["n"])

    edit_json(copy_of, "source/contract.json", forge)
    edit_json(copy_of, "manifest.json", forge)
    j = arg_index(json.loads((copy_of / "manifest.json").read_text()), arg)
    with pytest.warns(UnsealedModuleWarning), pytest.raises(ManifestError) as caught:
        gl.load_module(copy_of)
    assert caught.value.json_path == f"$.graphs[0].args[{j}].{field}"
    assert f"was compiled with {field} {module_says}" in caught.value.reason
    assert "re-export the module" in caught.value.reason


def test_an_arg_the_module_takes_but_the_manifest_drops_is_refused(copy_of, users, monkeypatch):
    act_as(monkeypatch, users, "other")

    def drop(data: dict) -> None:
        graph = data["graphs"][0]
        graph["args"] = [a for a in graph["args"] if a["name"] != "a"]

    edit_json(copy_of, "source/contract.json", drop)
    edit_json(copy_of, "manifest.json", drop)
    with pytest.warns(UnsealedModuleWarning), pytest.raises(ManifestError, match=r"takes arg 'a', which the manifest"):
        gl.load_module(copy_of)


def test_dbg_compare_against_another_users_folder_warns_too(exported, users, monkeypatch):
    act_as(monkeypatch, users, "other")
    x, y = ti.ndarray(ti.f32, 8), ti.ndarray(ti.f32, 8)
    x.from_numpy(np.arange(8, dtype=np.float32))
    dbg = tamper_graph().debug({"a": 2.0, "x": x, "y": y})
    with pytest.warns(UnsealedModuleWarning, match=r"was not exported by this user"):
        dbg.compare(exported)


def test_a_manifest_that_drops_its_sealed_copy_is_refused(copy_of, users, monkeypatch):
    act_as(monkeypatch, users, "other")

    def unlist(data: dict) -> None:
        data["source"].pop("contract")
        data["files"].pop("source/contract.json")
        drop_relation_and_rename_dim(data)

    edit_json(copy_of, "manifest.json", unlist)
    (copy_of / "source" / "contract.json").unlink()
    with pytest.warns(UnsealedModuleWarning), pytest.raises(ManifestError) as caught:
        gl.load_module(copy_of)
    assert caught.value.json_path == "$.source.contract" and "this manifest was edited" in caught.value.reason
