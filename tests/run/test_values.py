"""Every bad run value is refused before anything is dispatched, with the arg named."""

import numpy as np
import pytest
import taichi as ti

import graphlab as gl

pytestmark = pytest.mark.usefixtures("ti_cpu")


@ti.kernel
def scale(src: ti.types.ndarray(dtype=ti.f32, ndim=1), factor: ti.f32, dst: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in src:
        dst[i] = src[i] * factor


@ti.kernel
def bump(dst: ti.types.ndarray(dtype=ti.f32, ndim=1), count: ti.i32):
    for i in dst:
        dst[i] += count


def _graph() -> gl.Graph:
    g = gl.Graph("two_steps")
    src = g.ndarray("src", ti.f32, ndim=1, shape="n", role="input")
    dst = g.ndarray("dst", ti.f32, ndim=1, shape="n", role="output")
    g.dispatch(scale, src, g.scalar("factor", ti.f32), dst)
    g.dispatch(bump, dst, g.scalar("count", ti.i32))
    return g


def _good():
    src = ti.ndarray(ti.f32, shape=8)
    src.from_numpy(np.arange(8, dtype=np.float32))
    return {"src": src, "factor": 2.0, "dst": ti.ndarray(ti.f32, shape=8), "count": 1}


def test_good_values_run():
    values = _good()
    _graph().run(values)
    assert values["dst"].to_numpy().tolist() == [2 * i + 1 for i in range(8)]


BAD = {
    "missing": (lambda v: v.pop("count"), "missing 'count'"),
    "unknown": (lambda v: v.update(cout=1), "unknown arg\\(s\\) 'cout'"),
    "kind": (lambda v: v.update(src=3.0), "'src' expects ndarray f32, ndim=1; got float"),
    "dtype": (lambda v: v.update(dst=ti.ndarray(ti.i32, shape=8)), "'dst' expects .*got ndarray i32"),
    "ndim": (lambda v: v.update(dst=ti.ndarray(ti.f32, shape=(8, 1))), "'dst' .*shape \\(8, 1\\)"),
    "element_shape": (lambda v: v.update(dst=ti.Vector.ndarray(2, ti.f32, shape=8)), "element shape \\[2\\]"),
    "shape_disagrees": (lambda v: v.update(dst=ti.ndarray(ti.f32, shape=4)), "dim 'n' = 4, but arg 'src' set 'n' = 8"),
    "float_for_int": (lambda v: v.update(count=1.5), "'count' .*pass an int"),
    "int_out_of_range": (lambda v: v.update(count=2**40), "must lie in -2147483648..2147483647"),
    "string_scalar": (lambda v: v.update(factor="2"), "'factor' .*got str"),
    "numpy_wrong_dtype": (lambda v: v.update(src=np.zeros(8)), "astype\\(np.float32\\)"),
    "bool_scalar": (lambda v: v.update(count=True), "'count' .*got bool"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_value_raises_before_any_dispatch(case):
    mutate, pattern = BAD[case]
    values = _good()
    dst_before = values["dst"]
    mutate(values)
    with pytest.raises(gl.GraphRunError, match=pattern) as info:
        _graph().run(values)
    assert info.value.arg is not None
    # the first dispatch writes dst: it must not have run
    assert (dst_before.to_numpy() == 0).all()
    if isinstance(values.get("dst"), ti.lang._ndarray.Ndarray):
        assert not values["dst"].to_numpy().any()


def test_numpy_arrays_are_copied_in_and_written_back():
    src = np.arange(8, dtype=np.float32)
    dst = np.zeros(8, np.float32)
    _graph().run(src=src, factor=np.float32(3), dst=dst, count=np.int32(2))
    assert dst.tolist() == [3 * i + 2 for i in range(8)]
    assert src.tolist() == list(range(8))


def test_values_given_twice_are_refused():
    values = _good()
    with pytest.raises(gl.GraphRunError, match="both in the dict and as keywords"):
        _graph().compile().run(values, count=3)


# --- the checks shared with gl.load_module and gl.verify (graphlab.run.values) ------------------------


def test_shared_checks_name_the_declared_size_and_the_dim_owner():
    from graphlab.core.spec import Arg
    from graphlab.run.values import array_problem, dims_problem, number_problem

    fixed = Arg("grid", "ndarray", "f32", 2, shape=(8, "n"))
    assert array_problem(fixed, np.zeros((8, 4), np.float32)) is None
    assert array_problem(fixed, np.zeros((8, 4), np.float64)).fix == "convert it with .astype(np.float32)"
    dims: dict = {}
    owners: dict = {}
    problem = dims_problem(fixed, (7, 4), dims, owners)
    assert problem == "shape[0] is 7, but the arg's declared shape (8, 'n') fixes it at 8"
    assert dims_problem(fixed, (8, 4), dims, owners) is None and dims == {"n": 4} and owners == {"n": "grid"}
    other = Arg("x", "ndarray", "f32", 1, shape=("n",))
    assert "dim 'n' = 5, but arg 'grid' set 'n' = 4" in dims_problem(other, (5,), dims, owners)
    small = Arg("s", "scalar", "i16")
    assert number_problem(small, -3, 40000, floating=False).got == "40000, which does not fit i16"
    assert number_problem(small, 1.5, 1.5, floating=True).fix.startswith("pass an int")
    assert number_problem(Arg("f", "scalar", "f32"), 1.5, 1e40, floating=True) is None


def test_shape_errors_read_as_a_shape_and_name_one_arg_once():
    from graphlab.core.spec import Arg
    from graphlab.run.values import ValueChecker, array_problem, dims_problem, shape_pattern

    vec = Arg("x", "ndarray", "f32", 1, element_shape=(2,), shape=("n",))
    problem = array_problem(vec, np.zeros((5, 3), np.float32))
    assert (problem.want, problem.got) == ("shape (n, 2)", "numpy array of shape (5, 3)")
    assert problem.fix == "give an array of shape (n, 2)"
    assert shape_pattern(Arg("g", "ndarray", "f32", 2)) == "(_, _)"  # undeclared axes: any size
    assert shape_pattern(Arg("c", "ndarray", "i32", 0)) == "()"
    assert shape_pattern(Arg("v", "ndarray", "f32", 1)) == "(_,)"
    square = Arg("m", "ndarray", "f32", 2, shape=("n", "n"))
    said = dims_problem(square, (3, 4), {}, {})
    assert said == "has shape (3, 4), but its axes 0 and 1 share dim 'n', so they must be equal (they are 3 and 4)"
    said = r"run\(\): arg 'x' expects .*; got numpy array of shape \(5, 3\)\. give an array of shape \(n, 2\)"
    with pytest.raises(gl.GraphRunError, match=said):
        ValueChecker("g", [vec]).prepare({"x": np.zeros((5, 3), np.float32)})
