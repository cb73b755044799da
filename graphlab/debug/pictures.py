"""Pictures of buffers for the notebook and the widget, made with numpy alone.

A PNG heat map for 2-D buffers (NaN and Inf in colours of their own, so one bad cell in a 4096^2
grid still shows after downsampling), an SVG line plot for 1-D buffers and an SVG scatter plot for
particle positions. No plotting library is needed: the PNG encoder is ``zlib`` + ``struct`` and the
SVGs are short strings, which the widget sends as bytes and a notebook ``_repr_`` shows as is.

Examples
--------
>>> import numpy as np
>>> png = heatmap_png(np.array([[0.0, 1.0], [np.nan, np.inf]]), scale=4, legend=False)
>>> png[:8] == b"\\x89PNG\\r\\n\\x1a\\n", png_size(png)
(True, (8, 8))
"""

import itertools
import math
import struct
import zlib
from typing import Literal
from xml.sax.saxutils import escape

import numpy as np

from graphlab.core.errors import GraphlabError

__all__ = ["COLORMAPS", "PictureError", "encode_png", "heatmap_png", "lineplot_svg", "png_size", "scatter_svg"]

RGB = tuple[int, int, int]

# Anchor colours, interpolated linearly in between: viridis (perceptually uniform, for magnitudes),
# gray, and a blue-white-red diverging map for signed values such as diffs.
COLORMAPS: dict[str, tuple[RGB, ...]] = {
    "viridis": (
        (68, 1, 84),
        (72, 40, 120),
        (62, 73, 137),
        (49, 104, 142),
        (38, 130, 142),
        (31, 158, 137),
        (53, 183, 121),
        (110, 206, 88),
        (181, 222, 43),
        (253, 231, 37),
    ),
    "gray": ((0, 0, 0), (255, 255, 255)),
    "coolwarm": ((59, 76, 192), (221, 221, 221), (180, 4, 38)),
}


class PictureError(GraphlabError, ValueError):
    """Data that cannot be drawn as asked (wrong number of dimensions, unknown colormap)."""


# ---------------------------------------------------------------------------------------------
# PNG


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def encode_png(rgb: np.ndarray, text: dict[str, str] | None = None) -> bytes:
    """PNG bytes of an (h, w, 3) uint8 image: 8-bit RGB, filter 0 per row, zlib level 6."""
    h, w, _ = rgb.shape
    rows = np.concatenate([np.zeros((h, 1), np.uint8), rgb.reshape(h, w * 3)], axis=1)
    out = b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
    for key, value in (text or {}).items():
        out += _chunk(b"tEXt", key.encode("latin-1") + b"\0" + value.encode("latin-1", "replace"))
    return out + _chunk(b"IDAT", zlib.compress(rows.tobytes(), 6)) + _chunk(b"IEND", b"")


def png_size(png: bytes) -> tuple[int, int]:
    """(width, height) from a PNG's IHDR."""
    if png[:8] != b"\x89PNG\r\n\x1a\n" or png[12:16] != b"IHDR":
        raise PictureError("not a PNG: the signature or the IHDR chunk is missing")
    return struct.unpack(">II", png[16:24])


def _lut(colormap: str) -> np.ndarray:
    if colormap not in COLORMAPS:
        raise PictureError(f"unknown colormap {colormap!r}; choose one of {', '.join(COLORMAPS)}")
    anchors = np.array(COLORMAPS[colormap], np.float64)
    t = np.linspace(0.0, 1.0, 256)
    pos = np.linspace(0.0, 1.0, len(anchors))
    return np.stack([np.interp(t, pos, anchors[:, c]) for c in range(3)], axis=1).round().astype(np.uint8)


def _as_float(a: object, ndim: int, what: str) -> np.ndarray:
    arr = np.asarray(a)
    if arr.dtype.kind not in "biuf":
        raise PictureError(
            f"{what}: expected real numbers, got dtype {arr.dtype}; for a ti.ndarray pass "
            "x.to_numpy() (or a slice of it)"
        )
    if arr.ndim != ndim or arr.size == 0:
        raise PictureError(
            f"{what}: expected a non-empty {ndim}-D array, got shape {arr.shape}; "
            "select a slice or a component first, e.g. a[..., 0]"
        )
    return arr.astype(np.float64)


def _downsample(a: np.ndarray, max_side: int) -> np.ndarray:
    """Block means of finite values; a block holding NaN stays NaN, else one holding Inf stays Inf."""
    f = math.ceil(max(a.shape) / max_side)
    if f <= 1:
        return a
    h, w = (-(-a.shape[0] // f)) * f, (-(-a.shape[1] // f)) * f
    pad = np.pad(a, ((0, h - a.shape[0]), (0, w - a.shape[1])), mode="edge")
    blocks = pad.reshape(h // f, f, w // f, f).swapaxes(1, 2).reshape(h // f, w // f, f * f)
    fin = np.isfinite(blocks)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(fin, blocks, 0.0).sum(axis=2) / fin.sum(axis=2)
    out = np.where(np.isposinf(blocks).any(axis=2), np.inf, out)
    out = np.where(np.isneginf(blocks).any(axis=2), -np.inf, out)
    return np.where(np.isnan(blocks).any(axis=2), np.nan, out)


def heatmap_png(
    a2d: object,
    *,
    colormap: Literal["viridis", "gray", "coolwarm"] = "viridis",
    vmin: float | None = None,
    vmax: float | None = None,
    center: float | None = None,
    nan_color: RGB = (255, 0, 255),
    posinf_color: RGB = (255, 255, 255),
    neginf_color: RGB = (0, 0, 0),
    scale: int | None = None,
    max_side: int = 1024,
    origin: Literal["upper", "lower"] = "upper",
    legend: bool = True,
) -> bytes:
    """A PNG heat map of a 2-D array: row 0 on top (``origin="upper"``) as in a matrix.

    Finite values map linearly from ``vmin``..``vmax`` (default: their min and max) onto the
    colormap; ``center`` makes the default range symmetric around it (``center=0`` with
    ``colormap="coolwarm"`` for a diff map). NaN, +Inf and -Inf get their own colours. Arrays
    larger than ``max_side`` are block-averaged (a block with a NaN stays NaN); small ones are
    enlarged ``scale`` times (default: to about 256 pixels). ``legend`` adds a colour bar on the
    right, max at the top; the range is in the PNG's ``tEXt`` chunks ``vmin``/``vmax``.
    """
    a = _downsample(_as_float(a2d, 2, "heatmap_png(a2d)"), max_side)
    if origin == "lower":
        a = a[::-1]
    fin = np.isfinite(a)
    lo = float(a[fin].min()) if vmin is None and fin.any() else (vmin if vmin is not None else 0.0)
    hi = float(a[fin].max()) if vmax is None and fin.any() else (vmax if vmax is not None else 1.0)
    if center is not None:
        half = max(abs(hi - center), abs(center - lo))
        lo = center - half if vmin is None else lo
        hi = center + half if vmax is None else hi
    lut = _lut(colormap)
    span = hi - lo if hi > lo else 1.0
    with np.errstate(all="ignore"):
        idx = np.clip(np.where(fin, (a - lo) / span, 0.5) * 255.0, 0, 255).round().astype(np.intp)
    rgb = lut[idx]
    rgb[np.isnan(a)] = nan_color
    rgb[np.isposinf(a)] = posinf_color
    rgb[np.isneginf(a)] = neginf_color
    if scale is None:
        scale = max(1, min(32, 256 // max(a.shape)))
    rgb = rgb.repeat(scale, axis=0).repeat(scale, axis=1)
    if legend:
        h = rgb.shape[0]
        bar = lut[np.linspace(255, 0, h).round().astype(np.intp)][:, None, :].repeat(12, axis=1)
        gap = np.full((h, 4, 3), 255, np.uint8)
        rgb = np.concatenate([rgb, gap, bar], axis=1)
    return encode_png(np.ascontiguousarray(rgb), {"vmin": repr(lo), "vmax": repr(hi), "Software": "graphlab"})


# ---------------------------------------------------------------------------------------------
# SVG


def _num(x: float) -> str:
    return f"{x:.6g}"


def _svg(width: int, height: int, body: list[str], title: str | None) -> str:
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="10">'
    )
    t = f"<title>{escape(title)}</title>" if title else ""
    return head + t + "".join(body) + "</svg>"


def _envelope(y: np.ndarray, buckets: int) -> tuple[np.ndarray, np.ndarray]:
    """Min/max per bucket (NaN-aware), so spikes survive when many points share a pixel."""
    n = y.size
    edges = np.linspace(0, n, buckets + 1).astype(np.intp)
    xs, ys = [], []
    for a, b in itertools.pairwise(edges):
        seg = y[a:b]
        good = seg[np.isfinite(seg)]
        if good.size == 0:
            xs.append(a)
            ys.append(np.nan)
            continue
        i, j = (
            a + int(np.argmin(np.where(np.isfinite(seg), seg, np.inf))),
            a + int(np.argmax(np.where(np.isfinite(seg), seg, -np.inf))),
        )
        for k in sorted({i, j}):
            xs.append(k)
            ys.append(y[k])
    return np.asarray(xs, np.float64), np.asarray(ys, np.float64)


def lineplot_svg(a1d: object, *, width: int = 480, height: int = 160, title: str | None = None) -> str:
    """An SVG line plot of a 1-D array against its index.

    NaN breaks the line; +Inf/-Inf are red ticks at the top/bottom edge; long arrays keep each
    pixel column's min and max so spikes stay visible.
    """
    y = _as_float(a1d, 1, "lineplot_svg(a1d)")
    n = y.size
    xs, ys = (np.arange(n, dtype=np.float64), y) if n <= 2 * width else _envelope(y, width)
    fin = np.isfinite(ys)
    lo, hi = (float(ys[fin].min()), float(ys[fin].max())) if fin.any() else (0.0, 1.0)
    if hi == lo:
        lo, hi = lo - 0.5, hi + 0.5
    left, right, top, bottom = 48, 8, 8, 18
    pw, ph = width - left - right, height - top - bottom
    px = left + xs / max(n - 1, 1) * pw
    py = top + (hi - ys) / (hi - lo) * ph
    body = [f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#ccc"/>']
    runs, cur = [], []
    for x, yv, ok in zip(px, py, fin):
        if ok:
            cur.append(f"{_num(x)},{_num(yv)}")
        elif cur:
            runs.append(cur)
            cur = []
    runs += [cur] if cur else []
    body += [f'<polyline fill="none" stroke="#1f77b4" stroke-width="1" points="{" ".join(r)}"/>' for r in runs]
    for x, v in zip(px, ys):
        if np.isinf(v):
            yy = top if v > 0 else top + ph
            body.append(f'<line x1="{_num(x)}" x2="{_num(x)}" y1="{yy - 4}" y2="{yy + 4}" stroke="red"/>')
    nan_count = int(np.isnan(y).sum())
    body += [
        f'<text x="{left - 4}" y="{top + 8}" text-anchor="end">{_num(hi)}</text>',
        f'<text x="{left - 4}" y="{top + ph}" text-anchor="end">{_num(lo)}</text>',
        f'<text x="{left}" y="{height - 4}">0</text>',
        f'<text x="{left + pw}" y="{height - 4}" text-anchor="end">{n - 1}</text>',
    ]
    if nan_count:
        body.append(
            f'<text x="{left + pw / 2}" y="{height - 4}" text-anchor="middle" fill="red">{nan_count} NaN</text>'
        )
    return _svg(width, height, body, title)


def scatter_svg(
    points_n_by_2: object,
    *,
    width: int = 320,
    height: int = 320,
    max_points: int = 20000,
    radius: float = 1.5,
    equal_aspect: bool = True,
    title: str | None = None,
) -> str:
    """An SVG scatter plot of (n, 2) points, e.g. particle positions (y up).

    Points with a NaN/Inf coordinate are left out and counted in a note; more than ``max_points``
    points are thinned by an even stride. All dots are one ``<path>``, so the SVG stays small.
    """
    p = _as_float(points_n_by_2, 2, "scatter_svg(points_n_by_2)")
    if p.shape[1] != 2:
        raise PictureError(
            f"scatter_svg(points_n_by_2): expected shape (n, 2), got {p.shape}; "
            "for 3-D positions pass two columns, e.g. p[:, :2]"
        )
    good = np.isfinite(p).all(axis=1)
    bad = int((~good).sum())
    q = p[good]
    if q.shape[0] > max_points:
        q = q[:: math.ceil(q.shape[0] / max_points)]
    pad = 8
    pw, ph = width - 2 * pad, height - 2 * pad
    if q.size:
        lo, hi = q.min(axis=0), q.max(axis=0)
    else:
        lo, hi = np.zeros(2), np.ones(2)
    span = np.where(hi > lo, hi - lo, 1.0)
    sx, sy = pw / span[0], ph / span[1]
    if equal_aspect:
        sx = sy = min(sx, sy)
    xs = pad + (q[:, 0] - lo[0]) * sx
    ys = height - pad - (q[:, 1] - lo[1]) * sy
    d = "".join(f"M{_num(x)} {_num(y)}h0" for x, y in zip(xs, ys))
    body = [f'<path d="{d}" stroke="#1f77b4" stroke-width="{_num(2 * radius)}" stroke-linecap="round"/>']
    if bad:
        body.append(f'<text x="{pad}" y="{pad + 8}" fill="red">{bad} non-finite points left out</text>')
    return _svg(width, height, body, title)
