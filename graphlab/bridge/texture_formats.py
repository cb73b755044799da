"""How an exported module's texture args travel: texel formats, channels and the copy graphs' names.

Taichi's C API has no copy between memory and an image, so texels move through a staging ndarray:
the module holds, next to the user's graphs, one small graph per texture format and dims that
copies an ndarray into an image (``graphlab_upload_<fmt>_<n>d``) and one that copies it back
(``graphlab_download_<fmt>_<n>d``). On the host a texture's values are a float32 array of its
dims plus one axis of channels (``(w, h, 1)`` for ``r32f``), in ``<arg>.npy`` like an ndarray's.

A sampled ``texture`` arg names no format in the graph: the module uses the format of the
notebook's texture given to ``gl.export(values=...)``, else :data:`DEFAULT_FORMAT`.
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_FORMAT",
    "TEXEL_CHANNELS",
    "TEXTURE_KINDS",
    "download_graph",
    "format_problem",
    "texel_format",
    "upload_graph",
]

TEXTURE_KINDS = ("texture", "rw_texture")
#: The formats whose texels a kernel reads and writes as floats (float and normalised formats), so
#: they cross as float32 .npy files; their channel counts.
TEXEL_CHANNELS = {
    "r32f": 1, "rg32f": 2, "rgba32f": 4, "r16f": 1, "rg16f": 2, "rgba16f": 4,
    "r8": 1, "rg8": 2, "rgba8": 4, "r16": 1, "rg16": 2, "rgba16": 4,
}  # fmt: skip
#: The format of a sampled texture's image when the notebook's texture was not given at export.
DEFAULT_FORMAT = "rgba32f"


def texel_format(kind: str, fmt: str | None, sample_fmt: str | None = None) -> str:
    """The image format of a texture arg: a rw_texture's own, else the notebook value's, else the default."""
    if kind == "rw_texture" and fmt is not None:
        return fmt
    return sample_fmt or DEFAULT_FORMAT


def format_problem(fmt: str) -> str | None:
    """Why texels of ``fmt`` cannot be exported (integer, depth and 3-channel formats), or None."""
    if fmt in TEXEL_CHANNELS:
        return None
    return (
        f"format {fmt} is not one the exported module can fill and read back (its texels cross as float32; "
        f"it takes {', '.join(TEXEL_CHANNELS)})"
    )


def upload_graph(fmt: str, ndim: int) -> str:
    """The module graph copying a staging ndarray ``src`` into image ``tex`` of ``fmt``."""
    return f"graphlab_upload_{fmt}_{ndim}d"


def download_graph(fmt: str, ndim: int) -> str:
    """The module graph copying image ``tex`` of ``fmt`` into a staging ndarray ``dst``."""
    return f"graphlab_download_{fmt}_{ndim}d"
