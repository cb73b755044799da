"""The canvas layout kept in the model (graphlab.model.layout): a snapshot that pickles and copies."""

import copy
import pickle

import pytest
import taichi as ti

import graphlab as gl
from graphlab.core.errors import GraphError
from graphlab.model.layout import Layout


def test_a_layout_pickles_and_deep_copies_with_its_positions_and_guesses():
    layout = Layout({"init": (1.0, 2.0), "loop/step": (3.5, -4.0)}, {"init": frozenset({"x"})})
    for twin in (pickle.loads(pickle.dumps(layout)), copy.deepcopy(layout)):
        assert twin == layout
        assert dict(twin.positions) == {"init": (1.0, 2.0), "loop/step": (3.5, -4.0)}
        assert dict(twin.guessed) == {"init": frozenset({"x"})}
        with pytest.raises(TypeError):
            twin.positions["init"] = (0.0, 0.0)  # type: ignore[index]


def test_a_graph_with_a_layout_pickles(ti_cpu):
    g = gl.Graph("placed")
    g.ndarray("x", ti.f32, ndim=1)
    g.layout = g.layout.placed({"arg:x": [10, 20]})
    twin = pickle.loads(pickle.dumps(g))
    assert dict(twin.layout.positions) == {"arg:x": (10.0, 20.0)}
    with pytest.raises(GraphError, match="position of node 'arg:x'"):
        g.layout.placed({"arg:x": [float("nan"), 0]})
