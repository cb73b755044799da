"""The custom messages the front-end sends, checked before anything acts on them.

Over 500 lines on purpose: one total checker (size bounds, field types, per-field rules) for every
message kind; splitting it by kind would spread the rules that must treat all messages alike.

Checks ``ClientMessage`` of :mod:`graphlab.widget.protocol`: a union on ``kind``. The editor's
``edit`` (with an ``op``), ``undo``, ``redo`` and ``select``; the panels' ``debug`` (with an
``action``), ``breakpoint`` and ``watch`` (with an ``op``), ``inspect`` and ``export``. Edits and
panel messages carry a ``request`` number the reply echoes; the debugger's messages also carry the
``session`` number they were made for, so a click on a panel drawn for an ended session is refused
as stale. A message that does not fit gets a :class:`MessageError` naming the field and what was
expected, and nothing acts on it. One that fits comes back as the record the protocol declares for
it (a ``TypedDict``), handed on to the handler of that record (:mod:`graphlab.widget.handlers`).

Which kinds, operations and fields there are, which fields are required, their types and the
defaults of the others are read from the protocol's declarations; this module adds only what a
type does not say: length and range limits, and how an error describes each field (``_RULES``).

Checking is total and bounded: every field's JSON type is checked (an int is never a bool, a
string field takes no list), unknown kinds, ops and extra fields are refused, and before any field
is looked at :func:`check_size` refuses a message over the limits below, in time proportional to
the part of the message it had to read. Values quoted back in an error are cut to ``MAX_ECHO``
characters, so a reply stays small whatever was sent.
"""

from __future__ import annotations

import copy
import reprlib
import types
from collections.abc import Callable, Iterable, Mapping
from typing import Annotated, Any, Literal, NamedTuple, Union, cast, get_args, get_origin, get_type_hints, is_typeddict

from graphlab.core.errors import GraphlabError
from graphlab.core.names import MAX_NAME_LENGTH
from graphlab.model.layout import MAX_COORDINATE, position_problem
from graphlab.widget import protocol
from graphlab.widget.protocol import OPERATION_FIELDS, ClientMessage, Default, NotRequired


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
#: a node name's ``#n`` suffix (the graph checks the grammar itself, :mod:`graphlab.core.names`).
MAX_NAME = MAX_NAME_LENGTH + 10
#: A node id (names joined by ``/``) or a kernel reference ``module:qualname``.
MAX_ID = 2048
#: An expression (watch, breakpoint condition) or an output folder.
MAX_TEXT = 4096
#: Node ids in one ``group`` edit.
MAX_NODES = 4096
#: Entries of ``element_shape`` and ``shape`` in an arg spec.
MAX_SHAPE = 16
#: Largest ``rtol``/``atol`` of a comparison (far beyond any useful tolerance).
MAX_TOLERANCE = 1e6
#: Longest ``timeout`` of one comparison command, in seconds (a day).
MAX_COMPARE_TIMEOUT = 86400.0
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


def _string(limit: int) -> Callable[[Any], bool]:
    """A string of at most ``limit`` characters."""
    return lambda value: isinstance(value, str) and len(value) <= limit


def _optional(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: value is None or check(value)


_name = _string(MAX_NAME)
_id = _string(MAX_ID)
_opt_name = _optional(_name)


def _id_list(value: Any) -> bool:
    return isinstance(value, list) and len(value) <= MAX_NODES and all(_id(v) for v in value)


def _bindings(value: Any) -> bool:
    return isinstance(value, dict) and all(_name(k) and _opt_name(v) for k, v in value.items())


def _bool(value: Any) -> bool:
    return isinstance(value, bool)


def _dims(value: Any) -> bool:
    return isinstance(value, dict) and all(_name(k) and _int(v) and v > 0 for k, v in value.items())


def _text(value: Any) -> bool:
    return isinstance(value, str) and len(value) <= MAX_TEXT and value.strip() != ""


def _short_list(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, list) and len(value) <= MAX_SHAPE and all(check(v) for v in value)


def _tolerance(value: Any) -> bool:
    return 0 <= value <= MAX_TOLERANCE  # NaN fails both; an infinity fails the bound


def _position(value: Any) -> bool:
    return position_problem(value) is None


def _offset(value: Any) -> bool:
    return value is None or (value == value and abs(value) <= MAX_COORDINATE)


def _positions(value: Any) -> bool:
    return (
        isinstance(value, dict) and len(value) <= MAX_NODES and all(_id(k) and _position(v) for k, v in value.items())
    )


def _name_list(value: Any) -> bool:
    return isinstance(value, list) and len(value) <= MAX_NODES and all(_name(v) for v in value)


_NAME = f"(at most {MAX_NAME} characters)"
_ID = f"(at most {MAX_ID:,} characters)"
_TEXT = f"(at most {MAX_TEXT:,} characters)"


_Check = Callable[[Any], bool]

#: What a message field must be beyond its declared type, and how an error describes it: by field
#: name, or by ``Record.field`` where a name means something else in one record. A check sees only
#: values of the declared type, never None; " or null" is added to the wording of a nullable field.
#: A field whose type says it all (an int, a bool, a Literal, a record) needs no entry: its wording
#: is made from the type. ``_NESTED``: a record checked field by field, errors naming its fields.


def _NESTED(value: Any) -> bool:
    return True


_RULES: dict[str, tuple[_Check | None, str]] = {
    "kernel": (_id, f"a kernel reference 'module:qualname' {_ID}"),
    "bindings": (_bindings, f"an object {{param: arg name or null}}, names {_NAME}"),
    "into": (_id, f"a sequence node id {_ID}"),
    "name": (_name, f"a node name {_NAME}"),
    "GroupEdit.name": (_name, f"a sequence name {_NAME}"),
    "node": (_id, f"a node id {_ID}"),
    "BreakpointToggle.node": (_id, f"a node id or a step id {_ID}"),
    "param": (_name, f"a parameter name {_NAME}"),
    "arg": (_name, f"an arg name {_NAME}"),
    "NewArgEdit.arg": (_NESTED, "an arg spec"),
    "RedeclareEdit.arg": (_NESTED, "an arg spec"),
    "RenameArgEdit.name": (_name, f"an arg name {_NAME}"),
    "nodes": (_id_list, f"a list of node ids (at most {MAX_NODES:,}, each {_ID[1:-1]})"),
    "ArgSpec.name": (_name, f"a name {_NAME}"),
    "dtype": (_name, "a dtype name"),
    "element_shape": (_short_list(_int), f"a list of at most {MAX_SHAPE} ints"),
    "fmt": (_name, "a texture format name"),
    "shape": (_short_list(lambda d: _int(d) or _name(d)), f"a list of at most {MAX_SHAPE} ints and dim names, or null"),
    "session": (None, "the session number the panel shows"),
    "target": (None, "a step index"),
    "BreakpointCondition.expression": (_text, f"a condition such as 'grid_m.max() > 1e3' {_TEXT}"),
    "id": (None, "a breakpoint id"),
    "WatchAdd.expression": (_text, f"an expression such as 'x.max()' {_TEXT}"),
    "WatchRemove.expression": (_string(MAX_TEXT), f"a watched expression {_TEXT}"),
    "buffer": (_name, f"a buffer (ndarray arg) name {_NAME}"),
    "component": (None, "a component index, or null for all (the norm of vectors)"),
    "page": (None, "a page number >= 0"),
    "path": (_text, f"an output folder {_TEXT}"),
    "cpu_threads": (lambda v: v > 0, "a positive int"),
    "dims": (_dims, f"an object {{dim name {_NAME}: positive int}}"),
    "against": (_text, f"an arch name or the folder of an exported module {_TEXT}"),
    "rtol": (_tolerance, f"a finite number from 0 to {MAX_TOLERANCE:g}"),
    "atol": (_tolerance, f"a finite number from 0 to {MAX_TOLERANCE:g}"),
    "guessed": (_name_list, f"a list of parameter names {_NAME}"),
    "position": (_position, f"a canvas position [x, y], finite numbers at most {MAX_COORDINATE:g} from 0"),
    "PlaceEdit.group": (_id, f"the id of the group dragged as a whole {_ID}, or null"),
    "dx": (_offset, f"a step on the canvas, a finite number at most {MAX_COORDINATE:g} from 0, or null"),
    "dy": (_offset, f"a step on the canvas, a finite number at most {MAX_COORDINATE:g} from 0, or null"),
    "positions": (_positions, f"an object {{node id: [x, y]}} (at most {MAX_NODES:,} nodes)"),
    "timeout": (lambda v: 0 < v <= MAX_COMPARE_TIMEOUT, f"seconds, a number > 0 and at most {MAX_COMPARE_TIMEOUT:g}"),
    # the loop form and the values panel
    "body": (_name, f"a new sequence name {_NAME}"),
    "else_body": (_name, f"a new sequence name {_NAME}"),
    "flag": (_name, f"a flag arg name (a one-element i32 ndarray) {_NAME}"),
    "count": (_name, f"a scalar i32 arg name {_NAME}"),
    "max_iter": (lambda v: v > 0, "a positive int (the most iterations)"),
    "check_every": (lambda v: v > 0, "a positive int (iterations between flag reads)"),
    "value": (lambda v: v == v and abs(v) != float("inf"), "a finite number"),
    "ValueAllocate.shape": (_short_list(lambda d: d > 0), f"a list of at most {MAX_SHAPE} ints >= 1 (the field dims)"),
    "seed": (lambda v: v >= 0, "an int >= 0"),
    "slice": (_short_list(lambda d: d >= 0), f"a list of at most {MAX_SHAPE} indexes >= 0, or null"),
    "ValueDim.dim": (_name, f"a dim name of an arg's shape {_NAME}"),
    "ValueDim.size": (lambda v: v is None or (_int(v) and v > 0), "a size, an int >= 1, or null to forget it"),
    "variable": (_name, f"a notebook variable name {_NAME}"),
}


class _Field(NamedTuple):
    """How one field of a message is checked."""

    check: _Check
    what: str
    """What it must be, for an error."""
    default: Any
    """What a message without it gets (``_NOTHING``: it is required)."""
    nested: dict[str, _Field] | None = None
    """A ``_NESTED`` record's fields, checked one by one after ``check``."""


def _declared(record: type, skip: Iterable[str]) -> dict[str, tuple[Any, Any]]:
    """A record's fields in order, less ``skip``: name -> (type, default or ``_NOTHING`` when required)."""
    out: dict[str, tuple[Any, Any]] = {}
    required = record.__required_keys__  # type: ignore[attr-defined]
    for name, hint in get_type_hints(record, include_extras=True).items():
        if name in skip:
            continue
        if get_origin(hint) is NotRequired:
            hint = get_args(hint)[0]
        defaults = [m.value for m in getattr(hint, "__metadata__", ()) if isinstance(m, Default)]
        if get_origin(hint) is Annotated:
            hint = get_args(hint)[0]
        if (name in required) == bool(defaults):
            problem = "has a Default(...) but is required" if defaults else "is NotRequired but has no Default(...)"
            raise TypeError(f"graphlab.widget.protocol: {record.__name__}.{name} {problem}")
        out[name] = (hint, defaults[0] if defaults else _NOTHING)
    return out


def field_checks(record: type, skip: Iterable[str] = ()) -> dict[str, _Field]:
    """The checks of a message record's fields (those in ``skip`` left out), from its declaration and ``_RULES``.

    Raises TypeError for a declaration this module cannot check: a string, list or object field with
    no rule (every such field needs its limits), or an optional field without a ``Default``.
    """
    out: dict[str, _Field] = {}
    for name, (hint, default) in _declared(record, skip).items():
        where = f"{record.__name__}.{name}"
        rule, what = _RULES.get(where) or _RULES.get(name) or (None, None)
        members = get_args(hint) if _is_union(hint) else (hint,)
        nullable = type(None) in members
        value_type = next((m for m in members if m is not type(None)), type(None))
        what = what or _wording(value_type, where)
        if nullable and "null" not in what:
            what += " or null"
        nested = field_checks(value_type) if rule is _NESTED else None
        if nested is not None:
            what = f"{what} {{{', '.join(nested)}}}"
        elif rule is None and is_typeddict(value_type):
            rule = _record(field_checks(value_type))
        out[name] = _Field(_both(_type_check(hint, where), rule), what, default, nested)
    return out


def _is_union(hint: Any) -> bool:
    return get_origin(hint) in (Union, types.UnionType)


def _wording(hint: Any, where: str) -> str:
    """How an error describes a value of this type, where the type says all there is to check."""
    if get_origin(hint) is Literal:
        choices = [repr(c) for c in get_args(hint)]
        return choices[0] if len(choices) == 1 else f"{', '.join(choices[:-1])} or {choices[-1]}"
    if hint is bool:
        return "true or false"
    if hint is int:
        return "an int"
    if is_typeddict(hint):
        return "{" + ", ".join(f"{name}: {field.what}" for name, field in field_checks(hint).items()) + "}"
    raise TypeError(
        f"graphlab.widget.protocol: {where} needs a rule in graphlab.widget.messages._RULES (its limits and "
        "how an error describes it)"
    )


def _type_check(hint: Any, where: str) -> _Check:
    """A check that a JSON value has the declared type (a record: that it is an object)."""
    origin, args = get_origin(hint), get_args(hint)
    if _is_union(hint):
        checks = [_type_check(a, where) for a in args]
        return lambda v: any(check(v) for check in checks)
    if hint is type(None):
        return lambda v: v is None
    if origin is Literal:
        return lambda v: isinstance(v, str) and v in args
    if hint in (bool, int, str):
        return {bool: _bool, int: _int, str: lambda v: isinstance(v, str)}[hint]
    if hint is float:  # JSON does not tell 1 from 1.0: an int is a float here, a bool is not (NaN: the rule's)
        return lambda v: _int(v) or isinstance(v, float)
    if origin is list:
        item = _type_check(args[0], where)
        return lambda v: isinstance(v, list) and all(item(x) for x in v)
    if origin is dict and args[0] is str:
        value = _type_check(args[1], where)
        return lambda v: isinstance(v, dict) and all(isinstance(k, str) and value(x) for k, x in v.items())
    if is_typeddict(hint):
        return lambda v: isinstance(v, dict)
    raise TypeError(f"graphlab.widget.protocol: {where} has a type messages cannot check: {hint}")


def _both(type_check: _Check, rule: _Check | None) -> _Check:
    if rule is None:
        return type_check
    return lambda v: type_check(v) and (v is None or rule(v))


def _record(fields: dict[str, _Field]) -> _Check:
    """A record checked as a whole: exactly its fields, each passing its check."""

    def check(value: Any) -> bool:
        if any(key not in fields for key in value):
            return False
        return all(f.check(value[k]) if k in value else f.default is not _NOTHING for k, f in fields.items())

    return check


def _kind(record: type) -> str:
    return str(get_args(get_type_hints(record)["kind"])[0])


def _by_kind(union: Any) -> dict[str, list[type]]:
    """The records of a union of messages, grouped by their ``kind``, in declaration order."""
    out: dict[str, list[type]] = {}
    for record in get_args(union):
        out.setdefault(_kind(record), []).append(record)
    return out


def _operations(kind: str, records: list[type]) -> tuple[str | None, dict[str, dict[str, _Field]]]:
    """The field naming the operation of a kind's messages (None: it has one), and op -> field checks."""
    keys = {next((f for f in OPERATION_FIELDS if f in get_type_hints(r)), None) for r in records}
    if len(keys) != 1:
        raise TypeError(f"graphlab.widget.protocol: the {kind!r} messages disagree on their operation field")
    key = keys.pop()
    ops: dict[str, dict[str, _Field]] = {}
    for record in records:
        names = get_args(get_type_hints(record)[key]) if key else ("",)
        for op in names:
            ops[op] = field_checks(record, skip={"kind", "request", key or "kind"})
    return key, ops


_CLIENT = _by_kind(protocol.ClientMessage)
_PANELS = _by_kind(protocol.PanelMessage)
EDIT_OPS: dict[str, dict[str, _Field]] = _operations("edit", _CLIENT["edit"])[1]
ARG_SPEC_FIELDS: dict[str, _Field] = field_checks(protocol.ArgSpec)
#: The panels' messages: kind -> (the field naming the operation, op -> field checks).
PANEL_MESSAGES: dict[str, tuple[str | None, dict[str, dict[str, _Field]]]] = {
    kind: _operations(kind, records) for kind, records in _PANELS.items()
}
_SELECT_NODE = field_checks(_CLIENT["select"][0], skip={"kind", "request"})["node"]
#: The fields of the messages that have no operation (undo, redo, select), by kind.
_PLAIN: dict[str, set[str]] = {
    kind: set(get_type_hints(records[0])) for kind, records in _CLIENT.items() if kind != "edit" and kind not in _PANELS
}


def _check_fields(where: str, content: Mapping[str, Any], spec: Mapping[str, _Field]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, (check, what, default, nested) in spec.items():
        value = content.get(name, _NOTHING)
        if value is _NOTHING:
            if default is _NOTHING:
                raise MessageError(f"{where}: field {name!r} is missing; it must be {what}")
            value = copy.deepcopy(default)  # a default list or dict must not be shared between messages
        elif not check(value):
            raise MessageError(f"{where}: field {name!r} must be {what}, got {_got(value)}")
        elif nested is not None:
            _no_extra(f"{where} {name}", value, set(nested))
            value = _check_fields(f"{where} {name}", value, nested)
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


#: Every message kind, in the order ``ClientMessage`` declares them.
KINDS: tuple[str, ...] = tuple(_CLIENT)


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


def parse_message(content: Any) -> ClientMessage:
    """Check a message from the front-end; MessageError says what does not fit (nothing else is raised).

    The message comes back as the record :mod:`graphlab.widget.protocol` declares for it (a dict: its
    ``kind``, operation and ``request`` as sent, the fields left out filled with their defaults), so
    the type checker narrows it on ``kind`` and ``op`` and checks every field read after this.

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
    head: dict[str, Any] = {"kind": kind} if request is None else {"kind": kind, "request": request}
    if kind in ("undo", "redo"):
        _no_extra(kind, content, _PLAIN[kind])
        return _checked(head)
    if kind == "select":
        _no_extra(kind, content, _PLAIN[kind])
        if "node" not in content:
            raise MessageError("select: field 'node' is missing; it must be a node id, or null to clear")
        node = content["node"]
        if not _SELECT_NODE.check(node):
            raise MessageError(f"select: field 'node' must be {_SELECT_NODE.what}, got {_got(node)}")
        return _checked({**head, "node": node or None})
    if kind in PANEL_MESSAGES:
        return _parse_panel(kind, head, content)
    op = content.get("op")
    if not isinstance(op, str) or op not in EDIT_OPS:
        raise MessageError(f"unknown edit op {echo(op)}; expected one of {', '.join(EDIT_OPS)}")
    if request is None:
        raise MessageError(f"edit {op!r}: field 'request' is missing; every edit carries a request number")
    where = f"edit {op!r}"
    _no_extra(where, content, {"kind", "op", "request", *EDIT_OPS[op]})
    return _checked({**head, "op": op, **_check_fields(where, content, EDIT_OPS[op])})


def _checked(message: dict[str, Any]) -> ClientMessage:
    """A message whose every field was checked against its record: from here on it is that record."""
    return cast(ClientMessage, message)


def _parse_panel(kind: str, head: dict[str, Any], content: Mapping[str, Any]) -> ClientMessage:
    """A debug, breakpoint, watch, inspect or export message: its operation, then its fields."""
    key, ops = PANEL_MESSAGES[kind]
    op = "" if key is None else content.get(key)
    if not isinstance(op, str) or op not in ops:
        raise MessageError(f"{kind}: unknown {key} {echo(op)}; expected one of {', '.join(ops)}")
    where = f"{kind} {op!r}" if op else kind
    if "request" not in head:
        raise MessageError(f"{where}: field 'request' is missing; every {kind} message carries a request number")
    allowed = {"kind", "request", *([key] if key else []), *ops[op]}
    _no_extra(where, content, allowed)
    operation = {key: op} if key else {}
    return _checked({**head, **operation, **_check_fields(where, content, ops[op])})


def _no_extra(where: str, content: Mapping[str, Any], allowed: set[str]) -> None:
    """Refuse fields the message kind does not have (a misspelt field is never silently dropped)."""
    extra = [key for key in content if key not in allowed]
    if extra:
        named = ", ".join(echo(key) for key in sorted(extra[:4], key=str))
        more = f" and {len(extra) - 4:,} more" if len(extra) > 4 else ""
        raise MessageError(f"{where}: unexpected field(s) {named}{more}; allowed: {sorted(allowed)}")
