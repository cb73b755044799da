"""Reading graph files and manifests: one bounded reader, regular files only.

A file's reported size is not its size (``/dev/zero`` and ``/proc`` files report 0) and a FIFO
blocks its reader until someone writes: ``gl.load``, the viewer's drawing and ``read_manifest`` all
read through :func:`graphlab.core.fileio.read_limited`, which refuses anything but a regular file before
the first read and reads at most its limit plus one byte. Each case runs in a child with a deadline,
so a reader that blocks or eats memory fails the test instead of hanging the suite.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from graphlab.api import doc_kernels
from graphlab.core.fileio import FileTooLargeError, read_limited
from graphlab.deploy.manifest import load_manifest_json

ROOT = Path(__file__).resolve().parent.parent.parent

#: How each reader is called on ``PATH`` in the child; it prints the error it raised, or "read".
READERS = {
    "load": "import graphlab as gl; gl.load(PATH, kernels={})",
    "draw_file": "from graphlab.fileview.drawing import draw_file; draw_file(PATH)",
    "read_manifest": "from graphlab.deploy import read_manifest; read_manifest(Path(PATH).parent)",
}


def run_reader(reader: str, path: Path, call: str | None = None) -> str:
    """What ``reader`` says about ``path``, in a child given 30 s and 1 GiB (a reader of /dev/zero ends sooner)."""
    code = textwrap.dedent(f"""
        import resource; resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
        from pathlib import Path
        PATH = {str(path)!r}
        try:
            {call or READERS[reader]}
        except Exception as exc:
            print(type(exc).__name__, exc)
        else:
            print("read")
    """)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip().splitlines()[-1]


def file_named(tmp_path: Path, reader: str) -> Path:
    """Where each reader looks: a graph file, or the manifest of a module folder."""
    return tmp_path / ("manifest.json" if reader == "read_manifest" else "g.graph.json")


@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_link_to_dev_zero_is_refused_not_read_until_memory_runs_out(tmp_path, reader):
    path = file_named(tmp_path, reader)
    path.symlink_to("/dev/zero")
    said = run_reader(reader, path)
    assert "not a regular file (a character device)" in said, said
    assert str(path) in said


@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_fifo_is_refused_at_once_not_waited_on(tmp_path, reader):
    path = file_named(tmp_path, reader)
    os.mkfifo(path)
    said = run_reader(reader, path)  # a reader that opens it for reading would block past the deadline
    assert "not a regular file (a FIFO)" in said, said


@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_folder_is_refused_as_not_a_regular_file(tmp_path, reader):
    path = file_named(tmp_path, reader)
    path.mkdir()
    assert "not a regular file (a folder)" in run_reader(reader, path)


def test_a_file_that_reports_fewer_bytes_than_it_holds_is_cut_at_the_limit():
    """/proc files report size 0; the reader stops one byte past the limit and says so."""
    source = Path("/proc/self/maps")
    assert source.stat().st_size == 0
    with pytest.raises(FileTooLargeError, match="file is over the 10 limit .more than the 0 bytes it reports"):
        read_limited(source, limit=10)
    assert len(read_limited(source, limit=10**7)) > 10


def test_the_limit_is_inclusive_and_a_descriptor_is_read_and_left_open(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"x" * 100)
    assert read_limited(path, limit=100) == b"x" * 100
    with pytest.raises(FileTooLargeError, match="file is 100 bytes, over the 99 limit"):
        read_limited(path, limit=99)
    fd = os.open(path, os.O_RDONLY)
    try:
        assert read_limited(fd, limit=100) == b"x" * 100
        os.fstat(fd)  # still open: the caller closes what it opened
    finally:
        os.close(fd)


def test_a_missing_file_keeps_its_usual_error():
    with pytest.raises(FileNotFoundError):
        read_limited("/nonexistent/g.graph.json", limit=10)


def test_a_valid_manifest_and_graph_file_still_read(tmp_path):
    """The bounded reader changes nothing for regular files: a saved graph draws, a manifest JSON parses."""
    doc_kernels.demo_graph().save(tmp_path / "g.graph.json")
    assert run_reader("draw_file", tmp_path / "g.graph.json") == "read"
    (tmp_path / "manifest.json").write_text(json.dumps({"format": "x"}))
    assert load_manifest_json(tmp_path) == {"format": "x"}


@pytest.mark.parametrize("swap", ["fifo", "folder"])
def test_a_listed_module_file_swapped_for_a_fifo_or_folder_is_named_as_such(tmp_path, swap):
    """A module file turned into a FIFO was reported "missing since export"; it is there, and not a file."""
    code = textwrap.dedent(f"""
        import contextlib, taichi as ti, graphlab as gl
        from graphlab.api import doc_kernels
        with contextlib.redirect_stdout(None):
            ti.init(arch=ti.cpu, log_level=ti.WARN)
        gl.export(doc_kernels.demo_graph(), {str(tmp_path / "m")!r}, arch="x64", dims={{"n": 4}}, progress=False)
    """)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    [ll] = sorted((tmp_path / "m" / "module").glob("*.ll"))[:1]
    ll.unlink()
    os.mkfifo(ll) if swap == "fifo" else ll.mkdir()
    said = run_reader("", ll, "import graphlab as gl; gl.load_module(Path(PATH).parents[1])")
    kind = "a FIFO" if swap == "fifo" else "a folder"
    assert f"{ll} is not the file the export wrote: not a regular file ({kind})" in said, said
