"""The one grammar for names, and the one range for dim sizes, checked wherever they enter graphlab.

A name (graph, arg, sequence, symbolic dim, a key of ``dims=``) travels far: into ``ti.graph``
keyword arguments, ``Graph.to_code`` Python, Graphviz DOT, ``manifest.json`` and the generated C
host program, which ``gl.verify`` compiles and runs. So every entry point (the model's constructors
and edits, ``gl.export``'s ``dims=``, the CLI's ``--dim``, the widget's export message) checks it
here, and every emitter still escapes what it writes.

A name is ``[A-Za-z_][A-Za-z0-9_]*`` matched in full (``re.fullmatch``: ``"n\\n"`` is refused, as
are NUL, non-ASCII letters and spaces), 1 to :data:`MAX_NAME_LENGTH` characters, and not a Python
keyword (args become keyword arguments of a ``ti.graph`` run). Node names may end in ``#<digits>``
(``p2g#2``, the form graphlab gives a repeated name; up to 9 digits, not counted in the length) and,
never being Python names, may be keywords.

C keywords are allowed: the generated host writes names only inside C string literals (the
``ARGS``, ``GRAPHS``, ``SEGMENTS``, ``OPS`` and ``DIM_DEFAULTS`` tables), never as C identifiers,
and :func:`graphlab.deploy.hostgen.c_string_literal` escapes them anyway. Names that a user's own
host would find awkward (``int``, ``main``, ``ti_*``) are diagnosed by the GL016 rule instead.

A dim size is an int from 0 to :data:`MAX_DIM_SIZE` (``TiNdShape.dims`` in Taichi's C API are
``uint32_t``: a larger size would be truncated silently), and a buffer's bytes (the product of its
shape and element size) must fit the host's ``int64_t`` element count (:data:`MAX_BUFFER_BYTES`).

>>> check_name("grid_v", "arg")
'grid_v'
>>> check_name("n\\n", "dim")  # doctest: +ELLIPSIS
Traceback (most recent call last):
    ...
graphlab.core.errors.GraphError: dim name 'n\\n' is not a valid identifier (character '\\n' at index 1 is not ...
"""

from __future__ import annotations

import keyword
import operator
import re
from collections.abc import Sequence
from typing import cast

from graphlab.core.errors import GraphError

__all__ = [
    "MAX_BUFFER_BYTES",
    "MAX_DIM_SIZE",
    "MAX_NAME_LENGTH",
    "a_or_an",
    "check_buffer_bytes",
    "check_dim_size",
    "check_name",
    "check_node_name",
    "name_problem",
    "shown",
]

#: Longest name, in characters: room for descriptive names, small enough for messages, file names
#: (``<arg>.npy``) and the C host's fixed buffers. The graph file loader's string limit is larger.
MAX_NAME_LENGTH = 128
#: Largest dim size: the C API's ``TiNdShape`` dims are ``uint32_t``.
MAX_DIM_SIZE = 2**32 - 1
#: Largest buffer, in bytes: the C host counts elements in ``int64_t`` before sizing a ``size_t``.
MAX_BUFFER_BYTES = 2**63 - 1
#: How much of a bad value a message shows (a 50 MB name must not make a 50 MB message).
SHOWN_CHARS = 60

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NODE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:#[0-9]{1,9})?")
_ALLOWED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_FIX = f"use 1 to {MAX_NAME_LENGTH} ASCII letters, digits and '_', not starting with a digit"


def a_or_an(word: str) -> str:
    """``word`` with its article, as messages name a kind: "a scalar", "an ndarray" (said "en-darray").

    >>> a_or_an("ndarray"), a_or_an("scalar"), a_or_an("rw_texture")
    ('an ndarray', 'a scalar', 'a rw_texture')
    """
    return f"{'an' if word[:1] in set('aeiou') or word.startswith('nd') else 'a'} {word}"


def shown(value: object) -> str:
    """``repr(value)``, cut to about :data:`SHOWN_CHARS` characters for a message."""
    if isinstance(value, str) and len(value) > SHOWN_CHARS:
        return f"{value[:SHOWN_CHARS]!r}... ({len(value):,} characters)"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**30:
        return f"an int of {value.bit_length():,} bits"  # repr() refuses ints past 4,300 digits
    try:
        text = repr(value)
    except ValueError:  # such an int inside a container
        return f"a {type(value).__name__}"
    return text if len(text) <= SHOWN_CHARS + 2 else f"{text[:SHOWN_CHARS]}..."


def name_problem(value: object, *, node: bool = False) -> str | None:
    """Why ``value`` is not a name (a node name with ``node=True``), or None when it is one."""
    if not isinstance(value, str):
        return f"it is of type {type(value).__name__}, not a string"
    stem = value.split("#", 1)[0] if node else value
    if not stem:
        return "it is empty" if not value else "it has no name before the '#'"
    if len(stem) > MAX_NAME_LENGTH:
        return f"it has {len(stem):,} characters, over the limit of {MAX_NAME_LENGTH}"
    if (_NODE_NAME if node else _NAME).fullmatch(value):
        return "it is a Python keyword" if not node and keyword.iskeyword(value) else None
    if value[0].isdigit():
        return "it starts with a digit"
    for index, char in enumerate(stem):
        if char not in _ALLOWED:
            return f"character {char!r} at index {index} is not an ASCII letter, digit or '_'"
    return f"{shown(value[len(stem) :])} is not a '#<digits>' suffix of 1 to 9 digits"


def check_name(value: object, what: str, *, error: type[Exception] = GraphError) -> str:
    """Return ``value`` if it is a name (see the module docstring), else raise ``error`` saying why.

    ``what`` says whose name it is in the message (``"arg"``, ``"graph"``, ``"sequence"``, ``"dim"``).
    """
    problem = name_problem(value)
    if problem is not None:
        raise error(f"{what} name {shown(value)} is not a valid identifier ({problem}); {_FIX}")
    return cast(str, value)


def check_node_name(value: object, what: str = "node", *, error: type[Exception] = GraphError) -> str:
    """Return ``value`` if it is a node name (a name, optionally with a ``#<digits>`` suffix)."""
    problem = name_problem(value, node=True)
    if problem is not None:
        raise error(
            f"{what} name {shown(value)} must be an identifier, optionally with a '#n' suffix ({problem}); {_FIX}"
        )
    return cast(str, value)


def check_dim_size(value: object, where: str, *, error: type[Exception] = GraphError) -> int:
    """Return ``value`` as an int if it is a dim size (0 to 2**32 - 1), else raise ``error`` naming ``where``.

    Bools and floats are refused (``True`` is not a size); numpy integers are taken.
    """
    size: int | None = None
    if not isinstance(value, bool):
        try:
            size = operator.index(value)  # type: ignore[arg-type]
        except TypeError:
            size = None
    if size is None or not 0 <= size <= MAX_DIM_SIZE:
        got = "" if size is None else " out of range"
        raise error(
            f"{where} = {shown(value)}{got}: a dim size is an int from 0 to {MAX_DIM_SIZE:,} "
            "(Taichi's C API passes shapes as 32-bit unsigned ints)"
        )
    return size


def check_buffer_bytes(
    shape: Sequence[int], item_bytes: int, where: str, *, error: type[Exception] = GraphError
) -> int:
    """Return the bytes of a buffer of ``shape`` and ``item_bytes``; raise ``error`` past :data:`MAX_BUFFER_BYTES`."""
    total = item_bytes
    for size in shape:
        total *= size
    if total > MAX_BUFFER_BYTES:
        raise error(
            f"{where}: shape {tuple(shape)} of {item_bytes}-byte elements is {total:,} bytes, over the "
            f"{MAX_BUFFER_BYTES:,} a C host can count; use smaller dims"
        )
    return total
