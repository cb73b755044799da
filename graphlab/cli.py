"""The ``graphlab`` command line: ``graphlab --version``, ``graphlab check``, ``graphlab render``...

Subcommands live in their own small functions; each returns an exit code (0 fine, 1 problems found,
2 unusable input) and prints errors without a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from graphlab._version import __version__
from graphlab.errors import GraphlabError


def load_kernel_module(spec: str) -> ModuleType:
    """Import the module that holds the kernels: a dotted module name or a path to a ``.py`` file."""
    path = Path(spec)
    if path.suffix == ".py":
        if not path.is_file():
            raise GraphlabError(f"--kernels {spec}: no such file")
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


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = argparse.ArgumentParser(
        prog="graphlab", description="Assemble, check, debug and export Taichi compute graphs."
    )
    parser.add_argument("--version", action="version", version=f"graphlab {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    from graphlab import cli_commands

    cli_commands.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``graphlab`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 0
    try:
        return int(args.handler(args))
    except GraphlabError as exc:
        print(f"graphlab {args.command}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
