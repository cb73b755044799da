"""The field capture folder ``graphlab.capture/1``, declared once: its layout, its JSON, bounded reading.

A capture is one run of one graph of an exported module, recorded where it ran (a user's device,
by the C runtime library; or here, by ``ModuleGraph.capture``): the args before the run, every flag
read, optionally the args each segment wrote, the arrays after the run, and where it ran. The writer
(:mod:`graphlab.deploy.capture_write`) and the reader (:mod:`graphlab.debug.capture`) are sibling
layers, so the format they share lives here, below both: the file names, ``capture.json``'s fields
as plain records, and the two bounded readers (``capture.json`` through
:func:`graphlab.core.fileio.read_limited`; an ``.npy`` file by its header, refused before its data is read
when the header and the file's size disagree or the bytes asked for exceed the caller's bound).

A segment's record holds the ndarray args it binds that the graph writes (what both writers know: x64
metadata says nothing of which kernel writes what), so it may hold an arg the segment only reads.
Its ``decisions`` are the flag reads the run acted on, as it ran: a guarded ``check_every`` loop's
reads after every k-th iteration and then its replay's, never the read of 0 that started the replay
(:func:`reads_as_recorded` turns a stepping run's reads into those).

Every refusal is a :class:`~graphlab.core.errors.CaptureError` naming the file, the JSON path and the fix.
"""

from __future__ import annotations

import ast
import json
import os
import re
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from graphlab.core.errors import CaptureError
from graphlab.core.fileio import atomic_write_text, read_limited

__all__ = [
    "CAPTURE_FORMAT",
    "CAPTURE_JSON",
    "MAX_CAPTURE_JSON_BYTES",
    "NPY_DTYPES",
    "CaptureRecord",
    "CapturedDecision",
    "CapturedSegment",
    "input_path",
    "is_capture_folder",
    "output_path",
    "read_capture_json",
    "read_npy",
    "reads_as_recorded",
    "segment_path",
    "write_capture_json",
]

CAPTURE_FORMAT = "graphlab.capture/1"
#: Written last (temp file + rename): a folder without it is an incomplete capture.
CAPTURE_JSON = "capture.json"
#: ``capture.json`` holds names, dims and one record per flag read and per segment: 64 MiB is plenty.
MAX_CAPTURE_JSON_BYTES = 64 * 1024 * 1024
#: The ``.npy`` dtypes a capture may hold (as the export's ``npy.c`` writes them).
NPY_DTYPES = ("<f4", "<f8", "<i4", "<u4", "<i8", "<u8", "<i2", "<u2", "|i1", "|u1")
#: The outcomes a flag read may have, per kind (:class:`graphlab.model.plan.FlagRead`).
OUTCOMES = {"cond": ("then", "else", "skip"), "loop": ("again", "done", "limit")}
_Read = TypeVar("_Read")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_NPY_MAGIC = b"\x93NUMPY\x01\x00"
_FIX = "; record the capture again (a capture folder is written whole, capture.json last)"


def input_path(arg: str) -> str:
    """Where an arg's value before the run lives, relative to the capture folder."""
    return f"inputs/{arg}.npy"


def output_path(arg: str) -> str:
    """Where an array's value after the run lives."""
    return f"outputs/{arg}.npy"


def segment_path(order: int, arg: str) -> str:
    """Where an arg lives after the ``order``-th segment executed (zero-padded to 4 digits)."""
    return f"segments/{order:04d}/{arg}.npy"


def is_capture_folder(path: object) -> bool:
    """Whether ``path`` names a folder holding ``capture.json`` (and no ``manifest.json``: not a module)."""
    if not isinstance(path, (str, os.PathLike)) or not isinstance(os.fspath(path), str):
        return False
    folder = Path(path)
    return (folder / CAPTURE_JSON).is_file() and not (folder / "manifest.json").exists()


@dataclass(frozen=True)
class CapturedDecision:
    """One flag read of the field run (the fields of :class:`graphlab.model.plan.FlagRead`)."""

    node: str
    scope: str
    kind: str
    value: int
    outcome: str


@dataclass(frozen=True)
class CapturedSegment:
    """The args one executed segment wrote: ``order`` in execution, ``segment`` the plan's index."""

    order: int
    segment: int
    graph: str
    outputs: dict[str, str]


@dataclass(frozen=True)
class CaptureRecord:
    """A checked ``capture.json`` of the capture in ``folder`` (paths relative to it)."""

    folder: Path
    graph: str
    manifest_sha256: str
    module: str
    platform: dict[str, Any]
    dims: dict[str, int]
    inputs: dict[str, str]
    decisions: tuple[CapturedDecision, ...]
    segments: tuple[CapturedSegment, ...]
    outputs: dict[str, str]
    limit_bytes: int
    truncated: bool

    @property
    def file(self) -> str:
        return str(self.folder / CAPTURE_JSON)


def write_capture_json(folder: Path, data: dict[str, Any]) -> Path:
    """Write ``capture.json`` atomically (keys in the order given: the format's order)."""
    return atomic_write_text(folder / CAPTURE_JSON, json.dumps(data, indent=1) + "\n")


def reads_as_recorded(
    reads: Sequence[_Read], guarded: Mapping[str, int], *, key: Callable[[_Read], tuple[str, str, str]]
) -> list[_Read]:
    """The flag reads a run reading every iteration gives (a stepping run: the notebook's session,
    ``ModuleGraph.capture``), as the capture records them: for a guarded while loop with
    ``check_every=k`` (``guarded`` maps its node id to k) the reads the field run actually made.

    The field reads such a loop after iterations k, 2k, ... only; a read of 0 there puts the group back
    and replays it reading every iteration, and only the replay's reads are decisions. So of one run
    of the loop (the reads of one scope up to its ``"done"``/``"limit"``), the reads kept are those
    after the k-th, 2k-th, ... iterations, then for ``"done"`` every read of its last group (the
    replay's) and for ``"limit"`` only the last one (the field stops at ``max_iter`` with no replay).
    ``key(read)`` gives ``(node id, scope, outcome)``. Reads still inside an unfinished group are left
    out (the field has not made them yet either, or will not).

    >>> reads = [("solve", "solve", o) for o in ("again",) * 4 + ("done",)]
    >>> [r[2] for r in reads_as_recorded(reads, {"solve": 2}, key=lambda r: r)]
    ['again', 'again', 'done']
    """
    kept: list[_Read] = []
    count: dict[str, int] = {}
    pending: dict[str, list[_Read]] = {}
    for read in reads:
        node, scope, outcome = key(read)
        every = guarded.get(node, 1)
        if every <= 1:
            kept.append(read)
            continue
        done = count[scope] = count.get(scope, 0) + 1
        if outcome == "again":
            if done % every == 0:  # a group's end: the field read here
                pending[scope] = []
                kept.append(read)
            else:
                pending.setdefault(scope, []).append(read)
            continue
        if outcome == "done":  # the group's replay, read by read
            kept.extend(pending.get(scope, []))
        kept.append(read)
        count.pop(scope, None)
        pending.pop(scope, None)
    return kept


# --- reading capture.json -------------------------------------------------------------------------


class _Fields:
    """Typed access to the parsed JSON, naming the JSON path of a bad field."""

    def __init__(self, file: str) -> None:
        self.file = file

    def error(self, where: str, message: str) -> CaptureError:
        return CaptureError(message + _FIX, file=self.file, json_path=where)

    def get(self, obj: dict[str, Any], where: str, key: str, kind: type | tuple[type, ...]) -> Any:
        if key not in obj:
            raise self.error(where, f"the field {key!r} is missing")
        value = obj[key]
        bad = isinstance(value, bool) and kind is not bool
        if bad or not isinstance(value, kind):
            name = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
            raise self.error(f"{where}.{key}", f"expected {name}, got {json.dumps(value)[:60]}")
        return value

    def files(self, obj: dict[str, Any], where: str, key: str, path_of: Any) -> dict[str, str]:
        """A ``{arg: path}`` table whose every path is the one the format gives that arg."""
        table = self.get(obj, where, key, dict)
        for name, path in table.items():
            if not _NAME.match(name):
                raise self.error(f"{where}.{key}", f"{name!r} is no arg name")
            if path != path_of(name):
                raise self.error(f"{where}.{key}.{name}", f"expected the path {path_of(name)!r}, got {path!r}")
        return dict(table)


def read_capture_json(folder: str | os.PathLike[str]) -> CaptureRecord:
    """Read and check ``folder/capture.json``; CaptureError for a missing, incomplete or malformed one."""
    root = Path(folder).expanduser()
    file = root / CAPTURE_JSON
    if not root.is_dir():
        raise CaptureError(
            f"no such folder; pass the folder a capture was recorded into (it holds {CAPTURE_JSON})", file=str(root)
        )
    try:
        raw = read_limited(file, limit=MAX_CAPTURE_JSON_BYTES)
    except FileNotFoundError as exc:
        fix = "the run that recorded it did not finish (capture.json is written last); record it again"
        raise CaptureError(f"missing, so the capture is incomplete: {fix}", file=str(file)) from exc
    except OSError as exc:
        raise CaptureError(f"not readable ({exc}){_FIX}", file=str(file)) from exc
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise CaptureError(f"not JSON ({str(exc)[:120]}){_FIX}", file=str(file)) from None
    f = _Fields(str(file))
    if not isinstance(data, dict):
        raise f.error("$", "expected a JSON object")
    fmt = f.get(data, "$", "format", str)
    if fmt != CAPTURE_FORMAT:
        raise f.error("$.format", f"expected {CAPTURE_FORMAT!r}, got {fmt!r}: not a capture this graphlab reads")
    dims = f.get(data, "$", "dims", dict)
    for name, size in dims.items():
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise f.error(f"$.dims.{name}", f"expected a size >= 0, got {json.dumps(size)[:40]}")
    decisions = []
    for i, d in enumerate(f.get(data, "$", "decisions", list)):
        where = f"$.decisions[{i}]"
        if not isinstance(d, dict):
            raise f.error(where, "expected an object")
        kind = f.get(d, where, "kind", str)
        if kind not in OUTCOMES:
            raise f.error(f"{where}.kind", f"expected 'cond' or 'loop', got {kind!r}")
        outcome = f.get(d, where, "outcome", str)
        if outcome not in OUTCOMES[kind]:
            raise f.error(f"{where}.outcome", f"a {kind} decides one of {', '.join(OUTCOMES[kind])}, got {outcome!r}")
        node, scope, value = f.get(d, where, "node", str), f.get(d, where, "scope", str), f.get(d, where, "value", int)
        decisions.append(CapturedDecision(node, scope, kind, value, outcome))
    segments = []
    for i, s in enumerate(f.get(data, "$", "segments", list)):
        where = f"$.segments[{i}]"
        if not isinstance(s, dict):
            raise f.error(where, "expected an object")
        order = f.get(s, where, "order", int)
        if order != i:
            raise f.error(f"{where}.order", f"expected {i} (segments in execution order, none skipped), got {order}")
        index = f.get(s, where, "segment", int)
        outputs = f.files(s, where, "outputs", lambda name, k=order: segment_path(k, name))
        segments.append(CapturedSegment(order, index, f.get(s, where, "graph", str), outputs))
    limit = f.get(data, "$", "limit_bytes", int)
    platform = f.get(data, "$", "platform", dict)
    f.get(platform, "$.platform", "arch", str)
    return CaptureRecord(
        folder=root,
        graph=f.get(data, "$", "graph", str),
        manifest_sha256=f.get(data, "$", "manifest_sha256", str),
        module=f.get(data, "$", "module", str),
        platform=dict(platform),
        dims=dict(dims),
        inputs=f.files(data, "$", "inputs", input_path),
        decisions=tuple(decisions),
        segments=tuple(segments),
        outputs=f.files(data, "$", "outputs", output_path),
        limit_bytes=limit,
        truncated=f.get(data, "$", "truncated", bool),
    )


# --- reading one .npy -----------------------------------------------------------------------------


def read_npy(record: CaptureRecord, relative: str, where: str, *, budget: list[int]) -> np.ndarray:
    """The array at ``relative`` in the capture (a regular file inside its folder, NPY 1.0, C order, a
    dtype of :data:`NPY_DTYPES`, as many bytes as its header says); ``budget[0]`` is the bytes still
    allowed to be read, lowered by this array's size (checked before any data is read)."""
    path = record.folder / relative
    name = str(path)
    if not os.path.realpath(path).startswith(os.path.realpath(record.folder) + os.sep):
        raise CaptureError(f"{relative} leads out of the capture folder{_FIX}", file=record.file, json_path=where)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        message = f"capture.json lists {relative} but it is missing{_FIX}"
        raise CaptureError(message, file=name, json_path=where) from None
    except OSError as exc:
        raise CaptureError(f"not readable ({exc}){_FIX}", file=name, json_path=where) from exc
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):  # a folder, a FIFO, a device: refused before any read
        os.close(fd)
        raise CaptureError(f"not a regular file{_FIX}", file=name, json_path=where)
    with os.fdopen(fd, "rb") as handle:
        dtype, shape, offset = _npy_header(handle.read(min(info.st_size, 65536 + 10)), name, where)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        if info.st_size != offset + nbytes:
            held = info.st_size - offset
            message = f"the header says {shape} {dtype.str} ({nbytes:,} bytes of data) but the file holds {held:,}"
            raise CaptureError(f"{message}: it is cut short or damaged{_FIX}", file=name, json_path=where)
        if nbytes > budget[0]:
            raise CaptureError(
                f"{nbytes:,} bytes would pass the {budget[0]:,} bytes left of the bound on reading this capture; "
                "pass a larger max_bytes= to open_capture if you mean to load it",
                file=name,
                json_path=where,
            )
        budget[0] -= nbytes
        handle.seek(offset)
        data = handle.read(nbytes)
    if len(data) != nbytes:
        raise CaptureError(f"the file changed while read{_FIX}", file=name, json_path=where)
    return np.frombuffer(data, dtype).reshape(shape).copy()


def _npy_header(head: bytes, name: str, where: str) -> tuple[np.dtype[Any], tuple[int, ...], int]:
    """dtype, shape and data offset of an NPY 1.0 file's first bytes; CaptureError for anything else."""
    if not head.startswith(_NPY_MAGIC) or len(head) < 10:
        raise CaptureError(f"not a .npy file of version 1.0{_FIX}", file=name, json_path=where)
    size = int.from_bytes(head[8:10], "little")
    if len(head) < 10 + size:
        raise CaptureError(f"its .npy header is cut short{_FIX}", file=name, json_path=where)
    try:
        header = ast.literal_eval(head[10 : 10 + size].decode("latin1"))
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        header = None
    if not isinstance(header, dict) or set(header) != {"descr", "fortran_order", "shape"}:
        raise CaptureError(f"its .npy header is damaged{_FIX}", file=name, json_path=where)
    descr, shape = header["descr"], header["shape"]
    if descr not in NPY_DTYPES:
        raise CaptureError(
            f"dtype {descr!r} is none of the capture format's {', '.join(NPY_DTYPES)}{_FIX}", file=name, json_path=where
        )
    if header["fortran_order"] is not False:
        raise CaptureError(f"the array is in Fortran order; a capture holds C order{_FIX}", file=name, json_path=where)
    if not isinstance(shape, tuple) or not all(type(d) is int and d >= 0 for d in shape):
        raise CaptureError(f"its .npy shape {shape!r} is no shape{_FIX}", file=name, json_path=where)
    return np.dtype(descr), shape, 10 + size
