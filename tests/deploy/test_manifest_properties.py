"""Property: a damaged ``manifest.json`` loads or is refused with a graphlab error, and the folder is left as it was.

One module is exported; each example damages its manifest the ways files get damaged (cut short,
a value replaced by one of another type, a key deleted, a name or path swapped for a hostile
one), then calls ``read_manifest`` and ``gl.load_module`` on the folder, and ``gl.verify`` where
the manifest is refused (one that reads builds and runs the C host: too slow to fuzz). Every file's bytes are
compared before and after: reading a module never writes into it.

Kernels live here (no ``from __future__ import annotations``: Taichi reads the annotations).
"""

import contextlib
import hashlib
import json
import os
from pathlib import Path

import pytest
import taichi as ti
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import graphlab as gl
from graphlab.deploy import ManifestError, read_manifest


@ti.kernel
def saxpy(a: ti.f32, x: ti.types.ndarray(dtype=ti.f32, ndim=1), y: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in x:
        y[i] += a * x[i]


def folder_state(folder: Path) -> dict[str, str]:
    """Each file's sha256 and each folder, by path: what must not change."""
    out: dict[str, str] = {}
    for parent, dirs, files in os.walk(folder):
        for name in dirs:
            out[os.path.relpath(os.path.join(parent, name), folder)] = "folder"
        for name in files:
            path = Path(parent, name)
            out[os.path.relpath(path, folder)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def json_paths(node: object, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            out += json_paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            out += json_paths(value, (*prefix, index))
    return out


def replaced(data: object, path: tuple, value: object) -> object:
    data = json.loads(json.dumps(data))
    if not path:
        return value
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return data


def deleted(data: object, path: tuple) -> object:
    data = json.loads(json.dumps(data))
    target = data
    for key in path[:-1]:
        target = target[key]
    del target[path[-1]]
    return data


HOSTILE = st.sampled_from(
    [
        "../outside", "/etc/passwd", "module/../../x", "", "\x00", "n\n", "a" * 300, "x64", "vulkan", "cuda",
        "f64", "i8", "texture", "matrix", "scalar", -1, 2**32, 2**64, 10**400, True, None, 1.5, [], {}, [[]],
        {"slot": 0}, "0" * 64, "z" * 64,
    ]
)  # fmt: skip
LEAVES = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(), st.text(max_size=12),
    st.lists(st.integers(-2, 5), max_size=3), st.dictionaries(st.text(max_size=4), st.integers(), max_size=2), HOSTILE,
)  # fmt: skip


def mutations(data: dict) -> st.SearchStrategy[str]:
    text = json.dumps(data)
    paths = json_paths(data)
    return st.one_of(
        st.integers(0, len(text)).map(lambda n: text[:n]),
        st.tuples(st.sampled_from(paths), LEAVES).map(lambda pv: json.dumps(replaced(data, *pv))),
        st.sampled_from([p for p in paths if p]).map(lambda p: json.dumps(deleted(data, p))),
        st.lists(st.tuples(st.sampled_from(paths), LEAVES), min_size=2, max_size=4).map(
            lambda pvs: json.dumps(_replace_all(data, pvs))
        ),
    )


def _replace_all(data: object, changes: list) -> object:
    for path, value in changes:
        with contextlib.suppress(KeyError, IndexError, TypeError):  # an earlier change removed the path
            data = replaced(data, path, value)
    return data


@pytest.fixture
def exported(ti_cpu, tmp_path):
    g = gl.Graph("fuzz_manifest")
    x, y = g.ndarray("x", ti.f32, ndim=1, shape="n"), g.ndarray("y", ti.f32, ndim=1, shape="n")
    g.dispatch(saxpy, g.scalar("a", ti.f32), x, y)
    return gl.export(g, tmp_path / "module", arch="x64", dims={"n": 8}, progress=False).path


def test_any_damaged_manifest_loads_or_is_refused_and_the_folder_is_left_alone(exported):
    manifest = exported / "manifest.json"
    original = manifest.read_text()
    valid = json.loads(original)

    def check(text: str) -> None:
        manifest.write_text(text)
        before = folder_state(exported)
        try:
            try:
                read_manifest(exported)
            except ManifestError as exc:
                assert str(exc).startswith(str(manifest)), exc  # names the file, then the JSON path
                with pytest.raises(ManifestError):  # refused before anything is built or run
                    gl.verify(exported)
            try:
                with gl.load_module(exported):
                    pass
            except gl.GraphlabError as exc:
                assert str(exc)
            assert folder_state(exported) == before
        finally:
            manifest.write_text(original)

    fuzz = given(mutations(valid))(check)
    for found in FOUND:
        fuzz = example(found(valid))(fuzz)
    settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))(fuzz)()


# Damage that once escaped as a raw error: a shape relation's guard naming a list, not an arg
# (TypeError: unhashable type: 'list').
FOUND = [
    lambda data: json.dumps(replaced(data, ("graphs", 0, "shape_relations", 0, "guards"), [[["x"], 0]])),
]


@pytest.mark.parametrize("path", [None, 3, b"module", "~nobody_here_at_all/module"], ids=repr)
def test_a_path_that_names_no_folder_is_a_manifest_error(path):
    for entry in (gl.load_module, gl.verify):
        with pytest.raises(ManifestError, match="path=|missing"):
            entry(path)
