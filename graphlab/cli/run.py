"""``graphlab run FILE --kernels MODULE --bounds check``: run a graph file once, its indices checked first.

The command-line side of ``g.run(..., bounds="check")`` (:mod:`graphlab.run.boundscheck`): start values
from ``--values`` (a numpy ``.npz``, one array per arg) or generated from ``--dim`` sizes as
``graphlab compare`` makes them, then one run on x64. With ``--bounds check`` the graph first runs
in a child under Taichi's bounds checks; ``--bounds trust`` (the default, as for ``g.run``) runs it
as Taichi does. Exit 0: it ran; 1: an index out of bounds (the dispatch, arg and index are
printed); 2: unusable input. ``-o out.npz`` saves the numpy arrays after the run.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import Any

import numpy as np

from graphlab.api.graph import load
from graphlab.cli.commands import load_kernel_module
from graphlab.cli.compare import given_start_values, parse_dims
from graphlab.core.errors import GraphlabError, OutOfBoundsError


def register(sub: Any) -> None:
    """Add the ``run`` subcommand."""
    p = sub.add_parser(
        "run",
        help="run a graph file once on x64 (with --bounds check: first under Taichi's bounds checks, in a child); "
        "exit 0 ran, 1 an index out of bounds, 2 unusable input",
    )
    p.add_argument("file")
    p.add_argument("--kernels", required=True, help="module name or .py file holding the kernels")
    p.add_argument(
        "--bounds",
        choices=["check", "trust"],
        default="trust",
        help="check: run once first in a child under Taichi's bounds checks; trust: run as Taichi does (default)",
    )
    p.add_argument("--values", metavar="NPZ", help="start values: one array per arg name (numpy .npz)")
    p.add_argument(
        "--dim", action="append", default=[], metavar="NAME=SIZE", help="a dim size, for generated values and temps"
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the generated start values")
    p.add_argument("-o", "--output", metavar="NPZ", help="save every ndarray after the run (numpy .npz)")
    p.set_defaults(handler=run_run)


def run_run(args: argparse.Namespace) -> int:
    """Handler of ``graphlab run``."""
    import taichi as ti  # import cost: Taichi, only when running (`graphlab --help` stays light)

    if not Path(args.file).is_file():
        raise GraphlabError(f"{args.file}: no such graph file")
    if args.output is not None and not Path(args.output).resolve().parent.is_dir():
        raise GraphlabError(f"-o {args.output}: its folder does not exist; create it or pick another path")
    with contextlib.redirect_stdout(sys.stderr):  # Taichi's banner; stdout is the answer's
        module = load_kernel_module(args.kernels)
        graph = load(args.file, kernels=module)
        values = given_start_values(graph, args.values, args.dim, args.seed)
        named = {k: v for k, v in parse_dims(args.dim).items() if k not in graph.args}  # sizes the temps
        ti.init(arch=ti.x64, log_level=ti.WARN)
        try:
            graph.run(values, bounds=args.bounds, **named)
        except OutOfBoundsError as exc:
            print(f"graphlab run: {exc}", file=sys.stderr)
            return 1
    if args.output is not None:
        arrays = {k: v for k, v in values.items() if isinstance(v, np.ndarray)}
        np.savez(args.output, **arrays)  # type: ignore[arg-type]  # numpy stubs: kwds typed as bool
    checked = "indices checked by Taichi first" if args.bounds == "check" else "indices not checked"
    print(f"{args.file}: graph {graph.name!r} ran once on x64 ({checked})")
    return 0
