"""Introspection of @ti.kernel parameters and the kernel registry."""


import types

import pytest
import taichi as ti

import graphlab as gl


@ti.kernel
def many(
    a: ti.types.ndarray(ndim=1),
    b: ti.types.ndarray(dtype=ti.math.vec2, ndim=2),
    c: ti.f32,
    d: ti.math.mat2,
    t: ti.types.texture(num_dimensions=2),
    rw: ti.types.rw_texture(num_dimensions=3, fmt=ti.Format.r32f, lod=0),
    e: ti.template(),
) -> ti.i32:
    return 1


def test_parameters_are_described(ti_cpu):
    info = gl.kernel_info(many)
    kinds = {p.name: (p.kind, p.dtype, p.ndim, p.element_shape, p.fmt) for p in info.params}
    assert kinds == {
        "a": ("ndarray", None, 1, None, None),
        "b": ("ndarray", "f32", 2, (2,), None),
        "c": ("scalar", "f32", 0, (), None),
        "d": ("matrix", "f32", 0, (2, 2), None),
        "t": ("texture", None, 2, None, None),
        "rw": ("rw_texture", None, 3, None, "r32f"),
        "e": ("template", None, None, None, None),
    }
    assert info.returns
    assert not info.dispatchable
    assert info.ref.endswith("test_kernels:many")


def test_non_kernels_are_refused(ti_cpu):
    @ti.func
    def helper(x):
        return x

    for thing in (helper, print, 3):
        with pytest.raises(gl.KernelError, match="not a @ti.kernel"):
            gl.kernel_info(thing)


def test_registry_from_module_dict_list_and_namespace(ti_cpu):
    @ti.kernel
    def local(x: ti.types.ndarray(ndim=1)):
        pass

    module = types.ModuleType("fake")
    module.local = local
    module.not_a_kernel = 3
    for source in (module, {"k": local, "n": 1}, [local], gl.KernelRegistry([local])):
        registry = gl.KernelRegistry(source)
        assert [k.name for k in registry] == ["local"]
        assert registry.resolve(gl.kernel_info(local).ref).fn is local
    with pytest.raises(KeyError, match="not among the kernels given"):
        gl.KernelRegistry([local]).resolve("m:missing")
    with pytest.raises(gl.KernelError, match="not a @ti.kernel"):
        gl.KernelRegistry([local, 3])
