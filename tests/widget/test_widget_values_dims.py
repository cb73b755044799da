"""The values panel's dims by name: a temp whose shape names a dim that no given value sizes (``m``) runs once the
panel gives the dim a size (``m=4``, as ``run(m=4)``); the trait lists every dim, its size and who set it; a dim
that is not one, a bad size or a size that disagrees with a given value is refused naming the dim and the fix."""

import numpy as np
import pytest
from temps_kernels import M, N, temps_expected, temps_graph, temps_values
from values_messages import dim, start, values
from widget_comm import recording_comm  # noqa: F401  (autouse fixture)

import graphlab as gl


@pytest.fixture
def ed(ti_cpu):
    widget = gl.editor(temps_graph(), kernels=[], access="ast", values=temps_values())
    yield widget
    widget.close()


def test_a_dim_only_temps_use_is_missing_and_debug_says_so_in_the_panels_terms(ed):
    assert ed.values["missing"] == []
    assert ed.values["missing_dims"] == ["m"]
    assert dim(ed, "n") == {"dim": "n", "size": N, "given": False, "set_by": "x", "args": ["x", "t", "y"],
                            "needed": False}  # fmt: skip
    assert dim(ed, "m") == {"dim": "m", "size": None, "given": False, "set_by": None, "args": ["grid"], "needed": True}
    reply = start(ed)
    assert not reply["ok"]
    assert "dim 'm'" in reply["error"] and "Values panel" in reply["error"] and "m=64" in reply["error"]
    assert ed.session is None


def test_a_dim_given_by_name_sizes_the_temp_and_the_run_is_right(ed):
    assert values(ed, "dim", dim="m", size=M)["ok"]
    assert ed.values["missing_dims"] == []
    assert dim(ed, "m") == {"dim": "m", "size": M, "given": True, "set_by": None, "args": ["grid"], "needed": False}
    reply = start(ed)
    assert reply["ok"], reply
    session = ed.session
    assert session.inspect("grid").numpy().shape == (M,)
    session.continue_()
    np.testing.assert_allclose(session.inspect("y").numpy(), temps_expected(), rtol=1e-6)
    # forgotten again: missing again
    assert values(ed, "dim", dim="m", size=None, request=2)["ok"]
    assert ed.values["missing_dims"] == ["m"] and dim(ed, "m")["given"] is False


@pytest.mark.parametrize(
    ("fields", "needles"),
    [
        ({"dim": "q", "size": 4}, ["'q' is not a dim", "'n', 'm'"]),
        ({"dim": "c", "size": 4}, ["'c' is not a dim"]),
        ({"dim": "n", "size": N + 1}, ["dim 'n' = 9", "'x' has 'n' = 8", "give n=8"]),
        ({"dim": "m", "size": 0}, ["size"]),
        ({"dim": "m", "size": -3}, ["size"]),
    ],
)
def test_a_bad_dim_is_refused_naming_it_and_the_fix(ed, fields, needles):
    reply = values(ed, "dim", **fields)
    assert not reply["ok"]
    for needle in needles:
        assert needle in reply["error"], reply["error"]
    assert ed.values["missing_dims"] == ["m"] and all(not d["given"] for d in ed.values["dims"])


def test_an_array_allocated_against_a_dim_given_by_name_is_refused(ti_cpu):
    g = temps_graph()
    ed = gl.editor(g, kernels=[], access="ast")
    try:
        assert values(ed, "dim", dim="n", size=16)["ok"]
        reply = values(ed, "allocate", arg="x", shape=[8], request=2)
        assert not reply["ok"]
        assert "axis 0 is dim 'n', given as n=16" in reply["error"] and "allocate 16" in reply["error"]
        assert values(ed, "allocate", arg="x", shape=[16], request=3)["ok"]
        assert dim(ed, "n") == {"dim": "n", "size": 16, "given": True, "set_by": "x", "args": ["x", "t", "y"],
                                "needed": False}  # fmt: skip
    finally:
        ed.close()
