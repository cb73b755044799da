"""Property: any output path or ``dims=`` key either exports inside the intended folder or is refused, writing nothing.

Paths are relative to a working folder deep inside a sandbox (``..`` cannot climb out of it) and
mix awkward characters: NUL, an undecodable byte (``\\udcff``), newlines, spaces, names too long for
the file system, ``~user``. Every path is also tried with an input refused after the path is
checked (a bad dim size): nothing may be left behind, not even an empty parent folder.

Kernels live here (no ``from __future__ import annotations``: Taichi reads the annotations).
"""

import os
from pathlib import Path

import pytest
import taichi as ti
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from widget_comm import recording_comm  # noqa: F401  (autouse fixture: the widget's comm, recorded)

import graphlab as gl

DEPTH = 4  # the working folder's depth in the sandbox: at most DEPTH path components, so '..' stays inside


@ti.kernel
def fill(x: ti.types.ndarray(dtype=ti.f32, ndim=1), value: ti.f32):
    for i in x:
        x[i] = value


def small_graph() -> gl.Graph:
    g = gl.Graph("fuzz_paths")
    g.dispatch(fill, g.ndarray("x", ti.f32, ndim=1, shape="n"), g.scalar("value", ti.f32))
    return g


COMPONENTS = st.one_of(
    st.text(st.sampled_from("ab.é -_#:*\\\n\t\x00\udcff~"), min_size=1, max_size=6),
    st.sampled_from(["..", ".", "out", "x" * 300, "~nobody_here", " "]),
)
PATHS = st.one_of(
    st.lists(COMPONENTS, min_size=1, max_size=DEPTH).map("/".join),
    st.lists(COMPONENTS, min_size=1, max_size=DEPTH).map(lambda parts: "/".join(parts) + "/"),
    st.just(""),
)
NOT_PATHS = st.sampled_from([None, 3, b"out", ["out"], 1.5])


def listing(root: Path) -> dict[str, bytes | None]:
    """Every file (with its bytes) and folder under ``root``."""
    out: dict[str, bytes | None] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs:
            out[os.path.relpath(os.path.join(folder, name), root)] = None
        for name in files:
            out[os.path.relpath(os.path.join(folder, name), root)] = Path(folder, name).read_bytes()
    return out


@pytest.fixture
def sandbox(tmp_path, monkeypatch):
    """A sandbox with a file 'taken' in it; the working folder sits DEPTH levels deep."""
    work = tmp_path.joinpath(*(f"d{i}" for i in range(DEPTH)))
    work.mkdir(parents=True)
    (work / "taken").write_text("a user's file")
    monkeypatch.chdir(work)
    return tmp_path


def _inside(root: Path, path: Path) -> bool:
    """Whether ``path`` is ``root`` or lies under it."""
    root_text, text = os.path.realpath(root), os.path.realpath(path)
    return text == root_text or text.startswith(root_text + os.sep)


# Paths that escaped as raw errors (ValueError, OSError, RuntimeError, ChildRunError after the
# compile) or, refused later, left new parent folders behind.
FOUND = ["a\x00b", "x" * 300, "~nobody_here/out", "\udcff", "new/parents/out", "taken/out"]


def test_any_path_refused_later_leaves_the_sandbox_untouched(ti_cpu, sandbox):
    graph = small_graph()

    def check(path: object) -> None:
        before = listing(sandbox)
        with pytest.raises(gl.GraphlabError) as info:
            gl.export(graph, path, arch="x64", dims={"n": -1}, progress=False)
        assert str(info.value)
        assert listing(sandbox) == before, f"refused with {info.value!r}, but the sandbox changed"

    fuzz = given(st.one_of(PATHS, NOT_PATHS))(check)
    for found in FOUND:
        fuzz = example(found)(fuzz)
    settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))(fuzz)()


def test_any_path_exports_inside_the_sandbox_or_is_refused_writing_nothing(ti_cpu, sandbox):
    graph = small_graph()
    work = Path.cwd()

    def check(path: object) -> None:
        before = listing(sandbox)
        try:
            result = gl.export(graph, path, arch="x64", dims={"n": 4}, progress=False, overwrite=True)
        except gl.GraphlabError as exc:
            assert str(exc)
            assert listing(sandbox) == before, f"refused with {exc!r}, but the sandbox changed"
            return
        assert result.path == Path(os.path.abspath(work / path))  # '..' resolved by name
        assert _inside(sandbox, result.path) and result.path != sandbox
        assert (result.path / "manifest.json").is_file()
        for name in set(listing(sandbox)) - set(before):  # new: the export, or the folders leading to it
            assert _inside(result.path, sandbox / name) or _inside(sandbox / name, result.path), name

    fuzz = given(PATHS.filter(lambda p: "\x00" not in p and "\udcff" not in p))(check)
    for found in ["\udcff", "a b/\n/é", "taken/out", "out/"]:
        fuzz = example(found)(fuzz)
    settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))(fuzz)()


KEYS = st.one_of(
    st.text(max_size=10),
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True),
    st.sampled_from(["n", "../n", "n\n", "a" * 200, "for", 'n"); system("x', None, 3, ("n",)]),
)
SIZES = st.one_of(st.integers(-2, 2**33), st.sampled_from([1.5, "4", None, True, 2**64]))


def test_any_dims_keys_export_or_are_refused_writing_nothing(ti_cpu, sandbox):
    graph = small_graph()

    def check(dims: dict) -> None:
        before = listing(sandbox)
        try:
            result = gl.export(graph, "out", arch="x64", dims={"n": 4, **dims}, progress=False, overwrite=True)
        except gl.GraphlabError as exc:
            assert str(exc)
            assert listing(sandbox) == before, f"refused with {exc!r}, but the sandbox changed"
            return
        assert set(result.manifest.dims) == {"n", *dims}
        assert all(isinstance(k, str) and k.isidentifier() and k.isascii() for k in result.manifest.dims)

    fuzz = given(st.dictionaries(KEYS, SIZES, max_size=2))(check)
    settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))(fuzz)()


@pytest.mark.parametrize("path", ["~nobody_here/out", "a\x00b", "x" * 300], ids=["unknown_user", "nul", "too_long"])
def test_the_widget_refuses_such_paths_in_its_view_not_as_a_crash(ti_cpu, sandbox, path, caplog):
    graph = small_graph()
    widget = gl.editor(graph, kernels=[], access="ast")
    try:
        before = listing(sandbox)
        message = {"kind": "export", "request": 3, "arch": "x64", "path": path, "dims": {"n": 4}, "verify": False}
        widget._handle_msg({"content": {"data": {"method": "custom", "content": message}}, "buffers": []})
        reply = widget.comm.replies()[-1]
        assert reply["ok"] is False and reply["request"] == 3
        error = widget.export["error"]
        assert widget.export["state"] == "failed" and "output" in error and "path" in error, error
        assert not error.startswith("OutputPathError"), "the panel says the message, not Python's class name"
        assert not [r for r in caplog.records if r.levelname == "ERROR"], "refused as a bug, not as bad input"
        assert listing(sandbox) == before
    finally:
        widget.close()
