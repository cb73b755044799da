"""Saving and exporting where the disk says no, two exports racing for one path, and inputs too big to draw.

- ``g.save`` on a full or read-only file system, or past the process's file size limit, raises a
  ``FileWriteError`` (a GraphlabError and an OSError) naming the file and the fix; the old file is
  unchanged and no temporary is left;
- ``gl.export`` on a full file system raises an ``OutputPathError`` naming the target and the fix,
  and leaves nothing behind;
- two ``overwrite=True`` exports finishing into one path at once take turns: neither fails;
- ``gl.verify`` refuses inputs this machine cannot hold, before numpy is asked for them, and
  ``gl.export`` warns when its default dims could not be verified here.

Full and read-only file systems are real: a small tmpfs mounted for the test (that needs the right
to mount, which root in the test container has; elsewhere those tests say so and skip). The size
limit is a real RLIMIT_FSIZE in a child process.
"""

# No `from __future__ import annotations`: Taichi reads kernel annotations as objects.

import os
import subprocess
import sys
import textwrap
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
import taichi as ti

import graphlab as gl
from graphlab.core.errors import FileWriteError, GraphlabError
from graphlab.deploy.errors import ExportSizeWarning, OutputPathError
from graphlab.deploy.verify import VerifyError

ROOT = str(Path(__file__).resolve().parent.parent.parent)


@ti.kernel
def add_one(x: ti.types.ndarray(dtype=ti.f32, ndim=1), y: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in x:
        y[i] = x[i] + 1.0


def small_graph() -> gl.Graph:
    g = gl.Graph("small")
    x = g.ndarray("x", ti.f32, ndim=1, shape="n", role="input")
    g.dispatch(add_one, x, g.ndarray("y", ti.f32, ndim=1, shape="n"))
    return g


def mount_tmpfs(folder: Path, options: str) -> Iterator[Path]:
    folder.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], capture_output=True, check=False
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs the right to mount): {done.stderr.decode().strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


@pytest.fixture
def full_fs(tmp_path) -> Iterator[Path]:
    """A 48 KiB file system, filled but for a few KiB."""
    for folder in mount_tmpfs(tmp_path / "full", "size=48k"):
        (folder / "old.graph.json").write_text("old")
        with (folder / "filler").open("wb") as handle:
            handle.write(b"\0" * 40 * 1024)
        yield folder


@pytest.fixture
def read_only_fs(tmp_path) -> Iterator[Path]:
    for folder in mount_tmpfs(tmp_path / "ro", "size=64k"):
        (folder / "old.graph.json").write_text("old")
        subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)
        yield folder


def test_save_on_a_full_disk_says_so_naming_the_file_and_keeps_the_old_one(ti_cpu, full_fs):
    g = small_graph()
    for i in range(400):  # a file bigger than the space left
        g.ndarray(f"pad{i}", ti.f32, ndim=1, shape="n")
    with pytest.raises(FileWriteError) as caught:
        g.save(full_fs / "old.graph.json")
    error = caught.value
    assert isinstance(error, GraphlabError) and isinstance(error, OSError) and error.errno == 28
    assert error.filename == str(full_fs / "old.graph.json")
    assert f"cannot save {full_fs / 'old.graph.json'}" in str(error) and "the file system is full" in str(error)
    assert (full_fs / "old.graph.json").read_text() == "old"
    assert sorted(p.name for p in full_fs.iterdir()) == ["filler", "old.graph.json"]


def test_save_on_a_read_only_file_system_says_so(ti_cpu, read_only_fs):
    with pytest.raises(FileWriteError, match=r"file system is read-only; choose a writable location") as caught:
        small_graph().save(read_only_fs / "old.graph.json")
    assert caught.value.filename == str(read_only_fs / "old.graph.json")
    assert (read_only_fs / "old.graph.json").read_text() == "old"


def test_save_past_the_file_size_limit_names_the_limit(tmp_path):
    script = textwrap.dedent(
        """
        import resource, signal, sys
        from graphlab.core.fileio import atomic_write_text
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails with EFBIG instead of killing
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
        try:
            atomic_write_text(sys.argv[1], "x" * 100_000)
        except Exception as exc:
            print(type(exc).__name__, exc.errno, exc.filename, exc, sep="|")
        """
    )
    target = tmp_path / "g.json"
    target.write_text("old")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", script, str(target)], env=env, capture_output=True, text=True)
    kind, errno, filename, message = out.stdout.strip().split("|")
    assert (kind, errno, filename) == ("FileWriteError", "27", str(target)), out.stderr
    assert "file size limit (ulimit -f)" in message
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["g.json"]


def test_export_on_a_full_disk_says_so_and_leaves_nothing(ti_cpu, full_fs):
    target = full_fs / "small"
    with pytest.raises(OutputPathError) as caught:
        gl.export(small_graph(), target, "x64", dims={"n": 8}, cpu_threads=1, progress=False)
    message = str(caught.value)
    assert f"cannot write the export {target}" in message and "the file system is full" in message
    assert caught.value.errno == 28
    assert sorted(p.name for p in full_fs.iterdir()) == ["filler", "old.graph.json"]


RACE = """
import json, sys
from pathlib import Path
from graphlab.deploy.folders import move_into_place, temporary_folder
target = Path(sys.argv[1])
for i in range(int(sys.argv[2])):
    tmp = temporary_folder(target)
    (tmp / "manifest.json").write_text(json.dumps({"format": "graphlab.module/1", "files": {}}))
    move_into_place(tmp, target, overwrite=True)
print("done")
"""


def test_two_overwrite_exports_finishing_at_once_take_turns(tmp_path):
    target = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")])}
    racers = [
        subprocess.Popen([sys.executable, "-c", RACE, str(target), "300"], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]  # fmt: skip
    results = [racer.communicate(timeout=300) for racer in racers]
    for out, err in results:
        assert out.strip() == "done", err[-2000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_verify_refuses_inputs_this_machine_cannot_hold_and_export_warns(ti_cpu, tmp_path):
    big = 2**32 - 1  # what a dim can be: the C API passes u32 shapes
    with pytest.warns(ExportSizeWarning, match=r"buffers take .* GiB \(x: 16\.0 GiB, y: 16\.0 GiB\)"):
        gl.export(small_graph(), tmp_path / "big", "x64", dims={"n": big}, cpu_threads=1, progress=False)
    with pytest.raises(VerifyError, match=r"cannot draw the inputs to verify .*: they would take .* GiB") as caught:
        gl.verify(tmp_path / "big")
    assert "x: " in str(caught.value) and "pass smaller inputs=, or export again with smaller dims=" in str(
        caught.value
    )


def test_export_at_ordinary_dims_does_not_warn(ti_cpu, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ExportSizeWarning)
        gl.export(small_graph(), tmp_path / "ok", "x64", dims={"n": 1024}, cpu_threads=1, progress=False)
