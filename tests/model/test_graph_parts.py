"""The model and carry modules after their split by concept.

graphlab.model.graph holds the model and nothing else: a name defined elsewhere (Step, GraphSize,
too_many_dispatches, GraphChange, GraphState, MAX_REPEAT...) is imported from its own module, never
through graphlab.model.graph. The child package's modules re-export nothing of each other's.
"""

from __future__ import annotations

import inspect

import graphlab
from graphlab.child import carry, payload
from graphlab.child import process as childrun
from graphlab.model import graph, graphdata, unroll


def test_graph_does_not_re_export_names_of_other_modules():
    moved = ("Step", "GraphSize", "too_many_dispatches", "GraphChange", "GraphState", "MAX_REPEAT")
    moved += ("AccessSource", "RenderView")
    assert [name for name in moved if hasattr(graph, name)] == []
    # the public API keeps them, from their own homes
    assert graphlab.Step is unroll.Step
    assert graphlab.GraphChange is graphdata.GraphChange


def test_graph_is_made_of_its_parts_and_keeps_its_public_methods():
    assert graph.Graph.__bases__ == (graphdata.GraphData,)  # one base: the content; every edit is here
    for name in ("ndarray", "declare", "steps", "size", "step_count", "node", "validate", "run", "to_code"):
        assert callable(getattr(graphlab.Graph, name)), name
    assert list(inspect.signature(graphlab.Graph.steps).parameters) == ["self"]


def test_the_public_graph_saves_itself():
    g = graphlab.Graph("g")
    assert g.to_dict()["name"] == "g"


def test_carry_re_exports_nothing_of_payload_or_the_child_process():
    assert set(carry.__all__) == {"carry_kernels", "kernel_ref", "referenced_globals"}
    assert not hasattr(carry, "load_kernels") and not hasattr(carry, "run_child")
    assert not hasattr(carry, "ChildRunError")
    assert callable(payload.load_kernels) and callable(childrun.run_child)
