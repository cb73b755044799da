"""Subcommands of the ``graphlab`` CLI, one function each."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from graphlab.analysis.check import rule_table, validate
from graphlab.analysis.check.rules_targets import TARGETS
from graphlab.analysis.render import write
from graphlab.core.errors import GraphlabError
from graphlab.core.names import check_dim_size, name_problem, shown
from graphlab.deploy.exporter import export
from graphlab.deploy.manifest import read_manifest
from graphlab.model.graphfile import load

#: What ``graphlab render -o`` can write (graphlab.analysis.render.write), by suffix.
DRAWING_SUFFIXES = (".svg", ".png", ".pdf", ".dot", ".gv")


def register(sub: Any) -> None:
    """Add every subcommand to the parser."""
    check = sub.add_parser("check", help="validate a graph file; exit 0 clean, 1 errors, 2 unusable input")
    check.add_argument("file")
    check.add_argument("--kernels", required=True, help="module name or .py file holding the kernels")
    check.add_argument("--target", choices=TARGETS, help="also check what this export target can take")
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
    export.add_argument(
        "--debug", action="store_true", help="also export a per-dispatch debug variant (for compare against the folder)"
    )
    export.set_defaults(handler=run_export)

    verify = sub.add_parser(
        "verify",
        help="run an exported module in the C runtime and in Python, compare; exit 0 identical, within "
        "run-to-run noise, depending on ti.random or within rtol, 1 differs",
    )
    verify.add_argument("folder")
    verify.add_argument("--frames", type=int, default=1)
    verify.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    verify.add_argument("--rtol", type=float, default=1e-5, help="max rel difference also taken as noise")
    verify.add_argument("--input", action="append", default=[], metavar="ARG=FILE.npy", help="a given input")
    verify.add_argument("--kernels", help="module or .py file holding the kernels (default: the stored ones)")
    dim_help = "a dim size over the manifest's (temps, random inputs)"
    verify.add_argument("--dim", action="append", default=[], metavar="NAME=SIZE", help=dim_help)
    verify.set_defaults(handler=run_verify)


def load_kernel_module(spec: str) -> ModuleType:
    """Import the module that holds the kernels: a dotted module name or a path to a ``.py`` file."""
    path = Path(spec)
    if path.suffix == ".py":
        if not path.is_file():
            raise GraphlabError(f"--kernels {spec}: no such file")
        loaded = sys.modules.get(path.stem)
        if loaded is not None and Path(getattr(loaded, "__file__", "") or "").resolve() == path.resolve():
            return loaded  # already imported (main() called in-process): its kernels stay the same objects
        module_spec = importlib.util.spec_from_file_location(path.stem, path)
        if module_spec is None or module_spec.loader is None:
            raise GraphlabError(f"--kernels {spec}: cannot import this file")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[path.stem] = module
        sys.path.insert(0, str(path.parent.resolve()))
        module_spec.loader.exec_module(module)
        return module
    here = str(Path.cwd())
    if here not in sys.path:  # the console script's path starts at its bin folder; `python -m` starts here
        sys.path.insert(0, here)
    try:
        return importlib.import_module(spec)
    except ImportError as exc:
        raise GraphlabError(f"--kernels {spec}: cannot import it ({exc}); give a module name or a .py path") from exc


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
        import taichi as ti  # import cost: Taichi

        from graphlab.bridge.runtime import runtime_ready  # import cost: Taichi

        if not runtime_ready():
            ti.init(arch=ti.cpu, log_level=ti.WARN)
        module = load_kernel_module(kernels)
        return [load(file, kernels=module) for file in files]


def run_check(args: argparse.Namespace) -> int:
    """Print diagnostics; 1 when any is an error."""
    graph = _load(args)
    with _stdout_to_stderr():
        diagnostics = validate(graph, target=args.target)
    if args.json:
        json.dump([d.to_dict() for d in diagnostics], sys.stdout, indent=2)
        print()
    elif diagnostics:
        for diagnostic in diagnostics:
            print(diagnostic)
    else:
        size = "control flow" if graph.has_control_flow else f"{graph.step_count()} dispatches"
        print(f"{args.file}: graph {graph.name!r} is clean ({size})")
    return 1 if any(d.severity == "error" for d in diagnostics) else 0


def run_render(args: argparse.Namespace) -> int:
    """Write the drawing in the format the output suffix names; an unwritable -o is exit 2, one line."""
    if Path(args.output).suffix.lower() not in DRAWING_SUFFIXES:
        raise GraphlabError(f"-o {args.output}: use a .svg, .png, .pdf or .dot file name (the suffix picks the format)")
    _check_output_folder(args.output)  # before loading and drawing, which can take a while
    graph = _load(args)
    try:
        write(graph, args.output, view=args.view)
    except OSError as exc:
        raise _cannot_write(args.output, exc) from exc
    print(f"wrote {args.output}")
    return 0


def _check_output_folder(output: str) -> None:
    """Refuse an output path whose folder is missing, not a folder, or not writable (GraphlabError)."""
    target = Path(output)
    folder = target.parent
    try:
        is_folder, folder_ok, folder_exists = target.is_dir(), folder.is_dir(), folder.exists()
    except OSError as exc:  # a name too long, a loop of links: what stat says is the reason
        raise _cannot_write(output, exc) from exc
    if is_folder:
        raise GraphlabError(f"-o {output}: is a folder; give a file name such as {target / 'graph.svg'}")
    if not folder_ok:
        what = "is not a folder" if folder_exists else "does not exist"
        raise GraphlabError(f"-o {output}: cannot write it: {folder} {what}; create the folder or choose another path")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise GraphlabError(f"-o {output}: cannot write it: folder {folder} is not writable; choose another path")


def _cannot_write(output: str, exc: OSError) -> Exception:
    reason = exc.strerror or (str(exc).splitlines() or [type(exc).__name__])[0]
    return GraphlabError(f"-o {output}: cannot write it ({reason}); choose a path in a writable folder")


def run_codes(args: argparse.Namespace) -> int:
    """Print the table of diagnostic codes."""
    print(rule_table())
    return 0


def _pairs(items: list[str], option: str) -> dict[str, str]:
    """``NAME=VALUE`` options as a dict; a malformed one names the option and the form."""
    pairs = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise GraphlabError(f"{option} {item!r}: expected NAME=VALUE")
        pairs[name] = value
    return pairs


def _dims(items: list[str]) -> dict[str, int]:
    """``--dim NAME=SIZE`` options, checked before anything is loaded or written (exit 2 when bad)."""
    dims: dict[str, int] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise GraphlabError(f"--dim {shown(item)}: expected NAME=SIZE, e.g. --dim n=8192")
        problem = name_problem(name)
        if problem is not None:
            raise GraphlabError(
                f"--dim {shown(item)}: {shown(name)} is not a dim name ({problem}); "
                "use ASCII letters, digits and '_', e.g. --dim n=8192"
            )
        if not (value.isascii() and value.isdigit()):
            raise GraphlabError(f"--dim {shown(item)}: the size {shown(value)} is not a non-negative integer")
        number = int(value) if len(value) <= 20 else value  # int() refuses 4,300+ digits; the check says why
        dims[name] = check_dim_size(number, f"--dim {name}", error=GraphlabError)
    return dims


def run_export(args: argparse.Namespace) -> int:
    """Export the graph files as one module folder; print what was written."""
    dims = _dims(args.dim)
    if args.cpu_threads is not None and args.cpu_threads < 1:
        raise GraphlabError(f"--cpu-threads {args.cpu_threads}: give a positive int, or leave it out for every core")
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
            debug=args.debug,
        )
    print(result)
    return 0


def _check_verify_options(args: argparse.Namespace) -> None:
    """``--frames``, ``--seed`` and ``--rtol`` in range, before anything is built or run (exit 2 when not)."""
    if args.frames < 1:
        raise GraphlabError(f"--frames {args.frames}: give a positive int (how many times each graph runs)")
    if args.seed < 0:
        raise GraphlabError(f"--seed {args.seed}: give an int >= 0")
    if not args.rtol >= 0:  # argparse's float() takes nan and -1 as well
        raise GraphlabError(f"--rtol {args.rtol}: give a tolerance >= 0 (a max rel difference, such as 1e-5)")


def run_verify(args: argparse.Namespace) -> int:
    """Print the verification table; 0 identical or within run-to-run noise, 1 when an output differs."""
    from graphlab.deploy.verify import make_inputs, verify  # import cost: Taichi

    _check_verify_options(args)
    inputs = {}
    for name, path in _pairs(args.input, "--input").items():
        try:
            inputs[name] = np.load(path)
        except (OSError, ValueError) as exc:
            raise GraphlabError(f"--input {name}={path}: cannot read it as a .npy file ({exc})") from exc
    given_as = {name: f"--input {name}={path}" for name, path in _pairs(args.input, "--input").items()}
    dims = _dims(args.dim)
    manifest = read_manifest(Path(args.folder))
    make_inputs(manifest, inputs, seed=args.seed, given_as=given_as, dims=dims)  # errors name the options
    kernels = None
    if args.kernels:
        with _stdout_to_stderr():
            kernels = load_kernel_module(args.kernels)
    with _stdout_to_stderr():  # Taichi's banner, when the given kernels start a runtime
        report = verify(
            args.folder, inputs, frames=args.frames, seed=args.seed, rtol=args.rtol, kernels=kernels, dims=dims
        )
    print(report)
    return 0 if report.passed else 1
