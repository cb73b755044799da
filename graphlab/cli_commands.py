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
    with _stdout_to_stderr():
        import taichi as ti

        from graphlab.cli import load_kernel_module
        from graphlab.graphfile import load

        if not _taichi_ready():
            ti.init(arch=ti.cpu, log_level=ti.WARN)
        return load(args.file, kernels=load_kernel_module(args.kernels))


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
