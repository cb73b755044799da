"""The debug panel's "Compare with...", driven as the browser drives it: a ``compare`` message in,
progress and the divergence out in the ``debugger`` trait, the session moved to the step before it
and the inspect panel on the buffer that differs. The other side is real Vulkan (Mesa lavapipe)
running the planted cross-arch differences of ``tests/compare_kernels.py``.
"""

from __future__ import annotations

import base64

import numpy as np
import pytest
import taichi as ti
from compare_kernels import planted_graph
from test_compare_warm import running
from test_widget_panels import debug, declared_fields, started
from widget_comm import deliver, recording_comm  # noqa: F401  (autouse fixture)

import graphlab as gl
from graphlab.debug.compare import ARCHS as DEBUG_ARCHS
from graphlab.widget.compare_panel import ARCHS, divergence_view, picture_url

N = 4096


def planted_values() -> dict[str, ti.Ndarray]:
    values = {name: ti.ndarray(ti.f32, N) for name in "xyzw"}
    values["x"].from_numpy(np.linspace(-20, 3e4, N).astype(np.float32))
    return values


@pytest.fixture
def ed(ti_cpu):
    widget = gl.editor(planted_graph(), kernels=[], access="ast", values=planted_values())
    yield widget
    widget.close()


def published(widget):
    """Every ``compare`` view the widget sent, in order (the comm records each trait sync)."""
    out = []
    for state in widget.comm.updates():
        view = state.get("debugger")
        if view and view.get("compare", {}).get("run") and (not out or view["compare"] != out[-1]):
            out.append(view["compare"])
    return out


def test_compare_marks_the_first_diverging_dispatch_and_moves_the_session_before_it(ed):
    started(ed)
    debug(ed, "step")
    reply = debug(ed, "compare", request=5, against="vulkan")
    assert reply["ok"], reply
    view = ed.debugger["compare"]
    assert view["state"] == "done" and view["against"] == "vulkan" and view["run"] == 1
    found = view["divergence"]
    assert found["node_id"] == "rounds/wobble" and found["step_id"] == "rounds[0]/wobble"
    assert found["index"] == 1 and found["buffer"] == "w" and found["archs"] == ["x64", "vulkan"]
    a, b = found["values"]
    assert a != b and found["count"] >= 1 and found["max_abs"] > 0
    assert "rounds[0]/wobble" in found["text"] and "bit for bit" in found["text"]
    assert found["picture"].startswith("data:image/svg+xml;base64,")  # a 1-D buffer: a line plot
    # the session stands before the diverging dispatch; the inspect panel shows the buffer that differs
    assert ed.session.position.index == 1 and ed.debugger["position"]["step_id"] == "rounds[0]/wobble"
    assert ed.inspect["buffer"] == "w"
    first = found["first_index"][0]
    assert ed.inspect["page"]["offset"] <= first < ed.inspect["page"]["offset"] + ed.inspect["page"]["count"]


def test_compare_publishes_its_progress_while_it_runs(ed):
    started(ed)
    debug(ed, "compare", against="vulkan", rtol=1e-4)
    seen = published(ed)
    states = [v["state"] for v in seen]
    assert states[0] == "running" and states[-1] == "done"
    stages = [v["stage"] for v in seen if v["state"] == "running"]
    assert "starting the vulkan process" in stages and any("replaying" in s for s in stages), stages
    assert seen[-1]["divergence"]["node_id"] == "rounds/scramble"  # the tolerance hides wobble's last bit
    assert seen[-1]["rtol"] == 1e-4


def test_runs_that_agree_leave_the_session_where_it_was(ed):
    started(ed)
    debug(ed, "step")
    assert debug(ed, "compare", against="vulkan", atol=1.0)["ok"]
    assert ed.debugger["compare"]["state"] == "done" and ed.debugger["compare"]["divergence"] is None
    assert ed.session.position.index == 1


def test_a_refused_comparison_shows_why_and_the_session_stays(ed):
    started(ed)
    debug(ed, "step")
    reply = debug(ed, "compare", against="no/such/folder")
    said = "compare against 'no/such/folder': that is no arch (x64, "
    assert reply["ok"] is False and said in reply["error"], reply["error"]
    view = ed.debugger["compare"]
    assert view["state"] == "failed" and view["error"].startswith(said), "said in the panel's terms, no class name"
    assert view["error"].endswith("(in Python: compare(against='no/such/folder'))")
    assert ed.session.position.index == 1


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({}, "field 'against' is missing"),
        ({"against": ""}, "must be an arch name or the folder"),
        ({"against": "x" * 5000}, "at most 4,096 characters"),
        ({"against": "vulkan", "rtol": -1}, "field 'rtol' must be a finite number from 0"),
        ({"against": "vulkan", "atol": "nan"}, "field 'atol' must be a finite number"),
        ({"against": "vulkan", "atol": True}, "field 'atol' must be a finite number"),
        ({"against": "vulkan", "rtol": 1e300}, "field 'rtol' must be a finite number from 0 to 1e+06"),
        ({"against": "vulkan", "fast": True}, "unexpected field(s) 'fast'"),
        ({"against": "vulkan", "timeout": 0}, "field 'timeout' must be seconds, a number > 0"),
        ({"against": "vulkan", "timeout": -5}, "field 'timeout' must be seconds, a number > 0"),
        ({"against": "vulkan", "timeout": "10"}, "field 'timeout' must be seconds, a number > 0"),
        ({"against": "vulkan", "timeout": 1e9}, "at most 86400"),
    ],
)
def test_a_malformed_compare_message_gets_an_error_reply_and_changes_nothing(ed, fields, reason):
    started(ed)
    debug(ed, "step")
    before = (dict(ed.debugger), dict(ed.inspect), ed.session.position)
    reply = debug(ed, "compare", request=9, **fields)
    assert reply["ok"] is False and reason in reply["error"], reply["error"]
    assert (dict(ed.debugger), dict(ed.inspect), ed.session.position) == before


def test_picking_an_arch_starts_its_process_and_compare_then_uses_it(ed):
    session = started(ed)
    assert session.compare_pid("x64") is None
    assert debug(ed, "prepare_compare", request=3, against="x64")["ok"]
    pid = session.compare_pid("x64")
    assert running(pid), "the process starts as the arch is picked, before Compare is clicked"
    assert ed.debugger["compare"]["run"] == 0  # nothing compared yet
    assert debug(ed, "compare", request=4, against="x64")["ok"]
    assert ed.debugger["compare"]["state"] == "done" and ed.debugger["compare"]["divergence"] is None
    assert session.compare_pid("x64") == pid
    # an exported module's folder needs no process: nothing starts
    assert debug(ed, "prepare_compare", request=5, against=".")["ok"]
    # stopping the session stops its processes
    assert debug(ed, "stop", request=6)["ok"]
    assert not running(pid)


def test_a_bad_arch_to_prepare_is_refused(ed):
    started(ed)
    reply = debug(ed, "prepare_compare", against="vulkan2")
    assert reply["ok"] is False and "compare against 'vulkan2': that is no arch" in reply["error"], reply["error"]


def test_the_timeout_given_in_the_form_bounds_the_other_process(ed):
    started(ed)
    debug(ed, "step")
    reply = debug(ed, "compare", against="x64", timeout=0.001)  # no process starts in a millisecond
    assert reply["ok"] is False and "did not answer 'start' within 0.001 s" in reply["error"], reply["error"]
    assert ed.debugger["compare"]["state"] == "failed" and ed.session.position.index == 1
    assert ed.session.compare_pid("x64") is None  # killed, not kept


def test_a_stale_compare_is_refused(ed):
    started(ed)
    reply = deliver(ed, {"kind": "debug", "action": "compare", "request": 2, "session": 7, "against": "vulkan"})
    assert reply["ok"] is False and "stale" in reply["error"]
    assert ed.debugger["compare"]["run"] == 0


def test_the_compare_views_have_the_fields_the_protocol_declares(ed):
    started(ed)
    assert set(ed.debugger["compare"]) == declared_fields("CompareView")
    debug(ed, "compare", against="vulkan")
    assert set(ed.debugger["compare"]) == declared_fields("CompareView")
    assert set(ed.debugger["compare"]["divergence"]) == declared_fields("DivergenceView")
    assert set(ARCHS) == set(DEBUG_ARCHS), "the panel offers the archs compare takes"


def test_a_control_divergence_and_big_pictures_stay_json():
    from graphlab.debug.compare import Divergence

    found = Divergence("buffer", ("x64", "vulkan"), 3, "s", "n", buffer="b", first_index=(0,),
                       values=(float("nan"), float("inf")), count=1, size=1, max_abs=float("inf"),
                       difference=np.zeros(4))  # fmt: skip
    view = divergence_view(found)
    assert view["values"] == ["nan", "inf"] and view["max_abs"] == "inf"
    png = b"\x89PNG" + b"\0" * 10
    assert base64.b64decode(picture_url(png).split(",", 1)[1]) == png
    assert picture_url(b"\0" * (3 << 20)) is None and picture_url(None) is None
