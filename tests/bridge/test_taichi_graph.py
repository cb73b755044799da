"""Taichi's upstream tests/python/test_graph.py (v1.7.4) cases, rebuilt through graphlab.

The mismatch cases that Taichi reports at build or run time (or not at all) are caught by graphlab
before anything is dispatched, with a message naming the node or arg.
"""


import numpy as np
import pytest
import taichi as ti

import graphlab as gl

pytestmark = pytest.mark.usefixtures("ti_cpu")


def test_ndarray_int():
    @ti.kernel
    def fill(pos: ti.types.ndarray(dtype=ti.i32, ndim=1)):
        for i in range(4):
            pos[i] = 1

    g = gl.Graph("init")
    g.dispatch(fill, g.ndarray("pos", ti.i32, ndim=1))
    a = ti.ndarray(ti.i32, shape=4)
    g.run(pos=a)
    assert (a.to_numpy() == 1).all()


def test_ndarray_0dim():
    @ti.kernel
    def fill(pos: ti.types.ndarray(dtype=ti.i32, ndim=0)):
        pos[None] = 1

    g = gl.Graph("init")
    g.dispatch(fill, g.ndarray("pos", ti.i32, ndim=0))
    a = ti.ndarray(ti.i32, shape=())
    g.run(pos=a)
    assert a.to_numpy() == 1


def test_ndarray_float_open_dtype_parameter():
    @ti.kernel
    def fill(pos: ti.types.ndarray(ndim=1)):
        for i in range(4):
            pos[i] = 2.5

    g = gl.Graph("init")
    g.dispatch(fill, g.ndarray("pos", ti.f32, ndim=1))
    a = ti.ndarray(ti.f32, shape=4)
    g.run({"pos": a})
    assert (a.to_numpy() == 2.5).all()


def test_ndarray_1dim_vector_arg_for_open_parameter():
    @ti.kernel
    def poke(arr: ti.types.ndarray(ndim=1)):
        arr[0] = 0

    g = gl.Graph("debug")
    g.dispatch(poke, g.ndarray("debug_arr", ti.types.vector(1, ti.f32), ndim=1))
    assert g.validate() == []


def test_mismatched_ndim_is_a_located_diagnostic():
    @ti.kernel
    def fill(pos: ti.types.ndarray(ndim=1)):
        pos[0] = 2.5

    g = gl.Graph("init")
    g.dispatch(fill, g.ndarray("pos", ti.f32, ndim=2))
    [diag] = [d for d in g.validate() if d.severity == "error"]
    assert (diag.code, diag.node, diag.arg) == ("GL003", "fill", "pos")
    assert "ndim 2 does not fit ndim 1" in diag.message
    with pytest.raises(gl.GraphError, match="GL003"):
        g.compile()


def test_mismatched_ndim_at_run_time_caught_before_dispatch():
    @ti.kernel
    def fill(pos: ti.types.ndarray(ndim=1)):
        for i in pos:
            pos[i] = 2.5

    g = gl.Graph("init")
    g.dispatch(fill, g.ndarray("pos", ti.f32, ndim=1))
    a = ti.ndarray(ti.f32, shape=(4, 4))
    with pytest.raises(gl.GraphRunError, match=r"'pos' expects ndarray f32, ndim=1.*shape \(4, 4\)"):
        g.run(pos=a)
    assert (a.to_numpy() == 0).all()


def test_repeated_arg_name_with_another_spec_is_refused():
    @ti.kernel
    def fill(pos: ti.types.ndarray(ndim=1)):
        pos[0] = 2.5

    g = gl.Graph("g")
    g.dispatch(fill, g.ndarray("pos", ti.f32, ndim=1))
    with pytest.raises(gl.GraphError, match="GL004.*'pos' is already declared as ndarray f32"):
        g.scalar("pos", ti.f32)
    other = gl.Graph("other").scalar("pos", ti.f32)
    with pytest.raises(gl.GraphError, match="GL004"):
        g.dispatch(fill, other)


def test_mismatched_scalar_dtype():
    @ti.kernel
    def fill(pos: ti.types.ndarray(ndim=1), val: ti.f32):
        pos[0] = val

    g = gl.Graph("g")
    g.dispatch(fill, g.ndarray("pos", ti.f32, ndim=1), g.scalar("val", ti.i32))
    diag = next(d for d in g.validate() if d.code == "GL003")
    assert diag.arg == "val" and "dtype i32 does not fit dtype f32" in diag.message


def test_mismatched_ndarray_dtype():
    @ti.kernel
    def fill(pos: ti.types.ndarray(dtype=ti.f32, ndim=1)):
        pos[0] = 2.5

    g = gl.Graph("g")
    g.dispatch(fill, g.ndarray("pos", ti.i32, ndim=1))
    assert [d.code for d in g.validate()] == ["GL003"]


def test_ndarray_dtype_mismatch_at_run_time_caught_before_dispatch():
    @ti.kernel
    def fill(pos: ti.types.ndarray(ndim=1)):
        for i in pos:
            pos[i] = 2.5

    g = gl.Graph("g")
    g.dispatch(fill, g.ndarray("pos", ti.f32, ndim=1))
    a = ti.ndarray(ti.i32, shape=4)
    with pytest.raises(gl.GraphRunError, match="got ndarray i32"):
        g.run(pos=a)
    assert (a.to_numpy() == 0).all()


@pytest.mark.parametrize(("dtype", "values", "expected"), [(ti.i32, [4, 5], 36), (ti.f32, [4.25, 5.75], 40.0)])
def test_matrix_arg(dtype, values, expected):
    @ti.kernel
    def matrix_sum(mat: ti.types.matrix(4, 2, dtype), res: ti.types.ndarray(dtype=dtype, ndim=1)):
        res[0] = mat.sum()

    g = gl.Graph("g")
    g.dispatch(matrix_sum, g.matrix("mat", ti.types.matrix(4, 2, dtype)), g.ndarray("res", dtype, ndim=1))
    res = ti.ndarray(dtype, shape=1)
    g.run(mat=ti.Matrix([values] * 4), res=res)
    assert res.to_numpy()[0] == pytest.approx(expected)
    g.run(mat=np.array([values] * 4), res=res)  # numpy matrices are taken too
    assert res.to_numpy()[0] == pytest.approx(expected)


@pytest.mark.parametrize(("dtype", "n"), [(ti.i32, 12), (ti.f32, 8)])
def test_vector_arg(dtype, n):
    @ti.kernel
    def vector_sum(mat: ti.types.vector(n, dtype), res: ti.types.ndarray(dtype=dtype, ndim=1)):
        res[0] = mat.sum() + mat[2]

    g = gl.Graph("g")
    g.dispatch(vector_sum, g.matrix("mat", ti.types.vector(n, dtype)), g.ndarray("res", dtype, ndim=1))
    values = list(range(1, n + 1))
    res = ti.ndarray(dtype, shape=1)
    g.run(mat=ti.Vector(values), res=res)
    assert res.to_numpy()[0] == pytest.approx(sum(values) + values[2])
    with pytest.raises(gl.GraphRunError, match="matrix of shape"):
        g.run(mat=ti.Vector(values[:-1]), res=res)


@pytest.mark.parametrize("dtype", [ti.f32, ti.f64])
def test_scalar_float_arg(dtype):
    @ti.kernel
    def put(a: dtype, b: ti.types.ndarray(dtype=dtype, ndim=1)):
        b[0] = a

    g = gl.Graph("g")
    g.dispatch(put, g.scalar("a", dtype), g.ndarray("b", dtype, ndim=1))
    k = ti.ndarray(dtype, shape=1)
    g.run(a=3.12, b=k)
    assert k.to_numpy()[0] == pytest.approx(3.12, rel=1e-6)
    g.run(a=np.float32(1.5), b=k)
    assert k.to_numpy()[0] == 1.5


@pytest.mark.parametrize("dtype", [ti.i32, ti.i64, ti.u32, ti.u64])
def test_scalar_int_arg(dtype):
    @ti.kernel
    def put(a: dtype, b: ti.types.ndarray(dtype=dtype, ndim=1)):
        b[0] = a

    g = gl.Graph("g")
    g.dispatch(put, g.scalar("a", dtype), g.ndarray("b", dtype, ndim=1))
    k = ti.ndarray(dtype, shape=1)
    g.run(a=1234, b=k)
    assert k.to_numpy()[0] == 1234
    with pytest.raises(gl.GraphRunError, match="pass an int"):
        g.run(a=1.5, b=k)


def test_template_parameter_cannot_be_dispatched():
    @ti.kernel
    def templated(x: ti.template()):
        pass

    g = gl.Graph("g")
    with pytest.raises(gl.KernelError, match=r"'x' \(template\).*ti.types.ndarray"):
        g.dispatch(templated)
    assert g.body == ()


def test_struct_parameter_cannot_be_dispatched():
    Pair = ti.types.struct(a=ti.f32, b=ti.i32)

    @ti.kernel
    def with_struct(p: Pair):
        pass

    with pytest.raises(gl.KernelError, match=r"'p' \(struct\)"):
        gl.Graph("g").dispatch(with_struct)


def test_too_many_args_refused_at_dispatch():
    @ti.kernel
    def one(a: ti.types.ndarray(ndim=1)):
        pass

    g = gl.Graph("g")
    x = g.ndarray("x", ti.f32, ndim=1)
    with pytest.raises(gl.GraphError, match=r"takes 1 parameters \(a\), got 2"):
        g.dispatch(one, x, x)


def test_too_few_args_is_an_unbound_diagnostic():
    @ti.kernel
    def two(a: ti.types.ndarray(ndim=1), b: ti.types.ndarray(ndim=1)):
        pass

    g = gl.Graph("g")
    node = g.dispatch(two, g.ndarray("x", ti.f32, ndim=1))
    assert [(d.code, d.node, d.arg) for d in g.validate()] == [("GL001", node, "b")]


def test_ndarray_arg_to_scalar_parameter_is_a_kind_diagnostic():
    @ti.kernel
    def k(v: ti.f32, out: ti.types.ndarray(ndim=1)):
        out[0] = v

    g = gl.Graph("g")
    g.dispatch(k, g.ndarray("v", ti.f32, ndim=1), g.ndarray("out", ti.f32, ndim=1))
    diag = next(d for d in g.validate() if d.code == "GL002")
    assert diag.arg == "v" and "ndarray arg cannot be passed to a scalar parameter" in diag.message
