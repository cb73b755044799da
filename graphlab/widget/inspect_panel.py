"""What the inspect panel shows of one buffer: statistics, a picture, a page of values, a diff.

Statistics come from the debugger's device reductions (``BufferView.stats``, ``DiffView.stats``);
only the summaries, a picture-sized sample and one page of values cross to the host. Pictures travel
to the front-end as raw little-endian floats (the ``inspect_picture`` and ``inspect_diff`` traits,
``Bytes``) described by a small JSON header (``PictureView`` in :mod:`graphlab.widget.protocol`); the
front-end draws them into a ``<canvas>``. Big buffers are downsampled here, never in the browser:

- a 2-D field (heat map) is reduced by blocks to at most ``PICTURE_SIDE`` per side; a block with a
  NaN is NaN, else one with an Inf is that Inf, else the mean, so NaN/Inf are never averaged away;
- a 1-D field (line plot) becomes at most ``LINE_POINTS`` buckets of ``(min, max)``;
- a 1-D field of 2-vectors (particles: scatter plot) keeps every ``k``-th point, at most
  ``SCATTER_POINTS``.

Fields of more than ``HOST_LIMIT`` elements are first sampled with a stride on the device (a gather
kernel), so a 1 GiB buffer never crosses whole; the first NaN/Inf found by the device statistics is
marked on the picture by index, sampled or not.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

if TYPE_CHECKING:
    from graphlab.debug.inspect import BufferView, DiffView
    from graphlab.debug.stats import BufferStats, DiffStats

PICTURE_SIDE = 256
LINE_POINTS = 1024
SCATTER_POINTS = 16384
HOST_LIMIT = 1 << 22
PAGE_SIZE = 50

PictureKind = Literal["heatmap", "line", "scatter", "none"]


@dataclass(frozen=True)
class Picture:
    """A picture's header (``PictureView``) and its values as bytes."""

    view: dict[str, Any]
    data: bytes


NO_PICTURE = Picture(
    {"kind": "none", "dtype": "f32", "shape": [], "step": [], "origin": [], "label": "", "note": ""}, b""
)


def _num(value: Any) -> float | int | str | None:
    """A statistic as JSON: None when missing; ``"nan"``, ``"inf"``, ``"-inf"`` as strings (JSON has no
    such numbers)."""
    if value is None:
        return None
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    f = float(value)
    if math.isnan(f):
        return "nan"
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    return f


def stats_view(stats: BufferStats, label: str = "all") -> dict[str, Any]:
    """A ``StatsView``: the device statistics of a buffer (or of one component)."""
    return {
        "label": label,
        "count": int(stats.count),
        "finite": int(stats.finite),
        "min": _num(stats.min),
        "max": _num(stats.max),
        "mean": _num(stats.mean),
        "std": _num(stats.std),
        "nan": int(stats.nan),
        "inf": int(stats.inf),
        "zeros": int(stats.zeros),
        "first_nonfinite": None if stats.first_nonfinite is None else [int(i) for i in stats.first_nonfinite],
    }


def diff_stats_view(stats: DiffStats, a: int, b: int) -> dict[str, Any]:
    """A ``DiffView`` header without its picture: how a buffer changed from position ``a`` to ``b``."""
    return {
        "from": a,
        "to": b,
        "count": int(stats.count),
        "changed": int(stats.changed),
        "max_abs": _num(stats.max_abs),
        "max_rel": _num(stats.max_rel),
        "nonfinite_mismatch": int(stats.nonfinite_mismatch),
        "first_changed": None if stats.first_changed is None else [int(i) for i in stats.first_changed],
    }


def component_labels(element_shape: Sequence[int]) -> list[str]:
    """``["[0]", "[1]"]`` for a vec2, ``["[0,0]", ...]`` for a mat2, ``[]`` for scalars."""
    return ["[" + ",".join(map(str, c)) + "]" for c in np.ndindex(*element_shape)] if element_shape else []


def picture_kind(field_ndim: int, element_shape: Sequence[int], component: int | None) -> PictureKind:
    """The picture that suits a layout: particles (``(n, 2)`` vectors) as a scatter plot, other 1-D
    fields as a line plot, 2-D and higher fields as a heat map."""
    if field_ndim == 1:
        return "scatter" if tuple(element_shape) == (2,) and component is None else "line"
    return "heatmap" if field_ndim >= 2 else "none"


# --- downsampling (plain numpy, on a sample already on the host) ----------------------------------


def block_reduce(values: np.ndarray, side: int = PICTURE_SIDE) -> tuple[np.ndarray, list[int]]:
    """Reduce a 2-D array by blocks to at most ``side`` per axis; returns it and the block size per axis.

    A block holding a NaN is NaN; else one holding an Inf is that Inf (the sign of the first);
    else it is the mean of the block.

    >>> a = np.arange(16, dtype=np.float32).reshape(4, 4); a[0, 1] = np.nan
    >>> out, step = block_reduce(a, 2)
    >>> step, out.tolist()
    ([2, 2], [[nan, 4.5], [10.5, 12.5]])
    """
    h, w = values.shape
    sy, sx = max(1, math.ceil(h / side)), max(1, math.ceil(w / side))
    if sy == 1 and sx == 1:
        return values.astype(values.dtype if values.dtype == np.float64 else np.float32), [1, 1]
    oh, ow = math.ceil(h / sy), math.ceil(w / sx)
    padded = np.full((oh * sy, ow * sx), np.nan, dtype=np.float64)
    padded[:h, :w] = values
    blocks = padded.reshape(oh, sy, ow, sx).swapaxes(1, 2).reshape(oh, ow, sy * sx)
    valid = np.zeros((oh * sy, ow * sx), bool)
    valid[:h, :w] = True
    valid_b = valid.reshape(oh, sy, ow, sx).swapaxes(1, 2).reshape(oh, ow, sy * sx)
    finite = np.isfinite(blocks) & valid_b
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(finite, blocks, 0.0).sum(axis=2) / np.maximum(finite.sum(axis=2), 1)
    has_nan = (np.isnan(blocks) & valid_b).any(axis=2)
    infs = np.where(np.isinf(blocks) & valid_b, blocks, 0.0)
    first_inf = np.take_along_axis(infs, np.argmax(infs != 0, axis=2)[..., None], axis=2)[..., 0]
    out = np.where(has_nan, np.nan, np.where(first_inf != 0, first_inf, mean))
    return out.astype(np.float64 if values.dtype == np.float64 else np.float32), [sy, sx]


def envelope(values: np.ndarray, points: int = LINE_POINTS) -> tuple[np.ndarray, int]:
    """``(min, max)`` per bucket of a 1-D array, at most ``points`` buckets; NaN if a bucket has one.

    >>> out, step = envelope(np.array([1.0, 5.0, 2.0, np.nan, 3.0]), 3)
    >>> step, out.tolist()
    (2, [[1.0, 5.0], [nan, nan], [3.0, 3.0]])
    """
    n = values.shape[0]
    step = max(1, math.ceil(n / points))
    m = math.ceil(n / step) if n else 0
    padded = np.full(m * step, np.nan, dtype=np.float64)
    padded[:n] = values
    buckets = padded.reshape(m, step)
    real = np.arange(m * step).reshape(m, step) < n
    has_nan = (np.isnan(buckets) & real).any(axis=1)
    with np.errstate(invalid="ignore"):
        lo = np.where(real, buckets, np.inf).min(axis=1)
        hi = np.where(real, buckets, -np.inf).max(axis=1)
    out = np.stack([np.where(has_nan, np.nan, lo), np.where(has_nan, np.nan, hi)], axis=1)
    return out.astype(np.float64 if values.dtype == np.float64 else np.float32), step


def thin_points(values: np.ndarray, limit: int = SCATTER_POINTS) -> tuple[np.ndarray, int]:
    """Every ``k``-th row of an ``(n, 2)`` array so that at most ``limit`` remain."""
    step = max(1, math.ceil(values.shape[0] / limit))
    out = values[::step]
    return out.astype(np.float64 if values.dtype == np.float64 else np.float32), step


def _component(values: np.ndarray, field_ndim: int, component: int | None) -> np.ndarray:
    """One component of a vector/matrix field (flat C-order index), or the norm of each element."""
    esh = values.shape[field_ndim:]
    if not esh:
        return values.astype(np.float64)
    flat = values.reshape(*values.shape[:field_ndim], -1).astype(np.float64)
    if component is None:
        return np.sqrt((flat**2).sum(axis=-1))
    return flat[..., component]


def _wire(values: np.ndarray) -> tuple[str, bytes]:
    dtype = np.dtype("<f8") if values.dtype == np.float64 else np.dtype("<f4")
    return ("f64" if dtype.itemsize == 8 else "f32"), np.ascontiguousarray(values, dtype=dtype).tobytes()


# --- what crosses from the device ---------------------------------------------------------------------


def _sample_index(
    shape: Sequence[int], picture: PictureKind, origin: Sequence[int] | None = None
) -> tuple[tuple[Any, ...], list[int], list[int]]:
    """The device-side index of the part of a field a picture shows: for heat maps of 3-D and higher
    fields the 2-D slice at ``origin`` (the leading indexes; the first slice by default); a stride per
    axis when the part is larger than ``HOST_LIMIT``.
    Returns the index, the stride per shown axis and the origin (index of the shown part's first element)."""
    nd = len(shape)
    lead = tuple(origin or (0,) * max(0, nd - 2)) if picture == "heatmap" else ()
    shown = list(shape[len(lead) :])
    total = math.prod(shown)
    stride = 1
    if total > HOST_LIMIT:
        stride = math.ceil((total / HOST_LIMIT) ** (1 / len(shown)))
    index = (*lead, *(slice(None, None, stride) for _ in shown))
    return index, [stride] * len(shown), list(lead)


def picture_of(view: BufferView, component: int | None, *, origin: Sequence[int] | None = None) -> Picture:
    """The picture of a buffer view: a heat map, a line plot (``(min, max)`` buckets) or a scatter plot.

    ``origin``: for a heat map of a 3-D or higher field, the leading indexes of the 2-D slice shown.
    """
    shape, esh = view.shape, view.element_shape
    kind = picture_kind(len(shape), esh, component)
    if kind == "none" or np.dtype(_np_dtype(view.dtype)).kind not in "biuf":
        return NO_PICTURE
    index, stride, origin = _sample_index(shape, kind, origin)
    sample = view.numpy(index)
    field_nd = len(shape) - len(origin)
    note = _slice_note(origin, shape)
    label = view.name if component is None or not esh else f"{view.name}{component_labels(esh)[component]}"
    if kind == "scatter":
        pts = sample.reshape(-1, 2)
        values, step = thin_points(pts)
        steps = [stride[0] * step]
        bad = int((~np.isfinite(pts).all(axis=1)).sum())
        note = f"{bad} point(s) with NaN/Inf not drawn" if bad else note
    elif kind == "line":
        line = _component(sample, field_nd, component)
        values, step = envelope(line)
        steps = [stride[0] * step]
        if component is None and esh:
            label = f"|{view.name}|"
    else:
        grid = _component(sample, field_nd, component)
        values, block = block_reduce(grid)
        steps = [s * b for s, b in zip(stride, block)]
        if component is None and esh:
            label = f"|{view.name}|"
    dtype, data = _wire(values.astype(np.float64 if view.dtype == "f64" else np.float32))
    return Picture(_header(kind, dtype, values.shape, steps, origin, label, note), data)


def _header(
    kind: PictureKind, dtype: str, shape: Sequence[int], steps: list[int], origin: list[int], label: str, note: str
) -> dict[str, Any]:
    """A ``PictureView``."""
    return {"kind": kind, "dtype": dtype, "shape": list(shape), "step": steps, "origin": origin, "label": label,
            "note": note}


def _slice_note(origin: Sequence[int], shape: Sequence[int]) -> str:
    """``slice [3, :, :] of (8, 16, 16)``: where a heat map of a 3-D or higher field stands."""
    if not origin:
        return ""
    at = ", ".join([*map(str, origin), *[":"] * (len(shape) - len(origin))])
    return f"slice [{at}] of {tuple(shape)}"


def diff_picture(diff: DiffView, *, origin: Sequence[int] | None = None) -> Picture:
    """The picture of a diff map (``b - a``; the norm of the difference for vectors), at the heat map's slice."""
    dmap = np.asarray(diff.map(), dtype=np.float64)
    nd = dmap.ndim
    if nd == 0:
        return NO_PICTURE
    full = dmap.shape
    lead: list[int] = []
    if nd >= 3:
        lead = list(origin or [0] * (nd - 2))
        dmap = dmap[tuple(lead)]
    if dmap.ndim == 1:
        values, step = envelope(dmap)
        kind: PictureKind = "line"
        steps = [step]
    else:
        values, steps = block_reduce(dmap)
        kind = "heatmap"
    dtype, data = _wire(values.astype(np.float32))
    label = f"{diff.name}: step {diff.a} \u2192 {diff.b}"
    return Picture(_header(kind, dtype, values.shape, steps, lead, label, _slice_note(lead, full)), data)


def page_of(view: BufferView, page: int, size: int = PAGE_SIZE) -> tuple[dict[str, Any], bytes]:
    """One page of values: ``size`` field elements from ``page * size`` in C order, each with its
    components, as float64 bytes (``PageView`` and ``inspect_page``). Gathered on the device: only
    the rows of the first axis that hold the page cross to the host."""
    shape, esh = view.shape, view.element_shape
    total = math.prod(shape)
    ncomp = math.prod(esh) if esh else 1
    pages = max(1, math.ceil(total / size))
    page = min(max(0, page), pages - 1)
    start = page * size
    stop = min(total, start + size)
    header = {
        "page": page,
        "pages": pages,
        "size": size,
        "offset": start,
        "count": max(0, stop - start),
        "total": total,
        "columns": component_labels(esh) or ["value"],
    }
    if stop <= start:
        return header, b""
    inner = math.prod(shape[1:])
    r0, r1 = start // inner, math.ceil(stop / inner)
    rows = view.numpy(np.s_[r0:r1]).reshape(-1, ncomp)
    values = rows[start - r0 * inner : stop - r0 * inner].astype(np.float64)
    return header, np.ascontiguousarray(values, dtype="<f8").tobytes()


def _np_dtype(dtype: str) -> str:
    """numpy's name for a Taichi dtype name (``f32`` -> ``float32``)."""
    kinds = {"f": "float", "i": "int", "u": "uint"}
    return f"{kinds.get(dtype[:1], 'float')}{dtype[1:]}" if dtype[1:].isdigit() else "float32"
