"""Views of one buffer at one position of a debug session: statistics, slices, pictures, diffs.

Statistics are reduced on the device (:mod:`graphlab.debug.stats`); a slice is gathered on the
device into a small ndarray before it is copied, so ``view.numpy(np.s_[:10])`` of a 1 GiB buffer
moves 10 elements, not the buffer. Pictures need the values on the host and are made only when a
notebook displays the view: a heat map for 2-D buffers (one per component for vectors), a line
plot for 1-D scalar buffers and a scatter plot for (n, 2) vector buffers such as particle positions.
A buffer too large to copy whole is sampled with a stride on the device for its pictures.

A view of the live buffer belongs to the position it was taken at: once the session moves, reading
values from it raises :class:`StaleViewError` rather than showing another step's data under this
step's name. Views of past positions (``dbg.inspect("x", at=12)``) hold their own copy.
"""

import base64
import html
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import taichi as ti

from graphlab.bridge import runtime as bridge
from graphlab.debug.pictures import heatmap_png, lineplot_svg, scatter_svg
from graphlab.debug.report import Position, StaleViewError, StepRef
from graphlab.debug.report_text import diff_text, fmt_value, html_table
from graphlab.debug.stats import BufferStats, DiffStats, buffer_stats, diff_map, diff_stats

__all__ = ["BufferView", "DiffView", "StaleViewError", "Where", "device_slice"]

Picture = tuple[str, Any, str]  # (mime type, PNG bytes or SVG text, caption)
PICTURE_LIMIT = 1 << 22  # field elements copied to the host for a picture; larger buffers are sampled


@ti.kernel
def _k_gather(src: ti.types.ndarray(), dst: ti.types.ndarray(), box: ti.types.ndarray(dtype=ti.i32, ndim=1)):
    for I in ti.grouped(dst):
        J = I
        for k in ti.static(range(I.n)):
            J[k] = box[k] + I[k] * box[I.n + k]
        dst[I] = src[J]


def _simple(index: Any) -> bool:
    parts = index if isinstance(index, tuple) else (index,)
    return all(
        p is Ellipsis or isinstance(p, slice) or (isinstance(p, (int, np.integer)) and not isinstance(p, bool))
        for p in parts
    )


def device_slice(arr: Any, index: Any = None) -> np.ndarray:
    """``arr.to_numpy()[index]`` without copying the whole buffer when ``index`` is basic.

    Integers, slices (any step) and one ``...`` are gathered on the device; other indexes (lists,
    masks) copy the buffer and index it with numpy.
    """
    if index is None:
        return arr.to_numpy()
    shape, esh = tuple(arr.shape), tuple(arr.element_shape)
    nd, total = len(shape), len(shape) + len(esh)
    if nd == 0 or not _simple(index):
        return arr.to_numpy()[index]
    parts = list(index) if isinstance(index, tuple) else [index]
    if parts.count(Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if Ellipsis in parts:
        at = parts.index(Ellipsis)
        parts[at : at + 1] = [slice(None)] * (total - len(parts) + 1)
    if len(parts) > total:
        raise IndexError(
            f"too many indices: the buffer has {nd} field axes {shape}"
            + (f" and element axes {esh}" if esh else "")
            + f", the index has {len(parts)}"
        )
    parts += [slice(None)] * (total - len(parts))
    starts: list[int] = []
    steps: list[int] = []
    counts: list[int] = []
    keep: list[slice | int] = []
    for axis, (p, n) in enumerate(zip(parts[:nd], shape)):
        if isinstance(p, slice):
            r = range(*p.indices(n))
            if len(r) == 0:
                return arr.to_numpy()[tuple(parts)]
            starts.append(r.start)
            steps.append(r.step)
            counts.append(len(r))
            keep.append(slice(None))
        else:
            i = int(p)
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
            starts.append(i % n)
            steps.append(1)
            counts.append(1)
            keep.append(0)
    dst = bridge.new_ndarray(str(arr.dtype), tuple(counts), esh)
    box = ti.ndarray(ti.i32, shape=(2 * nd,))
    box.from_numpy(np.asarray(starts + steps, np.int32))
    _k_gather(arr, dst, box)
    out = dst.to_numpy()[tuple(keep)]
    element = (Ellipsis, *parts[nd:])
    return out[element] if len(element) > 1 else out


def pictures(name: str, values: np.ndarray, field_ndim: int, element_shape: tuple[int, ...]) -> list[Picture]:
    """The pictures that suit a buffer's layout (see the module docs); none for other layouts."""
    out: list[Picture] = []
    if values.dtype.kind not in "biuf":
        return out
    labels = [f"{name}[..., {', '.join(map(str, c))}]" for c in np.ndindex(*element_shape)] if element_shape else [name]
    flat = values.reshape(*values.shape[:field_ndim], len(labels))  # one column per component
    if field_ndim == 2:
        out += [("image/png", heatmap_png(flat[..., k]), label) for k, label in enumerate(labels)]
    elif field_ndim == 1 and element_shape == (2,):
        out.append(("image/svg+xml", scatter_svg(values, title=name), f"{name} (x, y)"))
    elif field_ndim == 1 and len(labels) <= 4:
        out += [("image/svg+xml", lineplot_svg(flat[..., k], title=label), label) for k, label in enumerate(labels)]
    return out


def _picture_html(pics: list[Picture]) -> str:
    parts = []
    for mime, data, caption in pics:
        if mime == "image/png":
            src = base64.b64encode(data).decode("ascii")
            body = f'<img src="data:image/png;base64,{src}" alt="{html.escape(caption)}"/>'
        else:
            body = data
        parts.append(
            f'<figure style="display:inline-block;margin:4px">{body}'
            f"<figcaption>{html.escape(caption)}</figcaption></figure>"
        )
    return "<div>" + "".join(parts) + "</div>"


@dataclass(frozen=True)
class Where:
    """Where a view looks: the debugger position, and the step that last wrote the buffer (None: none did)."""

    position: Position
    last_writer: StepRef | None


class BufferView:
    """One buffer at one position: shape, dtype, device statistics, slices and pictures.

    Made by :meth:`DebugSession.inspect`; ``stats`` is computed when the view is made (on the
    device, per component for vectors and matrices).
    """

    def __init__(
        self,
        name: str,
        array: Any,
        where: Where,
        *,
        fresh: Callable[[], bool] | None = None,
    ) -> None:
        self.name = name
        self.shape: tuple[int, ...] = tuple(array.shape)
        self.element_shape: tuple[int, ...] = tuple(array.element_shape)
        self.dtype = str(array.dtype)
        self.position = where.position
        self.last_writer = where.last_writer
        self._array = array
        self._fresh = fresh
        self.stats: BufferStats = buffer_stats(array, per_component=bool(self.element_shape))

    @property
    def array(self) -> Any:
        """The ``ti.ndarray`` behind the view (the live buffer or a copy of a past state)."""
        self._check()
        return self._array

    def _check(self) -> None:
        if self._fresh is not None and not self._fresh():
            raise StaleViewError(
                f"this view of {self.name!r} was taken at step {self.position.index}; the session has moved "
                f"since, so the buffer holds other values now. Call dbg.inspect({self.name!r}) again, or "
                f"dbg.inspect({self.name!r}, at={self.position.index}) for the values at that step"
            )

    def numpy(self, index: Any = None) -> np.ndarray:
        """The values (or ``index`` of them, numpy style) as a numpy array, gathered on the device."""
        self._check()
        return device_slice(self._array, index)

    def __getitem__(self, index: Any) -> np.ndarray:
        return self.numpy(index)

    def pictures(self) -> list[Picture]:
        """``(mime type, data, caption)`` for each picture of the buffer.

        Buffers of more than ``PICTURE_LIMIT`` elements are sampled with a stride on the device
        first (the caption says so; the statistics always cover every element).
        """
        self._check()
        n = math.prod(self.shape)
        if n <= PICTURE_LIMIT or not self.shape:
            return pictures(self.name, self._array.to_numpy(), len(self.shape), self.element_shape)
        stride = math.ceil((n / PICTURE_LIMIT) ** (1 / len(self.shape)))
        sample = device_slice(self._array, tuple(slice(None, None, stride) for _ in self.shape))
        pics = pictures(self.name, sample, len(self.shape), self.element_shape)
        return [(mime, data, f"{caption} (sampled: 1 element in {stride} per axis)") for mime, data, caption in pics]

    def describe(self) -> str:
        """One line: name, layout, position, last writer."""
        esh = f" of {list(self.element_shape)}" if self.element_shape else ""
        writer = f"; last written by {self.last_writer}" if self.last_writer else "; not written since the start"
        return f"{self.name}: {self.dtype}{list(self.shape)}{esh} {self.position}{writer}"

    def __str__(self) -> str:
        return f"{self.describe()}\n  {self.stats}"

    def __repr__(self) -> str:
        return f"<BufferView {self.describe()}>"

    def _stats_rows(self) -> list[tuple[Any, ...]]:
        rows = [("all", self.stats)]
        comps = list(np.ndindex(*self.element_shape)) if self.element_shape else []
        rows += [(str(c), s) for c, s in zip(comps, self.stats.components)]
        return [
            (label, fmt_value(s.min), fmt_value(s.max), fmt_value(s.mean), fmt_value(s.std), s.nan, s.inf, s.zeros)
            for label, s in rows
        ]

    def _repr_html_(self) -> str:
        head = f"<div><b>{html.escape(self.describe())}</b></div>"
        table = html_table(["component", "min", "max", "mean", "std", "NaN", "Inf", "zeros"], self._stats_rows())
        bad = ""
        if self.stats.first_nonfinite is not None:
            bad = f"<div>first NaN/Inf at index {self.stats.first_nonfinite}</div>"
        return head + table + bad + _picture_html(self.pictures())

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        bundle: dict[str, Any] = {"text/plain": str(self), "text/html": self._repr_html_()}
        pics = self.pictures()
        if len(pics) == 1:
            bundle[pics[0][0]] = pics[0][1]
        return bundle


class DiffView:
    """How one buffer differs between two positions: device statistics and a picture of the map."""

    def __init__(self, name: str, a: int, b: int, array_a: Any, array_b: Any) -> None:
        self.name = name
        self.a = a
        self.b = b
        self.field_ndim = len(array_a.shape)
        self.stats: DiffStats = diff_stats(array_a, array_b)
        self._map = diff_map(array_b, array_a)  # "from a to b": b - a

    def map(self) -> np.ndarray:
        """``b - a`` per element (the norm of the difference for vectors), with the buffer's field shape."""
        return self._map

    def pictures(self) -> list[Picture]:
        """A diverging heat map (2-D) or a line plot (1-D) of the difference map."""
        label = f"{self.name}: step {self.a} -> step {self.b}"
        if self.field_ndim == 2:
            return [("image/png", heatmap_png(self.map(), colormap="coolwarm", center=0.0), label)]
        if self.field_ndim == 1:
            return [("image/svg+xml", lineplot_svg(self.map(), title=label), label)]
        return []

    def __str__(self) -> str:
        return diff_text(self.name, self.a, self.b, self.stats)

    def __repr__(self) -> str:
        return f"<DiffView {self}>"

    def _repr_html_(self) -> str:
        return f"<div><b>{html.escape(str(self))}</b></div>" + _picture_html(self.pictures())

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return {"text/plain": str(self), "text/html": self._repr_html_()}
