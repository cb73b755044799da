"""The workload corpus (``tests/workloads/``): real Taichi examples held to every promise graphlab makes.

Each workload (seven examples ported to ndarray args, plus Taichi's ``texture_graph`` from the wheel)
must give:
- ``validate()`` (and ``validate(target=...)`` for each export target): no error, and exactly the
  warnings listed in ``TRUE_WARNINGS``, each with the reason it is true;
- a compiled ``run()`` per frame equal, bit for bit, to the same kernels called one by one from
  Python (``ti.cpu`` with one thread; ``texture_graph`` on Vulkan, the one arch its textures run on;
  a workload that draws random numbers runs each side on a fresh runtime with the same seed);
- stepping every dispatch in the debugger equal to the compiled run;
- an export for x64 and Vulkan that ``gl.verify`` passes (x64 bit for bit), and that a debug
  session's ``compare(folder)`` agrees with on x64, temps included;
- graph files that load back to the same file, the same steps and the same results.

The corpus is the suite's main evidence that the checker is right, so nothing here is relaxed to
pass: a failure names the workload and the check.
"""

from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

import pytest
import taichi as ti
import workloads as corpus

import graphlab as gl
from graphlab.model.graphfile import dumps

#: Warnings that are true, by workload: (code, node, arg) and why.
TRUE_WARNINGS: dict[str, dict[tuple[str, str, str], str]] = {
    "mgpcg": {
        (
            "GL010",
            "init",
            "z0",
        ): "init zeroes z0 (as the example does), then the preconditioner zeroes it before a read",
    },
    "random_init": {
        ("GL027", "init_particles", None): "init_particles calls ti.random, in the kernel and in jitter",
        ("GL028", "boundary", "grid"): "boundary writes grid[i, j] and reads grid[inb, jnb] in its parallel loop",
    },
}

#: A bound on steps in one debug session, so a stepping bug cannot hang the suite.
MAX_STEPS = 20_000


def _param(name: str) -> Any:
    marks = [pytest.mark.vulkan] if corpus.arch(corpus.workload(name)) == "vulkan" else []
    return pytest.param(name, marks=marks, id=name)


def _export_params() -> list[Any]:
    params = []
    for name in corpus.NAMES:
        for arch in corpus.export_archs(corpus.workload(name)):
            marks = [pytest.mark.vulkan] if arch == "vulkan" else []
            params.append(pytest.param(name, arch, marks=marks, id=f"{name}-{arch}"))
    return params


class Loaded(NamedTuple):
    name: str
    w: ModuleType  # the workload module
    m: ModuleType  # its kernels
    graphs: list[gl.Graph]


def _init(arch: str) -> None:
    if arch == "vulkan":
        ti.init(arch=ti.vulkan, log_level=ti.WARN)
    else:  # one thread: float atomics add in one order, so the bits repeat
        ti.init(arch=ti.cpu, cpu_max_num_threads=1, random_seed=7, log_level=ti.WARN)


def _load(name: str) -> Loaded:
    w = corpus.workload(name)
    _init(corpus.arch(w))
    m = w.kernels()
    return Loaded(name, w, m, w.graphs(m))


@pytest.fixture(params=[_param(name) for name in corpus.NAMES])
def wl(request: pytest.FixtureRequest) -> Loaded:
    return _load(request.param)


def _run_compiled(wl: Loaded, graphs: list[gl.Graph], values: dict[str, Any]) -> list[Any]:
    compiled = [g.compile() for g in graphs]
    for _ in range(wl.w.FRAMES):
        for g, c in zip(graphs, compiled):
            c.run(corpus.args_of(g, values))
    return compiled


def _fresh_if_random(wl: Loaded, values: dict[str, Any]) -> dict[str, bytes]:
    """The bits of ``values``; for a workload that draws random numbers, then a fresh runtime with the
    same seed, so the next run draws the same numbers (the first run moved Taichi's generator on)."""
    bits = corpus.ndarray_bits(values)
    if getattr(wl.w, "DRAWS_RANDOM", ()):
        _init(corpus.arch(wl.w))
    return bits


def _assert_same_bits(got: dict[str, Any], want: dict[str, Any], what: str) -> None:
    a = got if all(isinstance(v, bytes) for v in got.values()) else corpus.ndarray_bits(got)
    b = corpus.ndarray_bits(want)
    assert a.keys() == b.keys()
    differ = sorted(name for name in a if a[name] != b[name])
    assert differ == [], f"{what}: these buffers differ bit for bit: {differ}"


# --- validate -------------------------------------------------------------------------------------------


def test_validate_finds_no_error_and_only_true_warnings(wl):
    expected = set(TRUE_WARNINGS.get(wl.name, {}))
    for target in (None, *corpus.export_archs(wl.w)):
        diagnostics = [d for g in wl.graphs for d in g.validate(target=target)]
        errors = [str(d) for d in diagnostics if d.severity == "error"]
        assert errors == [], f"{wl.name} (target={target}): false errors"
        # GL029 is a note (accesses the source cannot prove in bounds), not a finding: bounds="check" covers it
        warnings = {(d.code, d.node, d.arg): str(d) for d in diagnostics if d.severity != "error" and d.code != "GL029"}
        assert set(warnings) - expected == set(), f"{wl.name} (target={target}): warnings not known true: {warnings}"
        assert expected - set(warnings) == set(), f"{wl.name} (target={target}): true warnings no longer found"


# --- compiled run against the kernels called one by one -------------------------------------------------


def test_compiled_run_equals_the_kernels_called_one_by_one(wl):
    start = wl.w.values(wl.m)
    ours = corpus.on_device(wl.graphs, start)
    compiled = _run_compiled(wl, wl.graphs, ours)
    events = list(compiled[-1].last_events)
    ours_bits = _fresh_if_random(wl, ours)
    theirs = corpus.on_device(wl.graphs, wl.w.values(wl.m))
    iterations = [wl.w.by_hand(wl.m, theirs) for _ in range(wl.w.FRAMES)]
    _assert_same_bits(ours_bits, theirs, f"{wl.name}: compiled run vs kernels one by one")
    changed = [name for name, bits in ours_bits.items() if bits != start[name].tobytes()]
    assert changed, f"{wl.name}: the run changed nothing, so the comparison proves nothing"
    if iterations[-1] is not None:  # a workload with a loop: the same number of iterations
        [event] = events
        assert (event.value, event.limit_reached) == (iterations[-1], False)


# --- stepping -------------------------------------------------------------------------------------------


def test_stepping_every_dispatch_equals_the_compiled_run(wl):
    compiled_values = corpus.on_device(wl.graphs, wl.w.values(wl.m))
    _run_compiled(wl, wl.graphs, compiled_values)
    compiled_bits = _fresh_if_random(wl, compiled_values)
    stepped = corpus.on_device(wl.graphs, wl.w.values(wl.m))
    for _ in range(wl.w.FRAMES):
        for g in wl.graphs:
            dbg = g.debug(corpus.args_of(g, stepped))
            steps = 1
            while dbg.step().reason != "end":
                steps += 1
                assert steps <= MAX_STEPS, f"{wl.name}/{g.name}: stepping did not reach the end"
            if not g.has_control_flow:
                assert steps == g.step_count(), f"{wl.name}/{g.name}: one step per dispatch"
    _assert_same_bits(compiled_bits, stepped, f"{wl.name}: stepped vs compiled")


# --- export and verify ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "arch"), _export_params())
def test_export_verifies(name, arch, tmp_path):
    wl = _load(name)
    values = wl.w.values(wl.m)  # numpy arrays, numbers and textures: their shapes set the dims
    out = tmp_path / name
    gl.export(wl.graphs, out, arch, values=values, cpu_threads=1 if arch == "x64" else None, progress=False)
    specs = corpus.arg_specs(wl.graphs)
    # the same start on both sides; the module allocates its temps, and textures are drawn from their sample
    inputs = {k: v for k, v in corpus.host_values(values).items() if specs[k].role != "temp"}
    report = gl.verify(out, inputs, frames=wl.w.FRAMES)
    assert report.passed, f"{name} on {arch}:\n{report}"
    if arch == "x64":  # one thread: the C runtime repeats Python's bits
        assert report.identical, f"{name} on x64 is not bit for bit:\n{report}"
        _compare_with_module(wl, out)


def _compare_with_module(wl: Loaded, folder: Path) -> None:
    """Each graph in a debug session (temps allocated by the session) agrees with the module, frame by frame.

    A dispatch that draws random numbers draws others in the module's runtime (its own generator):
    there the comparison must name that dispatch and ``ti.random``, never a plain value divergence.
    """
    live = corpus.on_device(wl.graphs, wl.w.values(wl.m))
    random_nodes = set(getattr(wl.w, "DRAWS_RANDOM", ()))
    for _ in range(wl.w.FRAMES):
        for g in wl.graphs:
            dbg = g.debug(corpus.args_of(g, live))
            found = dbg.compare(folder)
            if found is not None and found.node_id in random_nodes:
                assert f"dispatch {found.node_id!r} draws random numbers" in str(found), str(found)
                found = None
            assert found is None, f"{wl.name}/{g.name}: the session and the exported module differ: {found}"
            dbg.continue_()  # compare() leaves the session where it was: run it, so the next graph starts after


# --- graph files ----------------------------------------------------------------------------------------


def test_graph_files_round_trip(wl, tmp_path: Path):
    loaded = []
    for g in wl.graphs:
        path = tmp_path / f"{g.name}.graph.json"
        g.save(path)
        again = gl.load(path, kernels=wl.m)
        assert dumps(again) == path.read_text(), f"{wl.name}/{g.name}: the file changed on load"
        if not g.has_control_flow:  # a loop's steps depend on its flag at run time
            assert [s.id for s in again.steps()] == [s.id for s in g.steps()]
        assert [str(d) for d in again.validate()] == [str(d) for d in g.validate()]
        loaded.append(again)
    original = corpus.on_device(wl.graphs, wl.w.values(wl.m))
    _run_compiled(wl, wl.graphs, original)
    original_bits = _fresh_if_random(wl, original)
    from_file = corpus.on_device(loaded, wl.w.values(wl.m))
    _run_compiled(wl, loaded, from_file)
    _assert_same_bits(original_bits, from_file, f"{wl.name}: loaded graphs vs the originals")
