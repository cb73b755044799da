"""The custom messages the front-end sends, checked before anything acts on them.

Mirrors ``ClientMessage`` in ``extension/src/protocol.ts``: a union on ``kind``. The editor's
``edit`` (with an ``op``), ``undo``, ``redo`` and ``select``; the panels' ``debug`` (with an
``action``), ``breakpoint`` and ``watch`` (with an ``op``), ``inspect`` and ``export``. Edits and
panel messages carry a ``request`` number the reply echoes; the debugger's messages also carry the
``session`` number they were made for, so a click on a panel drawn for an ended session is refused
as stale. A message that does not fit gets a :class:`MessageError` naming the field and what was
expected, and nothing acts on it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from graphlab.errors import GraphlabError

Kind = Literal["edit", "undo", "redo", "select", "debug", "breakpoint", "watch", "inspect", "export"]


class MessageError(GraphlabError, ValueError):
    """A message from the front-end is malformed (unknown kind or op, a field missing or mistyped)."""


_NOTHING = object()


def _str(value: Any) -> bool:
    return isinstance(value, str)


def _opt_str(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _opt_int(value: Any) -> bool:
    return value is None or _int(value)


def _str_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _bindings(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(k, str) and _opt_str(v) for k, v in value.items())


def _bool(value: Any) -> bool:
    return isinstance(value, bool)


def _every(value: Any) -> bool:
    return value in ("repetition", "dispatch")


def _dims(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(k, str) and _int(v) and v > 0 for k, v in value.items())


def _text(value: Any) -> bool:
    return isinstance(value, str) and value.strip() != ""


def _arg_spec(value: Any) -> bool:
    return isinstance(value, dict)


def _bind(value: Any) -> bool:
    return value is None or (
        isinstance(value, dict) and set(value) == {"node", "param"} and all(_str(v) for v in value.values())
    )


# field -> (check, what it must be, default or _NOTHING when required)
_Field = tuple[Any, str, Any]
EDIT_OPS: dict[str, dict[str, _Field]] = {
    "dispatch": {
        "kernel": (_str, "a kernel reference 'module:qualname'", _NOTHING),
        "bindings": (_bindings, "an object {param: arg name or null}", {}),
        "into": (_opt_str, "a sequence node id or null", None),
        "index": (_opt_int, "an int or null", None),
        "name": (_opt_str, "a node name or null", None),
    },
    "remove": {"node": (_str, "a node id", _NOTHING)},
    "move": {"node": (_str, "a node id", _NOTHING), "index": (_int, "an int", _NOTHING)},
    "rebind": {
        "node": (_str, "a node id", _NOTHING),
        "param": (_str, "a parameter name", _NOTHING),
        "arg": (_opt_str, "an arg name or null", _NOTHING),
    },
    "rename": {"node": (_str, "a node id", _NOTHING), "name": (_str, "a node name", _NOTHING)},
    "set_repeat": {"node": (_str, "a node id", _NOTHING), "repeat": (_int, "an int", _NOTHING)},
    "group": {
        "nodes": (_str_list, "a list of node ids", _NOTHING),
        "name": (_str, "a sequence name", _NOTHING),
        "repeat": (_int, "an int", 1),
    },
    "new_arg": {
        "arg": (_arg_spec, "an arg spec {name, kind, dtype, ndim, element_shape, fmt, role}", _NOTHING),
        "bind": (_bind, "{node, param} or null", None),
    },
}

ARG_SPEC_FIELDS: dict[str, _Field] = {
    "name": (_str, "a name", _NOTHING),
    "kind": (_str, "an arg kind", _NOTHING),
    "dtype": (_opt_str, "a dtype name or null", None),
    "ndim": (_int, "an int", 0),
    "element_shape": (lambda v: isinstance(v, list) and all(_int(d) for d in v), "a list of ints", []),
    "fmt": (_opt_str, "a texture format name or null", None),
    "role": (_str, "a role", "state"),
    "shape": (
        lambda v: v is None or (isinstance(v, list) and all(_int(d) or isinstance(d, str) for d in v)),
        "a list of ints and dim names, or null",
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
            "toggle": {"session": _SESSION, "node": (_str, "a node id or a step id", _NOTHING)},
            "condition": {
                "session": _SESSION,
                "expression": (_text, "a condition such as 'grid_m.max() > 1e3'", _NOTHING),
                "every": (_every, "'repetition' or 'dispatch'", "repetition"),
            },
            "remove": {"session": _SESSION, "id": (_int, "a breakpoint id", _NOTHING)},
        },
    ),
    "watch": (
        "op",
        {
            "add": {"session": _SESSION, "expression": (_text, "an expression such as 'x.max()'", _NOTHING)},
            "remove": {"session": _SESSION, "expression": (_str, "a watched expression", _NOTHING)},
        },
    ),
    "inspect": (
        None,
        {
            "": {
                "session": _SESSION,
                "buffer": (_str, "a buffer (ndarray arg) name", _NOTHING),
                "component": (_opt_int, "a component index, or null for all (the norm of vectors)", None),
                "page": (_int, "a page number >= 0", 0),
            }
        },
    ),
    "export": (
        None,
        {
            "": {
                "arch": (lambda v: v in ("x64", "vulkan", "cuda"), "'x64', 'vulkan' or 'cuda'", _NOTHING),
                "path": (_text, "an output folder", _NOTHING),
                "overwrite": (_bool, "true or false", False),
                "verify": (_bool, "true or false", True),
                "cpu_threads": (lambda v: v is None or (_int(v) and v > 0), "a positive int or null", None),
                "dims": (_dims, "an object {dim name: positive int}", {}),
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
            raise MessageError(f"{where}: field {name!r} must be {what}, got {value!r}")
        out[name] = value
    return out


def request_of(content: Any) -> int | None:
    """The request number of a message, if it has a usable one (for replying to a bad message)."""
    if isinstance(content, dict) and _int(content.get("request")):
        return content["request"]
    return None


def parse_message(content: Any) -> Message:
    """Check a message from the front-end.

    >>> parse_message({"kind": "edit", "op": "rename", "request": 4, "node": "a", "name": "b"})["name"]
    'b'
    >>> parse_message({"kind": "edit", "op": "rename", "request": 4, "node": "a"})
    Traceback (most recent call last):
      ...
    graphlab.widget.messages.MessageError: edit 'rename': field 'name' is missing; it must be a node name
    """
    if not isinstance(content, dict):
        raise MessageError(f"a message must be an object with a 'kind', got {type(content).__name__}")
    kind = content.get("kind")
    request = content.get("request")
    if request is not None and not _int(request):
        raise MessageError(f"field 'request' must be an int, got {request!r}")
    if kind in ("undo", "redo"):
        _no_extra(kind, content, {"kind", "request"})
        return Message(kind, request)
    if kind == "select":
        _no_extra(kind, content, {"kind", "request", "node"})
        if "node" not in content:
            raise MessageError("select: field 'node' is missing; it must be a node id, or null to clear")
        node = content["node"]
        if not _opt_str(node):
            raise MessageError(f"select: field 'node' must be a node id or null, got {node!r}")
        return Message("select", request, fields={"node": node or None})
    if kind in PANEL_MESSAGES:
        return _parse_panel(kind, request, content)
    if kind != "edit":
        kinds = ", ".join(["edit", "undo", "redo", "select", *PANEL_MESSAGES])
        raise MessageError(f"unknown message kind {kind!r}; expected one of {kinds}")
    op = content.get("op")
    if op not in EDIT_OPS:
        raise MessageError(f"unknown edit op {op!r}; expected one of {', '.join(EDIT_OPS)}")
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
    if op not in ops:
        raise MessageError(f"{kind}: unknown {key} {op!r}; expected one of {', '.join(ops)}")
    where = f"{kind} {op!r}" if op else kind
    if request is None:
        raise MessageError(f"{where}: field 'request' is missing; every {kind} message carries a request number")
    allowed = {"kind", "request", *([key] if key else []), *ops[op]}
    _no_extra(where, content, allowed)
    return Message(kind, request, op or None, _check_fields(where, content, ops[op]))  # type: ignore[arg-type]


def _no_extra(where: str, content: Mapping[str, Any], allowed: set[str]) -> None:
    extra = sorted(set(content) - allowed)
    if extra:
        raise MessageError(f"{where}: unexpected field(s) {', '.join(map(repr, extra))}; allowed: {sorted(allowed)}")
