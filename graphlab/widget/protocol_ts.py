"""Write the widget's TypeScript wire types from their one declaration, :mod:`graphlab.widget.protocol`.

The front-end (``extension/src``) imports its trait and message types from ``protocol.gen.ts``,
which this module writes; a test fails when the committed file is not what it writes, so a change
on one side without regenerating cannot pass. Regenerate after editing ``protocol.py``::

    python -m graphlab.widget.protocol_ts --write      # or: ... > extension/src/wire/protocol.gen.ts

It reads ``protocol.py``'s source (so aliases keep their names and docstrings become doc comments)
and writes, in ``__all__`` order, an ``export interface`` for each ``TypedDict`` and an ``export
type`` for each alias; a name imported from the model (``ArgKind`` from :mod:`graphlab.core.spec`) is
written from its ``Literal`` values. Types map as JSON carries them: ``int``/``float`` to
``number``, ``str`` to ``string``, ``bool`` to ``boolean``, ``None`` to ``null``, ``list[T]`` to
``T[]``, ``dict[str, T]`` to ``Record<string, T>``, ``Literal[...]`` to a union of literals,
``NotRequired`` to an optional field, and ``bytes`` (a binary trait) to ``DataView | null``. The
output is laid out as prettier lays it out at print width 120, so formatting the front-end leaves it
unchanged. Anything else in ``protocol.py`` is refused with a :class:`ProtocolError` naming it.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import io
import json
import os
import re
import sys
import tempfile
import tokenize
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from graphlab.core.errors import GraphlabError
from graphlab.widget import protocol

#: Where the front-end imports the generated types from (in a checkout of graphlab).
GENERATED = Path(__file__).resolve().parents[2] / "extension" / "src" / "wire" / "protocol.gen.ts"
#: How to regenerate it, as the header of the file says.
COMMAND = "python -m graphlab.widget.protocol_ts --write"
#: prettier's ``printWidth`` in extension/.prettierrc.json.
PRINT_WIDTH = 120

_SCALARS = {"int": "number", "float": "number", "str": "string", "bool": "boolean", "bytes": "DataView | null"}
_SECTION_WIDTH = 104


class ProtocolError(GraphlabError, TypeError):
    """``protocol.py`` declares something that has no TypeScript form here (the message names it)."""


def generate_protocol() -> str:
    """The text of ``protocol.gen.ts`` for :mod:`graphlab.widget.protocol` as it is now."""
    return generate(inspect.getsource(protocol), vars(protocol), origin="graphlab/widget/protocol.py")


def generate(source: str, namespace: Mapping[str, Any], *, origin: str) -> str:
    """The TypeScript declarations of the wire types in ``source`` (a module like ``protocol.py``).

    ``namespace`` is the module's globals (for ``__all__`` and the values of imported aliases);
    ``origin`` names the module in the header and in errors.

    >>> src = '''
    ... class Reply(TypedDict):
    ...     \"\"\"An answer.\"\"\"
    ...     ok: bool
    ...     error: NotRequired[str | None]
    ... '''
    >>> print(generate(src, {"__all__": ["Reply"]}, origin="demo.py"), end="")  # doctest: +ELLIPSIS
    /**
     * Generated from demo.py by `python -m graphlab.widget.protocol_ts --write`; do not edit.
    ...
    /** An answer. */
    export interface Reply {
      ok: boolean;
      error?: string | null;
    }
    """
    tree = ast.parse(source)
    exported = namespace.get("__all__")
    if not isinstance(exported, (list, tuple)) or not all(isinstance(n, str) for n in exported):
        raise ProtocolError(f"{origin}: __all__: it is missing or not a list of names; list the wire types there")
    writer = _Writer(origin, _definitions(tree), set(exported), namespace)
    sections = _sections(source, tree)
    out = [_header(origin, ast.get_docstring(tree) or "")]
    section = None
    for name in exported:
        if sections.get(name, section) != section:
            section = sections[name]
            out.append(f"// --- {section} ".ljust(_SECTION_WIDTH, "-"))
        out.append(writer.declaration(name))
    return "\n\n".join(out) + "\n"


# --- reading protocol.py ---------------------------------------------------------------------------------


def _definitions(tree: ast.Module) -> dict[str, tuple[ast.stmt, str]]:
    """Module-level classes, assignments and imports by name, each with the docstring after it."""
    found: dict[str, tuple[ast.stmt, str]] = {}
    body = tree.body
    for i, stmt in enumerate(body):
        after = body[i + 1] if i + 1 < len(body) else None
        doc = _string(after) or ""
        if isinstance(stmt, ast.ClassDef):
            found[stmt.name] = (stmt, ast.get_docstring(stmt) or "")
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            found[stmt.targets[0].id] = (stmt, doc)
        elif isinstance(stmt, ast.ImportFrom):
            for alias in stmt.names:
                found[alias.asname or alias.name] = (stmt, "")
    return found


def _string(stmt: ast.stmt | None) -> str | None:
    """The text of a bare string statement (an attribute docstring), cleaned like a docstring."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
        return inspect.cleandoc(stmt.value.value)
    return None


def _sections(source: str, tree: ast.Module) -> dict[str, str]:
    """Name -> the ``# comment`` above it in ``__all__`` (the generated file's section titles)."""
    lines: tuple[int, int] | None = None
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in stmt.targets):
            lines = (stmt.lineno, stmt.end_lineno or stmt.lineno)
    if lines is None:
        return {}
    title = ""
    out: dict[str, str] = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if not lines[0] <= token.start[0] <= lines[1]:
            continue
        if token.type == tokenize.COMMENT:
            title = token.string.lstrip("#").strip()
        elif token.type == tokenize.STRING and title:
            out[ast.literal_eval(token.string)] = title
    return out


def _header(origin: str, doc: str) -> str:
    lines = [f"Generated from {origin} by `{COMMAND}`; do not edit.", "", *_plain(doc).splitlines()]
    return _comment(lines, "")


def _plain(doc: str) -> str:
    """reStructuredText as a TypeScript comment reads it: ``code`` and :role:`x` as `x`."""
    doc = re.sub(r":\w+:`~?([^`]+)`", r"`\1`", doc)
    return doc.replace("``", "`").replace("::\n", ":\n")


def _comment(lines: Sequence[str], indent: str) -> str:
    """A JSDoc block, on one line when the text is one line."""
    if len(lines) == 1:
        return f"{indent}/** {lines[0]} */"
    body = [f"{indent} * {line}".rstrip() for line in lines]
    return "\n".join([f"{indent}/**", *body, f"{indent} */"])


# --- writing TypeScript ----------------------------------------------------------------------------------


class _Writer:
    def __init__(
        self, origin: str, defs: dict[str, tuple[ast.stmt, str]], exported: set[str], namespace: Mapping[str, Any]
    ) -> None:
        self.origin = origin
        self.defs = defs
        self.exported = exported
        self.namespace = namespace

    def fail(self, where: str, problem: str) -> ProtocolError:
        return ProtocolError(f"{self.origin}: {where}: {problem}")

    def declaration(self, name: str) -> str:
        if name not in self.defs:
            raise self.fail(name, "it is in __all__ but not defined or imported there")
        stmt, doc = self.defs[name]
        if isinstance(stmt, ast.ClassDef):
            text = self._class(stmt)
        elif isinstance(stmt, ast.ImportFrom):
            text, doc = self._imported(name, stmt.module or "")
        else:
            assert isinstance(stmt, ast.Assign)
            value = stmt.value
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "TypedDict":
                text = self._functional(name, value)
            else:
                text = self._alias(name, self._members(value, name))
        return f"{self._doc(doc, '')}\n{text}" if doc else text

    def _doc(self, doc: str, indent: str) -> str:
        return _comment(_plain(doc).splitlines(), indent) if doc else ""

    def _class(self, node: ast.ClassDef) -> str:
        name = node.name
        if node.keywords:
            raise self.fail(name, "class keywords (total=False) are not supported: mark optional fields NotRequired")
        bases = [b.id if isinstance(b, ast.Name) else ast.unparse(b) for b in node.bases]
        parents = [b for b in bases if b != "TypedDict"]
        for parent in parents:
            if parent not in self.exported or not isinstance(self.defs.get(parent, (None,))[0], ast.ClassDef):
                raise self.fail(name, f"its base {parent} is not a TypedDict class listed in __all__")
        if not bases:
            raise self.fail(name, "a wire record must be a TypedDict (class Name(TypedDict) or a subclass of one)")
        fields: list[str] = []
        body = node.body[1:] if ast.get_docstring(node) is not None else node.body
        for i, stmt in enumerate(body):
            if _string(stmt) is not None and i > 0 and isinstance(body[i - 1], ast.AnnAssign):
                continue  # the docstring of the field above
            if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is None):
                raise self.fail(name, f"line {stmt.lineno}: a TypedDict body holds only `field: type` lines")
            doc = (_string(body[i + 1]) if i + 1 < len(body) else None) or ""
            fields.append(self._field(f"{name}.{stmt.target.id}", stmt.target.id, stmt.annotation, doc))
        extends = f" extends {', '.join(parents)}" if parents else ""
        return self._interface(name + extends, fields)

    def _functional(self, name: str, call: ast.Call) -> str:
        args = call.args
        if (
            call.keywords
            or len(args) != 2
            or not isinstance(args[0], ast.Constant)
            or args[0].value != name
            or not isinstance(args[1], ast.Dict)
        ):
            raise self.fail(name, f'write it as {name} = TypedDict("{name}", {{"field": type, ...}})')
        fields = []
        for key, value in zip(args[1].keys, args[1].values):
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                raise self.fail(name, "the field names of a TypedDict(...) are string literals")
            fields.append(self._field(f"{name}.{key.value}", key.value, value, ""))
        return self._interface(name, fields)

    @staticmethod
    def _interface(head: str, fields: list[str]) -> str:
        if not fields:
            return f"export interface {head} {{}}"
        return "\n".join([f"export interface {head} {{", *fields, "}"])

    def _field(self, where: str, name: str, annotation: ast.expr, doc: str) -> str:
        if not re.fullmatch(r"[A-Za-z_$][\w$]*", name):
            raise self.fail(where, "a field name must be an identifier")
        optional = _subscript(annotation, "NotRequired")
        if optional is not None:
            annotation = optional
        if _subscript(annotation, "Annotated") is not None:
            default = self._default(where, annotation)
            if default is not None:
                doc = f"{doc} Default: `{default}`." if doc else f"Default: `{default}`."
        line = _layout(f"  {name}{'?' if optional is not None else ''}:", self._members(annotation, where), "  ")
        doc_text = self._doc(doc, "  ")
        return f"{doc_text}\n{line}" if doc_text else line

    def _default(self, where: str, annotation: ast.expr) -> str | None:
        """The JSON of ``Default(value)`` in ``Annotated[type, Default(value)]``, if there is one."""
        assert isinstance(annotation, ast.Subscript)
        parts = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
        for meta in parts[1:]:
            if isinstance(meta, ast.Call) and isinstance(meta.func, ast.Name) and meta.func.id == "Default":
                try:
                    return json.dumps(ast.literal_eval(meta.args[0]))
                except (ValueError, IndexError, TypeError) as exc:
                    what = "Default(...) takes one JSON literal (None, a bool, number, string, [] or {})"
                    raise self.fail(where, what) from exc
        return None

    @staticmethod
    def _alias(name: str, members: list[str]) -> str:
        return _layout(f"export type {name} =", members, "")

    def _imported(self, name: str, module: str) -> tuple[str, str]:
        value = self.namespace.get(name)
        literals = _literal_values(value)
        if literals is None:
            raise self.fail(name, f"imported from {module}, it must be a Literal of strings to have a TypeScript form")
        return self._alias(name, [json.dumps(v) for v in literals]), f"The values of ``{module}.{name}``."

    # --- type expressions ---

    def type(self, expr: ast.expr, where: str) -> str:
        """The TypeScript of a type expression (members of a union joined by `` | ``)."""
        return " | ".join(self._members(expr, where))

    def _members(self, expr: ast.expr, where: str) -> list[str]:
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.BitOr):
            return self._members(expr.left, where) + self._members(expr.right, where)
        if isinstance(expr, ast.Constant) and expr.value is None:
            return ["null"]
        if isinstance(expr, ast.Name):
            if expr.id in _SCALARS:
                return _SCALARS[expr.id].split(" | ")
            if expr.id in self.exported:
                return [expr.id]
            raise self.fail(where, f"{expr.id} is not a wire type: list it in __all__, or use {_KNOWN}")
        if isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Name):
            head, args = expr.value.id, expr.slice.elts if isinstance(expr.slice, ast.Tuple) else [expr.slice]
            if head == "Literal":
                return [self._literal(a, where) for a in args]
            if head == "list" and len(args) == 1:
                item = self._members(args[0], where)
                return [f"({' | '.join(item)})[]" if len(item) > 1 else f"{item[0]}[]"]
            if head == "dict" and len(args) == 2:
                if not (isinstance(args[0], ast.Name) and args[0].id == "str"):
                    raise self.fail(where, "JSON object keys are strings: write dict[str, ...]")
                return [f"Record<string, {self.type(args[1], where)}>"]
            if head == "Annotated":
                return self._members(args[0], where)
            if head == "NotRequired":
                raise self.fail(where, "NotRequired[...] goes around a field's whole type, not inside it")
        raise self.fail(where, f"{ast.unparse(expr)} has no TypeScript form here; use {_KNOWN}")

    def _literal(self, arg: ast.expr, where: str) -> str:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, (str, int, bool)):
            return json.dumps(arg.value)
        raise self.fail(where, f"Literal[...] takes strings, ints and bools, not {ast.unparse(arg)}")


_KNOWN = "int, float, str, bool, bytes, None, list[T], dict[str, T], Literal[...] or a TypedDict"


def _layout(head: str, members: list[str], indent: str) -> str:
    """``head members;`` as prettier prints it: on one line if it fits, else the union on the next line,
    else one member a line after a leading ``|``."""
    union = " | ".join(members)
    if len(f"{head} {union};") <= PRINT_WIDTH or len(members) == 1:
        return f"{head} {union};"
    inner = indent + "  "
    if len(f"{inner}{union};") <= PRINT_WIDTH:
        return f"{head}\n{inner}{union};"
    return "\n".join([head, *(f"{inner}| {m}" for m in members)]) + ";"


def _subscript(expr: ast.expr, head: str) -> ast.expr | None:
    """``T`` when ``expr`` is ``head[T]`` (``head[T, ...]``: the whole subscript), else None."""
    if isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Name) and expr.value.id == head:
        return expr.slice if head == "NotRequired" else expr
    return None


def _literal_values(value: Any) -> list[str] | None:
    """The strings of a Literal (or a union of Literals) of strings, else None."""
    origin = typing.get_origin(value)
    if origin is typing.Literal:
        args = typing.get_args(value)
        return list(args) if all(isinstance(a, str) for a in args) else None
    if origin is typing.Union:
        out: list[str] = []
        for arg in typing.get_args(value):
            part = _literal_values(arg)
            if part is None:
                return None
            out += part
        return out
    return None


# --- the command -----------------------------------------------------------------------------------------


def write(path: Path, text: str) -> bool:
    """Write ``text`` to ``path`` whole or not at all (a temporary file renamed over it); True if it changed."""
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return False
    if not path.parent.is_dir():
        raise FileNotFoundError(
            f"{path.parent} does not exist: --write needs a checkout of graphlab with its extension/ folder "
            "(or redirect the output: python -m graphlab.widget.protocol_ts > protocol.gen.ts)"
        )
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as out:
            out.write(text)
        Path(temp).replace(path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return True


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m graphlab.widget.protocol_ts",
        description="Print the TypeScript wire types (protocol.gen.ts) made from graphlab/widget/protocol.py.",
    )
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--write", action="store_true", help=f"write them to {GENERATED}")
    action.add_argument("--check", action="store_true", help="exit 1 if that file is not up to date")
    args = parser.parse_args(argv)
    text = generate_protocol()
    if args.check:
        current = GENERATED.read_text(encoding="utf-8") if GENERATED.is_file() else None
        if current != text:
            print(f"{GENERATED} is out of date: run {COMMAND}", file=sys.stderr)
            return 1
        return 0
    if args.write:
        changed = write(GENERATED, text)
        print(f"{'wrote' if changed else 'unchanged:'} {GENERATED}", file=sys.stderr)
        return 0
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
