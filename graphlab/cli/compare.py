"""``graphlab compare FILE --kernels MODULE --against vulkan``: where two archs first disagree on a graph.

``graphlab replay CAPTURE --graph FILE --kernels MODULE`` (and ``compare --against CAPTURE``) runs
the graph from a field capture's inputs and names where it departs from the captured run.

Runs the graph file from the same start values on this process's arch (``--arch``, x64 on one
thread by default: repeatable bits) and on ``--against`` (another arch, in a child process, or an
exported module folder, in Taichi's C runtime), and prints the first
dispatch where they differ (see :mod:`graphlab.debug.compare`). Exit 0: every buffer agrees to the
end; 1: they diverge; 2: unusable input (the file, the kernels, the values, an arch not there).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from graphlab.api.graph import load
from graphlab.cli.commands import load_kernel_module
from graphlab.core.capture_format import is_capture_folder
from graphlab.core.errors import GraphlabError
from graphlab.core.spec import NUMPY_DTYPES
from graphlab.model.sizes import dims_problem, resolve_sizes

ARCHS = ("x64", "arm64", "cuda", "vulkan", "metal", "opengl")  # graphlab.debug.compare.ARCHS; that imports Taichi


def register(sub: Any) -> None:
    """Add the ``compare`` subcommand."""
    p = sub.add_parser(
        "compare",
        help="run a graph file on two archs from the same start and name the first dispatch where they differ; "
        "exit 0 agree, 1 diverged, 2 unusable input",
    )
    p.add_argument("file")
    p.add_argument("--kernels", required=True, help="module name or .py file holding the kernels")
    p.add_argument(
        "--against",
        required=True,
        metavar="ARCH_OR_MODULE",
        help=f"the other side: an arch ({', '.join(ARCHS)}; runs in a child process), an exported module folder "
        "or a capture folder (its inputs are the start values)",
    )
    p.add_argument("--arch", default="x64", choices=ARCHS, help="this side's arch (default x64)")
    p.add_argument("--threads", type=int, default=1, help="CPU threads of an x64 side (default 1: repeatable)")
    p.add_argument("--values", metavar="NPZ", help="start values: one array per arg name (numpy .npz)")
    p.add_argument(
        "--dim", action="append", default=[], metavar="NAME=SIZE", help="a dim size, for generated values and temps"
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the generated start values")
    p.add_argument("--rtol", type=float, default=0.0, help="relative tolerance (0 with --atol 0: bit for bit)")
    p.add_argument("--atol", type=float, default=0.0, help="absolute tolerance")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(handler=run_compare)
    r = sub.add_parser(
        "replay",
        help="run a graph file on the inputs of a field capture and name where it departs from the captured run; "
        "exit 0 agree, 1 diverged, 2 unusable input",
    )
    r.add_argument("capture", metavar="CAPTURE", help="a capture folder (capture.json, inputs/, outputs/ ...)")
    r.add_argument("--graph", required=True, metavar="FILE", help="the graph file (.graph.json) the capture is of")
    r.add_argument("--kernels", required=True, help="module name or .py file holding the kernels")
    r.add_argument("--module", metavar="FOLDER", help="the exported module folder: its manifest.json must match")
    r.add_argument("--arch", default="x64", choices=ARCHS, help="this side's arch (default x64)")
    r.add_argument("--threads", type=int, default=1, help="CPU threads of an x64 side (default 1: repeatable)")
    r.add_argument("--rtol", type=float, default=0.0, help="relative tolerance (0 with --atol 0: bit for bit)")
    r.add_argument("--atol", type=float, default=0.0, help="absolute tolerance")
    r.add_argument("--json", action="store_true", help="print the result as JSON")
    r.set_defaults(handler=run_replay)


def parse_dims(items: list[str]) -> dict[str, int]:
    """``--dim NAME=SIZE`` options as a dict (``graphlab run`` too)."""
    out = {}
    for item in items:
        name, _, size = item.partition("=")
        if not name or not size.isdigit():
            raise GraphlabError(f"--dim {item}: give NAME=SIZE with a whole number, e.g. --dim n=4096")
        out[name] = int(size)
    return out


def _given(path: str | None) -> dict[str, np.ndarray]:
    if path is None:
        return {}
    try:
        with np.load(path) as npz:
            return {name: npz[name] for name in npz.files}
    except (OSError, ValueError) as exc:
        raise GraphlabError(f"--values {path}: cannot read it as a numpy .npz ({exc}); save one with np.savez") from exc


def start_values(graph: Any, given: Mapping[str, np.ndarray], dims: Mapping[str, int], seed: int) -> dict[str, Any]:
    """Run values: the given arrays, else seeded random floats / zero ints for ndarrays sized by ``--dim``.

    Dims and temps follow :func:`graphlab.model.sizes.resolve_sizes` (as ``graphlab export --dim`` and
    ``g.run()`` do): the arrays given set dims, ``--dim`` adds the others (temps sized only by a dim
    included), and a temp nothing sizes is refused here, naming the ``--dim`` to give.
    """
    unknown = sorted(set(given) - set(graph.args))
    if unknown:
        raise GraphlabError(f"--values: {', '.join(unknown)} is not an arg of graph {graph.name!r}")
    used = [arg for name, arg in graph.args.items() if graph.uses_of(name)]
    bound: dict[str, int] = {}
    owners: dict[str, str] = {}
    for name, value in given.items():
        arg = graph.args[name]
        if arg.kind == "ndarray" and isinstance(value, np.ndarray) and value.ndim >= arg.ndim:
            problem = dims_problem(arg, value.shape[: arg.ndim], bound, owners)
            if problem is not None:
                raise GraphlabError(f"--values {name}: {problem}")
    sizes = resolve_sizes(
        used, bound, given=given, dims=dims, dim_fix="give --dim {dim}=SIZE",
        error=lambda message, arg: GraphlabError(f"graph {graph.name!r}: {message}" if arg else f"--dim: {message}"),
    )  # fmt: skip
    dims = sizes.dims
    rng = np.random.default_rng(seed)
    values: dict[str, Any] = {}
    for name, arg in graph.args.items():
        if name in given:
            values[name] = given[name].item() if arg.kind == "scalar" else given[name]
            continue
        if arg.kind == "scalar":
            raise GraphlabError(f"arg {name!r} is a scalar with no value: give it in --values")
        if arg.kind != "ndarray" or arg.role == "temp":
            continue
        shape = []
        for d in arg.shape or ():
            if isinstance(d, str) and d not in dims:
                raise GraphlabError(f"arg {name!r} has shape dim {d!r}: give --dim {d}=SIZE or the array in --values")
            shape.append(dims[d] if isinstance(d, str) else d)
        if arg.shape is None and arg.ndim:  # a 0-d arg holds one element, declared shape=() or not
            raise GraphlabError(f"arg {name!r} declares no shape: give the array in --values")
        full = (*shape, *arg.element_shape)
        dtype = np.dtype(NUMPY_DTYPES[arg.dtype or "f32"])
        values[name] = rng.random(full).astype(dtype) if dtype.kind == "f" else np.zeros(full, dtype)
    return values


def given_start_values(graph: Any, values: str | None, dim_items: list[str], seed: int) -> dict[str, Any]:
    """:func:`start_values` from the options ``--values NPZ`` and ``--dim NAME=SIZE`` (``graphlab run`` too)."""
    return start_values(graph, _given(values), parse_dims(dim_items), seed)


def run_replay(args: argparse.Namespace) -> int:
    """Handler of ``graphlab replay`` (and of ``graphlab compare --against CAPTURE``)."""
    import taichi as ti  # import cost: Taichi, only when replaying (`graphlab --help` stays light)

    from graphlab.debug.capture import read_capture  # import cost: Taichi, as above

    if args.threads < 1:
        raise GraphlabError(f"--threads {args.threads}: give 1 or more")
    if not Path(args.graph).is_file():
        raise GraphlabError(f"{args.graph}: no such graph file")
    with contextlib.redirect_stdout(sys.stderr):  # Taichi's banner; stdout is the answer's
        graph = load(args.graph, kernels=load_kernel_module(args.kernels))
        capture = read_capture(args.capture, graph=graph, module=args.module)  # checked before Taichi starts
        options: dict[str, Any] = {"log_level": ti.WARN}
        if args.arch == "x64":
            options["cpu_max_num_threads"] = args.threads
        ti.init(arch=getattr(ti, args.arch), **options)
        found = graph.debug(capture.start_values()).compare(capture, rtol=args.rtol, atol=args.atol)
    if args.json:
        print(json.dumps({"agree": found is None, "divergence": None if found is None else found.to_dict()}))
    elif found is None:
        tol = "bit for bit" if args.rtol == 0 and args.atol == 0 else f"within rtol {args.rtol:g}, atol {args.atol:g}"
        print(f"{graph.name}: {args.arch} and the {capture.arch} agree on every decision and buffer ({tol})")
    else:
        print(f"{graph.name}: {found}")
    return 0 if found is None else 1


def run_compare(args: argparse.Namespace) -> int:
    """Handler of ``graphlab compare``."""
    if is_capture_folder(args.against):  # the capture holds the start values and the other side's answers
        if args.values is not None or args.dim:
            message = f"--against {args.against} is a capture: it holds the start values; drop --values/--dim"
            raise GraphlabError(message)
        args.capture, args.graph, args.module = args.against, args.file, None
        return run_replay(args)
    import taichi as ti  # import cost: Taichi, only when comparing (`graphlab --help` stays light)

    from graphlab.debug.compare import check_options  # import cost: Taichi, as above

    check_options("", [], args.against, args.rtol, args.atol)
    if args.threads < 1:
        raise GraphlabError(f"--threads {args.threads}: give 1 or more")
    if not Path(args.file).is_file():
        raise GraphlabError(f"{args.file}: no such graph file")
    dims = parse_dims(args.dim)
    given = _given(args.values)
    with contextlib.redirect_stdout(sys.stderr):  # Taichi's banner; stdout is the answer's
        module = load_kernel_module(args.kernels)
        graph = load(args.file, kernels=module)
        kinds = [arg.kind for arg in graph.args.values()]  # a texture is refused here, before any value is made
        check_options(graph.name, kinds, args.against, args.rtol, args.atol)
        values = start_values(graph, given, dims, args.seed)
        named = {k: v for k, v in dims.items() if k not in graph.args}  # sizes the temps no value sizes
        options: dict[str, Any] = {"log_level": ti.WARN}
        if args.arch == "x64":
            options["cpu_max_num_threads"] = args.threads
        ti.init(arch=getattr(ti, args.arch), **options)
        found = graph.debug(values, **named).compare(args.against, rtol=args.rtol, atol=args.atol)
    if args.json:
        print(json.dumps({"agree": found is None, "divergence": None if found is None else found.to_dict()}))
    elif found is None:
        tol = "bit for bit" if args.rtol == 0 and args.atol == 0 else f"within rtol {args.rtol:g}, atol {args.atol:g}"
        print(f"{graph.name}: {args.arch} and {args.against} agree on every buffer to the end ({tol})")
    else:
        print(f"{graph.name}: {found}")
    return 0 if found is None else 1
