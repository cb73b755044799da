"""Rules on names that must survive export: C identifiers, reserved words, clashes after mangling."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from graphlab.check.context import CheckContext
from graphlab.diagnostics import Diagnostic

if TYPE_CHECKING:
    from graphlab.graph import Graph

C_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: C99/C11 keywords plus names the generated host program and Taichi's C API reserve.
RESERVED = frozenset(
    [
        "auto",
        "break",
        "case",
        "char",
        "const",
        "continue",
        "default",
        "do",
        "double",
        "else",
        "enum",
        "extern",
        "float",
        "for",
        "goto",
        "if",
        "inline",
        "int",
        "long",
        "register",
        "restrict",
        "return",
        "short",
        "signed",
        "sizeof",
        "static",
        "struct",
        "switch",
        "typedef",
        "union",
        "unsigned",
        "void",
        "volatile",
        "while",
        "_Bool",
        "_Complex",
        "_Imaginary",
        "_Alignas",
        "_Alignof",
        "_Atomic",
        "_Generic",
        "_Noreturn",
        "_Static_assert",
        "_Thread_local",
        "main",
        "argc",
        "argv",
        "runtime",
        "module",
        "graph",
        "NULL",
    ]
)


def export_name(name: str) -> str:
    """How export spells a name in C and in file names (case-folded for case-insensitive file systems)."""
    return name.lower()


def validate_export_names(graph: Graph, ctx: CheckContext) -> Iterator[Diagnostic]:
    """GL016 and GL017: names that are not C identifiers, reserved words, or clash once mangled."""
    names = [("graph", graph.name, None), *[("arg", name, name) for name in graph.args]]
    seen: dict[str, str] = {}
    for what, name, arg in names:
        if not C_IDENTIFIER.match(name) or name.startswith("__"):
            yield Diagnostic(
                "GL016",
                "error",
                f"{what} name {name!r} is not a C identifier",
                None,
                arg,
                "use letters, digits and '_', not starting with a digit or '__'",
            )
        elif name in RESERVED or name.startswith(("ti_", "TI_")):
            yield Diagnostic(
                "GL016",
                "error",
                f"{what} name {name!r} is reserved in the exported C program",
                None,
                arg,
                f"rename it, e.g. g.rename_arg({name!r}, {name + '_'!r})",
            )
        if what == "arg":
            mangled = export_name(name)
            if mangled in seen:
                yield Diagnostic(
                    "GL017",
                    "error",
                    f"args {seen[mangled]!r} and {name!r} both export as "
                    f"{mangled!r} (file names are case-insensitive on some systems)",
                    None,
                    arg,
                    f"rename one of them, e.g. g.rename_arg({name!r}, {name + '_2'!r})",
                )
            seen[mangled] = name


RULES = (validate_export_names,)
