"""Rules on names that must survive export: C identifiers, reserved words, clashes after mangling.

Without an export target these are warnings (the graph runs fine in Python); with ``target=`` they
are errors, since the exported C program and its file names would break.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from graphlab.analysis.check.context import CheckContext
from graphlab.core.diagnostics import Diagnostic, Severity

if TYPE_CHECKING:
    from graphlab.model.graph import Graph

C_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# fmt: off
#: C99/C11 keywords plus names the generated host program and Taichi's C API reserve.
RESERVED = frozenset((
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern",
    "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed",
    "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "_Bool",
    "_Complex", "_Imaginary", "_Alignas", "_Alignof", "_Atomic", "_Generic", "_Noreturn", "_Static_assert",
    "_Thread_local", "main", "argc", "argv", "runtime", "module", "graph", "NULL",
))
# fmt: on


def export_name(name: str) -> str:
    """How export spells a name in C and in file names (case-folded for case-insensitive file systems)."""
    return name.lower()


def _rename_hint(what: str, name: str) -> str:
    if what == "graph":
        return f"give the graph another name, e.g. gl.Graph({name + '_'!r})"
    return f"rename it, e.g. g.rename_arg({name!r}, {name + '_'!r})"


def validate_export_names(graph: Graph, ctx: CheckContext) -> Iterator[Diagnostic]:
    """GL016 and GL017: names that are not C identifiers, reserved words, or clash once mangled."""
    severity: Severity = "error" if ctx.target else "warning"
    names = [("graph", graph.name, None), *[("arg", name, name) for name in graph.args]]
    seen: dict[str, str] = {}
    for what, name, arg in names:
        if not C_IDENTIFIER.match(name) or name.startswith("__"):
            yield Diagnostic(
                "GL016",
                severity,
                f"{what} name {name!r} is not a C identifier",
                None,
                arg,
                "use letters, digits and '_', not starting with a digit or '__'",
            )
        elif name in RESERVED or name.startswith(("ti_", "TI_")):
            yield Diagnostic(
                "GL016",
                severity,
                f"{what} name {name!r} is reserved in the exported C program",
                None,
                arg,
                _rename_hint(what, name),
            )
        if what == "arg":
            mangled = export_name(name)
            if mangled in seen:
                yield Diagnostic(
                    "GL017",
                    severity,
                    f"args {seen[mangled]!r} and {name!r} both export as "
                    f"{mangled!r} (file names are case-insensitive on some systems)",
                    None,
                    arg,
                    _rename_hint("arg", name),
                )
            seen[mangled] = name


RULE_FUNCTIONS = (validate_export_names,)
