"""Where a graph's default access facts came from travels to another process (``dbg.compare``'s child),
which then skips a Vulkan probe its parent already saw fail."""

import taichi as ti

import graphlab as gl
from graphlab.analysis.dataflow import access_mode, assume_access, dataflow_facts


@ti.kernel
def double(x: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in x:
        x[i] = 2.0 * x[i]


def graph() -> gl.Graph:
    g = gl.Graph("access_mode")
    g.dispatch(double, g.ndarray("x", ti.f32, ndim=1, shape=(8,)))
    return g


def test_facts_from_vulkan_are_asked_for_again_as_auto(ti_cpu):
    g = graph()
    assert set(dataflow_facts(g).source.values()) == {"vulkan"}  # Mesa lavapipe answers here
    assert access_mode(g) == "auto"


def test_an_assumed_ast_mode_answers_for_the_default_facts_without_vulkan(ti_cpu):
    g = graph()
    assume_access(g, "ast")
    assert set(dataflow_facts(g).source.values()) == {"ast"}
    assert access_mode(g) == "ast"
    g.dispatch(double, "x")  # an edit forgets the assumption with the facts
    assert set(dataflow_facts(g).source.values()) == {"vulkan"}
