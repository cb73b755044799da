"""Property: any run values either run or are refused with a graphlab error before anything is dispatched.

Values are mutated from a good set: a name dropped or added, a value swapped for numpy arrays of
any dtype, shape, order or writability, ``ti.ndarray``s of the wrong dtype or shape, numbers of the
wrong type or size, and other objects. Refused values must leave every array as it was (nothing
dispatched, nothing copied back), and no raw Taichi or numpy error may come out.

Kernels live here (no ``from __future__ import annotations``: Taichi reads the annotations).
"""

import numpy as np
import pytest
import taichi as ti
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import graphlab as gl

N = 4
NAMES = ("src", "f", "k", "m", "dst")


@ti.kernel
def scale(
    src: ti.types.ndarray(dtype=ti.f32, ndim=1),
    f: ti.f32,
    k: ti.i32,
    m: ti.types.matrix(2, 2, ti.f32),
    dst: ti.types.ndarray(dtype=ti.f32, ndim=1),
):
    for i in src:
        dst[i] = src[i] * f + k + m[0, 0]


@ti.kernel
def scale_plain(
    src: ti.types.ndarray(dtype=ti.f32, ndim=1), f: ti.f32, k: ti.i32, dst: ti.types.ndarray(dtype=ti.f32, ndim=1)
):
    for i in src:
        dst[i] = src[i] * f + k


@ti.kernel
def bump(dst: ti.types.ndarray(dtype=ti.f32, ndim=1), k: ti.i32):
    for i in dst:
        dst[i] += k


def small_graph() -> gl.Graph:
    g = gl.Graph("fuzz_values")
    src = g.ndarray("src", ti.f32, ndim=1, shape="n", role="input")
    dst = g.ndarray("dst", ti.f32, ndim=1, shape="n", role="output")
    k = g.scalar("k", ti.i32)
    g.dispatch(scale, src, g.scalar("f", ti.f32), k, g.matrix("m", ti.types.matrix(2, 2, ti.f32)), dst)
    g.dispatch(bump, dst, k)
    return g


def good_values() -> dict:
    return {
        "src": np.arange(N, dtype=np.float32),
        "f": 2.0,
        "k": 1,
        "m": [[1.0, 0.0], [0.0, 1.0]],
        "dst": np.full(N, 5.0, np.float32),
    }


def _read_only(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


def _ti_ndarray(dtype: str, shape: tuple[int, ...], vector: bool) -> object:
    taichi_dtype = {"f32": ti.f32, "f64": ti.f64, "i32": ti.i32}[dtype]
    if vector:
        return ti.Vector.ndarray(2, taichi_dtype, shape=shape)
    return ti.ndarray(taichi_dtype, shape=shape)


DTYPES = st.sampled_from(["f4", "f8", "i4", "i8", "u1", "?", "f2", "c8", ">f4"])
SHAPES = st.one_of(
    st.just((N,)), st.tuples(st.integers(0, 6)), st.tuples(st.integers(0, 3), st.integers(1, 3)), st.just(())
)
NUMPY_ARRAYS = st.one_of(
    hnp.arrays(DTYPES, SHAPES),
    hnp.arrays(DTYPES, SHAPES).map(_read_only),
    hnp.arrays(np.float32, (2 * N,)).map(lambda a: a[::2]),  # a strided view
    hnp.arrays(np.float32, (N,)).map(np.asfortranarray),
    st.just(np.array([1, "a", None, 2.0], dtype=object)),
    st.just(np.broadcast_to(np.float32(0), (N,))),
)
TI_NDARRAYS = st.builds(
    _ti_ndarray, st.sampled_from(["f32", "f64", "i32"]), st.sampled_from([(N,), (3,), (N, 2)]), st.booleans()
)
NUMBERS = st.one_of(
    st.integers(-(2**80), 2**80),
    st.just(10**400),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.complex_numbers(max_magnitude=10),
    st.sampled_from(
        [np.float32(1.5), np.int64(3), np.bool_(True), np.complex64(1), np.float16(2), np.uint64(2**64 - 1)]
    ),
)
MATRICES = st.one_of(
    st.lists(st.lists(st.floats(allow_nan=True), min_size=1, max_size=3), min_size=1, max_size=3),
    st.just([[2**2000, 0], [0, 1]]),
    st.just([[1j, 0], [0, 1]]),
)
OTHERS = st.sampled_from([None, "2", b"x", {}, {"a": 1}, [], object(), ti.f32])
VALUES = st.one_of(NUMPY_ARRAYS, TI_NDARRAYS, NUMBERS, MATRICES, OTHERS)
MUTATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("set"), st.sampled_from(NAMES), VALUES),
        st.tuples(st.just("drop"), st.sampled_from(NAMES), st.none()),
        st.tuples(st.just("add"), st.one_of(st.text(max_size=8), st.integers(), st.none()), VALUES),
    ),
    min_size=1,
    max_size=3,
)


def apply(mutations: list, base: dict | None = None) -> dict:
    values = good_values() if base is None else dict(base)
    for op, name, value in mutations:
        if op == "drop":
            values.pop(name, None)
        else:
            values[name] = value
    return values


def snapshot(values: dict) -> dict:
    """Every array's bytes: a refused run must change none of them."""
    out = {}
    for name, value in values.items():
        if isinstance(value, np.ndarray) and value.dtype != object:
            out[name] = (value.shape, value.dtype, value.tobytes())
        elif isinstance(value, ti.lang._ndarray.Ndarray):
            out[name] = value.to_numpy().tobytes()
    return out


ENTRIES = {
    "graph_run": lambda g, values: g.run(values),
    "compiled_run": lambda g, values: g.compile().run(values),
    "debug": lambda g, values: g.debug(values).continue_(),
}

# Values that once escaped as raw errors: a float arg given an int past float64 (pybind11's
# RuntimeError), a matrix of such ints (numpy's OverflowError), 0-length arrays (Taichi's
# "(0,) is not a valid shape for ndarray"), a number for a matrix (TaichiTypeError); and a complex
# matrix, which ran with its imaginary parts dropped.
FOUND = [
    [("set", "f", 10**400)],
    [("set", "m", [[2**2000, 0], [0, 1]])],
    [("set", "src", np.zeros(0, np.float32)), ("set", "dst", np.zeros(0, np.float32))],
    [("set", "m", 0)],  # was turned into a ti.Matrix (TaichiTypeError) before its shape was checked
    [("set", "m", np.array([[1 + 1j, 0], [0, 1]]))],  # ran, the imaginary parts silently dropped
    [("set", "f", [[0.0], [0.0, 0.0]])],  # a ragged list: numpy's ValueError in gl.load_module's run
    [("set", "k", 10**5000)],  # too long for repr() in a message
]


@pytest.mark.parametrize("entry", sorted(ENTRIES))
def test_any_values_run_or_are_refused_before_anything_is_dispatched(ti_cpu, entry):
    graph = small_graph()
    call = ENTRIES[entry]

    def check(mutations: list) -> None:
        values = apply(mutations)
        before = snapshot(values)
        try:
            call(graph, values)
        except gl.GraphlabError as exc:
            assert str(exc)
            assert snapshot(values) == before, f"refused with {exc!r}, but an array changed"
            if isinstance(exc, gl.GraphRunError) and exc.arg is not None:
                assert repr(exc.arg) in str(exc) or str(exc.arg) in str(exc)

    fuzz = given(MUTATIONS)(check)
    for found in FOUND:
        fuzz = example(found)(fuzz)
    settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))(fuzz)()


@pytest.mark.parametrize(
    "found",
    FOUND,
    ids=[
        "float_arg_huge_int",
        "matrix_huge_int",
        "zero_length_arrays",
        "matrix_scalar",
        "matrix_complex",
        "ragged",
        "long_int",
    ],
)
def test_values_that_escaped_as_raw_errors_are_refused_naming_the_arg(ti_cpu, found):
    values = apply(found)
    with pytest.raises(gl.GraphRunError) as info:
        small_graph().run(values)
    assert info.value.arg == found[0][1]
    assert values["dst"].tolist() == ([5.0] * N if len(values["dst"]) else [])


def test_any_values_for_an_exported_module_run_or_are_refused_before_any_launch(ti_cpu, tmp_path):
    # The same values through gl.load_module, Taichi's C runtime (the C-API passes no matrices).
    g = gl.Graph("fuzz_module")
    src = g.ndarray("src", ti.f32, ndim=1, shape="n", role="input")
    dst = g.ndarray("dst", ti.f32, ndim=1, shape="n", role="output")
    k = g.scalar("k", ti.i32)
    g.dispatch(scale_plain, src, g.scalar("f", ti.f32), k, dst)
    g.dispatch(bump, dst, k)
    folder = gl.export(g, tmp_path / "module", arch="x64", dims={"n": N}, progress=False, cpu_threads=1).path
    base = {name: value for name, value in good_values().items() if name != "m"}

    with gl.load_module(folder) as module:
        graph = module.graphs["fuzz_module"]

        def check(mutations: list) -> None:
            values = apply(mutations, {k: np.copy(v) if isinstance(v, np.ndarray) else v for k, v in base.items()})
            before = snapshot(values)
            try:
                graph.run(values)
            except gl.GraphlabError as exc:
                assert str(exc)
                assert snapshot(values) == before, f"refused with {exc!r}, but an array changed"

        fuzz = given(MUTATIONS)(check)
        fuzz = example([("add", 3, 1)])(fuzz)  # difflib's TypeError on a name that is no string
        for found in FOUND:
            fuzz = example(found)(fuzz)
        settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))(fuzz)()
        values = dict(base, dst=np.zeros(N, np.float32))
        graph.run(values)  # the module still runs, and right
        assert values["dst"].tolist() == [2.0 * i + 2 for i in range(N)]
