"""The graph file: round trips, stable text, atomic saves, and strict, located load errors."""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphlab as gl
from graphlab.api.examples import copy_buffers, mpm88_buffers, mpm88_graph
from graphlab.model.graphfile import dumps


def test_save_load_compile_run_gives_identical_results(mpm88, tmp_path):
    g = mpm88_graph(mpm88, substeps=20)
    path = tmp_path / "mpm88.graph.json"
    g.save(path)
    loaded = gl.load(path, kernels=mpm88)
    assert dumps(loaded) == path.read_text()
    assert [s.id for s in loaded.steps()] == [s.id for s in g.steps()]

    ours = mpm88_buffers(mpm88)
    theirs = copy_buffers(ours)
    g.run(ours)
    loaded.run(theirs)
    for name in ours:
        assert ours[name].to_numpy().tobytes() == theirs[name].to_numpy().tobytes(), name


def test_file_is_stable_and_readable(mpm88):
    text = dumps(mpm88_graph(mpm88, substeps=3))
    data = json.loads(text)
    assert data["format"] == "graphlab.graph/1"
    assert list(data) == sorted(data)
    assert data["body"] == [{"name": "substep", "repeat": 3, "sequence": "substep", "type": "sequence"}]
    kernel_ref = data["sequences"][0]["body"][1]["kernel"]
    assert kernel_ref.endswith(":substep_p2g")
    assert text == dumps(mpm88_graph(mpm88, substeps=3))


def test_kernels_resolve_only_from_what_the_caller_gives(mpm88, tmp_path):
    path = tmp_path / "g.json"
    mpm88_graph(mpm88, substeps=1).save(path)
    with pytest.raises(gl.GraphFileError, match=r"\$\.sequences\[0\]\.body\[0\]\.kernel: kernel '.*substep_reset_grid' "
                       r"is not among the kernels given \(.*init_particles"):  # fmt: skip
        gl.load(path, kernels={"init_particles": mpm88.init_particles})


def test_kernels_resolve_by_qualname_when_the_module_moved(mpm88):
    data = json.loads(dumps(mpm88_graph(mpm88, substeps=1)))
    for node in data["sequences"][0]["body"]:
        node["kernel"] = "__main__:" + node["kernel"].split(":")[1]
    loaded = gl.loads(json.dumps(data), kernels=mpm88)
    assert loaded.step_count() == 4


def test_save_is_atomic_and_keeps_the_old_file_on_failure(mpm88, tmp_path, monkeypatch):
    path = tmp_path / "g.json"
    path.write_text("old content")
    g = mpm88_graph(mpm88, substeps=1)

    def broken_replace(self, target):
        raise OSError("disk full")

    monkeypatch.setattr("pathlib.Path.replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        g.save(path)
    assert path.read_text() == "old content"
    assert os.listdir(tmp_path) == ["g.json"]


BROKEN = [
    ("", "not valid JSON"),
    ('{"format": "graphlab.graph/1", "name": "g", "args": [', "truncated"),
    ('{"format": "graphlab.graph/9"}', r"\$\.format: unsupported format 'graphlab.graph/9'"),
    ('{"format": "graphlab.graph/1", "name": 3}', r"\$\.name: expected a string, got an integer"),
    ('{"format": "graphlab.graph/1", "name": "g", "args": [], "sequences": []}', r"\$\.body: missing"),
    (
        '{"format": "graphlab.graph/1", "name": "g", "args": [{"name": "x", "kind": "blob", "ndim": 0, '
        '"element_shape": []}], "sequences": [], "body": []}',
        r"\$\.args\[0\]: .*kind 'blob'",
    ),
    (
        '{"format": "graphlab.graph/1", "name": "g", "args": [], "sequences": [], '
        '"body": [{"type": "sequence", "name": "s", "sequence": "s", "repeat": 1}]}',
        r"\$\.body\[0\]\.sequence: no sequence 's'",
    ),
    (
        '{"format": "graphlab.graph/1", "name": "g", "args": [], "sequences": [{"name": "s", "body": [{"type": '
        '"sequence", "name": "s", "sequence": "s", "repeat": 2}]}], "body": [{"type": "sequence", "name": "s", '
        '"sequence": "s", "repeat": 1}]}',
        "GL015",
    ),
    (
        '{"format": "graphlab.graph/1", "name": "g", "args": [], "sequences": [{"name": "s", "body": []}], '
        '"body": [{"type": "sequence", "name": "s", "sequence": "s", "repeat": 0}]}',
        "GL014",
    ),
    (
        '{"format": "graphlab.graph/1", "name": "g", "args": [{"name": "x", "kind": "ndarray", "dtype": "f32", '
        '"ndim": 1e400, "element_shape": []}], "sequences": [], "body": []}',
        "not valid JSON|expected an integer",
    ),
    ("[" * 100000 + "]" * 100000, "nested too deeply|not valid JSON"),
    (
        '{"format": "graphlab.graph/1", "name": "g", "args": [{"name": "x", "kind": "ndarray", "dtype": "f32", '
        '"ndim": NaN, "element_shape": []}], "sequences": [], "body": []}',
        "not valid JSON",
    ),
]


@pytest.mark.parametrize(("text", "pattern"), BROKEN)
def test_broken_files_raise_graph_file_error_with_json_path(text, pattern):
    with pytest.raises(gl.GraphFileError, match=pattern):
        gl.loads(text, kernels={})


def test_unreadable_file_is_a_graph_file_error(tmp_path):
    with pytest.raises(gl.GraphFileError, match="cannot read the file"):
        gl.load(tmp_path / "missing.json", kernels={})


def _mutations(data):
    """Strategies that damage a valid graph file in the ways real files get damaged."""
    text = json.dumps(data)
    leaves = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(allow_nan=False),
        st.text(max_size=30),
        st.lists(st.integers(), max_size=3),
        st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
    )
    truncated = st.integers(min_value=0, max_value=len(text)).map(lambda n: text[:n])
    paths = _paths(data)
    replaced = st.tuples(st.sampled_from(paths), leaves).map(lambda pv: json.dumps(_set(data, *pv)))
    deleted = st.sampled_from([p for p in paths if p]).map(lambda p: json.dumps(_delete(data, p)))
    kinds = st.sampled_from(["texture", "blob", "", "NDARRAY"]).map(
        lambda k: json.dumps(_set(data, ("args", 0, "kind"), k))
    )
    return st.one_of(truncated, replaced, deleted, kinds)


def _paths(node, prefix=()):
    out = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*prefix, i))
    return out


def _set(data, path, value):
    data = json.loads(json.dumps(data))
    if not path:
        return value
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return data


def _delete(data, path):
    data = json.loads(json.dumps(data))
    target = data
    for key in path[:-1]:
        target = target[key]
    del target[path[-1]]
    return data


def test_mutated_files_load_or_raise_graph_file_error_only(mpm88):
    valid = json.loads(dumps(mpm88_graph(mpm88, substeps=2)))

    @settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(_mutations(valid))
    def check(text):
        try:
            graph = gl.loads(text, kernels=mpm88)
        except gl.GraphFileError:
            return
        assert isinstance(graph, gl.Graph)
        graph.validate(access="ast")

    check()


def _one_arg_file(**arg) -> str:
    return json.dumps({"format": "graphlab.graph/1", "name": "g", "args": [arg], "sequences": [], "body": []})


@pytest.mark.parametrize(
    ("arg", "words"),
    [
        ({"name": "t", "kind": "rw_texture", "dtype": None, "ndim": 2, "element_shape": [], "fmt": None},
         "a rw_texture needs a fmt"),
        ({"name": "t", "kind": "rw_texture", "dtype": None, "ndim": 2, "element_shape": []}, "a rw_texture needs a fmt"),
        ({"name": "s", "kind": "scalar", "dtype": "f32", "ndim": 0, "element_shape": [2]}, "a scalar has no element shape"),
        ({"name": "t", "kind": "texture", "dtype": "f32", "ndim": 2, "element_shape": []}, "a texture has no dtype or element shape"),
    ],
    ids=["rw-fmt-null", "rw-fmt-missing", "scalar-vector", "texture-dtype"],
)  # fmt: skip
def test_an_arg_the_builders_cannot_make_is_refused_by_the_model_and_the_file(arg, words):
    """``"fmt": null`` once loaded, then ``to_code()`` wrote ``ti.Format.None`` and export failed late."""
    fields = {"fmt": None, **arg, "element_shape": tuple(arg["element_shape"])}
    with pytest.raises(gl.GraphError, match=words):
        gl.Arg(**fields)
    with pytest.raises(gl.GraphFileError, match=rf"\$\.args\[0\]: arg '{arg['name']}': {words}"):
        gl.loads(_one_arg_file(**arg), kernels={})
