"""The custom messages the front-end sends, checked before anything acts on them.

Mirrors ``ClientMessage`` in ``extension/src/protocol.ts``: a union on ``kind``. The editor's
``edit`` (with an ``op``), ``undo``, ``redo`` and ``select``; the panels' ``debug`` (with an
``action``), ``breakpoint`` and ``watch`` (with an ``op``), ``inspect`` and ``export``. Edits and
panel messages carry a ``request`` number the reply echoes; the debugger's messages also carry the
``session`` number they were made for, so a click on a panel drawn for an ended session is refused
as stale. A message that does not fit gets a :class:`MessageError` naming the field and what was
expected, and nothing acts on it.

Checking is total and bounded: every field's JSON type is checked (an int is never a bool, a
string field takes no list), unknown kinds, ops and extra fields are refused, and before any field
is looked at :func:`check_size` refuses a message over the limits below, in time proportional to
the part of the message it had to read. Values quoted back in an error are cut to ``MAX_ECHO``
characters, so a reply stays small whatever was sent.
"""

from __future__ import annotations

import reprlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from graphlab.errors import GraphlabError
from graphlab.names import MAX_NAME_LENGTH

Kind = Literal["edit", "undo", "redo", "select", "debug", "breakpoint", "watch", "inspect", "export"]


class MessageError(GraphlabError, ValueError):
    """A message from the front-end is malformed (unknown kind or op, a field missing or mistyped)."""


# --- limits: far above what the front-end sends, they bound what a broken sender costs ------------

#: Characters in all the strings of one message, object keys included.
MAX_MESSAGE_CHARS = 1 << 18
#: List items and object entries in one message, at every level.
MAX_MESSAGE_ITEMS = 10_000
#: Objects and lists nested in one another, the message itself included (``new_arg``'s ``arg.shape`` is 3).
MAX_DEPTH = 3
#: Largest magnitude of an int (JavaScript's exact integers).
MAX_INT = 2**53
#: A node, sequence, arg, parameter, dim, buffer or dtype name: graphlab's name length, and room for
#: a node name's ``#n`` suffix (the graph checks the grammar itself, :mod:`graphlab.names`).
MAX_NAME = MAX_NAME_LENGTH + 10
#: A node id (names joined by ``/``) or a kernel reference ``module:qualname``.
MAX_ID = 2048
#: An expression (watch, breakpoint condition) or an output folder.
MAX_TEXT = 4096
#: Node ids in one ``group`` edit.
MAX_NODES = 4096
#: Entries of ``element_shape`` and ``shape`` in an arg spec.
MAX_SHAPE = 16
#: Characters of a received value quoted back in an error.
MAX_ECHO = 80
#: Characters of the ``error`` of a reply (and of the banner): longer reasons are cut.
MAX_REPLY_ERROR = 4000

_NOTHING = object()
_ECHO = reprlib.Repr()
_ECHO.maxstring = _ECHO.maxother = MAX_ECHO
_ECHO.maxlist = _ECHO.maxdict = 4
_ECHO.maxlevel = 2


def echo(value: Any) -> str:
    """``repr(value)`` cut to about ``MAX_ECHO`` characters, for quoting what was received in an error.

    >>> echo("x" * 10_000)[:12], len(echo("x" * 10_000)) < 100
    ("'xxxxxxxxxxx", True)
    >>> echo(["a", 1, None, True, 2.5, "b"])
    "['a', 1, None, True, ...]"
    """
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"an int of {value.bit_length():,} bits"  # repr() of a huge int is slow, even refused
    if isinstance(value, str) and len(value) > MAX_ECHO:
        return f"{repr(value[:MAX_ECHO])[: MAX_ECHO - 25]}... ({len(value):,} characters)"
    try:
        text = _ECHO.repr(value)
    except Exception:  # an object whose repr fails (only callers in Python can send one)
        text = f"a {type(value).__name__}"
    return text if len(text) <= MAX_ECHO else f"{text[: MAX_ECHO - 3]}..."


def clip(text: str, limit: int = MAX_REPLY_ERROR) -> str:
    """``text`` cut to ``limit`` characters, saying how much was cut.

    >>> clip("abcdef" * 10, 24)
    'abcde... (60 characters)'
    """
    if len(text) <= limit:
        return text
    cut = f"... ({len(text):,} characters)"
    return (text[: max(0, limit - len(cut))] + cut)[:limit]


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _opt_int(value: Any) -> bool:
    return value is None or _int(value)


def _string(limit: int) -> Callable[[Any], bool]:
    """A string of at most ``limit`` characters."""
    return lambda value: isinstance(value, str) and len(value) <= limit


def _optional(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: value is None or check(value)


_name = _string(MAX_NAME)
_id = _string(MAX_ID)
_opt_name = _optional(_name)
_opt_id = _optional(_id)


def _id_list(value: Any) -> bool:
    return isinstance(value, list) and len(value) <= MAX_NODES and all(_id(v) for v in value)


def _bindings(value: Any) -> bool:
    return isinstance(value, dict) and all(_name(k) and _opt_name(v) for k, v in value.items())


def _bool(value: Any) -> bool:
    return isinstance(value, bool)


def _one_of(*choices: str) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, str) and value in choices


def _dims(value: Any) -> bool:
    return isinstance(value, dict) and all(_name(k) and _int(v) and v > 0 for k, v in value.items())


def _text(value: Any) -> bool:
    return isinstance(value, str) and len(value) <= MAX_TEXT and value.strip() != ""


def _arg_spec(value: Any) -> bool:
    return isinstance(value, dict)


def _bind(value: Any) -> bool:
    return value is None or (
        isinstance(value, dict) and set(value) == {"node", "param"} and _id(value["node"]) and _name(value["param"])
    )


def _short_list(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, list) and len(value) <= MAX_SHAPE and all(check(v) for v in value)


_NAME = f"(at most {MAX_NAME} characters)"
_ID = f"(at most {MAX_ID:,} characters)"
_TEXT = f"(at most {MAX_TEXT:,} characters)"


# field -> (check, what it must be, default or _NOTHING when required)
_Field = tuple[Any, str, Any]
EDIT_OPS: dict[str, dict[str, _Field]] = {
    "dispatch": {
        "kernel": (_id, f"a kernel reference 'module:qualname' {_ID}", _NOTHING),
        "bindings": (_bindings, f"an object {{param: arg name or null}}, names {_NAME}", {}),
        "into": (_opt_id, f"a sequence node id {_ID} or null", None),
        "index": (_opt_int, "an int or null", None),
        "name": (_opt_name, f"a node name {_NAME} or null", None),
    },
    "remove": {"node": (_id, f"a node id {_ID}", _NOTHING)},
    "move": {"node": (_id, f"a node id {_ID}", _NOTHING), "index": (_int, "an int", _NOTHING)},
    "rebind": {
        "node": (_id, f"a node id {_ID}", _NOTHING),
        "param": (_name, f"a parameter name {_NAME}", _NOTHING),
        "arg": (_opt_name, f"an arg name {_NAME} or null", _NOTHING),
    },
    "rename": {"node": (_id, f"a node id {_ID}", _NOTHING), "name": (_name, f"a node name {_NAME}", _NOTHING)},
    "set_repeat": {"node": (_id, f"a node id {_ID}", _NOTHING), "repeat": (_int, "an int", _NOTHING)},
    "group": {
        "nodes": (_id_list, f"a list of node ids (at most {MAX_NODES:,}, each {_ID[1:-1]})", _NOTHING),
        "name": (_name, f"a sequence name {_NAME}", _NOTHING),
        "repeat": (_int, "an int", 1),
    },
    "new_arg": {
        "arg": (_arg_spec, "an arg spec {name, kind, dtype, ndim, element_shape, fmt, role}", _NOTHING),
        "bind": (_bind, f"{{node: a node id {_ID}, param: a parameter name {_NAME}}} or null", None),
    },
}

ARG_SPEC_FIELDS: dict[str, _Field] = {
    "name": (_name, f"a name {_NAME}", _NOTHING),
    "kind": (_name, "an arg kind", _NOTHING),
    "dtype": (_opt_name, "a dtype name or null", None),
    "ndim": (_int, "an int", 0),
    "element_shape": (_short_list(_int), f"a list of at most {MAX_SHAPE} ints", []),
    "fmt": (_opt_name, "a texture format name or null", None),
    "role": (_name, "a role", "state"),
    "shape": (
        _optional(_short_list(lambda d: _int(d) or _name(d))),
        f"a list of at most {MAX_SHAPE} ints and dim names, or null",
        None,
    ),
}


# --- the panels' messages: kind -> (the field naming the operation, op -> fields) -----------------

_SESSION: _Field = (_int, "the session number the panel shows", _NOTHING)
PANEL_MESSAGES: dict[str, tuple[str | None, dict[str, dict[str, _Field]]]] = {
    "debug": (
        "action",
        {
            "start": {},
            **{
                action: {"session": _SESSION}
                for action in ("step", "step_over", "continue", "back", "restart", "find_nonfinite", "stop")
            },
            "goto": {"session": _SESSION, "target": (_int, "a step index", _NOTHING)},
        },
    ),
    "breakpoint": (
        "op",
        {
            "toggle": {"session": _SESSION, "node": (_id, f"a node id or a step id {_ID}", _NOTHING)},
            "condition": {
                "session": _SESSION,
                "expression": (_text, f"a condition such as 'grid_m.max() > 1e3' {_TEXT}", _NOTHING),
                "every": (_one_of("repetition", "dispatch"), "'repetition' or 'dispatch'", "repetition"),
            },
            "remove": {"session": _SESSION, "id": (_int, "a breakpoint id", _NOTHING)},
        },
    ),
    "watch": (
        "op",
        {
            "add": {"session": _SESSION, "expression": (_text, f"an expression such as 'x.max()' {_TEXT}", _NOTHING)},
            "remove": {
                "session": _SESSION,
                "expression": (_string(MAX_TEXT), f"a watched expression {_TEXT}", _NOTHING),
            },
        },
    ),
    "inspect": (
        None,
        {
            "": {
                "session": _SESSION,
                "buffer": (_name, f"a buffer (ndarray arg) name {_NAME}", _NOTHING),
                "component": (_opt_int, "a component index, or null for all (the norm of vectors)", None),
                "page": (_int, "a page number >= 0", 0),
            }
        },
    ),
    "export": (
        None,
        {
            "": {
                "arch": (_one_of("x64", "vulkan", "cuda"), "'x64', 'vulkan' or 'cuda'", _NOTHING),
                "path": (_text, f"an output folder {_TEXT}", _NOTHING),
                "overwrite": (_bool, "true or false", False),
                "verify": (_bool, "true or false", True),
                "cpu_threads": (lambda v: v is None or (_int(v) and v > 0), "a positive int or null", None),
                "dims": (_dims, f"an object {{dim name {_NAME}: positive int}}", {}),
            }
        },
    ),
}


@dataclass(frozen=True)
class Message:
    """A checked message: ``kind``, the edit's ``op`` (edits only), its fields, and ``request``."""

    kind: Kind
    request: int | None
    op: str | None = None
    fields: Mapping[str, Any] | None = None

    def __getitem__(self, name: str) -> Any:
        return (self.fields or {})[name]


def _check_fields(where: str, content: Mapping[str, Any], spec: Mapping[str, _Field]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, (check, what, default) in spec.items():
        value = content.get(name, _NOTHING)
        if value is _NOTHING:
            if default is _NOTHING:
                raise MessageError(f"{where}: field {name!r} is missing; it must be {what}")
            value = default
        elif not check(value):
            raise MessageError(f"{where}: field {name!r} must be {what}, got {_got(value)}")
        out[name] = value
    return out


def _got(value: Any) -> str:
    """What a field held, in a few words (its size when that is what is wrong)."""
    if isinstance(value, list) and len(value) > MAX_SHAPE:
        return f"a list of {len(value):,} items"
    if isinstance(value, dict) and len(value) > MAX_SHAPE:
        return f"an object of {len(value):,} entries"
    return echo(value)


def request_of(content: Any) -> int | None:
    """The request number of a message, if it has a usable one (for replying to a bad message)."""
    if isinstance(content, dict):
        request = content.get("request")
        if isinstance(request, int) and not isinstance(request, bool) and abs(request) <= MAX_INT:
            return request
    return None


KINDS: tuple[str, ...] = ("edit", "undo", "redo", "select", *PANEL_MESSAGES)


def kind_of(content: Any) -> str | None:
    """The message's ``kind`` when it is one of :data:`KINDS` (to word the refusal of a bad message)."""
    kind = content.get("kind") if isinstance(content, dict) else None
    return kind if isinstance(kind, str) and kind in KINDS else None


def check_size(content: Mapping[str, Any]) -> None:
    """Refuse a message over the limits (``MAX_MESSAGE_CHARS``, ``MAX_MESSAGE_ITEMS``, ``MAX_DEPTH``,
    ``MAX_INT``) or holding what JSON cannot carry; stops at the first excess, so a 50 MB string or a
    list of a million ids costs no more than reading the limits' worth of it.

    >>> check_size({"kind": "edit", "nodes": ["a"] * 20_000})
    Traceback (most recent call last):
      ...
    graphlab.widget.messages.MessageError: field 'nodes' holds 20,000 items; a message holds at most 10,000 \
list items and object entries in all
    """
    chars = items = 0
    stack: list[tuple[Any, tuple[str | int, ...], int]] = [(content, (), 1)]
    while stack:
        value, path, depth = stack.pop()
        if value is None or isinstance(value, (bool, float)):
            continue
        if isinstance(value, str):
            chars += len(value)
            if chars > MAX_MESSAGE_CHARS:
                size = f"a string of {len(value):,} characters"
                raise MessageError(f"{_path(path)} is {size}; a message holds at most {MAX_MESSAGE_CHARS:,} in all")
        elif isinstance(value, int):
            if abs(value) > MAX_INT:
                raise MessageError(f"{_path(path)} is {echo(value)}; ints are at most 2**53 in magnitude")
        elif isinstance(value, (dict, list)):
            if depth > MAX_DEPTH:
                raise MessageError(
                    f"{_path(path)} is nested too deep: a message nests objects and lists {MAX_DEPTH} deep at most"
                )
            items += len(value)
            if items > MAX_MESSAGE_ITEMS:
                raise MessageError(
                    f"{_path(path)} holds {len(value):,} items; a message holds at most {MAX_MESSAGE_ITEMS:,} "
                    "list items and object entries in all"
                )
            if isinstance(value, list):
                stack.extend((v, (*path, i), depth + 1) for i, v in enumerate(value))
                continue
            for key, v in value.items():
                if not isinstance(key, str):
                    raise MessageError(f"{_path(path)} has the key {echo(key)}; object keys are strings")
                chars += len(key)
                if chars > MAX_MESSAGE_CHARS:
                    size = f"a key of {len(key):,} characters"
                    raise MessageError(f"{_path(path)} has {size}; a message holds at most {MAX_MESSAGE_CHARS:,}")
                stack.append((v, (*path, key), depth + 1))
        else:
            raise MessageError(f"{_path(path)} is a {type(value).__name__}, which JSON does not carry")


def _path(path: tuple[str | int, ...]) -> str:
    """``field 'arg.shape[2]'`` (long keys cut short), or ``the message``."""
    if not path:
        return "the message"
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            key = part if len(part) <= 40 else f"{part[:30]}...({len(part):,} characters)"
            text += f".{key}" if text else key
    return f"field {text!r}"


def parse_message(content: Any) -> Message:
    """Check a message from the front-end; MessageError says what does not fit (nothing else is raised).

    >>> parse_message({"kind": "edit", "op": "rename", "request": 4, "node": "a", "name": "b"})["name"]
    'b'
    >>> parse_message({"kind": "edit", "op": "rename", "request": 4, "node": "a"})
    Traceback (most recent call last):
      ...
    graphlab.widget.messages.MessageError: edit 'rename': field 'name' is missing; it must be a node name (at most \
138 characters)
    >>> parse_message({"kind": "edit", "op": "rename", "request": 4, "node": "a", "name": ["b"]})
    Traceback (most recent call last):
      ...
    graphlab.widget.messages.MessageError: edit 'rename': field 'name' must be a node name (at most 138 characters), \
got ['b']
    """
    if not isinstance(content, dict):
        raise MessageError(f"a message must be an object with a 'kind', got {type(content).__name__}")
    check_size(content)
    kind = content.get("kind")
    request = content.get("request")
    if request is not None and not _int(request):
        raise MessageError(f"field 'request' must be an int, got {echo(request)}")
    if not isinstance(kind, str) or kind not in KINDS:
        raise MessageError(f"unknown message kind {echo(kind)}; expected one of {', '.join(KINDS)}")
    if kind in ("undo", "redo"):
        _no_extra(kind, content, {"kind", "request"})
        return Message(kind, request)  # type: ignore[arg-type]
    if kind == "select":
        _no_extra(kind, content, {"kind", "request", "node"})
        if "node" not in content:
            raise MessageError("select: field 'node' is missing; it must be a node id, or null to clear")
        node = content["node"]
        if not _opt_id(node):
            raise MessageError(f"select: field 'node' must be a node id {_ID} or null, got {_got(node)}")
        return Message("select", request, fields={"node": node or None})
    if kind in PANEL_MESSAGES:
        return _parse_panel(kind, request, content)
    op = content.get("op")
    if not isinstance(op, str) or op not in EDIT_OPS:
        raise MessageError(f"unknown edit op {echo(op)}; expected one of {', '.join(EDIT_OPS)}")
    if request is None:
        raise MessageError(f"edit {op!r}: field 'request' is missing; every edit carries a request number")
    where = f"edit {op!r}"
    _no_extra(where, content, {"kind", "op", "request", *EDIT_OPS[op]})
    fields = _check_fields(where, content, EDIT_OPS[op])
    if op == "new_arg":
        _no_extra(f"{where} arg", fields["arg"], set(ARG_SPEC_FIELDS))
        fields["arg"] = _check_fields(f"{where} arg", fields["arg"], ARG_SPEC_FIELDS)
    return Message("edit", request, op, fields)


def _parse_panel(kind: str, request: int | None, content: Mapping[str, Any]) -> Message:
    """A debug, breakpoint, watch, inspect or export message: its operation, then its fields."""
    key, ops = PANEL_MESSAGES[kind]
    op = "" if key is None else content.get(key)
    if not isinstance(op, str) or op not in ops:
        raise MessageError(f"{kind}: unknown {key} {echo(op)}; expected one of {', '.join(ops)}")
    where = f"{kind} {op!r}" if op else kind
    if request is None:
        raise MessageError(f"{where}: field 'request' is missing; every {kind} message carries a request number")
    allowed = {"kind", "request", *([key] if key else []), *ops[op]}
    _no_extra(where, content, allowed)
    return Message(kind, request, op or None, _check_fields(where, content, ops[op]))  # type: ignore[arg-type]


def _no_extra(where: str, content: Mapping[str, Any], allowed: set[str]) -> None:
    """Refuse fields the message kind does not have (a misspelt field is never silently dropped)."""
    extra = [key for key in content if key not in allowed]
    if extra:
        named = ", ".join(echo(key) for key in sorted(extra[:4], key=str))
        more = f" and {len(extra) - 4:,} more" if len(extra) > 4 else ""
        raise MessageError(f"{where}: unexpected field(s) {named}{more}; allowed: {sorted(allowed)}")
