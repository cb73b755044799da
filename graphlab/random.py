"""Reproducible random numbers inside kernels: a counter-based generator keyed by seed, element and step.

Why this exists: ``ti.random()`` keeps hidden per-thread state on the device. A debugger that goes
``back()`` restores the buffers but not that state, so the replayed step draws other numbers; an
exported module draws differently from the notebook; x64, Vulkan and CUDA each draw their own
sequence. A *counter-based* generator has no state at all: the draw is a pure function of
``(seed, index, counter)``, so the same call gives the same bits on every arch, after ``back()``,
and in an exported module. The seed and the step counter are ordinary graph scalar args.

The function is Philox-4x32-10 (Salmon, Moraes, Dror and Shaw, "Parallel random numbers: as easy
as 1, 2, 3", SC 2011), the generator cuRAND and PyTorch use on GPUs. It was chosen over PCG-style
hashes because it has published known-answer vectors (Random123's ``kat_vectors``, which the tests
check), passes TestU01's BigCrush with 10 rounds, and needs only 32-bit integer multiply, add, xor
and shift. Its 32x32->64-bit multiply is one u64 multiply on LLVM archs (x64, CUDA) and 16-bit
halves in u32 arithmetic on SPIR-V archs (Vulkan, Metal), so the Vulkan code needs no Int64
capability and exports with the default device capabilities; both give the same bits. Integer
arithmetic is exact on every backend; the float forms take the top 24 bits and scale by 2**-24,
which is exact too, so the uniform floats are bit-identical across archs.

Use the ``@ti.func``'s from inside kernels (importing this module imports Taichi; ``import graphlab``
does not; :func:`fill_uniform` is a ready kernel with a runnable example), for instance in a module::

    from graphlab.random import rand_vec4

    @ti.kernel
    def init(x: ti.types.ndarray(ti.math.vec2, ndim=1), seed: ti.i32, step: ti.i32):
        for i in x:
            r = rand_vec4(seed, i, step)
            x[i] = ti.Vector([r[0], r[1]])

Every distinct ``(seed, index, counter)`` triple gives four fresh, independent 32-bit words
(:func:`rand_u32x4`); the scalar forms return the first of them. A kernel that needs more than
four draws per element and step uses several counters, e.g. ``counter = step * k + j`` for the
``j``-th of ``k`` blocks. Seeds are i32 graph scalars (Taichi 1.7.4's C API passes i32, not u32);
a counter that changes per repeat of a sequence lives in a buffer (:func:`advance_counter`).
:func:`rand_normal2` gives two standard normals: repeatable on one arch, but equal across archs only
to about 1e-5, since it needs ``log`` and ``cos``.
"""

# No `from __future__ import annotations`: Taichi reads ti.func annotations as objects.

import taichi as ti

from graphlab.bridge.runtime import current_arch
from graphlab.bridge.types import expression_dtype
from graphlab.core.errors import GraphlabError

__all__ = [
    "PHILOX_ROUNDS",
    "RandomArgError",
    "advance_counter",
    "check_words",
    "fill_uniform",
    "philox4x32",
    "rand_f32",
    "rand_normal2",
    "rand_u32",
    "rand_u32x4",
    "rand_vec4",
    "u32_to_unit_f32",
    "wide_multiply",
]

#: Rounds of the Philox bijection (the standard Philox-4x32-10, Crush-resistant with margin).
PHILOX_ROUNDS = 10

# The Philox-4x32 multipliers and Weyl key increments from the paper (Random123's constants).
_MUL0 = 0xD2511F53
_MUL1 = 0xCD9E8D57
_WEYL0 = 0x9E3779B9
_WEYL1 = 0xBB67AE85

#: Taichi's LLVM archs: a 32x32->64-bit product there is one native multiply.
_WIDE_MULTIPLY_ARCHS = frozenset({"x64", "arm64", "cuda", "amdgpu"})

#: 2**-24: the spacing of the 24-bit uniform floats in [0, 1).
_UNIT = 1.0 / 16777216.0

#: The dtypes a seed, index or counter may have: integers of at most 32 bits (Python ints too).
_WORD_DTYPES = frozenset({"int", "i8", "i16", "i32", "u8", "u16", "u32"})


class RandomArgError(GraphlabError, TypeError):
    """A seed, index or counter given to :mod:`graphlab.random` is not an integer of at most 32 bits.

    Raised while the calling kernel compiles; Taichi reports it as a ``TaichiTypeError`` (also a
    ``TypeError``) whose message holds this one and the kernel's line.
    """


def check_words(seed: object, index: object, counter: object) -> bool:
    """Refuse a float, a vector or a 64-bit integer before Taichi would cast it to u32 silently.

    Called by the generator's ``@ti.func``s inside ``ti.static`` while a kernel compiles; returns
    True so it can sit there.
    """
    for name, value in (("seed", seed), ("index", index), ("counter", counter)):
        dtype = expression_dtype(value)
        if dtype in _WORD_DTYPES:
            continue
        if dtype in ("i64", "u64"):
            fix = f"pass ti.cast({name}, ti.u32) if its low 32 bits are enough"
        elif dtype.startswith("[Tensor"):
            fix = "pass one flat index per element, e.g. i * n + j for a 2-D loop over (i, j)"
        else:
            fix = "pass an integer: an i32 graph scalar for the seed, the loop index, a step count"
        raise RandomArgError(f"graphlab.random: {name} must be an integer of at most 32 bits, not {dtype}; {fix}")
    return True


@ti.func
def _mulhilo_halves(a, b):
    """The high and low words of ``a * b`` in 16-bit halves: u32 arithmetic only (SPIR-V targets)."""
    mask = ti.u32(0xFFFF)
    a_lo, a_hi = a & mask, a >> ti.u32(16)
    b_lo, b_hi = b & mask, b >> ti.u32(16)
    ll = a_lo * b_lo
    lh = a_lo * b_hi
    hl = a_hi * b_lo
    mid = (ll >> ti.u32(16)) + (lh & mask) + (hl & mask)  # < 3 * 2**16: no overflow
    hi = a_hi * b_hi + (lh >> ti.u32(16)) + (hl >> ti.u32(16)) + (mid >> ti.u32(16))
    return ti.Vector([hi, a * b], dt=ti.u32)


@ti.func
def _mulhilo_wide(a, b):
    """The high and low words of ``a * b`` from one u64 product (LLVM targets: one multiply)."""
    p = ti.cast(a, ti.u64) * ti.cast(b, ti.u64)
    return ti.Vector([ti.cast(p >> ti.u64(32), ti.u32), ti.cast(p & ti.u64(0xFFFFFFFF), ti.u32)], dt=ti.u32)


def wide_multiply() -> bool:
    """Whether the kernel being compiled targets an LLVM arch, where a u64 product is native.

    Both forms give the same bits; the halves cost about 3.5x as much on x64 (measured, one thread),
    and a u64 on Vulkan would need the Int64 device capability at export.
    """
    return current_arch() in _WIDE_MULTIPLY_ARCHS


@ti.func
def _mulhilo(a: ti.u32, b: ti.u32) -> ti.types.vector(2, ti.u32):
    """The high and low 32-bit words of the 64-bit product ``a * b``."""
    result = ti.Vector([0, 0], dt=ti.u32)
    if ti.static(wide_multiply()):
        result = _mulhilo_wide(a, b)
    else:
        result = _mulhilo_halves(a, b)
    return result


@ti.func
def philox4x32(counter: ti.types.vector(4, ti.u32), key0: ti.u32, key1: ti.u32) -> ti.types.vector(4, ti.u32):
    """Philox-4x32-10 of a 4-word counter under a 2-word key: four uniform 32-bit words.

    A bijection of the counter for each key: distinct counters never give the same block.
    """
    c = counter
    k0, k1 = key0, key1
    for r in ti.static(range(PHILOX_ROUNDS)):
        if ti.static(r > 0):
            k0 = k0 + ti.u32(_WEYL0)
            k1 = k1 + ti.u32(_WEYL1)
        p0 = _mulhilo(ti.u32(_MUL0), c[0])
        p1 = _mulhilo(ti.u32(_MUL1), c[2])
        c = ti.Vector([p1[0] ^ c[1] ^ k0, p1[1], p0[0] ^ c[3] ^ k1, p0[1]], dt=ti.u32)
    return c


@ti.func
def rand_u32x4(seed, index, counter):
    """Four independent uniform u32 words for one ``(seed, index, counter)``.

    The seed is the key; ``(index, counter, 0, 0)`` is the Philox counter. Each argument is an
    integer scalar of at most 32 bits; signed ones (a loop index, an i32 arg) count by their
    two's-complement bits. Anything else is refused while the kernel compiles (:class:`RandomArgError`).
    """
    ti.static(check_words(seed, index, counter))
    return philox4x32(
        ti.Vector([ti.cast(index, ti.u32), ti.cast(counter, ti.u32), 0, 0], dt=ti.u32),
        ti.cast(seed, ti.u32),
        ti.u32(0),
    )


@ti.func
def rand_u32(seed, index, counter):
    """One uniform u32: the first word of :func:`rand_u32x4`."""
    return rand_u32x4(seed, index, counter)[0]


@ti.func
def u32_to_unit_f32(bits: ti.u32) -> ti.f32:
    """The top 24 bits as a float in [0, 1) on a 2**-24 grid: exact, so identical on every arch."""
    return ti.cast(ti.cast(bits >> ti.u32(8), ti.i32), ti.f32) * _UNIT


@ti.func
def rand_f32(seed, index, counter):
    """One uniform f32 in [0, 1) (24 random bits): :func:`u32_to_unit_f32` of :func:`rand_u32`."""
    return u32_to_unit_f32(rand_u32(seed, index, counter))


@ti.func
def rand_vec4(seed, index, counter):
    """Four independent uniform f32 in [0, 1), one per word of :func:`rand_u32x4`."""
    w = rand_u32x4(seed, index, counter)
    return ti.Vector([u32_to_unit_f32(w[0]), u32_to_unit_f32(w[1]), u32_to_unit_f32(w[2]), u32_to_unit_f32(w[3])])


@ti.func
def rand_normal2(seed, index, counter):
    """Two independent standard normal f32 (Box-Muller over the first two words of :func:`rand_u32x4`).

    The same on one arch in every run and after ``back()``; across archs only to about 1e-5 (x64
    against lavapipe: 2.2e-6 at most), since ``log``, ``sqrt`` and ``cos`` round differently on
    each arch (the uniform forms are bit-identical).
    The first uniform is taken in (0, 1] so its log is finite; the largest magnitude is about 5.8.
    """
    w = rand_u32x4(seed, index, counter)
    u1 = ti.cast(ti.cast(w[0] >> ti.u32(8), ti.i32) + 1, ti.f32) * _UNIT
    u2 = u32_to_unit_f32(w[1])
    radius = ti.sqrt(-2.0 * ti.log(u1))
    angle = 2.0 * ti.math.pi * u2
    return ti.Vector([radius * ti.cos(angle), radius * ti.sin(angle)])


@ti.kernel
def advance_counter(counter: ti.types.ndarray(ti.i32, ndim=1)):
    """Add one to ``counter[0]``: dispatched at the end of a repeated sequence, each repeat draws anew.

    A graph's scalar args are the same for every repeat of a sequence, so a step counter that must
    change per repeat lives in a 1-element i32 ndarray (state): the debugger snapshots it with the
    other buffers, so ``back()`` rewinds it too, and an exported module carries it like any buffer.
    """
    counter[0] += 1


@ti.kernel
def fill_uniform(out: ti.types.ndarray(ti.f32, ndim=1), seed: ti.i32, counter: ti.i32):
    """Fill ``out`` with uniform floats in [0, 1): ``out[i] = rand_f32(seed, i, counter)``.

    A ready kernel for a reproducible random initial state (dispatch it in a graph, or call it).

    Examples
    --------
    The same seed and counter give the same floats, on any arch and in any run:

    >>> from graphlab.random import fill_uniform
    >>> x = np.zeros(4, np.float32)
    >>> fill_uniform(x, 7, 0)
    >>> x.tolist()
    [0.9545971155166626, 0.4069603681564331, 0.006075084209442139, 0.39019906520843506]
    >>> y = np.zeros(4, np.float32)
    >>> fill_uniform(y, 7, 1)  # the next step: new draws
    >>> bool((x != y).all())
    True
    """
    for i in out:
        out[i] = rand_f32(seed, i, counter)
