"""One handler per message type, so the type checker follows a message from parsing to the model call.

:func:`graphlab.widget.messages.parse_message` returns a message as the record
:mod:`graphlab.widget.protocol` declares for it (``RenameEdit``, ``WatchAdd``...). A :class:`Handlers`
table sends it on to the function registered for that record with ``@table.on(Record)``: mypy checks
that the function takes that record, and inside it every field read (``edit["name"]``) against the
declaration, so a misspelt or missing field is a type error, not a ``KeyError`` in the notebook.

The table is keyed by what tells the records of a union apart on the wire: ``kind``, and the
operation field (``op`` or ``action``) where a kind has several. Both are read from the record's
``Literal`` declarations, so a handler cannot be filed under an operation its record does not
declare, and :meth:`Handlers.complete` refuses a table that leaves a declared operation unhandled.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, get_args, get_type_hints

from graphlab.widget.protocol import OPERATION_FIELDS

U = TypeVar("U", bound=Mapping[str, Any])
M = TypeVar("M")
P = ParamSpec("P")
R = TypeVar("R")

#: What identifies a message's handler: its ``kind``, and its operation (None: the kind has one).
Key = tuple[str, str | None]


def record_keys(record: type) -> list[Key]:
    """The keys a message record answers to: its kind with each operation its Literal declares."""
    hints = get_type_hints(record)
    (kind,) = get_args(hints["kind"])
    field = next((f for f in OPERATION_FIELDS if f in hints), None)
    if field is None:
        return [(kind, None)]
    return [(kind, op) for op in get_args(hints[field])]


def key_of(message: Mapping[str, Any]) -> Key:
    """The key of a parsed message (see :func:`record_keys`)."""
    op = next((message[f] for f in OPERATION_FIELDS if f in message), None)
    return (message["kind"], op)


class Handlers(Generic[U, P, R]):
    """The handlers of one union ``U`` of message records, each typed on its own record.

    ``P`` is what every handler takes after the message (the editor, the graph...), ``R`` what it returns:
    ``Handlers[EditMessage, [GraphEditor, Graph], Outcome]``.
    """

    def __init__(self, union: Any) -> None:
        self._records: tuple[type, ...] = get_args(union) or (union,)
        self._by_key: dict[Key, Callable[..., R]] = {}

    def on(self, record: type[M]) -> Callable[[Callable[Concatenate[M, P], R]], Callable[Concatenate[M, P], R]]:
        """Register the decorated function as the handler of ``record``'s messages (every operation it declares)."""
        if record not in self._records:
            names = ", ".join(r.__name__ for r in self._records)
            raise TypeError(f"{record.__name__} is not one of this table's messages ({names})")

        def register(handler: Callable[Concatenate[M, P], R]) -> Callable[Concatenate[M, P], R]:
            for key in record_keys(record):
                if key in self._by_key:
                    raise TypeError(f"{record.__name__}: {_name(key)} has a handler already")
                self._by_key[key] = handler
            return handler

        return register

    def complete(self) -> None:
        """Refuse a table that leaves a declared operation without a handler (called once it is filled)."""
        missing = [_name(k) for r in self._records for k in record_keys(r) if k not in self._by_key]
        if missing:
            raise TypeError(f"no handler for the message(s) {', '.join(missing)}; register one with @table.on(Record)")

    @property
    def keys(self) -> list[Key]:
        """The keys handled, in registration order."""
        return list(self._by_key)

    def __call__(self, message: U, /, *args: P.args, **kwargs: P.kwargs) -> R:
        """Hand a parsed message (of this table's union) to its handler."""
        return self._by_key[key_of(message)](message, *args, **kwargs)


def _name(key: Key) -> str:
    kind, op = key
    return f"{kind} {op!r}" if op is not None else kind
