"""Recording a field capture of one run of a loaded module's graph, from Python.

The C runtime library records captures where a graph is deployed; ``ModuleGraph.capture`` records
the same folder (:mod:`graphlab.core.capture_format`) from ``gl.load_module``, so a capture can be made and
opened in the notebook (``gl.open_capture``) on any machine that runs the module. The writer is
told the run's values before anything launches, each executed segment, and the flag reads and
arrays at the end; ``capture.json`` is written last, atomically, so a run that fails midway leaves
an incomplete capture that the reader refuses, never a misleading one.

Segments are recorded (``segments=True``) while their bytes stay within ``limit_bytes`` (0: no bound,
as for the C library); past it recording stops and ``truncated`` says so (inputs and outputs are
always written). The run is the library's too (:func:`graphlab.model.plan.run_plan`): a guarded
``check_every`` loop runs its groups, puts the last one back and replays it, and the capture holds
every segment so executed and the flag reads acted on, as the library's does. A segment records
the ndarrays it binds that the graph writes (temps too: the reader compares only the args the
notebook does not keep in shared memory-plan slots).
"""

from __future__ import annotations

import hashlib
import os
import platform
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from graphlab.core.capture_format import (
    CAPTURE_FORMAT,
    input_path,
    output_path,
    segment_path,
    write_capture_json,
)
from graphlab.core.errors import CaptureError
from graphlab.core.fileio import read_limited
from graphlab.deploy.manifest import MAX_MANIFEST_BYTES, GraphSpec, Manifest
from graphlab.model.plan import FlagRead, Segment
from graphlab.run.values import numpy_dtype

__all__ = ["DEFAULT_LIMIT_BYTES", "CaptureWriter"]

#: The default bound on recorded segment outputs (inputs and outputs are always written).
DEFAULT_LIMIT_BYTES = 256 * 1024 * 1024


class CaptureWriter:
    """Writes one run of ``spec`` into ``folder`` (see the module docs); checked before anything runs.

    ``folder`` must not exist or be empty (a capture is never mixed with another's files).
    """

    def __init__(
        self, folder: str | os.PathLike[str], manifest: Manifest, spec: GraphSpec, *,
        segments: bool, limit_bytes: int, c_api_version: int,
    ) -> None:  # fmt: skip
        where = f"capture of graph {spec.name!r}"
        if not isinstance(folder, (str, os.PathLike)):
            raise CaptureError(f"{where}: folder={folder!r}: give a folder path (str or pathlib.Path)")
        if not isinstance(segments, bool):
            raise CaptureError(f"{where}: segments={segments!r}: give True (record every segment) or False")
        if isinstance(limit_bytes, bool) or not isinstance(limit_bytes, int) or limit_bytes < 0:
            raise CaptureError(f"{where}: limit_bytes={limit_bytes!r}: give a number of bytes >= 0")
        self.folder = Path(folder).expanduser()
        if self.folder.exists() and (not self.folder.is_dir() or any(self.folder.iterdir())):
            raise CaptureError(
                "exists and is not an empty folder; a capture goes into a new folder: choose another path or "
                "delete this one",
                file=str(self.folder),
            )
        self.manifest, self.spec = manifest, spec
        self.segments, self.limit_bytes = segments, limit_bytes
        self.c_api_version = c_api_version
        self.digest = hashlib.sha256(read_limited(manifest.folder / "manifest.json", limit=MAX_MANIFEST_BYTES))
        self.recorded: list[dict[str, Any]] = []
        self.used = 0
        self.truncated = False
        self.inputs: dict[str, str] = {}
        self.dims: dict[str, int] = {}

    def begin(
        self, arrays: Mapping[str, np.ndarray], scalars: Mapping[str, np.ndarray], shapes: Mapping[str, Any]
    ) -> None:
        """Write the args before the run: the arrays given (temps given too) and the scalars."""
        self.folder.mkdir(parents=True, exist_ok=True)
        for arg in self.spec.args:
            if arg.name in arrays:
                self.inputs[arg.name] = self._save(input_path(arg.name), np.asarray(arrays[arg.name]))
            elif arg.name in scalars:  # a 0-d array of the manifest dtype; a matrix as its element shape
                shape = arg.element_shape if arg.kind == "matrix" else ()
                value = np.asarray(scalars[arg.name], dtype=numpy_dtype(arg)).reshape(shape)
                self.inputs[arg.name] = self._save(input_path(arg.name), value)
            for axis, dim in enumerate(arg.shape or ()):
                if isinstance(dim, str) and arg.name in shapes:
                    self.dims.setdefault(dim, int(shapes[arg.name][axis]))

    def segment_names(self, segment: Segment) -> list[str]:
        """The arrays to record after ``segment`` ran: none unless recording segments within the bound."""
        if not self.segments or self.truncated:
            return []
        kinds = {arg.name: arg.kind for arg in self.spec.args}
        return [name for name in segment.args if name in self.spec.writes and kinds[name] == "ndarray"]

    def segment_done(self, segment: Segment, download: Callable[[str], np.ndarray]) -> None:
        """Record what ``segment`` wrote (``download(name)`` reads an array off the device), within the bound."""
        if not self.segments or self.truncated:
            return
        names = self.segment_names(segment)  # every executed segment gets its record, even one writing nothing
        order = len(self.recorded)
        arrays = {name: download(name) for name in names}
        size = sum(a.nbytes for a in arrays.values())
        if self.limit_bytes and self.used + size > self.limit_bytes:  # 0: no bound, as for the C library
            self.truncated = True
            return
        self.used += size
        outputs = {name: self._save(segment_path(order, name), array) for name, array in arrays.items()}
        self.recorded.append({"order": order, "segment": segment.id, "graph": segment.name, "outputs": outputs})

    def finish(self, reads: Sequence[FlagRead], outputs: Mapping[str, np.ndarray]) -> Path:
        """Write the arrays after the run, then ``capture.json`` (atomically, last)."""
        temps = {arg.name for arg in self.spec.args if arg.role == "temp"}
        written = {name: self._save(output_path(name), a) for name, a in outputs.items() if name not in temps}
        data = {
            "format": CAPTURE_FORMAT,
            "graph": self.spec.name,
            "manifest_sha256": self.digest.hexdigest(),
            "module": self.manifest.folder.resolve().name,
            "platform": {
                "arch": self.manifest.arch,
                "device": _device(self.manifest.arch),
                "driver": "",
                "taichi_c_api_version": self.c_api_version,
                "graphlab_version": str(self.manifest.data.get("graphlab_version", "")),
            },
            "dims": self.dims,
            "inputs": self.inputs,
            "decisions": [
                {"node": r.node_id, "scope": r.scope, "kind": r.kind, "value": r.value, "outcome": r.outcome}
                for r in reads
            ],
            "segments": self.recorded,
            "outputs": written,
            "limit_bytes": self.limit_bytes,
            "truncated": self.truncated,
        }
        return write_capture_json(self.folder, data)

    def _save(self, relative: str, array: np.ndarray) -> str:
        path = self.folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, np.array(array, order="C", copy=True), allow_pickle=False)  # 0-d stays 0-d
        return relative


def _device(arch: str) -> str:
    """What this process can say of the device: the CPU for CPU archs (the C library asks the driver)."""
    if arch in ("x64", "arm64"):
        return platform.processor() or platform.machine() or "cpu"
    return ""
