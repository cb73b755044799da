"""The editing API: each edit keeps the model consistent or raises and changes nothing."""


import pytest
import taichi as ti

import graphlab as gl


@ti.kernel
def produce(out: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in out:
        out[i] = i


@ti.kernel
def consume(src: ti.types.ndarray(dtype=ti.f32, ndim=1), dst: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in src:
        dst[i] += src[i]


@pytest.fixture
def graph(ti_cpu):
    g = gl.Graph("g")
    a = g.ndarray("a", ti.f32, ndim=1)
    b = g.ndarray("b", ti.f32, ndim=1)
    g.dispatch(produce, a)
    with g.sequence("loop", repeat=3) as s:
        s.dispatch(consume, a, b)
        s.dispatch(consume, src=b, dst=a)
    return g


def test_ids_are_readable_paths(graph):
    assert [node_id for node_id, _ in graph.nodes()] == ["produce", "loop", "loop/consume", "loop/consume#2"]
    steps = graph.steps()
    assert [s.id for s in steps[:3]] == ["produce", "loop[0]/consume", "loop[0]/consume#2"]
    assert steps[-1].id == "loop[2]/consume#2" and steps[-1].node_id == "loop/consume#2"
    assert graph.step_count() == len(steps) == 7


def test_sequences_defined_once_used_in_several_places(graph):
    graph.append("loop", repeat=2)
    assert [n.name for n in graph.body] == ["produce", "loop", "loop#2"]
    assert graph.step_count() == 1 + 6 + 4
    assert graph.steps()[-1].id == "loop#2[1]/consume#2"


def test_nested_sequences_unroll_with_every_repetition_named(ti_cpu):
    g = gl.Graph("g")
    a = g.ndarray("a", ti.f32, ndim=1)
    with g.sequence("outer", repeat=2) as outer, outer.sequence("inner", repeat=3) as inner:
        inner.dispatch(produce, a)
    assert [s.id for s in g.steps()][:4] == [
        "outer[0]/inner[0]/produce", "outer[0]/inner[1]/produce", "outer[0]/inner[2]/produce", "outer[1]/inner[0]/produce",
    ]  # fmt: skip


def test_insert_move_rename_rebind_remove(graph):
    new = graph.insert(produce, index=0, into="loop", name="reset", bindings={"out": "b"})
    assert new == "loop/reset"
    assert [n.name for n in graph.sequences["loop"]] == ["reset", "consume", "consume#2"]
    moved = graph.move("loop/reset", 0, into=None)
    assert moved == "reset" and graph.body[0].name == "reset"
    renamed = graph.rename("reset", "clear")
    graph.rebind(renamed, "out", "a")
    assert graph.node("clear").binding("out") == "a"
    graph.rebind("clear", "out", None)
    assert [d.code for d in graph.validate(access="ast")] == ["GL001"]
    graph.remove("clear")
    assert [n.name for n in graph.body] == ["produce", "loop"]


def test_move_within_its_own_container_by_default(graph):
    graph.move("loop/consume#2", 0)
    assert [n.name for n in graph.sequences["loop"]] == ["consume#2", "consume"]


def test_group_and_set_repeat(graph):
    use = graph.group(["loop/consume", "loop/consume#2"], "pair", repeat=2)
    assert use == "loop/pair"
    graph.set_repeat("loop/pair", 5)
    assert graph.step_count() == 1 + 3 * 5 * 2


REFUSED = [
    (lambda g: g.rebind("produce", "out", "nope"), "no arg 'nope'"),
    (lambda g: g.rebind("produce", "nope", "a"), "no parameter 'nope'"),
    (lambda g: g.rebind("loop", "out", "a"), "only dispatches have parameters"),
    (lambda g: g.rename("produce", "loop"), "already called 'loop'"),
    (lambda g: g.rename("produce", "bad/name"), "must be an identifier"),
    (lambda g: g.set_repeat("loop", 0), "GL014"),
    (lambda g: g.set_repeat("produce", 2), "only sequences have a repeat"),
    (lambda g: g.append("loop", into="loop"), "GL015.*contain itself"),
    (lambda g: g.remove("loop/missing"), "no node 'loop/missing'"),
    (lambda g: g.move("produce", 7), "out of range"),
    (lambda g: g.insert(produce, into="produce"), "is a dispatch, not a sequence"),
    (lambda g: g.group(["produce", "loop/consume"], "x"), "consecutive nodes of one container"),
    (lambda g: g.remove_arg("a"), "still bound at produce.out"),
    (lambda g: g.rename_arg("a", "b"), "'b' is already declared"),
    (lambda g: g.sequence("loop"), "already defined"),
    (lambda g: g.dispatch(produce, out=3), "not a int"),
    (lambda g: g.restore("state"), "takes a GraphState"),
]


@pytest.mark.parametrize(("edit", "pattern"), REFUSED)
def test_refused_edits_raise_and_change_nothing(graph, edit, pattern):
    before, version = graph.snapshot(), graph.version
    with pytest.raises(gl.GraphlabError, match=pattern):
        edit(graph)
    assert graph.snapshot() == before
    assert graph.version == version


def test_rename_arg_updates_every_binding(graph):
    graph.rename_arg("a", "alpha")
    assert graph.node("produce").binding("out") == "alpha"
    assert graph.node("loop/consume").binding("src") == "alpha"
    assert list(graph.args) == ["alpha", "b"]


def test_snapshot_restore_and_observers(graph):
    seen = []
    unsubscribe = graph.observe(seen.append)
    state = graph.snapshot()
    graph.remove("loop")
    assert graph.sequences == {}
    graph.restore(state)
    assert graph.step_count() == 7
    assert [c.kind for c in seen] == ["node_removed", "restored"]
    unsubscribe()
    graph.rename("produce", "p")
    assert len(seen) == 2


def test_a_failing_observer_does_not_break_edits(graph):
    graph.observe(lambda change: 1 / 0)
    with pytest.warns(RuntimeWarning, match="observer"):
        graph.rename("produce", "p")
    assert graph.node("p")


def test_args_shared_between_graphs_are_adopted(ti_cpu):
    g1 = gl.Graph("g1")
    a = g1.ndarray("a", ti.f32, ndim=1)
    g2 = gl.Graph("g2")
    g2.dispatch(produce, a)
    assert g2.args["a"] == a


def test_arg_like_takes_the_spec_of_a_value(ti_cpu):
    g = gl.Graph("g")
    arr = ti.Vector.ndarray(3, ti.f32, shape=(4, 5))
    x = g.arg_like("x", arr)
    assert (x.kind, x.dtype, x.ndim, x.element_shape, x.shape) == ("ndarray", "f32", 2, (3,), None)
    assert g.arg_like("k", 3).dtype == "i32"
    assert g.arg_like("m", ti.Matrix([[1, 2], [3, 4]])).element_shape == (2, 2)
    with pytest.raises(gl.GraphError, match="cannot take a spec from str"):
        g.arg_like("s", "text")


def test_bad_arg_declarations_say_what_to_do():
    g = gl.Graph("g")
    with pytest.raises(gl.GraphError, match="not a valid identifier"):
        g.ndarray("2x", "f32", ndim=1)
    with pytest.raises(gl.GraphError, match="dtype 'f31' is not one of"):
        g.ndarray("x", "f31", ndim=1)
    with pytest.raises(gl.GraphError, match="has 2 dims but ndim is 1"):
        g.ndarray("x", "f32", ndim=1, shape=("n", "m"))
    with pytest.raises(gl.GraphError, match="role 'scratch'"):
        g.ndarray("x", "f32", ndim=1, role="scratch")
    assert g.args == {}
