"""The read/write facts and the networkx data-flow graph."""

import networkx as nx
import pytest
import taichi as ti

import graphlab as gl
from graphlab.analysis.dataflow import dataflow_facts, dependency_order
from graphlab.api.examples import mpm88_graph

READ, WRITE, RW = 1, 2, 3


@pytest.mark.parametrize("access", ["vulkan", "ast"])
def test_mpm88_reads_and_writes_match_the_kernels_code(mpm88, access):
    facts = dataflow_facts(mpm88_graph(mpm88, substeps=3), access=access)
    p2g = facts.args["substep/substep_p2g"]
    assert {k: p2g[k] for k in ("x", "v", "C", "J")} == {"x": READ, "v": READ, "C": READ, "J": READ}
    assert p2g["grid_v"] == RW and p2g["grid_m"] == RW
    assert facts.args["substep/substep_reset_grid"] == {"grid_v": WRITE, "grid_m": WRITE}
    g2p = facts.args["substep/substep_g2p"]
    assert g2p["grid_v"] == READ and g2p["v"] & WRITE and g2p["C"] & WRITE and g2p["x"] == RW and g2p["J"] == RW
    assert set(facts.source.values()) == {access}


def test_dataflow_graph_has_buffers_dispatches_and_sequences(mpm88):
    flow = mpm88_graph(mpm88, substeps=500).dataflow()
    assert flow.nodes["substep/substep_p2g"]["kind"] == "dispatch"
    assert flow.nodes["arg:grid_m"]["kind"] == "buffer"
    assert flow.edges["arg:x", "substep/substep_p2g"]["kind"] == "read"
    assert flow.edges["substep/substep_p2g", "arg:grid_m"]["kind"] == "write"
    assert flow.graph["sequences"]["substep"]["repeat"] == 500
    assert len(flow.graph["sequences"]["substep"]["members"]) == 4
    # p2g reads what reset_grid wrote in the same repetition ...
    dep = flow.edges["substep/substep_reset_grid", "substep/substep_p2g"]
    assert dep["hazard"] == "raw" and not dep["carried"]
    # ... and repetition k+1 depends on k: reset_grid overwrites what g2p read
    carried = flow.edges["substep/substep_g2p", "substep/substep_reset_grid"]
    assert carried["carried"]
    deps = nx.DiGraph([(u, v) for u, v, d in flow.edges(data=True) if d["kind"] == "dep" and not d["carried"]])
    assert nx.is_directed_acyclic_graph(deps)


def test_dependency_order_respects_program_order(mpm88):
    order = dependency_order(mpm88_graph(mpm88, substeps=2))
    assert order == [
        "substep/substep_reset_grid",
        "substep/substep_p2g",
        "substep/substep_update_grid_v",
        "substep/substep_g2p",
    ]


def test_facts_are_cached_until_the_next_edit(ti_cpu):
    @ti.kernel
    def fill(a: ti.types.ndarray(dtype=ti.f32, ndim=1)):
        for i in a:
            a[i] = 1

    g = gl.Graph("g")
    g.dispatch(fill, g.ndarray("a", ti.f32, ndim=1))
    first = dataflow_facts(g, access="ast")
    assert dataflow_facts(g, access="ast") is first
    g.rename("fill", "fill2")
    assert dataflow_facts(g, access="ast") is not first


f32_1d = ti.types.ndarray(dtype=ti.f32, ndim=1)


@ti.kernel
def produce(b: f32_1d, a: f32_1d):
    for i in a:
        a[i] = b[i] + 1.0


@ti.kernel
def consume(a: f32_1d, b: f32_1d):
    for i in a:
        b[i] = a[i] * 2.0


@ti.kernel
def add_into(a: f32_1d):
    for i in a:
        a[i] += 1.0


@ti.kernel
def scratch_then_use(a: f32_1d, out: f32_1d):
    for i in a:
        a[i] = 2.0
        out[i] = a[i]


def produce_consume_graph():
    g = gl.Graph("g")
    a, b = g.ndarray("a", ti.f32, ndim=1), g.ndarray("b", ti.f32, ndim=1)
    g.dispatch(produce, b=b, a=a)
    g.dispatch(consume, a=a, b=b)
    return g


@pytest.mark.parametrize("access", ["vulkan", "ast"])
def test_each_dependency_names_its_hazard_per_buffer(ti_cpu, access):
    # consume reads the a that produce wrote (RAW), and overwrites the b that produce read (WAR)
    dep = produce_consume_graph().dataflow(access=access).edges["produce", "consume"]
    assert dep["hazards"] == {"a": "raw", "b": "war"}
    assert dep["hazard"] == "raw" and dep["args"] == {"a", "b"}  # the older summary stays
    # add_into reads and rewrites what produce wrote: two hazards on one buffer
    g = gl.Graph("g2")
    a = g.ndarray("a", ti.f32, ndim=1)
    g.dispatch(produce, g.ndarray("b", ti.f32, ndim=1), a)
    g.dispatch(add_into, a)
    assert g.dataflow(access=access).edges["produce", "add_into"]["hazards"] == {"a": frozenset({"raw", "waw"})}


def test_a_kernel_that_writes_first_does_not_read_the_previous_write(ti_cpu):
    g = gl.Graph("g")
    a = g.ndarray("a", ti.f32, ndim=1)
    g.dispatch(produce, g.ndarray("b", ti.f32, ndim=1), a)
    g.dispatch(scratch_then_use, a, g.ndarray("out", ti.f32, ndim=1))
    dep = g.dataflow(access="ast").edges["produce", "scratch_then_use"]
    assert dep["hazards"] == {"a": "waw"} and dep["hazard"] == "waw"


def test_mpm88_hazards_per_buffer(mpm88):
    flow = mpm88_graph(mpm88, substeps=3).dataflow(access="ast")
    both = frozenset({"raw", "waw"})
    p2g = flow.edges["substep/substep_reset_grid", "substep/substep_p2g"]
    assert p2g["hazards"] == {"grid_m": both, "grid_v": both}
    carried = flow.edges["substep/substep_g2p", "substep/substep_reset_grid"]
    assert carried["carried"] and carried["hazards"] == {"grid_v": "war"}
