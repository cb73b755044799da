"""The size limits of a graph, shared by the model and the graph file loader.

What the model accepts, a saved graph file must load, and the reverse: so both ask the functions
here instead of keeping their own numbers. Names and dim sizes have their own module
(:mod:`graphlab.core.names`); this one holds the rest:

- :data:`MAX_NDIM`: axes of an ndarray or texture (Taichi's graph args go up to this).
- :data:`MAX_ELEMENT_AXES` and :data:`MAX_ELEMENT_DIM`: a vector ``(n,)`` or a matrix ``(n, m)``
  element, each axis 1 to 64. Taichi unrolls a matrix element into scalar code and already warns
  past 32 entries for local matrices; 64 per axis is far past any real use.
- :data:`MAX_REPEAT`: the repeat count of one sequence use, or a loop's ``max_iter``.
- :data:`MAX_UNROLLED`: dispatches Taichi builds to compile a graph (see below).
- :data:`MAX_EXPANDED`: node ids, and entries of the data-flow trace that validation walks.

Why :data:`MAX_UNROLLED` is 10,000,000: ``ti.graph`` has no loop node, so a compiled graph holds one
dispatch per unrolled step (a sequence nested in another is copied into its parent). Measured with
Taichi 1.7.4 on x64 (one thread, a one-line kernel): ``Sequential.dispatch`` costs about 56 us from
Python and a launch about 45 us, so 10 million steps take roughly ten minutes to build and eight to
run once. That is the most anyone could mean; a graph past it (sequences nested with large repeats
reach 10**21) would never finish compiling, so it is refused with a diagnostic (GL024) instead.
A loop (``g.loop(count=n)``) is compiled once and repeated at run time: it is the way to go further.

:data:`MAX_EXPANDED` is lower because every node id and trace entry is a Python object that each
validation rule visits: a million is already seconds per check.
"""

from __future__ import annotations

from typing import TypeGuard

__all__ = [
    "MAX_ELEMENT_AXES",
    "MAX_ELEMENT_DIM",
    "MAX_EXPANDED",
    "MAX_NDIM",
    "MAX_REPEAT",
    "MAX_UNROLLED",
    "TEXTURE_FORMATS",
    "element_dim_problem",
    "element_shape_problem",
    "fmt_problem",
    "ndim_problem",
    "repeat_problem",
]

MAX_NDIM = 8
MAX_ELEMENT_AXES = 2
MAX_ELEMENT_DIM = 64
MAX_REPEAT = 10_000_000
MAX_UNROLLED = 10_000_000
MAX_EXPANDED = 1_000_000

#: The members of ``ti.Format`` in Taichi 1.7.4 (``unknown`` aside): what a rw_texture's ``fmt`` names.
TEXTURE_FORMATS: tuple[str, ...] = (
    "bgra8", "bgra8srgb", "depth16", "depth24stencil8", "depth32f",
    "r16", "r16f", "r16i", "r16u", "r32f", "r32i", "r32u", "r8", "r8i", "r8u",
    "rg16", "rg16f", "rg16i", "rg16u", "rg32f", "rg32i", "rg32u", "rg8", "rg8i", "rg8u",
    "rgb16", "rgb16f", "rgb16i", "rgb16u", "rgb32f", "rgb32i", "rgb32u",
    "rgba16", "rgba16f", "rgba16i", "rgba16u", "rgba32f", "rgba32i", "rgba32u",
    "rgba8", "rgba8i", "rgba8srgb", "rgba8u",
)  # fmt: skip


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _shown(value: object) -> str:
    """A bad value for a message: short, and safe for ints too long to print (over 4,300 digits)."""
    if isinstance(value, int) and abs(value) >= 10**30:
        return f"an int of {value.bit_length():,} bits"
    try:
        text = repr(value)
    except ValueError:  # an int too long to print, inside a tuple
        return f"a {type(value).__name__}"
    return text if len(text) <= 60 else f"{text[:57]}..."


def ndim_problem(value: object) -> str | None:
    """Why ``value`` is not an ndim (an int in 0..MAX_NDIM), or None."""
    if not _is_int(value) or not 0 <= value <= MAX_NDIM:
        return f"ndim must be an int in 0..{MAX_NDIM}, got {_shown(value)}"
    return None


def element_dim_problem(value: object) -> str | None:
    """Why ``value`` is not one axis of an element shape (an int in 1..MAX_ELEMENT_DIM), or None."""
    if not _is_int(value) or not 1 <= value <= MAX_ELEMENT_DIM:
        return f"an element shape axis must be an int in 1..{MAX_ELEMENT_DIM}, got {_shown(value)}"
    return None


def element_shape_problem(value: object) -> str | None:
    """Why ``value`` is not an element shape: ``()``, ``(n,)`` or ``(n, m)``, axes in 1..MAX_ELEMENT_DIM."""
    if not isinstance(value, (tuple, list)) or len(value) > MAX_ELEMENT_AXES:
        return f"element_shape must be () for scalars, (n,) for vectors or (n, m) for matrices, got {_shown(value)}"
    for dim in value:
        problem = element_dim_problem(dim)
        if problem is not None:
            return problem
    return None


def repeat_problem(value: object) -> str | None:
    """Why ``value`` is not a repeat count or max_iter (an int in 1..MAX_REPEAT), or None."""
    if not _is_int(value) or not 1 <= value <= MAX_REPEAT:
        return f"repeat must be an int in 1..{MAX_REPEAT:,}, got {_shown(value)}"
    return None


def check_every_problem(check_every: int, max_iter: int | None, *, guarded: bool) -> str | None:
    """Why a while_ loop's ``check_every`` defeats its flag, or None (GL019).

    With ``check_every`` larger than ``max_iter`` the flag is read only after the last iteration, so
    every iteration runs whatever the flag says: a solver that converged runs on (and may leave
    NaN). A guarded loop still stops exactly (it replays from its saved buffers), so it may.
    """
    if guarded or max_iter is None or check_every <= max_iter:
        return None
    return (
        f"check_every={check_every} is larger than max_iter={max_iter}, so the flag is read only after the "
        f"last iteration and all {max_iter} run whatever it says; give check_every <= max_iter "
        f"(e.g. check_every={max(1, max_iter // 2)}), or guarded=True to stop exactly"
    )


def fmt_problem(kind: str, value: object) -> str | None:
    """Why ``value`` is not the ``fmt`` of an arg of ``kind``: a rw_texture, and only it, names a ti.Format."""
    if value is None:
        # as g.rw_texture refuses it: Taichi needs the format to build the texture's kernels
        return "a rw_texture needs a fmt (a ti.Format name, e.g. 'r32f')" if kind == "rw_texture" else None
    if kind != "rw_texture":
        return f"only rw_texture args take a fmt, got fmt={_shown(value)} on a {kind}"
    if not isinstance(value, str) or value not in TEXTURE_FORMATS:
        return f"fmt {_shown(value)} is not a ti.Format name (e.g. 'r32f', 'rgba8')"
    return None
