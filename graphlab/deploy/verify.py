"""``gl.verify``: does the exported module compute what the notebook computes?

Runs the same graphs twice on the same inputs and compares every ndarray they write:

- **as deployed**: the generated C host program (``host/``, built with the system C compiler)
  loads ``module/`` into Taichi's C runtime, with no Python in the loop;
- **as in the notebook**: a child process with Taichi's Python frontend on the manifest's arch
  rebuilds the graphs from ``source/`` (the graph files and the kernels carried at export time)
  and runs them with graphlab.

A graph with conditionals or loops must also take the same path in both: the C host prints its
decisions (``--events``) and the Python side records ``last_events``; the report lists them and
fails where they differ.

Inputs are given as numpy arrays, or drawn at random (``seed``) from the manifest: shapes from its
dims, values in the range the notebook's values had at export (``sample``), else uniform [0, 1) for
floats and {0, 1} for ints. Outputs start at zero.

``verify`` executes the kernels' Python code stored in ``source/kernels.json`` (or given as
``kernels=``): verify only folders you exported yourself or trust.

The report and the comparison of one output are in :mod:`graphlab.deploy.report`.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import os
import re
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from graphlab.analysis.variance import Cause, causes_from_data
from graphlab.bridge.texture_formats import TEXEL_CHANNELS, TEXTURE_KINDS, texel_format
from graphlab.child.carry import carry_kernels
from graphlab.child.process import run_child
from graphlab.core.errors import GraphlabError, ToolMissingError
from graphlab.core.leftovers import scratch_prefix
from graphlab.core.spec import NUMPY_DTYPES, Arg
from graphlab.deploy.capi_ctypes import taichi_c_api_dir
from graphlab.deploy.control import FrameEvent, parse_event_lines
from graphlab.deploy.hostgen import EXECUTABLE, LIBRARY_SOURCES, build_host
from graphlab.deploy.manifest import Manifest, Sample, module_folder, read_manifest
from graphlab.deploy.report import NOISE, NOISE_FACTOR, RANDOM, TOLERATED, OutputDiff, VerifyReport, compare
from graphlab.deploy.room import available_bytes, too_big
from graphlab.deploy.seal import check_files, check_listed
from graphlab.kernelfacts.shape_facts import first_violation
from graphlab.model.graphfile import loads
from graphlab.model.plan import ControlEvent
from graphlab.model.sizes import resolve_sizes
from graphlab.run.values import array_problem, dims_problem, number_problem, numpy_dtype

__all__ = ["OutputDiff", "Run", "VerifyError", "VerifyReport", "make_inputs", "run_host", "run_python", "verify"]

CHILD_ENTRY = "graphlab.deploy._child:run_graphs"
ATOMICS_NOTE = (
    "this x64 module was compiled for {threads} threads: kernels that add floats atomically (`+=` on a "
    "shared cell, like MPM's particle-to-grid) sum in thread-timing order, so results differ by rounding "
    "from run to run (and a chaotic simulation grows those differences); export with cpu_threads=1 for "
    "bit-identical results"
)
GPU_NOTE = (
    "on {arch}, kernels that add floats atomically (`+=` on a shared cell, like MPM's particle-to-grid) "
    "sum in scheduling order, so results differ by rounding from run to run (and a chaotic simulation "
    "grows those differences); export for x64 with cpu_threads=1 to compare bit for bit"
)
SPREAD_NOTE = (
    "Taichi's Python frontend run again on the same inputs differs from itself (column 'py vs py', max abs; "
    "up to {spread:.2g} of an output's largest magnitude): differences of that size come from {sources}, "
    "not from the export"
)
#: What makes Python's own runs differ, by the kind of cause found upstream of the differing outputs.
SPREAD_SOURCES = {"atomic": "the order of float atomic adds", "race": "the thread order of a race"}
REPEATS_NOTE = (
    "Taichi's Python frontend run again on the same inputs gave the same bits (column 'py vs py' is 0), "
    "so no run-to-run noise was seen that would explain these differences"
)
RTOL_NOTE = (
    "{names}: the host differs from Python more than Python's runs differ from each other, but within "
    "rtol={rtol:g} of the largest magnitude, so it counts as run-to-run noise (races that a few runs may "
    "not show); pass rtol=0 to count only the noise measured"
)
RANDOM_NOTE = (
    "{names}: {causes}; the C host and Python draw other numbers, so these outputs cannot be compared bit for "
    "bit ({reproducible} to verify them)"
)
CAUSE_NOTE = "{names} can vary from run to run because {causes}"
NO_CAUSE_NOTE = (
    "{names}: no random draw, float atomic add or race upstream in the graph explains this difference, so "
    "it is not counted as run-to-run noise"
)
#: Where a second Python run can differ from the first (float atomics on a GPU).
NONDETERMINISTIC = ("vulkan", "cuda")
#: Most further Python runs that measure run-to-run noise where Taichi's own bits can vary.
NOISE_RUNS = 3


class VerifyError(GraphlabError, RuntimeError):
    """Verification could not run (no sources in the folder, the host program failed...)."""


@dataclass(frozen=True)
class Run:
    """One run of the graphs: where its outputs are, how long its frames took (ms), what it decided."""

    out_dir: Path
    seconds: float
    first_frame_ms: float | None = None
    frame_ms: float | None = None
    events: tuple[FrameEvent, ...] = ()
    #: What makes each buffer vary (random draws, float atomics, races), from the graphs' kernels.
    causes: Mapping[str, tuple[Cause, ...]] = dataclasses.field(default_factory=dict)


# --- inputs -----------------------------------------------------------------------------------------


def _args(manifest: Manifest) -> dict[str, Arg]:
    """Every arg once; an arg that is an input in any graph counts as an input."""
    args: dict[str, Arg] = {}
    for graph in manifest.graphs:
        for arg in graph.args:
            seen = args.setdefault(arg.name, arg)
            if arg.role == "input" and seen.role != "input":
                args[arg.name] = arg
    return args


def _texels(manifest: Manifest, arg: Arg) -> int:
    """How many channels a texture arg's texels have on the host (0 for other kinds)."""
    if arg.kind not in TEXTURE_KINDS:
        return 0
    sample = manifest.samples.get(arg.name)
    return TEXEL_CHANNELS[texel_format(arg.kind, arg.fmt, sample.fmt if sample else None)]


def _given(
    arg: Arg, value: Any, dims: dict[str, int], owners: dict[str, str], channels: int = 0, label: str = ""
) -> np.ndarray:
    """A given input checked as ``run`` checks one (the shared checks of :mod:`graphlab.run.values`).

    ``label`` is how errors name it: ``inputs['x']`` (the default), ``--input x=x.npy`` on the command line.
    """
    label = label or f"inputs[{arg.name!r}]"
    want = numpy_dtype(arg)
    array = np.asarray(value.to_numpy() if hasattr(value, "to_numpy") else value)
    if arg.kind in TEXTURE_KINDS:  # texels: float32, the texture's dims then its channels
        if array.dtype != np.float32 or array.ndim != arg.ndim + 1 or array.shape[-1] != channels:
            raise VerifyError(
                f"{label} is a {array.dtype} array of shape {array.shape}, but arg {arg.name!r} is a "
                f"{arg.kind} of {arg.ndim} dims and {channels} channel(s); give float32 texels of shape "
                f"({', '.join(['...'] * arg.ndim)}, {channels})"
            )
        mismatch = dims_problem(arg, array.shape[: arg.ndim], dims, owners)
        if mismatch is not None:
            raise VerifyError(f"{label} {mismatch}")
        return array
    if arg.kind != "ndarray":
        shape = arg.element_shape if arg.kind == "matrix" else ()
        problem = None
        if array.dtype.kind in "iuf" and array.shape == shape and array.size:
            problem = number_problem(arg, array.min().item(), array.max().item(), floating=array.dtype.kind == "f")
        if array.dtype.kind not in "iuf" or array.shape != shape or problem is not None:
            kind = f"{want} scalar" if arg.kind == "scalar" else f"{want} matrix of shape {shape}"
            kind = f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}"
            fix = "pass one number" if arg.kind == "scalar" else f"pass {shape} numbers"
            fix = fix if problem is None else f"{problem.got}: {problem.fix}"
            given = "holds" if label.startswith("--") else "="
            raise VerifyError(f"{label} {given} {value!r}, but it must be {kind}; {fix}")
        return array.astype(want)
    problem = array_problem(arg, array)
    if problem is not None:
        raise VerifyError(f"{label} is a {problem.got}, but the arg expects {problem.want}; {problem.fix}")
    mismatch = dims_problem(arg, array.shape[: arg.ndim], dims, owners)
    if mismatch is not None:
        raise VerifyError(f"{label} {mismatch}")
    return array


def _draw(
    arg: Arg,
    sample: Sample | None,
    dims: Mapping[str, int],
    rng: np.random.Generator,
    channels: int = 0,
    cli: bool = False,
) -> np.ndarray:
    """A random value for ``arg``: the notebook's scalar, else uniform within the recorded range.

    A texture's texels (``channels`` per texel) are uniform in [0, 1): what every exported format holds.
    """
    want = np.dtype(NUMPY_DTYPES[arg.dtype or "f32"])
    if arg.kind != "ndarray" and sample is not None and sample.value is not None:
        return np.asarray(sample.value, want)
    full = _input_shape(arg, sample, dims, channels, cli)
    if arg.kind == "ndarray" and arg.role == "output":
        return np.zeros(full, want)
    low, high = (0.0, 1.0)
    if sample is not None and sample.low is not None and sample.high is not None:
        low, high = sample.low, sample.high
    if want.kind == "f":
        return rng.uniform(low, high, full).astype(want) if high > low else np.full(full, low, want)
    return rng.integers(int(low), int(high), size=full, endpoint=True).astype(want)


def _input_shape(
    arg: Arg, sample: Sample | None, dims: Mapping[str, int], channels: int = 0, cli: bool = False
) -> tuple[int, ...]:
    """The full shape (element and texel axes included) of the input drawn for ``arg``."""
    shape: tuple[int, ...] = ()
    if arg.kind == "ndarray" or channels:
        resolved = [d if isinstance(d, int) else dims.get(d) for d in arg.shape or ()]
        if (arg.shape is not None or arg.ndim == 0) and all(d is not None for d in resolved):  # 0-d: always ()
            shape = tuple(int(d) for d in resolved if d is not None)
        elif sample is not None and sample.shape is not None:
            shape = sample.shape
        else:
            fix = (f"pass --input {arg.name}=FILE.npy, or export with --dim NAME=SIZE" if cli else
                   f"pass inputs={{{arg.name!r}: array}}, or export with values= (or dims=)")  # fmt: skip
            raise VerifyError(f"cannot size input {arg.name!r}: manifest.json gives no shape or dims for it; {fix}")
    return (*shape, *arg.element_shape, *((channels,) if channels else ()))


def _check_room(
    manifest: Manifest, args: Mapping[str, Arg], drawn: list[str], dims: Mapping[str, int], cli: bool
) -> None:
    """Refuse, before numpy is asked, inputs that cannot be drawn in this machine's free memory.

    Drawing a float input goes through float64 (numpy's generator), so its peak is counted.
    """
    sizes: dict[str, int] = {}
    for name in drawn:
        arg, sample = args[name], manifest.samples.get(name)
        if arg.kind != "ndarray" and sample is not None and sample.value is not None:
            continue
        full = _input_shape(arg, sample, dims, _texels(manifest, arg), cli)
        item = np.dtype(NUMPY_DTYPES[arg.dtype or "f32"]).itemsize
        sizes[name] = int(np.prod(full, dtype=object)) * (item + (8 if arg.role != "output" else 0))
    problem = too_big(sizes, available_bytes())
    if problem is not None:
        fix = "pass smaller --input files, or export with smaller --dim NAME=SIZE"
        if not cli:
            fix = "pass smaller inputs=, or export again with smaller dims="
        raise VerifyError(f"cannot draw the inputs to verify {manifest.folder}: they would take {problem}; {fix}")


def make_inputs(
    manifest: Manifest,
    given: Mapping[str, Any] | None = None,
    *,
    seed: int = 0,
    given_as: Mapping[str, str] | None = None,
    dims: Mapping[str, int] | None = None,
) -> dict[str, np.ndarray]:
    """Every non-temp arg's value, and the temps given: the ``given`` ones checked, the others drawn with ``seed``.

    Sizes follow :func:`graphlab.model.sizes.resolve_sizes`, as ``g.run()`` and ``load_module`` do: the
    given values set dims, then ``dims``, then the manifest's; a temp may be given (its shape counts),
    and every temp left out must be sizable, else a VerifyError before anything runs.
    ``given_as`` says how the command line gave each input (``--input x=x.npy``): errors then name
    its options instead of Python's ``inputs[...]`` and ``seed=``.
    """
    cli = given_as is not None
    every = _args(manifest)
    args = {name: arg for name, arg in every.items() if arg.role != "temp"}
    given = dict(given or {})
    labels = {n: (given_as or {}).get(n, f"--input {n}") if cli else f"inputs[{n!r}]" for n in given}
    for name in given:
        if name not in every:
            close = difflib.get_close_matches(name, list(every), 1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise VerifyError(f"{labels[name]}: the module has no such arg; {hint}its args: {', '.join(every)}")
    bound: dict[str, int] = {}
    owners: dict[str, str] = {}
    values = {
        name: _given(every[name], value, bound, owners, _texels(manifest, every[name]), labels[name])
        for name, value in given.items()
    }
    sizes = resolve_sizes(
        every.values(), bound, given=values, dims=dims, defaults=manifest.dims,
        dim_fix="pass --dim {dim}=SIZE" if cli else "pass dims={{'{dim}': SIZE}}",
        error=lambda message, arg: VerifyError(message if arg else f"{'--dim' if cli else 'dims='}: {message}"),
    )  # fmt: skip
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise VerifyError(f"{'--seed ' if cli else 'seed='}{seed!r}: give an int >= 0")
    _check_room(manifest, args, [name for name in args if name not in values], sizes.dims, cli)
    rng = np.random.default_rng(seed)
    for name, arg in args.items():
        if name not in values:
            values[name] = _draw(arg, manifest.samples.get(name), sizes.dims, rng, _texels(manifest, arg), cli)
    _check_relations(manifest, {**sizes.temps, **{name: value.shape for name, value in values.items()}})
    return values


def _check_relations(manifest: Manifest, shapes: Mapping[str, tuple[int, ...]]) -> None:
    """Refuse inputs (or temps) too short for a kernel's loop before either side runs (the C host would crash)."""
    for graph in manifest.graphs:
        broken = first_violation(graph.relations, shapes)
        if broken is not None:
            raise VerifyError(f"inputs[{broken[0].arg!r}]: graph {graph.name!r}: {broken[1]}")


# --- the two runs ------------------------------------------------------------------------------------


def _host_executable(folder: Path, cc: str | None) -> Path:
    """The built host program; rebuilt when missing or older than its sources (kept when fresh)."""
    exe = folder / "host" / "build" / EXECUTABLE
    sources = [folder / "host" / n for n in ("main.c", "npy.c", "npy.h")]
    library = [folder / "runtime" / n for n in LIBRARY_SOURCES if (folder / "runtime" / n).is_file()]
    if exe.is_file() and all(s.is_file() and s.stat().st_mtime <= exe.stat().st_mtime for s in sources + library):
        return exe
    return build_host(folder, cc=cc)


def run_host(
    folder: Path,
    inputs_dir: Path,
    out_dir: Path,
    *,
    frames: int = 1,
    cc: str | None = None,
    timeout: float = 600.0,
    events: bool = False,
    dims: Mapping[str, int] | None = None,
) -> Run:
    """Run the generated C host on ``inputs_dir/<arg>.npy``; it writes ``out_dir/<arg>.npy``.

    ``events`` asks it for its control decisions (``--events``; hosts generated for a module with
    control flow know the flag); ``dims`` sizes dims over the manifest's (``--dim``).
    """
    exe = _host_executable(folder, cc)
    command = [str(exe), "--module", str(folder / "module"), "--in", str(inputs_dir), "--out", str(out_dir),
               "--frames", str(frames), "--time", *(["--events"] if events else []),
               *(part for name, size in (dims or {}).items() for part in ("--dim", f"{name}={size}"))]  # fmt: skip
    # The generated main.c defaults TI_LIB_DIR for x64 only, but a CUDA runtime needs runtime_cuda.bc too.
    env = {"TI_LIB_DIR": str(taichi_c_api_dir() / "runtime"), **os.environ}
    start = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False, env=env)
    except subprocess.TimeoutExpired as exc:
        raise VerifyError(f"the host program ran past {timeout:.0f} s: {' '.join(command)}") from exc
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise VerifyError(
            f"the host program failed (status {done.returncode}):\n$ {' '.join(command)}\n{done.stdout}{done.stderr}"
        )
    first = re.search(r"first frame: ([0-9.]+) ms", done.stdout)
    mean = re.search(r"([0-9.]+) ms per frame", done.stdout)
    first_ms = float(first.group(1)) if first else None
    found = tuple(parse_event_lines(done.stdout))
    return Run(out_dir, seconds, first_ms, float(mean.group(1)) if mean else first_ms, found)


def _sources(folder: Path, manifest: Manifest, kernels: Any) -> tuple[dict[str, str], dict[str, Any]]:
    """The graph file texts (in manifest order) and the carried-kernels payload for the child."""
    source = manifest.source or {}
    texts: dict[str, str] = {}
    for graph in manifest.graphs:
        rel = source.get("graphs", {}).get(graph.name)
        if rel is None or not (folder / rel).is_file():
            raise VerifyError(
                f"{folder}: no graph file for {graph.name!r} under source/ (manifest.json "
                "$.source.graphs); re-export it with gl.export, which stores the sources"
            )
        texts[rel] = check_listed(manifest, rel, f"$.source.graphs[{graph.name!r}]").decode("utf-8")
    if kernels is not None:
        graphs = [loads(text, kernels=kernels, file=name) for name, text in texts.items()]
        return texts, carry_kernels(dict.fromkeys(k.fn for g in graphs for k in g.kernels)).to_dict()
    payload = _stored_kernels(folder, manifest)
    content = check_listed(manifest, payload.relative_to(folder).as_posix(), "$.source.kernels")
    try:
        return texts, json.loads(content)
    except (ValueError, RecursionError) as exc:
        raise VerifyError(f"{payload} is not readable JSON ({type(exc).__name__}); re-export the module") from None


def _stored_kernels(folder: Path, manifest: Manifest) -> Path:
    """The carried kernels the export stored; a VerifyError saying to pass ``kernels=`` when gone."""
    payload = folder / (manifest.source or {}).get("kernels", "source/kernels.json")
    if not payload.is_file():
        raise VerifyError(f"{payload} is missing; pass kernels= (the module or dict holding the kernels)")
    return payload


def run_python(
    folder: Path,
    inputs_dir: Path,
    out_dir: Path,
    *,
    frames: int = 1,
    kernels: Any = None,
    manifest: Manifest | None = None,
    timeout: float = 600.0,
    dims: Mapping[str, int] | None = None,
) -> Run:
    """Run the module's graphs with Taichi's Python frontend in a child process, on the manifest's arch.

    ``dims`` sizes the temps no input sizes, over the manifest's dims (as the C host's ``--dim``)."""
    manifest = manifest or read_manifest(folder)
    texts, payload = _sources(folder, manifest, kernels)
    request = {
        "payload": payload, "graphs": texts, "arch": manifest.arch, "threads": manifest.cpu_max_num_threads,
        "inputs_dir": str(inputs_dir), "out_dir": str(out_dir), "frames": frames,
        "textures": _texture_formats(manifest), "dims": {**manifest.dims, **(dims or {})},
    }  # fmt: skip
    start = time.perf_counter()
    answer = run_child(CHILD_ENTRY, request, timeout=timeout)
    if "fallback" in answer:
        raise ToolMissingError(
            f"ti.init(arch={manifest.arch}) fell back to {answer['fallback']} here, so the "
            f"{manifest.arch} module cannot be checked on this machine"
        )
    events = tuple(
        FrameEvent(frame, graph, ControlEvent(node, kind, value, limit))
        for frame, graph, node, kind, value, limit in answer.get("events", [])
    )
    causes = causes_from_data(answer.get("causes") or {})
    seconds = time.perf_counter() - start
    return Run(out_dir, seconds, answer["first_frame_s"] * 1e3, answer["frame_s"] * 1e3, events, causes)


def _texture_formats(manifest: Manifest) -> dict[str, str]:
    """Each texture arg's image format, so the Python run makes the textures the module's host makes."""
    out = {}
    for name, arg in _args(manifest).items():
        if arg.kind in TEXTURE_KINDS:
            sample = manifest.samples.get(name)
            out[name] = texel_format(arg.kind, arg.fmt, sample.fmt if sample else None)
    return out


def verify(
    path: str | os.PathLike[str],
    inputs: Mapping[str, Any] | None = None,
    *,
    seed: int = 0,
    frames: int = 1,
    rtol: float = 1e-5,
    kernels: Any = None,
    cc: str | None = None,
    baseline: bool | None = None,
    timeout: float = 600.0,
    dims: Mapping[str, int] | None = None,
    progress: Callable[[str, float], None] | None = None,
) -> VerifyReport:
    """Run an exported module in the C runtime and in Taichi's Python frontend; compare what they write.

    Parameters
    ----------
    path
        A folder ``gl.export`` wrote.
    inputs
        Values by arg name (numpy arrays, numbers); the other args are drawn at random with ``seed``.
        Temps may be given too (both sides start them from the value), as ``g.run()`` takes them.
    dims
        Sizes of dims by name over the manifest's ``dims`` (``{"G": 64}``): for inputs drawn at random
        and temps no input sizes (:func:`graphlab.model.sizes.resolve_sizes`, the rule ``g.run()`` follows).
    frames
        How many times each graph runs, in manifest order, before the outputs are compared.
    rtol
        The largest ``peak_rel`` (max abs difference / largest reference magnitude) taken as noise
        even where Python's second run happens to repeat its first.
    kernels
        Where the kernels live now (module, dict...), instead of the code stored at export.
    progress
        Called with a stage's text and the fraction done (0..1) as the stages begin (the widget's bar).
    baseline
        Also run the Python side a second time and report how far it differs from itself (column
        ``py vs py``, max abs): the size of differences that come from the order of float additions.
        ``None`` does so only when some output is not bit-identical, so an exact match costs one run;
        where Taichi's bits can vary (x64 with threads, GPUs) up to ``NOISE_RUNS`` times, until the
        differences are explained (a race may leave two runs alike). ``False`` never does.

    Raises
    ------
    VerifyError
        The folder lacks its sources, an input does not fit, or the host program failed.
    ManifestError
        ``manifest.json`` is malformed or names a path outside the folder, or the folder is not what
        the export sealed (a listed file changed or missing, a file of ``module/`` not listed).
    ToolMissingError, HostBuildError
        No C compiler, or this machine cannot run the module's arch.

    Returns
    -------
    VerifyReport
        Per output (every ndarray a graph writes): max abs and rel difference, elements that differ,
        Python against itself, and a ``verdict``: ``identical``, ``within run-to-run noise`` (no larger
        than Python's own difference between two runs, up to ``report.NOISE_FACTOR``, or within
        ``rtol``) or ``differs``. ``report.verdict`` sums them up (a different control path differs);
        ``passed`` is False only for ``differs``.

    Examples
    --------
    >>> import os, tempfile
    >>> g = gl.Graph("demo")
    >>> x, y = g.ndarray("x", ti.f32, ndim=1), g.ndarray("y", ti.f32, ndim=1)
    >>> g.dispatch(saxpy, g.scalar("a", ti.f32), x, y)
    'saxpy'
    >>> result = gl.export(g, os.path.join(tempfile.mkdtemp(), "demo"), arch="x64")
    >>> inputs = {"a": 2.0, "x": np.arange(4, dtype=np.float32), "y": np.zeros(4, np.float32)}
    >>> report = gl.verify(result.path, inputs, frames=3)  # y += 2 x, three times, on both sides
    >>> report.passed, report.verdict, report.inputs, report.frames
    (True, 'identical', 'given', 3)
    >>> [(out.name, out.max_abs, out.identical) for out in report.outputs]
    [('y', 0.0, True)]
    """
    folder = module_folder(path).absolute()
    manifest = read_manifest(folder)
    if isinstance(frames, bool) or not isinstance(frames, int) or frames < 1:
        raise VerifyError(f"frames={frames!r}: give a positive int")
    if isinstance(rtol, bool) or not isinstance(rtol, (int, float)) or not rtol >= 0:
        raise VerifyError(f"rtol={rtol!r}: give a tolerance >= 0 (a max rel difference, such as 1e-5)")
    # The folder must be what the export sealed before anything of it is built or run.
    stored = (manifest.source or {}).get("kernels", "source/kernels.json")
    if kernels is None:
        _stored_kernels(folder, manifest)
    check_files(manifest, missing_ok=(stored,) if kernels is not None else ())
    values = make_inputs(manifest, inputs, seed=seed, dims=dims)
    dims = dict(dims or {})
    timings: dict[str, float] = {}
    tell = progress or (lambda stage, fraction: None)
    with tempfile.TemporaryDirectory(prefix=scratch_prefix("verify")) as tmp:
        inputs_dir = Path(tmp, "inputs")
        inputs_dir.mkdir()
        for name, value in values.items():
            np.save(inputs_dir / f"{name}.npy", value)
        start = time.perf_counter()
        tell("verify: compiling the C host", 0.05)
        _host_executable(folder, cc)
        timings["build"] = time.perf_counter() - start
        tell("verify: running the module in the C runtime", 0.3)
        control = any(g.control is not None for g in manifest.graphs)
        host = run_host(folder, inputs_dir, Path(tmp, "host"), frames=frames, cc=cc, timeout=timeout, events=control,
                        dims=dims)  # fmt: skip
        timings["host"] = host.seconds

        def python(name: str) -> Run:
            run = run_python(folder, inputs_dir, Path(tmp, name), frames=frames, kernels=kernels,
                             manifest=manifest, timeout=timeout, dims=dims)  # fmt: skip
            timings[name] = run.seconds
            return run

        tell("verify: running the graph in Python", 0.6)
        reference = python("python")
        names = _compared(manifest)
        host_out = {n: np.load(host.out_dir / f"{n}.npy") for n in names}
        want = {n: np.load(reference.out_dir / f"{n}.npy") for n in names}
        # atomics and races vary only where threads race (several CPU threads, a GPU); draws everywhere
        found = {n: tuple(c for c in reference.causes.get(n, ()) if c.kind == "random" or _varies(manifest))
                 for n in names}  # fmt: skip
        causes = {n: tuple(c.text() for c in found[n]) for n in names}
        drawn = {n: any(c.kind == "random" for c in found[n]) for n in names}

        def compared(n: str, again: list[dict[str, np.ndarray]]) -> OutputDiff:
            return compare(n, host_out[n], want[n], rtol, [a[n] for a in again], causes=causes[n], random=drawn[n])

        outputs = [compared(n, []) for n in names]
        again: list[dict[str, np.ndarray]] = []
        # Python again when the host's bits differ; where Taichi's own bits vary (threads, GPU), until
        # every output passes or NOISE_RUNS runs are in: a race may leave one pair of runs alike.
        while (baseline and not again) or (
            baseline is not False and len(again) < (NOISE_RUNS if _varies(manifest) else 1)
            and not all(o.passed if again else o.identical for o in outputs)
        ):  # fmt: skip
            tell(f"verify: Python again, for its noise ({len(again) + 1})", min(0.95, 0.85 + len(again) / 50))
            run = python("python again" if not again else f"python again {len(again) + 1}")
            again.append({n: np.load(run.out_dir / f"{n}.npy") for n in names})
            outputs = [compared(n, again) for n in names]
    given = sorted(set(inputs or {}))
    described = "given" if len(given) == len(values) else f"random (seed {seed})"
    if given and len(given) < len(values):
        described += f", given: {', '.join(given)}"
    report = VerifyReport(
        folder, manifest.arch, frames, rtol, described, tuple(outputs), (), timings, host.events, reference.events
    )
    return dataclasses.replace(report, notes=tuple(_notes(manifest, report, found)))


def _varies(manifest: Manifest) -> bool:
    """Whether Taichi itself may give other bits on another run (float atomics in threads or on a GPU)."""
    return manifest.arch in NONDETERMINISTIC or (manifest.cpu_max_num_threads or 1) > 1


def _compared(manifest: Manifest) -> list[str]:
    """The ndarrays to compare: every one a graph writes (temps aside); all ndarrays if unrecorded."""
    args = _args(manifest)
    written = {name for g in manifest.graphs for name in g.writes}
    names = [n for n, a in args.items() if a.kind in ("ndarray", "rw_texture") and a.role != "temp"]
    return [n for n in names if n in written] if written else names


def _notes(manifest: Manifest, report: VerifyReport, causes: Mapping[str, tuple[Cause, ...]]) -> list[str]:
    """Why outputs differ, attributed to what the graph holds: random draws, float atomics, races."""
    if report.identical:
        return []
    notes = []
    differing = [o for o in report.outputs if not o.identical]
    random = [o.name for o in differing if o.verdict == RANDOM]
    if random:
        listed = {c: None for n in random for c in causes.get(n, ()) if c.kind == "random"}
        notes.append(RANDOM_NOTE.format(
            names=", ".join(random), causes="; ".join(c.text() for c in listed),
            reproducible="use graphlab.random (counter-based, reproducible)",
        ))  # fmt: skip
    others = [o for o in differing if o.verdict != RANDOM]
    kinds = {c.kind for o in others for c in causes.get(o.name, ())}
    if "atomic" in kinds and manifest.arch == "x64" and (manifest.cpu_max_num_threads or 1) > 1:
        notes.append(ATOMICS_NOTE.format(threads=manifest.cpu_max_num_threads))
    elif "atomic" in kinds and manifest.arch in NONDETERMINISTIC:
        notes.append(GPU_NOTE.format(arch=manifest.arch))
    by_cause: dict[Cause, list[str]] = {}
    for o in others:
        for c in causes.get(o.name, ()):
            if c.kind != "random":
                by_cause.setdefault(c, []).append(o.name)
    for cause, names in by_cause.items():
        notes.append(CAUSE_NOTE.format(names=", ".join(names), causes=cause.text()))
    unexplained = [o.name for o in others if o.causes == ()]
    if unexplained:
        notes.append(NO_CAUSE_NOTE.format(names=", ".join(unexplained)))
    noise = [o.noise for o in others if o.noise is not None]
    spreads = [o.spread for o in others if o.spread is not None and np.isfinite(o.spread)]
    if any(n != 0 for n in noise):
        found = [SPREAD_SOURCES[k] for k in sorted(kinds) if k in SPREAD_SOURCES]
        sources = " and ".join(found) or "what the graph's kernels do in parallel"
        notes.append(SPREAD_NOTE.format(spread=max(spreads, default=float("nan")), sources=sources))
    elif noise and not report.passed:
        notes.append(REPEATS_NOTE)
    by_rtol = [
        o.name for o in others if o.verdict in (NOISE, TOLERATED) and o.noise is not None and not _within_noise(o)
    ]
    if by_rtol:
        notes.append(RTOL_NOTE.format(names=", ".join(by_rtol), rtol=report.rtol))
    return notes


def _within_noise(output: OutputDiff) -> bool:
    """Whether the measured noise alone explains the output's difference (not just ``rtol``)."""
    return output.noise is not None and output.max_abs <= NOISE_FACTOR * output.noise
