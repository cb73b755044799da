"""Random draws, atomic adds and races read from kernels, and what validate, the debugger, parity,
compare and verify say about them (issue 19, point 3)."""

import inspect
import re
import warnings
from types import SimpleNamespace

import numpy as np
import pytest
import random_kernels as rk
import taichi as ti

import graphlab as gl
from graphlab.analysis.check import rule_table
from graphlab.analysis.variance import Cause, buffer_causes
from graphlab.debug import DebugOptions, RandomReplayWarning
from graphlab.deploy.report import DIFFERS, NOISE, RANDOM, TOLERATED, VerifyReport, compare
from graphlab.deploy.verify import _notes
from graphlab.kernelfacts.effects import REPRODUCIBLE_HINT, kernel_effects
from graphlab.widget.view import graph_view


def _line(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


# --- the facts -------------------------------------------------------------------------------------------


def test_random_draws_are_found_through_ti_funcs_with_their_lines(ti_cpu):
    [draw] = kernel_effects(rk.shake).random
    assert (draw.call, draw.function, draw.path) == ("ti.randn()", "noise", ("shaken", "noise"))
    assert draw.line == _line(rk.noise, "ti.randn()")
    assert draw.describe() == f"ti.randn() in noise (called via shaken), line {draw.line}"
    assert kernel_effects(rk.double).random == ()


def test_atomic_adds_are_those_into_cells_other_iterations_share(ti_cpu):
    [add] = kernel_effects(rk.histogram).atomics
    assert kernel_effects(rk.accumulate).atomics == ()  # x[i] += 1.0: each thread its own cell
    assert (add.param, add.index) == ("bins", "ti.cast(x[i], ti.i32) % bins.shape[0]")
    assert add.line == _line(rk.histogram, "bins[")


def test_a_read_at_another_index_in_the_parallel_loop_is_a_race(ti_cpu):
    [race] = kernel_effects(rk.wall).races
    assert (race.param, race.write, race.reads, race.loop) == ("rho", "i, j", ("inb, jnb",), "for i, j in rho")
    assert kernel_effects(rk.serial_wall).races == ()  # ti.loop_config(serialize=True): one thread
    assert kernel_effects(rk.red_black).races == ()  # parity-guarded writes read only the other colour
    assert kernel_effects(rk.double).races == ()


def test_a_read_of_another_layer_is_no_race_but_the_same_layer_is(ti_cpu):
    assert kernel_effects(rk.ping_pong).races == ()  # grid[src] read, grid[dst] written: ping-pong layers
    assert kernel_effects(rk.fixed_layers).races == ()  # layer 0 read, layer 1 written: never the same cell
    [race] = kernel_effects(rk.same_layer).races  # one layer k, a neighbour read: thread order decides
    assert (race.write, race.reads) == ("k, i, j", ("k, ti.max(i - 1, 0), j",))


# --- validate ---------------------------------------------------------------------------------------------


def _wall_graph():
    g = gl.Graph("walls")
    x, rho = g.ndarray("x", ti.f32, ndim=1), g.ndarray("density", ti.f32, ndim=2)
    g.dispatch(rk.shake, x)
    g.dispatch(rk.wall, rho)
    g.dispatch(rk.red_black, rho, g.scalar("phase", ti.i32))
    return g


def test_validate_warns_of_random_draws_and_races_naming_kernel_buffer_and_line(ti_cpu):
    found = {d.code: d for d in _wall_graph().validate() if d.code in ("GL027", "GL028")}
    random, race = found["GL027"], found["GL028"]
    assert (random.severity, random.node, random.hint) == ("warning", "shake", REPRODUCIBLE_HINT)
    assert "kernel 'shake' draws random numbers (ti.randn() in noise (called via shaken), line " in random.message
    assert "use graphlab.random (counter-based, reproducible)" in str(random)
    assert (race.severity, race.node, race.arg) == ("warning", "wall", "density")
    line = _line(rk.wall, "rho[i, j] = rho[inb, jnb]")
    assert f"'density' is written at [i, j] (line {line}) and read at [inb, jnb] (line {line})" in race.message
    assert "depends on thread order" in race.message
    assert "GL027" in rule_table() and "GL028" in rule_table()


def test_causes_follow_the_data_flow_to_the_buffers_computed_from_them(ti_cpu):
    g = gl.Graph("flow")
    x, bins = g.ndarray("x", ti.f32, ndim=1), g.ndarray("bins", ti.f32, ndim=1)
    g.dispatch(rk.double, x)
    g.dispatch(rk.histogram, x, bins)
    assert buffer_causes(g)["bins"][0].kind == "atomic" and "x" not in buffer_causes(g)
    g.dispatch(rk.shake, x, name="shake")
    causes = buffer_causes(g)
    assert [c.kind for c in causes["x"]] == ["random"] and {c.kind for c in causes["bins"]} == {"atomic", "random"}


# --- the debugger and parity ------------------------------------------------------------------------------------


def _shake_graph():
    g = gl.Graph("shaking")
    x = g.ndarray("x", ti.f32, ndim=1)
    g.dispatch(rk.double, x)
    g.dispatch(rk.shake, x)
    g.dispatch(rk.double, x, name="again")
    return g


def test_going_back_over_a_random_dispatch_and_forward_again_warns(ti_cpu):
    dbg = _shake_graph().debug(x=np.ones(64, np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RandomReplayWarning)
        dbg.step()
        dbg.step()
        first = dbg.inspect("x").numpy().copy()
        dbg.back(1)  # going back alone is exact: no warning yet
        dbg.back(1)
        dbg.step()  # double again: not random, no warning
    with pytest.warns(RandomReplayWarning, match="step 'shake' ran again after going back: dispatch 'shake' draws"):
        dbg.step()
    assert not np.array_equal(dbg.inspect("x").numpy(), first)
    assert dbg.notes[-1].endswith(REPRODUCIBLE_HINT)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RandomReplayWarning)
        dbg.step()  # once per going back


def test_parity_says_which_dispatch_draws_random_numbers(ti_cpu):
    report = _shake_graph().debug(x=np.ones(64, np.float32)).parity()
    assert not report.identical
    [note] = report.random
    assert note.startswith("dispatch 'shake' draws random numbers (ti.randn() in noise")
    assert f"random: {note}" in str(report)
    assert str(report).splitlines()[0].endswith("DIFFERENT (a dispatch draws random numbers: see below)")
    plain = gl.Graph("plain")
    plain.dispatch(rk.double, plain.ndarray("x", ti.f32, ndim=1))
    assert plain.debug(x=np.ones(4, np.float32)).parity().random == ()


# --- compare and verify ------------------------------------------------------------------------------------


@pytest.mark.vulkan
def test_compare_reports_a_random_dispatch_not_a_value_divergence(ti_cpu):
    dbg = _shake_graph().debug(x=np.ones(64, np.float32))
    with warnings.catch_warnings():  # the search's own back and forth is not the user's
        warnings.simplefilter("error", RandomReplayWarning)
        found = dbg.compare("vulkan")
    assert found is not None and found.node_id == "shake" and found.random is not None
    assert str(found).startswith("dispatch 'shake' draws random numbers (ti.randn() in noise")
    assert "drew other numbers" in str(found) and "diverge at" not in str(found)


def test_a_noise_verdict_needs_a_cause_in_the_graph():
    want = np.array([1.0, 2.0, 4.0], np.float32)
    one_ulp = np.nextafter(want, np.float32(10))
    two_ulps = np.nextafter(one_ulp, np.float32(10))
    atomic = ("dispatch 'p2g' adds floats atomically into grid[k]",)
    assert compare("a", one_ulp, want, 0.0, [two_ulps], causes=atomic).verdict == NOISE
    assert compare("a", one_ulp, want, 0.0, [two_ulps], causes=()).verdict == DIFFERS  # nothing explains it
    assert compare("a", one_ulp, want, 1e-5, [two_ulps], causes=()).verdict == TOLERATED
    drawn = compare("a", want * 3, want, 0.0, [want], causes=("dispatch 'init' draws",), random=True)
    assert (drawn.verdict, drawn.passed) == (RANDOM, True)


def test_verify_notes_name_ti_random_and_the_causes_not_noise(tmp_path):
    want = np.arange(4, dtype=np.float32)
    drawn = Cause("random", "init", "draws random numbers (ti.random() in init, line 3)")
    race = Cause("race", "wall", "races on 'rho' is written at [i] and read at [j]")
    outputs = (
        compare("pos", want + 1, want, 1e-5, [want], causes=(drawn.text(),), random=True),
        compare("rho", want + 1e-6, want, 0.0, [want + 2e-6], causes=(race.text(),)),
        compare("y", want + 1e-6, want, 0.0, [want + 2e-6], causes=()),
    )
    report = VerifyReport(tmp_path, "vulkan", 1, 1e-5, "given", outputs)
    manifest = SimpleNamespace(arch="vulkan", cpu_max_num_threads=None)
    notes = _notes(manifest, report, {"pos": (drawn,), "rho": (race,), "y": ()})
    assert [o.verdict for o in outputs] == [RANDOM, NOISE, DIFFERS]
    assert notes[0].startswith("pos: dispatch 'init' draws random numbers (ti.random() in init, line 3); the C host")
    assert notes[0].endswith("(use graphlab.random (counter-based, reproducible) to verify them)")
    assert "rho can vary from run to run because dispatch 'wall' races on 'rho'" in notes[1]
    assert notes[2].startswith("y: no random draw, float atomic add or race upstream")
    assert not any("atomically" in n for n in notes)  # no float atomics in this graph: not blamed
    blamed = [n for n in notes if not n.startswith("y: no random draw")]
    assert not any("float add" in n or "float atomic" in n for n in blamed)
    [spread] = [n for n in notes if "differs from itself" in n]
    assert "come from the thread order of a race, not from the export" in spread


# --- the drawing and the widget ----------------------------------------------------------------------------


def test_the_drawing_and_the_widget_mark_a_random_dispatch(ti_cpu):
    g = _shake_graph()
    source = g.render(access="ast").source
    shake, double = _attrs(source, "shake"), _attrs(source, "double")
    assert shake["label"] == "2. shake\nti.random" and "diagonals" in shake["style"]
    assert double["label"] == "1. double" and "diagonals" not in double.get("style", "")
    assert "GL027: kernel 'shake' draws random numbers" in shake["tooltip"]
    unrolled = g.render(view="unrolled").source
    assert _attrs(unrolled, "shake")["label"] == "1: shake\nti.random"
    nodes = {n["id"]: n for n in graph_view(g)["nodes"]}
    assert nodes["shake"]["random"].startswith("ti.randn() in noise (called via shaken), line ")
    assert "random" not in nodes["double"]


def _attrs(source, name):
    """The quoted attributes of one DOT node statement."""
    statement = re.search(rf'^\s*"?{re.escape(name)}"? \[((?:[^"\]]|"(?:[^"\\]|\\.)*")*)\]', source, re.M)
    assert statement, f"no node {name!r} in the DOT"
    return dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', statement.group(1)))


def test_going_back_by_replaying_over_a_random_dispatch_warns_at_once(ti_cpu):
    g = gl.Graph("replayed")
    x = g.ndarray("x", ti.f32, ndim=1)
    g.dispatch(rk.shake, x)
    with g.sequence("twice", repeat=2) as s:
        s.dispatch(rk.double, x)
    dbg = g.debug(x=np.ones(64, np.float32), options=DebugOptions(budget_bytes=1))  # no copies: replays
    dbg.continue_()
    with pytest.warns(RandomReplayWarning, match=r"rebuilding step 2 ran steps 0\.\.1 again"):
        dbg.back(1)
    assert "step 'shake' among them draws random numbers" in dbg.notes[-1] and "budget_bytes" in dbg.notes[-1]


def test_reading_a_past_value_by_replaying_over_a_random_dispatch_warns(ti_cpu):
    g = gl.Graph("replayed")
    x = g.ndarray("x", ti.f32, ndim=1)
    g.dispatch(rk.shake, x)
    with g.sequence("twice", repeat=2) as s:
        s.dispatch(rk.double, x)
    dbg = g.debug(x=np.ones(64, np.float32), options=DebugOptions(budget_bytes=1))
    dbg.continue_()
    with pytest.warns(RandomReplayWarning, match=r"rebuilding step 2 ran steps 0\.\.1 again"):
        dbg.inspect("x", at=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RandomReplayWarning)
        dbg.inspect("x", at=0)  # the initial state is always kept: nothing runs again


@pytest.mark.vulkan
def test_compare_against_a_module_names_the_random_dispatch(ti_cpu, tmp_path):
    start = np.ones(64, np.float32)
    gl.export(_shake_graph(), tmp_path / "m", "vulkan", values={"x": start}, progress=False)
    with warnings.catch_warnings():  # the search's own back and forth is not the user's
        warnings.simplefilter("error", RandomReplayWarning)
        found = _shake_graph().debug(x=start.copy()).compare(tmp_path / "m")
    assert found is not None and (found.step_id, found.archs) == ("shake", ("x64", "vulkan module"))
    assert str(found).startswith("dispatch 'shake' draws random numbers (ti.randn() in noise")
    assert found.to_dict()["random"] == found.random and "use graphlab.random" in found.to_dict()["text"]


def test_a_race_through_ti_funcs_is_found_in_the_callers_terms(ti_cpu):
    """A buffer written and read at other indices inside ``ti.func``s the loop calls was not followed."""
    [race] = kernel_effects(rk.smear_through_funcs).races
    assert (race.param, race.write, race.reads, race.loop) == ("a", "i", ("i - 1",), "for i in a")
    assert race.write_line == race.read_line == _line(rk.smear_through_funcs, "shift_from(a, i)")
    assert kernel_effects(rk.scale_through_funcs).races == ()
    g = gl.Graph("smear")
    g.dispatch(rk.smear_through_funcs, g.ndarray("a", ti.f32, ndim=1))
    [diag] = [d for d in g.validate() if d.code == "GL028"]
    assert "'a' is written at [i]" in diag.message and "read at [i - 1]" in diag.message


def test_reading_a_plane_the_loop_keeps_while_writing_another_is_no_race(ti_cpu):
    """``grid[dst, i, j] = grid[src, i - 1, j]`` (ping-pong layers) was GL028 in the constant_grid workload."""
    assert kernel_effects(rk.ping_pong).races == ()
    [race] = kernel_effects(rk.ping_pong_moving).races
    assert (race.write, race.reads) == ("0, i, j", ("src, i - 1, j",))
