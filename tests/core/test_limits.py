"""One set of limits for the model and the graph file, and GL024 for a graph too large once unrolled.

What the model builds, ``save`` writes and ``load`` reads back equal (a property test over random
graphs built with the editing API); each limit refuses the same values in both places; a graph whose
unrolling would never end (10**21 dispatches) is measured at once and refused with GL024.
"""

# No `from __future__ import annotations`: Taichi reads kernel annotations as objects.

import contextlib
import json
import keyword
import time

import aot_kernels
import pytest
import taichi as ti
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphlab as gl
from graphlab.core.limits import (
    MAX_ELEMENT_DIM,
    MAX_EXPANDED,
    MAX_NDIM,
    MAX_REPEAT,
    MAX_UNROLLED,
    TEXTURE_FORMATS,
)
from graphlab.core.names import MAX_DIM_SIZE
from graphlab.core.spec import DTYPES, ROLES, Arg
from graphlab.model.graphfile import dumps

pytestmark = pytest.mark.usefixtures("ti_cpu")

KERNELS = [aot_kernels.saxpy, aot_kernels.advect, aot_kernels.blur_rows, aot_kernels.blur_cols, aot_kernels.scale]


@ti.kernel
def bump(a: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in a:
        a[i] += 1.0


# --- the property: what the model builds saves and loads back equal -------------------------------

names = st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True).filter(lambda s: not keyword.iskeyword(s))
dims = st.one_of(st.integers(0, MAX_DIM_SIZE), names)


@st.composite
def arg_specs(draw, name):
    kind = draw(st.sampled_from(["ndarray", "scalar", "matrix", "texture", "rw_texture"]))
    role = draw(st.sampled_from(ROLES))
    if kind in ("texture", "rw_texture"):
        fmt = draw(st.sampled_from(TEXTURE_FORMATS)) if kind == "rw_texture" else None
        return Arg(name, kind, None, draw(st.integers(0, MAX_NDIM)), (), fmt, role)
    dtype = draw(st.sampled_from(DTYPES))
    element = draw(
        st.lists(st.integers(1, MAX_ELEMENT_DIM), min_size=int(kind == "matrix"), max_size=2 * (kind != "scalar"))
    )
    if kind != "ndarray":
        return Arg(name, kind, dtype, 0, tuple(element), None, role)
    ndim = draw(st.integers(0, MAX_NDIM))
    shape = draw(st.none() | st.lists(dims, min_size=ndim, max_size=ndim).map(tuple))
    return Arg(name, "ndarray", dtype, ndim, tuple(element), None, role, shape)


def _build(data) -> gl.Graph:
    """A graph made by random edits; edits the model refuses are skipped (the model stays consistent)."""
    g = gl.Graph(data.draw(names, label="graph name"))
    for name in data.draw(st.lists(names, min_size=1, max_size=6, unique=True), label="args"):
        g.declare(data.draw(arg_specs(name)))
    arg_names = list(g.args)
    repeats = st.integers(1, MAX_REPEAT)

    def fill(into, depth):
        for _ in range(data.draw(st.integers(int(depth == 0), 6 if depth < 2 else 2))):
            op = data.draw(st.sampled_from(["dispatch", "dispatch", "sequence", "append", "cond", "loop"]))
            try:
                if op == "dispatch" or depth >= 3:
                    kernel = data.draw(st.sampled_from(KERNELS))
                    params = [p.name for p in gl.kernel_info(kernel).params]
                    bound = {p: data.draw(st.sampled_from([None, *arg_names])) for p in params}
                    target = g if into is None else into
                    target.dispatch(kernel, **bound)
                elif op == "sequence":
                    fill((g if into is None else into).sequence(data.draw(names), data.draw(repeats)), depth + 1)
                elif op == "append" and g.sequences:
                    g.append(data.draw(st.sampled_from(sorted(g.sequences))), data.draw(repeats), into=into)
                elif op in ("cond", "loop") and arg_names:
                    body = g.define(data.draw(names))
                    fill(body, depth + 1)
                    flag = data.draw(st.sampled_from(arg_names))
                    if op == "cond":
                        other = data.draw(st.sampled_from([None, *sorted(g.sequences)]))
                        g.cond(flag, body, other, into=into)
                    elif data.draw(st.booleans()):
                        g.loop(body, count=flag, into=into)
                    else:
                        g.loop(body, while_=flag, max_iter=data.draw(repeats), into=into)
            except gl.GraphError:
                continue

    fill(None, 0)
    if data.draw(st.booleans(), label="a defined sequence nothing uses yet"):
        with contextlib.suppress(gl.GraphError):  # the name may be taken
            fill(g.define(data.draw(names)), 1)
    return g


def test_any_graph_the_model_builds_saves_and_loads_back_equal(tmp_path):
    path = tmp_path / "g.graph.json"

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(st.data())
    def check(data):
        g = _build(data)
        g.save(path)  # never refused: the loader takes what the model holds
        loaded = gl.load(path, kernels=aot_kernels)
        assert dumps(loaded) == path.read_text() == dumps(g)
        assert loaded.snapshot() == g.snapshot()
        assert loaded.size() == g.size()

    check()


def test_a_sequence_defined_but_not_used_yet_loads(tmp_path):
    g = gl.Graph("g")
    a = g.ndarray("a", ti.f32, ndim=1)
    g.dispatch(bump, a)
    g.define("later").dispatch(bump, a)  # the model allows it (a body for a conditional to come)
    g.save(tmp_path / "g.json")
    loaded = gl.load(tmp_path / "g.json", kernels=[bump])
    assert list(loaded.sequences) == ["later"] and dumps(loaded) == dumps(g)


def test_sequences_load_in_the_order_the_model_had_them(tmp_path):
    g = gl.Graph("g")
    flag = g.ndarray("flag", ti.i32, ndim=1, shape=(1,))
    g.define("first").dispatch(bump, g.ndarray("a", ti.f32, ndim=1))
    g.define("second").dispatch(bump, "a")
    g.cond(flag, "second", "first")  # the loader meets 'second' first
    g.save(tmp_path / "g.json")
    loaded = gl.load(tmp_path / "g.json", kernels=[bump])
    assert list(loaded.sequences) == ["first", "second"]
    assert dumps(loaded) == (tmp_path / "g.json").read_text()


# --- each limit refuses the same values in the model and in the file -----------------------------


def _file_with_arg(**changes):
    arg = {"name": "x", "kind": "ndarray", "dtype": "f32", "ndim": 1, "element_shape": [], "fmt": None,
           "role": "state", "shape": None, **changes}  # fmt: skip
    return json.dumps({"format": "graphlab.graph/1", "name": "g", "args": [arg], "sequences": [], "body": []})


LIMITS = [
    # (Arg fields, JSON path of the refusal, words both messages share)
    ({"ndim": MAX_NDIM + 1}, r"\$\.args\[0\]\.ndim", f"ndim must be an int in 0..{MAX_NDIM}"),
    ({"element_shape": [MAX_ELEMENT_DIM + 1]}, r"\$\.args\[0\]\.element_shape\[0\]", f"in 1..{MAX_ELEMENT_DIM}"),
    ({"element_shape": [0]}, r"\$\.args\[0\]\.element_shape\[0\]", f"in 1..{MAX_ELEMENT_DIM}"),
    ({"element_shape": [2, 2, 2]}, r"\$\.args\[0\]\.element_shape", r"\(n, m\) for matrices, got"),
    ({"kind": "rw_texture", "dtype": None, "fmt": "r33f"}, r"\$\.args\[0\]", "is not a ti.Format name"),
    ({"fmt": "r32f"}, r"\$\.args\[0\]", "only rw_texture args take a fmt"),
    ({"shape": [MAX_DIM_SIZE + 1]}, r"\$\.args\[0\]\.shape\[0\]", f"{MAX_DIM_SIZE:,}"),
]


@pytest.mark.parametrize(("changes", "json_path", "words"), LIMITS)
def test_each_arg_limit_is_the_same_in_the_model_and_the_file(changes, json_path, words):
    fields = {"name": "x", "kind": "ndarray", "dtype": "f32", "ndim": 1, "element_shape": (), "fmt": None}
    fields.update({k: tuple(v) if isinstance(v, list) else v for k, v in changes.items()})
    if "shape" in fields:
        fields["shape"] = tuple(fields["shape"])
    with pytest.raises(gl.GraphError, match=words):
        Arg(**fields)
    with pytest.raises(gl.GraphFileError, match=f"{json_path}: .*({words})"):
        gl.loads(_file_with_arg(**changes), kernels={})


def test_the_largest_values_load_and_one_more_is_refused_at_its_json_path():
    text = _file_with_arg(ndim=MAX_NDIM, element_shape=[MAX_ELEMENT_DIM, MAX_ELEMENT_DIM], shape=[MAX_DIM_SIZE] * 8)
    arg = gl.loads(text, kernels={}).args["x"]
    assert arg == Arg("x", "ndarray", "f32", MAX_NDIM, (MAX_ELEMENT_DIM,) * 2, None, "state", (MAX_DIM_SIZE,) * 8)
    g = gl.Graph("g")
    with g.sequence("s", repeat=MAX_REPEAT) as s:
        s.dispatch(bump, g.ndarray("a", ti.f32, ndim=1))
    assert gl.loads(dumps(g), kernels=[bump]).node("s").repeat == MAX_REPEAT
    with pytest.raises(gl.GraphError, match=f"GL014: repeat must be an int in 1..{MAX_REPEAT:,}"):
        g.set_repeat("s", MAX_REPEAT + 1)
    with pytest.raises(
        gl.GraphFileError, match=rf"\$\.body\[0\]\.repeat: GL014: repeat must be an int in 1..{MAX_REPEAT:,}"
    ):
        gl.loads(dumps(g).replace(f'"repeat": {MAX_REPEAT}', f'"repeat": {MAX_REPEAT + 1}'), kernels=[bump])


def test_an_int_too_long_to_print_is_refused_with_a_message():
    with pytest.raises(gl.GraphError, match="repeat must be an int in 1..10,000,000, got an int of 16,610 bits"):
        gl.Graph("g").sequence("s", repeat=10**5000)


def _twin_kernels():
    def make(first):
        if first:

            @ti.kernel
            def k(a: ti.types.ndarray(dtype=ti.f32, ndim=1)):
                for i in a:
                    a[i] = 1.0

        else:

            @ti.kernel
            def k(b: ti.types.ndarray(dtype=ti.f32, ndim=1), c: ti.types.ndarray(dtype=ti.f32, ndim=1)):
                for i in b:
                    c[i] = b[i]

        return k

    return make(True), make(False)


def test_save_refuses_a_file_that_would_not_load_back(tmp_path):
    k1, k2 = _twin_kernels()  # two kernels, one reference: a file cannot tell them apart
    assert gl.kernel_info(k1).ref == gl.kernel_info(k2).ref
    g = gl.Graph("g")
    a, b = g.ndarray("a", ti.f32, ndim=1), g.ndarray("b", ti.f32, ndim=1)
    g.dispatch(k1, a)
    g.dispatch(k2, a, b)
    path = tmp_path / "g.json"
    path.write_text("old")
    with pytest.raises(gl.GraphFileError, match=r"not saved: the file would not load back \(.*k.*\)"):
        g.save(path)
    assert path.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.json"]


# --- GL024: the unrolled size, counted without unrolling ----------------------------------------


def _nested(repeats, name="big"):
    g = gl.Graph(name)
    a = g.ndarray("a", ti.f32, ndim=1)
    into = g
    for depth, repeat in enumerate(repeats):
        into = into.sequence(f"s{depth}", repeat)
    into.dispatch(bump, a)
    return g


def test_gl024_a_graph_of_10_to_the_21_dispatches_is_refused_at_once():
    g = _nested([10**7, 10**7, 10**7])
    start = time.perf_counter()
    assert g.step_count() == 10**21
    [diag] = [d for d in g.validate(access="ast") if d.code == "GL024"]
    assert diag.severity == "error" and diag.node == "s0"
    assert "1,000,000,000,000,000,000,000 dispatches, over the limit of 10,000,000" in diag.message
    with pytest.raises(gl.GraphError, match="GL024: graph 'big' unrolls to 1,000,000,000,000,000,000,000"):
        g.steps()
    with pytest.raises(gl.GraphError, match="GL024"):
        g.compile()
    with pytest.raises(gl.GraphError, match="GL024"):
        g.debug(a=ti.ndarray(ti.f32, shape=4))
    with pytest.raises(gl.GraphError, match="GL024"):
        g.check()
    assert time.perf_counter() - start < 30


def test_gl024_clean_at_the_limit_and_refused_one_past_it():
    at_limit = _nested([MAX_UNROLLED])
    assert at_limit.step_count() == MAX_UNROLLED
    assert all(d.code != "GL024" for d in at_limit.validate(access="ast"))
    past = _nested([MAX_UNROLLED // 2 + 1, 2])
    assert past.step_count() == MAX_UNROLLED + 2
    assert "GL024" in {d.code for d in past.validate(access="ast")}


def test_gl024_counts_what_is_compiled_once_with_control_flow_only_once():
    """A repeated sequence holding a conditional compiles its body once (a RepeatOp around segments)."""
    g = gl.Graph("g")
    flag = g.ndarray("flag", ti.i32, ndim=1, shape=(1,))
    a = g.ndarray("a", ti.f32, ndim=1)
    g.define("then").dispatch(bump, a)
    with g.sequence("outer", repeat=MAX_REPEAT) as outer:
        outer.dispatch(bump, a)
    g.cond(flag, "then", into="outer")
    assert g.has_control_flow and g.size().dispatches == 2  # the segment [bump] and the branch [bump]
    assert all(d.code != "GL024" for d in g.validate(access="ast"))
    looped = gl.Graph("looped")  # a loop compiles its body once: here that body alone is 10**14 dispatches
    body = looped.define("body")
    body.sequence("s0", 10**7).sequence("s1", 10**7).dispatch(bump, looped.ndarray("a", ti.f32, ndim=1))
    looped.loop(body, count=looped.scalar("n", ti.i32))
    assert looped.size().dispatches == 10**14
    assert "GL024" in {d.code for d in looped.validate(access="ast")}


def test_gl024_too_many_node_ids_is_refused_before_the_other_rules_walk_them():
    g = gl.Graph("shared")
    a = g.ndarray("a", ti.f32, ndim=1)
    g.define("s0").dispatch(bump, a)
    for i in range(1, 21):  # each sequence uses the previous one twice: 3 * 2**20 node ids
        body = g.define(f"s{i}")
        body.append(f"s{i - 1}")
        body.append(f"s{i - 1}")
    g.append("s20")
    start = time.perf_counter()
    assert g.size().node_ids > MAX_EXPANDED and not g.has_control_flow
    found = g.validate(access="ast")
    assert [d.code for d in found] == ["GL024"]
    assert f"node ids, over the limit of {MAX_EXPANDED:,}" in found[0].message
    assert time.perf_counter() - start < 10
