"""Debugger edges (issue 19, point 6): a NaN hunt that starts on NaN, a condition already true, and a
``check_every`` past ``max_iter`` that would run every iteration unguarded.
"""

import dataclasses
import json

import numpy as np
import pytest
import taichi as ti

import graphlab as gl
from graphlab.model.nodes import Loop

F1 = ti.types.ndarray(dtype=ti.f32, ndim=1)
I1 = ti.types.ndarray(dtype=ti.i32, ndim=1)
N = 8


@ti.kernel
def smooth(a: F1, b: F1):
    for i in b:
        b[i] = a[i] + a[ti.max(i - 1, 0)]


@ti.kernel
def copy(b: F1, a: F1):
    for i in a:
        a[i] = b[i] * 0.5


def smearing() -> gl.Graph:
    """Each repetition spreads a NaN of ``a`` one element to the right (through ``b``)."""
    g = gl.Graph("smear")
    a, b = g.ndarray("a", ti.f32, ndim=1, shape="n"), g.ndarray("b", ti.f32, ndim=1, shape="n")
    with g.sequence("steps", repeat=3) as s:
        s.dispatch(smooth, a, b)
        s.dispatch(copy, b, a)
    return g


def start() -> dict[str, np.ndarray]:
    a = np.ones(N, np.float32)
    a[2] = np.nan
    return {"a": a, "b": np.zeros(N, np.float32)}


# --- find_first_nonfinite past NaN in the start values --------------------------------------------------


def test_nan_in_the_start_values_is_reported_once_then_the_hunt_finds_where_it_spreads(ti_cpu):
    dbg = smearing().debug(start())
    first = dbg.find_first_nonfinite()
    assert (first.reason, first.index, first.already, first.cause_step_id) == ("nonfinite", 0, True, None)
    assert first.nonfinite is not None and first.nonfinite.step is None and first.nonfinite.buffer == "a"
    assert "call find_first_nonfinite() again" in first.note and "already so before this run" in str(first)

    into_b = dbg.find_first_nonfinite()  # b was finite: smooth writes NaN at 2 and 3
    assert (into_b.index, into_b.cause_step_id, into_b.already) == (1, "steps[0]/smooth", False)
    hit = into_b.nonfinite
    assert hit is not None and (hit.buffer, hit.nan, hit.first_index, hit.before) == ("b", 2, (2,), 0)

    spread = dbg.find_first_nonfinite()  # a held NaN at 2: copy adds 3
    hit = spread.nonfinite
    assert spread.cause_step_id == "steps[0]/copy" and hit is not None
    assert (hit.buffer, hit.nan, hit.before, hit.first_index) == ("a", 2, 1, (3,))
    assert "spread NaN/Inf in 'a': 2 non-finite values (2 NaN, 0 Inf) where 1 were" in str(hit)

    again = dbg.find_first_nonfinite(every="dispatch")
    assert again.cause_step_id == "steps[1]/smooth" and again.nonfinite is not None
    assert (again.nonfinite.buffer, again.nonfinite.before, again.nonfinite.first_index) == ("b", 2, (4,))


def test_a_hunt_past_known_nan_that_never_spreads_runs_to_the_end(ti_cpu):
    g = gl.Graph("still")
    a, b = g.ndarray("a", ti.f32, ndim=1, shape="n"), g.ndarray("b", ti.f32, ndim=1, shape="n")
    with g.sequence("steps", repeat=2) as s:
        s.dispatch(copy, b, a)  # a = b / 2: b's NaN stays where it is
    values = start()
    values["b"] = values.pop("a")
    values["a"] = np.zeros(N, np.float32)
    dbg = g.debug(values)
    first = dbg.find_first_nonfinite()  # b holds NaN but nothing writes it; copy puts it into a
    assert first.cause_step_id == "steps[0]/copy" and first.nonfinite is not None
    assert (first.nonfinite.buffer, first.nonfinite.first_index) == ("a", (2,))
    done = dbg.find_first_nonfinite()  # the second copy leaves it where it was: no spread
    assert (done.reason, done.index, done.nonfinite) == ("end", 2, None)


# --- a condition already true names no cause ------------------------------------------------------------


def test_a_condition_already_true_names_no_dispatch_as_its_cause(ti_cpu):
    values = start()
    values["a"][2] = 1.0
    dbg = smearing().debug(values)
    dbg.run_to(3)
    dbg.break_when("a.max() > 0.5")  # true already: a holds (1 + 1) * 0.5 = 1 after copy
    stop = dbg.continue_()
    assert (stop.reason, stop.index, stop.already, stop.cause_step_id) == ("condition", 3, True, None)
    assert stop.last_step_id == "steps[1]/smooth"  # where the session stood, not the cause
    assert "last ran" not in str(stop) and "no dispatch of it is the cause" in str(stop)
    assert "no dispatch of this run made it true" in stop.note

    fresh = smearing().debug(a=np.ones(N, np.float32), b=np.zeros(N, np.float32))
    fresh.break_when("b.sum() > 10", every="dispatch")  # b is 0 at the start: smooth makes it 16
    turned = fresh.continue_()
    assert turned.reason == "condition" and not turned.already
    assert turned.cause_step_id == turned.last_step_id is not None


# --- check_every past max_iter --------------------------------------------------------------------------


@ti.kernel
def countdown(it: I1, flag: I1):
    for _ in range(1):
        it[0] += 1
        flag[0] = 1 if it[0] < 3 else 0


def looped(**options) -> gl.Graph:
    g = gl.Graph("looped")
    it = g.ndarray("it", ti.i32, ndim=1, shape=(1,))
    flag = g.ndarray("flag", ti.i32, ndim=1, shape=(1,))
    body = g.define("body")
    body.dispatch(countdown, it, flag)
    g.loop(body, while_=flag, name="solve", **options)
    return g


def test_loop_refuses_check_every_past_max_iter_saying_what_it_would_do():
    with pytest.raises(gl.GraphError, match=r"GL019: loop\(\): check_every=8 is larger than max_iter=5, so the flag"):
        looped(max_iter=5, check_every=8)
    looped(max_iter=5, check_every=5)  # read once, after the last: allowed, as the issue draws the line at larger
    looped(max_iter=5, check_every=8, guarded=True)  # guarded: stops exactly all the same


def test_a_graph_file_with_it_is_refused_at_the_loop(tmp_path):
    path = tmp_path / "looped.graph.json"
    looped(max_iter=5, check_every=2).save(path)
    data = json.loads(path.read_text())
    text = json.dumps(data).replace('"check_every": 2', '"check_every": 8')
    assert text != json.dumps(data)
    path.write_text(text)
    with pytest.raises(gl.GraphFileError, match=r"\$\.body\[0\].*GL019.*check_every=8 is larger than max_iter=5"):
        gl.load(path, kernels={"countdown": countdown})


def test_validate_reports_it_and_run_refuses_before_anything_runs(ti_cpu):
    g = looped(max_iter=5, check_every=2)
    state = g.snapshot()
    body = tuple(dataclasses.replace(n, check_every=8) if isinstance(n, Loop) else n for n in state.body)
    g.restore(dataclasses.replace(state, body=body))  # undo data is not checked by loop()
    [found] = [d for d in g.validate() if d.code == "GL019"]
    assert (found.severity, found.node) == ("error", "solve")
    assert "check_every=8 is larger than max_iter=5" in found.message and "check_every <= max_iter" in (
        found.hint or ""
    )
    it, flag = np.zeros(1, np.int32), np.zeros(1, np.int32)
    with pytest.raises(gl.GraphError, match="GL019"):
        g.run(it=it, flag=flag)
    assert it[0] == 0
