"""Saving a graph file like an editor does: modes, links, long names, errors; and ``render -o`` errors.

Tests run as root in CI, so an unwritable place is a path under a regular file or in a missing
folder (permission bits do not stop root).
"""

import json
import os
import stat
import subprocess
import sys

import pytest
import taichi as ti

import graphlab as gl
from graphlab.core.fileio import atomic_write_text
from graphlab.model.graphfile import dumps

pytestmark = pytest.mark.usefixtures("ti_cpu")


@ti.kernel
def bump(a: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in a:
        a[i] += 1.0


def _graph():
    g = gl.Graph("g")
    with g.sequence("s", repeat=3) as s:
        s.dispatch(bump, g.ndarray("a", ti.f32, ndim=1))
    return g


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def _mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_new_file_follows_the_umask(tmp_path, umask_022):
    _graph().save(tmp_path / "g.json")
    assert _mode(tmp_path / "g.json") == 0o644  # mkstemp alone gives 0o600
    os.umask(0o077)
    _graph().save(tmp_path / "private.json")
    assert _mode(tmp_path / "private.json") == 0o600


@pytest.mark.parametrize("mode", [0o640, 0o664, 0o444, 0o600])
def test_an_existing_file_keeps_its_mode(tmp_path, umask_022, mode):
    path = tmp_path / "g.json"
    path.write_text("old")
    path.chmod(mode)
    _graph().save(path)
    assert _mode(path) == mode
    assert path.read_text() == dumps(_graph())


def test_an_existing_file_keeps_its_owner_where_allowed(tmp_path):
    path = tmp_path / "g.json"
    path.write_text("old")
    if os.geteuid() == 0:  # root can give the file to someone else first; saving must give it back
        os.chown(path, 1234, 1234)
    before = os.stat(path)
    _graph().save(path)
    after = os.stat(path)
    assert (after.st_uid, after.st_gid) == (before.st_uid, before.st_gid)
    assert after.st_ino != before.st_ino  # replaced atomically, not rewritten in place


def test_saving_through_a_symlink_replaces_its_target_and_keeps_the_link(tmp_path):
    real_dir = tmp_path / "real"
    real_dir.mkdir()
    target = real_dir / "g.json"
    target.write_text("old")
    target.chmod(0o640)
    link = tmp_path / "link.json"
    link.symlink_to(os.path.relpath(target, tmp_path))
    _graph().save(link)
    assert link.is_symlink() and os.readlink(link) == os.path.relpath(target, tmp_path)
    assert target.read_text() == dumps(_graph()) and _mode(target) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.json", "real"]
    assert sorted(p.name for p in real_dir.iterdir()) == ["g.json"]  # the temporary file went into its folder


def test_a_dangling_symlink_creates_its_target(tmp_path, umask_022):
    link = tmp_path / "link.json"
    link.symlink_to("made.json")
    _graph().save(link)
    assert link.is_symlink() and (tmp_path / "made.json").read_text() == dumps(_graph())
    assert _mode(tmp_path / "made.json") == 0o644


def test_a_symlink_loop_is_an_error_and_changes_nothing(tmp_path):
    (tmp_path / "a.json").symlink_to("b.json")
    (tmp_path / "b.json").symlink_to("a.json")
    with pytest.raises(OSError, match="symbolic links"):
        _graph().save(tmp_path / "a.json")
    assert os.readlink(tmp_path / "a.json") == "b.json" and os.readlink(tmp_path / "b.json") == "a.json"


def test_a_file_name_near_name_max_saves(tmp_path):
    name = "g" * 245 + ".json"  # 250 characters: the OS takes it; a temp name of '.<name>.<random>.tmp' would not
    _graph().save(tmp_path / name)
    assert (tmp_path / name).read_text() == dumps(_graph())
    assert os.listdir(tmp_path) == [name]


@pytest.mark.parametrize("where", ["missing/g.json", "a_file/g.json"])
def test_an_unwritable_place_raises_naming_the_path_and_leaves_nothing(tmp_path, where):
    (tmp_path / "a_file").write_text("not a folder")
    path = tmp_path / where
    with pytest.raises(OSError) as caught:
        _graph().save(path)
    assert caught.value.filename == str(path)  # not the temporary name the user never gave
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file"]


def test_a_folder_is_not_replaced(tmp_path):
    (tmp_path / "g.json").mkdir()
    with pytest.raises(IsADirectoryError):
        atomic_write_text(tmp_path / "g.json", "text")
    assert (tmp_path / "g.json").is_dir() and os.listdir(tmp_path) == ["g.json"]


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "g.json"
    path.write_text("old")
    with pytest.raises(UnicodeEncodeError):
        atomic_write_text(path, "bad \udc80 surrogate")
    assert path.read_text() == "old" and os.listdir(tmp_path) == ["g.json"]


# --- graphlab render -o to a place it cannot write ---------------------------------------------

KERNELS = """
import taichi as ti

@ti.kernel
def fill(a: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in a:
        a[i] = 1.0
"""


def _render(tmp_path, output):
    (tmp_path / "kern.py").write_text(KERNELS)
    graph = {
        "format": "graphlab.graph/1", "name": "g", "sequences": [],
        "args": [{"name": "a", "kind": "ndarray", "dtype": "f32", "ndim": 1, "element_shape": []}],
        "body": [{"type": "dispatch", "name": "fill", "kernel": "kern:fill", "bindings": {"a": "a"}}],
    }  # fmt: skip
    (tmp_path / "g.json").write_text(json.dumps(graph))
    (tmp_path / "a_file").write_text("not a folder")
    (tmp_path / "dangling.dot").symlink_to("missing/out.dot")  # the folder is fine; writing fails later
    command = ["render", str(tmp_path / "g.json"), "--kernels", str(tmp_path / "kern.py"), "-o", output]
    return subprocess.run(
        [sys.executable, "-m", "graphlab.cli", *command], capture_output=True, text=True, timeout=300, cwd=tmp_path
    )


@pytest.mark.parametrize(
    ("output", "words"),
    [
        ("a_file/out.svg", "a_file is not a folder"),
        ("missing/out.svg", "missing does not exist"),
        ("out_" + "x" * 300 + ".dot", "cannot write it (File name too long)"),
        ("dangling.dot", "cannot write it (No such file or directory)"),
    ],
)
def test_render_to_an_unwritable_path_exits_2_with_one_line(tmp_path, output, words):
    out = _render(tmp_path, output)
    assert out.returncode == 2, out.stderr
    lines = [line for line in out.stderr.splitlines() if line.startswith("graphlab render:")]
    assert len(lines) == 1 and words in lines[0], out.stderr
    assert "Traceback" not in out.stderr
