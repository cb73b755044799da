"""The ``graphlab`` command line: ``graphlab --version``, ``graphlab check``, ``graphlab render``...

Subcommands live in their own small functions; each returns an exit code (0 fine, 1 problems found,
2 unusable input) and prints errors without a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from graphlab._version import __version__
from graphlab.cli import commands as cli_commands
from graphlab.cli import compare as cli_compare
from graphlab.cli import run as cli_run
from graphlab.core.errors import GraphlabError


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = argparse.ArgumentParser(
        prog="graphlab", description="Assemble, check, debug and export Taichi compute graphs."
    )
    parser.add_argument("--version", action="version", version=f"graphlab {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    cli_commands.register(sub)
    cli_compare.register(sub)
    cli_run.register(sub)
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
