"""Subcommands of the ``graphlab`` CLI, one function each."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Iterator
from typing import Any


def register(sub: Any) -> None:
    """Add every subcommand to the parser."""
    check = sub.add_parser("check", help="validate a graph file; exit 0 clean, 1 errors, 2 unusable input")
    check.add_argument("file")
    check.add_argument("--kernels", required=True, help="module name or .py file holding the kernels")
    check.add_argument("--target", help="also check what this export target can take (vulkan, x64...)")
    check.add_argument("--json", action="store_true", help="print diagnostics as JSON")
    check.set_defaults(handler=run_check)

    render = sub.add_parser("render", help="draw a graph file with Graphviz")
    render.add_argument("file")
    render.add_argument("--kernels", required=True, help="module name or .py file holding the kernels")
    render.add_argument("-o", "--output", required=True, help="out.svg, out.png or out.dot")
    render.add_argument("--view", choices=["program", "dataflow", "unrolled"], default="program")
    render.set_defaults(handler=run_render)

    codes = sub.add_parser("codes", help="list the diagnostic codes")
    codes.set_defaults(handler=run_codes)

    export = sub.add_parser("export", help="export graph files as one AOT module with a manifest and a C host")
    export.add_argument("files", nargs="+", metavar="FILE", help="graph files; several share one module")
    export.add_argument("--kernels", required=True, help="module name or .py file holding the kernels")
    export.add_argument("--arch", default="vulkan", choices=["vulkan", "x64", "cpu", "cuda"])
    export.add_argument("-o", "--output", required=True, help="the module folder to write")
    export.add_argument("--dim", action="append", default=[], metavar="NAME=SIZE", help="a default dim size")
    export.add_argument("--overwrite", action="store_true", help="replace an existing module folder")
    export.add_argument("--cpu-threads", type=int, help="x64: threads compiled into the module (1: repeatable)")
    export.add_argument("--no-tcm", action="store_true", help="do not write module.tcm")
    export.set_defaults(handler=run_export)

    verify = sub.add_parser(
        "verify", help="run an exported module in the C runtime and in Python, compare; exit 0 passed, 1 differences"
    )
    verify.add_argument("folder")
    verify.add_argument("--frames", type=int, default=1)
    verify.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    verify.add_argument("--rtol", type=float, default=1e-5)
    verify.add_argument("--input", action="append", default=[], metavar="ARG=FILE.npy", help="a given input")
    verify.add_argument("--kernels", help="module or .py file holding the kernels (default: the stored ones)")
    verify.set_defaults(handler=run_verify)


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """Send what Taichi prints (its banner, from C++ too) to stderr, keeping stdout for our output."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def _load(args: argparse.Namespace) -> Any:
    return _load_files([args.file], args.kernels)[0]


def _load_files(files: list[str], kernels: str) -> list[Any]:
    with _stdout_to_stderr():
        import taichi as ti

        from graphlab.cli import load_kernel_module
        from graphlab.graphfile import load

        if not _taichi_ready():
            ti.init(arch=ti.cpu, log_level=ti.WARN)
        module = load_kernel_module(kernels)
        return [load(file, kernels=module) for file in files]


def _taichi_ready() -> bool:
    from taichi.lang import impl

    return impl.get_runtime().prog is not None


def run_check(args: argparse.Namespace) -> int:
    """Print diagnostics; 1 when any is an error."""
    graph = _load(args)
    with _stdout_to_stderr():
        diagnostics = graph.validate(target=args.target)
    if args.json:
        json.dump([d.to_dict() for d in diagnostics], sys.stdout, indent=2)
        print()
    elif diagnostics:
        for diagnostic in diagnostics:
            print(diagnostic)
    else:
        print(f"{args.file}: graph {graph.name!r} is clean ({graph.step_count()} dispatches)")
    return 1 if any(d.severity == "error" for d in diagnostics) else 0


def run_render(args: argparse.Namespace) -> int:
    """Write the drawing in the format the output suffix names."""
    from graphlab.render import write

    graph = _load(args)
    write(graph, args.output, view=args.view)
    print(f"wrote {args.output}")
    return 0


def run_codes(args: argparse.Namespace) -> int:
    """Print the table of diagnostic codes."""
    from graphlab.check import rule_table

    print(rule_table())
    return 0


def _pairs(items: list[str], option: str) -> dict[str, str]:
    """``NAME=VALUE`` options as a dict; a malformed one names the option and the form."""
    from graphlab.errors import GraphlabError

    pairs = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise GraphlabError(f"{option} {item!r}: expected NAME=VALUE")
        pairs[name] = value
    return pairs


def run_export(args: argparse.Namespace) -> int:
    """Export the graph files as one module folder; print what was written."""
    from graphlab.errors import GraphlabError
    from graphlab.export.exporter import export

    dims = {}
    for name, value in _pairs(args.dim, "--dim").items():
        if not value.isdigit():
            raise GraphlabError(f"--dim {name}={value}: a dim size is a non-negative integer")
        dims[name] = int(value)
    graphs = _load_files(args.files, args.kernels)
    with _stdout_to_stderr():
        result = export(
            graphs,
            args.output,
            args.arch,
            dims=dims,
            overwrite=args.overwrite,
            cpu_threads=args.cpu_threads,
            tcm=not args.no_tcm,
        )
    print(result)
    return 0


def run_verify(args: argparse.Namespace) -> int:
    """Print the verification table; 1 when an output differs beyond --rtol."""
    import numpy as np

    from graphlab.errors import GraphlabError
    from graphlab.export.verify import verify

    inputs = {}
    for name, path in _pairs(args.input, "--input").items():
        try:
            inputs[name] = np.load(path)
        except (OSError, ValueError) as exc:
            raise GraphlabError(f"--input {name}={path}: cannot read it as a .npy file ({exc})") from exc
    kernels = None
    if args.kernels:
        with _stdout_to_stderr():
            from graphlab.cli import load_kernel_module

            kernels = load_kernel_module(args.kernels)
    report = verify(args.folder, inputs, frames=args.frames, seed=args.seed, rtol=args.rtol, kernels=kernels)
    print(report)
    return 0 if report.passed else 1
