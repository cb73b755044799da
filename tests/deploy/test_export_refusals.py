"""gl.export, gl.load_module and gl.verify against folders and manifests that are not what they seem.

- ``overwrite=True`` replaces only a folder gl.export wrote, never another tool's, a user's files in
  it, or what a symbolic link points to;
- hidden temporary folders of killed exports are cleaned up (only graphlab's own), and a failing
  export removes its own;
- a manifest cannot name files outside its folder, nor skip the sha256 seal;
- JSON nested too deeply gives a ManifestError with the JSON path, not a RecursionError.

One small module is exported once (x64) and copied where a test changes it; four tests export
again, because what they check happens during an export.
"""

# No `from __future__ import annotations`: Taichi reads kernel annotations as objects.

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import taichi as ti

import graphlab as gl
from graphlab.core.errors import GraphlabError
from graphlab.core.nesting import MAX_JSON_DEPTH, MAX_NESTING
from graphlab.deploy import exporter, folders
from graphlab.deploy.control import plan_to_json
from graphlab.deploy.errors import ManifestError, OutputPathError
from graphlab.deploy.manifest import read_manifest
from graphlab.deploy.values import exported_args
from graphlab.deploy.verify import VerifyError, run_python
from graphlab.model.plan import build_plan


@ti.kernel
def add_one(x: ti.types.ndarray(dtype=ti.f32, ndim=1), y: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in x:
        y[i] = x[i] + 1.0


@ti.kernel
def broken(x: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    ti.static_assert(False, "this kernel never compiles")
    for i in x:
        x[i] = 0.0


def small_graph() -> gl.Graph:
    g = gl.Graph("small")
    x = g.ndarray("x", ti.f32, ndim=1, shape="n", role="input")
    g.dispatch(add_one, x, g.ndarray("y", ti.f32, ndim=1, shape="n"))
    return g


def export_small(target: Path, **options) -> exporter.ExportResult:
    return gl.export(small_graph(), target, "x64", dims={"n": 8}, cpu_threads=1, progress=False, **options)


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    ti.init(arch=ti.cpu, cpu_max_num_threads=1, log_level=ti.WARN)
    out = tmp_path_factory.mktemp("safety") / "small"
    export_small(out)
    return out


@pytest.fixture
def copy_of(exported, tmp_path) -> Path:
    """A private copy of the exported folder, alone in tmp_path."""
    return Path(shutil.copytree(exported, tmp_path / "small", symlinks=True))


def edit_manifest(folder: Path, change) -> None:
    data = json.loads((folder / "manifest.json").read_text())
    change(data)
    (folder / "manifest.json").write_text(json.dumps(data))


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def hidden(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name.startswith("."))


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


# --- 1. overwrite=True replaces only what gl.export wrote --------------------------------------------------


@pytest.mark.parametrize(
    ("manifest", "why"),
    [
        ('{"manifest_version": 3, "name": "My extension"}', r"manifest.json \$\.format: the format is 'None'"),
        ('{"format": "graphlab.module/1"}', r"manifest.json \$\.files: it lists no files"),
        ("not json", r"manifest.json \$: not readable JSON"),
    ],
)
def test_overwrite_refuses_a_folder_whose_manifest_is_not_a_graphlab_modules(tmp_path, manifest, why):
    folder = tmp_path / "extension"
    folder.mkdir()
    (folder / "manifest.json").write_text(manifest)
    (folder / "background.js").write_text("chrome.runtime.onInstalled.addListener(() => {});")
    before = tree(folder)
    with pytest.raises(
        OutputPathError, match=f"{re.escape(str(folder))} is not a folder gl.export wrote \\({why}"
    ) as e:
        export_small(folder, overwrite=True)
    assert "nothing was deleted" in str(e.value)
    assert tree(folder) == before


def test_overwrite_refuses_an_export_holding_files_it_does_not_list(copy_of):
    (copy_of / "notes.txt").write_text("mine")
    (copy_of / "source" / "tweak.py").write_text("mine too")
    (copy_of / "host" / "build").mkdir()
    (copy_of / "host" / "build" / "graphlab_host").write_text("built: gl.export's own")
    before = tree(copy_of)
    with pytest.raises(OutputPathError, match=r"holds files gl.export did not write \(notes.txt, source/tweak.py\)"):
        export_small(copy_of, overwrite=True)
    assert tree(copy_of) == before


def test_overwrite_refuses_a_symbolic_link_and_leaves_what_it_points_to(copy_of, tmp_path):
    link = tmp_path / "link"
    link.symlink_to(copy_of, target_is_directory=True)
    before = tree(copy_of)
    for overwrite in (False, True):
        with pytest.raises(OutputPathError, match="is a symbolic link .*neither writes through a link nor replaces"):
            export_small(link, overwrite=overwrite)
    assert link.is_symlink() and tree(copy_of) == before


def test_overwrite_checks_the_old_folder_again_when_it_replaces_it(copy_of):
    """A file added while the export runs is found where the old folder was renamed aside; it goes back."""
    before = tree(copy_of)

    def add_a_file_at_the_end(stage: str, fraction: float) -> None:
        if stage == "finish":
            (copy_of / "notes.txt").write_text("written during the export")

    with pytest.raises(OutputPathError, match=r"holds files gl.export did not write \(notes.txt\)"):
        gl.export(small_graph(), copy_of, "x64", dims={"n": 8}, overwrite=True, progress=add_a_file_at_the_end)
    assert tree(copy_of) == {**before, "notes.txt": b"written during the export"}
    assert hidden(copy_of.parent) == []  # neither the new export nor the aside name is left


def test_an_export_appearing_at_the_target_meanwhile_is_replaced_only_with_overwrite(exported, tmp_path):
    """Another export finished first at the same path: without overwrite=True it stays."""
    target = tmp_path / "small"

    def another_export_lands(stage: str, fraction: float) -> None:
        if stage == "finish":
            shutil.copytree(exported, target)

    with pytest.raises(OutputPathError, match=f"{re.escape(str(target))} appeared while the export ran"):
        gl.export(small_graph(), target, "x64", dims={"n": 8}, progress=another_export_lands)
    assert tree(target) == tree(exported) and hidden(tmp_path) == []


# --- 2. hidden temporary folders ---------------------------------------------------------------------------


def test_stale_temp_folders_of_gone_exports_are_removed_and_nothing_else(copy_of):
    parent, host, dead, alive = copy_of.parent, folders.host_tag(), dead_pid(), os.getpid()
    (copy_of / "host" / "build").mkdir()
    (copy_of / "host" / "build" / "graphlab_host").write_text("a built host is gl.export's own")
    gone = [f".small.export-{host}-{dead}-abcd_123", f".other.export-{host}-{dead}-zz99zz99",
            f".small.old-{host}-{dead}-0123abcd"]  # fmt: skip
    kept = [
        f".small.export-{host}-{alive}-abcd1234",  # its process is running
        f".small.export-elsewhere-{dead}-abcd1234",  # made on another machine
        f".nothing.old-{host}-{dead}-abcd1234",  # no 'nothing' next to it: the only copy
        *(".small.export-abcd1234", f".small.export-{host}-{dead}-abc", ".mine"),  # not graphlab's naming
    ]
    for name in gone + kept:
        (parent / name).mkdir()
        (parent / name / "data").write_text(name)
    (parent / f".small.export-{host}-{dead}-file1234").write_text("a file of that name is not a folder of ours")
    kept.append(f".small.export-{host}-{dead}-file1234")

    export_small(copy_of, overwrite=True)
    assert hidden(parent) == sorted(kept)
    assert not (copy_of / "host" / "build").exists()  # the old export was replaced, its host build with it


def test_a_failing_export_removes_its_own_temp_folder(tmp_path):
    ti.init(arch=ti.cpu, log_level=ti.WARN)
    g = gl.Graph("broken")
    g.dispatch(broken, g.ndarray("x", ti.f32, ndim=1))
    seen: set[str] = set()

    def look(stage: str, fraction: float) -> None:
        seen.update(hidden(tmp_path))

    with pytest.raises(GraphlabError, match="this kernel never compiles"):
        gl.export(g, tmp_path / "broken", "x64", progress=look)
    own = re.compile(rf"\.broken\.export-{folders.host_tag()}-{os.getpid()}-[a-z0-9_]{{8}}")
    assert seen and all(own.fullmatch(name) for name in seen), seen
    assert list(tmp_path.iterdir()) == []


# --- 3. paths and hashes in the manifest -------------------------------------------------------------------


def _outside_link(folder: Path, data: dict) -> None:
    outside = folder.parent / "outside.bin"
    outside.write_bytes(b"not part of the module")
    (folder / "module" / "extra.bin").symlink_to(outside)
    data["files"]["module/extra.bin"] = sha256(outside)


BAD_PATHS = {
    "parent": (lambda f, d: d["files"].update({"../../etc/passwd": sha256(Path("/etc/passwd"))}),
               "$.files['../../etc/passwd']", "'..' part"),
    "absolute": (lambda f, d: d["files"].update({"/etc/passwd": sha256(Path("/etc/passwd"))}),
                 "$.files['/etc/passwd']", "is an absolute path"),
    "link": (_outside_link, "$.files['module/extra.bin']", "leads outside the module folder through a symbolic link"),
    "source": (lambda f, d: d["source"].update({"kernels": "../kernels.json"}), "$.source.kernels", "'..' part"),
    "tcm": (lambda f, d: d.update({"tcm": "/tmp/module.tcm"}), "$.tcm", "is an absolute path"),
    "no hash": (lambda f, d: d["files"].update({"source/kernels.json": None}), "$.files['source/kernels.json']",
                "expected the file's sha256"),
}  # fmt: skip


@pytest.mark.parametrize("case", BAD_PATHS)
def test_a_manifest_naming_a_path_outside_its_folder_is_refused_when_read(copy_of, case):
    change, json_path, reason = BAD_PATHS[case]
    edit_manifest(copy_of, lambda data: change(copy_of, data))
    for read in (read_manifest, gl.load_module, gl.verify):
        with pytest.raises(ManifestError) as caught:
            read(copy_of)
        assert caught.value.file == str(copy_of / "manifest.json")
        assert caught.value.json_path == json_path
        assert reason in caught.value.reason and "re-export the module" in caught.value.reason


def _drop_a_module_file(data: dict) -> None:
    del data["files"][next(name for name in data["files"] if name.startswith("module/"))]


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda data: data.update({"files": {}}), "lists no files with their sha256"),
        (lambda data: data.pop("files"), "lists no files with their sha256"),
        (_drop_a_module_file, "is not listed, so its integrity cannot be checked"),
    ],
)
def test_a_manifest_without_hashes_is_refused_before_loading(copy_of, change, reason):
    edit_manifest(copy_of, change)
    for load in (gl.load_module, gl.verify):
        with pytest.raises(ManifestError, match=r"manifest.json: \$\.files: .*re-export the module") as caught:
            load(copy_of)
        assert reason in caught.value.reason


def test_verify_refuses_a_changed_source_before_running_anything(copy_of):
    kernels = copy_of / "source" / "kernels.json"
    kernels.write_text(kernels.read_text() + " ")
    with pytest.raises(ManifestError, match="kernels.json is changed since export") as caught:
        gl.verify(copy_of)
    assert caught.value.json_path == "$.files['source/kernels.json']"
    assert not (copy_of / "host" / "build").exists()  # the host was not even built


# --- 4. nesting --------------------------------------------------------------------------------------------


def test_json_nested_too_deeply_gives_a_manifest_error_with_the_json_path(tmp_path):
    deep = "[" * 100_000 + "]" * 100_000
    (tmp_path / "manifest.json").write_text('{"format": "graphlab.module/1", "dims": ' + deep + "}")
    for read in (read_manifest, gl.load_module, gl.verify):
        with pytest.raises(ManifestError) as caught:
            read(tmp_path)
        assert caught.value.file == str(tmp_path / "manifest.json")
        assert caught.value.json_path == "$.dims" + "[0]" * (MAX_JSON_DEPTH - 1)
        assert "nested too deeply to read" in caught.value.reason


def test_stored_kernels_nested_too_deeply_give_a_verify_error(copy_of, tmp_path):
    """Even sealed (its sha256 updated to match), a kernels file too deep to parse is refused."""
    kernels = copy_of / "source" / "kernels.json"
    kernels.write_text("[" * 100_000 + "]" * 100_000)
    edit_manifest(copy_of, lambda data: data["files"].update({"source/kernels.json": sha256(kernels)}))
    with pytest.raises(VerifyError, match="kernels.json is not readable JSON \\(RecursionError\\); re-export"):
        run_python(copy_of, tmp_path, tmp_path / "out")


def manifest_with_control(folder: Path, control: list) -> None:
    args = [{"name": "x", "kind": "ndarray", "dtype": "f32", "ndim": 1, "shape": ["n"]},
            {"name": "k", "kind": "scalar", "dtype": "i32"}]  # fmt: skip
    (folder / "manifest.json").write_text(json.dumps({
        "format": "graphlab.module/1", "arch": "x64", "taichi_version": "1.7.4",
        "graphs": [{"name": "deep", "args": args, "control": control}],
    }))  # fmt: skip


def repeats(levels: int) -> list:
    tree: list = [{"op": "segment", "graph": "deep_seg0"}]
    for _ in range(levels):
        tree = [{"op": "repeat", "times": 1, "body": tree}]
    return tree


def test_a_control_tree_deeper_than_any_export_writes_is_refused(tmp_path):
    # The deepest graph the model allows (a loop in the innermost of MAX_NESTING sequences) reads back.
    g = gl.Graph("deep")
    x, k = g.ndarray("x", ti.f32, ndim=1, shape="n"), g.scalar("k", ti.i32)
    inner = g.sequence("s0", repeat=2)
    for i in range(1, MAX_NESTING - 1):
        inner = inner.sequence(f"s{i}", repeat=2)
    body = g.define("body")
    body.dispatch(add_one, x, x)
    g.loop(body, count=k, into=inner)
    manifest_with_control(tmp_path, plan_to_json(build_plan(g), [a.name for a in exported_args(g)]))
    assert read_manifest(tmp_path).graphs[0].control

    for levels in (MAX_NESTING + 1, 400):  # 400: a RecursionError in the walk before
        manifest_with_control(tmp_path, repeats(levels))
        with pytest.raises(ManifestError, match=f"nests deeper than {MAX_NESTING + 1} levels") as caught:
            read_manifest(tmp_path)
        assert caught.value.json_path == "$.graphs[0].control" + "[0].body" * (MAX_NESTING + 1)
