"""Nesting limits: the model and the graph file loader share MAX_NESTING, and no file gives a RecursionError.

Python's JSON parser and the recursive walkers give up near 1000 levels with a bare RecursionError;
graphlab refuses deep files with a GraphFileError naming the file and the JSON path, and refuses a
graph deeper than :data:`graphlab.core.nesting.MAX_NESTING` sequences in the model and in the file alike.
"""

# No `from __future__ import annotations`: Taichi reads kernel annotations as objects.

import json

import pytest
import taichi as ti

import graphlab as gl
from graphlab.core.errors import GraphError, GraphFileError
from graphlab.core.nesting import MAX_JSON_DEPTH, MAX_NESTING, deep_json_path
from graphlab.model.graphfile import FORMAT, dumps, loads


@ti.kernel
def add_one(x: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in x:
        x[i] += 1.0


def chain(depth: int) -> tuple[gl.Graph, gl.SequenceBuilder]:
    """Sequences s0 > s1 > ... nested ``depth`` deep, a dispatch in the innermost; and that one."""
    g = gl.Graph("deep")
    x = g.ndarray("x", ti.f32, ndim=1, shape="n")
    inner = g.sequence("s0")
    for i in range(1, depth):
        inner = inner.sequence(f"s{i}")
    inner.dispatch(add_one, x)
    return g, inner


def file_text(sequences: list[dict], body: list[dict], args: list[dict] | None = None) -> str:
    return json.dumps({"format": FORMAT, "name": "deep", "args": args or [], "sequences": sequences, "body": body})


# --- JSON nested too deeply for Python's parser --------------------------------------------------------


def test_deep_json_gives_a_graph_file_error_with_the_json_path():
    deep = "[" * 100_000 + "]" * 100_000
    with pytest.raises(GraphFileError) as caught:
        loads(deep, kernels=[], file="deep.graph.json")
    assert caught.value.file == "deep.graph.json"
    assert caught.value.json_path == "$" + "[0]" * MAX_JSON_DEPTH
    assert f"nested too deeply to read: more than {MAX_JSON_DEPTH} levels here" in str(caught.value)


def test_deep_json_inside_a_field_names_that_field(tmp_path):
    deep = "[" * 50_000 + "]" * 50_000
    text = json.dumps({"format": FORMAT, "body": [{"type": "dispatch", "bindings": {"x": "DEEP"}}]})
    text = text.replace('"DEEP"', deep)
    path = tmp_path / "g.graph.json"
    path.write_text(text)
    with pytest.raises(GraphFileError) as caught:
        gl.load(path, kernels=[])
    assert caught.value.file == str(path)
    assert caught.value.json_path.startswith("$.body[0].bindings.x[0][0]")
    assert caught.value.json_path.count("[") + caught.value.json_path.count(".") == MAX_JSON_DEPTH  # one a level


def test_deep_json_path_skips_brackets_in_strings_and_names_keys():
    assert deep_json_path('{"a": ["[[[", {"b c": [[]]}]}', 3) == '$.a[1]["b c"]'
    assert deep_json_path("[[1, 2], [3]]", 2) is None


# --- sequences nested too deeply -----------------------------------------------------------------------


def test_the_model_refuses_sequences_past_the_limit_and_saves_those_at_it(tmp_path):
    g, inner = chain(MAX_NESTING)
    g.save(tmp_path / "deep.graph.json")  # at the limit: saves and loads back
    assert dumps(gl.load(tmp_path / "deep.graph.json", kernels=[add_one])) == dumps(g)
    innermost = g.sequences[inner.name]
    with pytest.raises(GraphError, match=f"sequences would nest {MAX_NESTING + 1} deep .*limit of {MAX_NESTING}"):
        inner.sequence("one_too_many")
    body = g.define("body")
    with pytest.raises(GraphError, match="would nest"):
        g.loop(body, count=g.scalar("k", ti.i32), into=inner)
    assert "one_too_many" not in g.sequences
    assert g.sequences[inner.name] == innermost  # nothing was placed


def test_the_model_refuses_append_move_and_group_past_the_limit():
    g, inner = chain(MAX_NESTING)
    with g.sequence("extra") as extra:
        extra.dispatch(add_one, "x")
    with pytest.raises(GraphError, match="would nest"):
        g.append("extra", into=inner.id)
    with pytest.raises(GraphError, match="would nest"):
        g.move("extra", 0, into=inner.id)
    dispatch_id = f"{inner.id}/add_one"
    with pytest.raises(GraphError, match="would nest"):
        g.group([dispatch_id], "wrapper")
    assert "wrapper" not in g.sequences
    assert g.node(dispatch_id).name == "add_one"  # nothing moved


def test_an_unused_chain_counts_when_attached():
    g, _ = chain(1)
    top = g.define("t0")
    inner = top
    for i in range(1, MAX_NESTING):
        inner = inner.sequence(f"t{i}")
    with pytest.raises(GraphError, match=f"nest {MAX_NESTING + 1} deep"):
        inner.sequence("t_last")


def sequence_chain(depth: int) -> str:
    sequences = [
        {"name": f"s{i}", "body": [{"type": "sequence", "name": "use", "sequence": f"s{i + 1}", "repeat": 1}]}
        for i in range(depth - 1)
    ]
    sequences.append({"name": f"s{depth - 1}", "body": []})
    return file_text(sequences, [{"type": "sequence", "name": "use", "sequence": "s0", "repeat": 1}])


def test_a_file_nesting_sequences_past_the_limit_names_the_reference():
    loads(sequence_chain(MAX_NESTING), kernels=[])  # at the limit: fine
    for depth in (MAX_NESTING + 1, 2000):  # 2000: a RecursionError in the walk before
        with pytest.raises(GraphFileError) as caught:
            loads(sequence_chain(depth), kernels=[], file="chain.graph.json")
        assert caught.value.json_path == f"$.sequences[{MAX_NESTING - 1}].body[0].sequence"
        assert f"nested {MAX_NESTING + 1} deep" in caught.value.reason
        assert "chain.graph.json" in str(caught.value)


def test_a_file_nesting_loop_bodies_past_the_limit_names_the_reference():
    """Loop bodies are filled before the loop is placed, so only the loader's own count stops them."""
    depth = 2000
    sequences = [
        {"name": f"c{i}", "body": [{"type": "loop", "name": "l", "body": f"c{i + 1}", "count": "k"}]}
        for i in range(depth - 1)
    ]
    sequences.append({"name": f"c{depth - 1}", "body": []})
    args = [{"name": "k", "kind": "scalar", "dtype": "i32", "ndim": 0, "element_shape": []}]
    top = [{"type": "loop", "name": "l", "body": "c0", "count": "k"}]
    with pytest.raises(GraphFileError) as caught:
        loads(file_text(sequences, top, args), kernels=[])
    assert caught.value.json_path == f"$.sequences[{MAX_NESTING - 1}].body[0].body"
