"""Kernels travel to a child process and compute there what they compute here."""

import importlib
import importlib.util
import itertools
import json
import linecache
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import taichi as ti

from graphlab.bridge import python_function
from graphlab.child.carry import carry_kernels, kernel_ref
from graphlab.child.payload import CarryError, KernelPayload, load_kernels
from graphlab.child.process import ChildRunError, run_child
from graphlab.core.errors import KernelError

HERE = str(Path(__file__).resolve().parent)  # the child imports this module, test_carry

MODULE_SOURCE = textwrap.dedent(
    """
    import taichi as ti

    SCALE = 2.0

    @ti.func
    def twice(v):
        return v * SCALE

    @ti.kernel
    def scale(x: ti.types.ndarray(dtype=ti.f32, ndim=1), y: ti.types.ndarray(dtype=ti.f32, ndim=1)):
        for i in x:
            y[i] = twice(x[i])
    """
)

CELL_SOURCE = textwrap.dedent(
    """
    import math
    import taichi as ti
    from taichi.math import vec2

    N = 3
    OFFSET = (1.5, -2.0)
    BIG = float("inf")
    arr_t = ti.types.ndarray(dtype=vec2, ndim=1)
    mat_t = ti.types.matrix(2, 2, ti.f32)

    @ti.func
    def norm1(v: vec2) -> ti.f32:
        return ti.abs(v.x) + ti.abs(v.y)

    @ti.func
    def shift(v: vec2) -> vec2:
        return v + ti.Vector(OFFSET) * N

    @ti.kernel
    def move(x: arr_t, out: ti.types.ndarray(dtype=ti.f32, ndim=1), k: ti.f32):
        for i in x:
            m = mat_t([[k, 0.0], [0.0, 1.0]])
            x[i] = m @ shift(x[i])
            out[i] = ti.min(norm1(x[i]) + math.pi * 0.0, BIG)
    """
)

_cells = itertools.count()


def define_cell(source: str) -> dict:
    """Run source the way a notebook runs a cell: in ``__main__``, readable through linecache."""
    filename = f"<ipython-input-{next(_cells)}-graphlab-test>"
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    namespace = {"__name__": "__main__"}
    exec(compile(source, filename, "exec"), namespace)
    return namespace


@pytest.fixture(scope="module")
def module_kernel(tmp_path_factory):
    """``scale`` from a module file on a sys.path entry the child does not have."""
    folder = tmp_path_factory.mktemp("kmods")
    (folder / "gl_carry_kmod.py").write_text(MODULE_SOURCE)
    sys.path.insert(0, str(folder))
    try:
        yield importlib.import_module("gl_carry_kmod").scale
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop("gl_carry_kmod", None)


@pytest.fixture(scope="module")
def path_kernel(tmp_path_factory):
    """``scale`` from a file loaded by path under a name that does not match the file."""
    path = tmp_path_factory.mktemp("bypath") / "some_file.py"
    path.write_text(MODULE_SOURCE.replace("def scale", "def scale_by_path"))
    spec = importlib.util.spec_from_file_location("gl_loaded.by_path", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module.scale_by_path
    sys.modules.pop(spec.name, None)


@pytest.fixture(scope="module")
def cell():
    return define_cell(CELL_SOURCE)


CALLS = [
    ("gl_carry_kmod:scale", [((), [1.0, 2.0, 3.0]), ((), [0.0] * 3)]),
    ("gl_loaded.by_path:scale_by_path", [((), [4.0, 5.0]), ((), [0.0] * 2)]),
    ("__main__:move", [((2,), [[0.0, 1.0], [2.0, 3.0]]), ((), [0.0] * 2), 0.5]),
]


def run_calls(kernels: dict, calls: list) -> dict:
    """Call each kernel on fresh f32 ndarrays built from ``calls``; return every array afterwards."""
    results = {}
    for ref, args in calls:
        values = []
        for arg in args:
            if isinstance(arg, float):
                values.append(arg)
                continue
            element, data = arg
            data = np.asarray(data, dtype=np.float32)
            n = data.shape[0]
            arr = ti.Vector.ndarray(element[0], ti.f32, n) if element else ti.ndarray(ti.f32, n)
            arr.from_numpy(data)
            values.append(arr)
        kernels[ref](*values)
        results[ref] = [v.to_numpy().tolist() for v in values if not isinstance(v, float)]
    return results


def _child_compute(request: dict) -> dict:
    """Runs in the child: rebuild the kernels, then compute on the CPU."""
    kernels = load_kernels(request["payload"])
    ti.init(arch=ti.cpu, cpu_max_num_threads=1)
    return run_calls(kernels, request["calls"])


def test_kernels_compute_the_same_in_a_child(module_kernel, path_kernel, cell, ti_cpu):
    kernels = [module_kernel, path_kernel, cell["move"]]
    payload = carry_kernels(kernels)
    assert payload.refs == [ref for ref, _ in CALLS]

    child = run_child("test_carry:_child_compute", {"payload": payload.to_dict(), "calls": CALLS}, sys_path=[HERE])

    here = run_calls({kernel_ref(k): k for k in kernels}, json.loads(json.dumps(CALLS)))
    assert child == here
    assert here["gl_carry_kmod:scale"][1] == [2.0, 4.0, 6.0]


def test_module_kernels_are_imported_not_carried(module_kernel, path_kernel):
    payload = carry_kernels([module_kernel, path_kernel])
    assert payload.sources == ()
    by_name = {m.name: m for m in payload.modules}
    assert not by_name["gl_carry_kmod"].by_path
    assert Path(by_name["gl_carry_kmod"].sys_path, "gl_carry_kmod.py").is_file()
    assert by_name["gl_loaded.by_path"].by_path


def test_notebook_kernel_carries_what_it_uses(cell):
    payload = carry_kernels([cell["move"]])
    (source,) = payload.sources
    assert "def move" in source.code and "def shift" in source.code and "def norm1" in source.code
    assert "N = 3" in source.code and "OFFSET = (1.5, -2.0)" in source.code
    assert "vec2 = _graphlab_taichi.types.vector(2, _graphlab_taichi.f32)" in source.code
    assert {b.name for b in source.bindings} >= {"ti", "math"}


def test_payload_survives_json():
    cell = define_cell(CELL_SOURCE)
    payload = carry_kernels([cell["move"]])
    assert KernelPayload.from_dict(json.loads(json.dumps(payload.to_dict()))) == payload


def test_a_kernel_closing_over_a_field_is_refused(ti_cpu):
    cell = define_cell(
        "import taichi as ti\n"
        "counts = ti.field(ti.i32, shape=4)\n"
        "@ti.kernel\n"
        "def tally(x: ti.types.ndarray(dtype=ti.i32, ndim=1)):\n"
        "    for i in x:\n"
        "        counts[x[i]] += 1\n"
    )
    with pytest.raises(CarryError, match=r"kernel __main__:tally uses global 'counts', a Taichi field") as err:
        carry_kernels([cell["tally"]])
    assert "kernel argument" in str(err.value) and "module file" in str(err.value)
    assert isinstance(err.value, KernelError)


@pytest.mark.parametrize(
    ("setup", "global_name", "what"),
    [
        ("helper = lambda v: v\n", "helper", "a plain Python function"),
        ("class Box:\n    pass\nhelper = Box()\n", "helper", "an object of type"),
        ("helper = [1, 2]\n", "helper", "an object of type builtins.list"),
    ],
)
def test_globals_that_are_not_constants_are_refused(setup, global_name, what):
    cell = define_cell(
        "import taichi as ti\n"
        + setup
        + "@ti.kernel\ndef k(x: ti.types.ndarray(dtype=ti.f32, ndim=1)):\n    x[0] = helper\n"
    )
    with pytest.raises(CarryError, match=f"uses global '{global_name}', {what}"):
        carry_kernels([cell["k"]])


def test_a_kernel_defined_in_a_function_is_refused():
    cell = define_cell(
        "import taichi as ti\n"
        "def make(c):\n"
        "    @ti.kernel\n"
        "    def inner(x: ti.types.ndarray(dtype=ti.f32, ndim=1)):\n"
        "        x[0] = c\n"
        "    return inner\n"
    )
    with pytest.raises(CarryError, match=r"make.<locals>.inner is defined inside a function"):
        carry_kernels([cell["make"](1.0)])


def test_only_kernels_are_carried():
    with pytest.raises(CarryError, match="is not a @ti.kernel"):
        carry_kernels([print])


def test_a_module_file_changed_since_import_is_refused(tmp_path, monkeypatch):
    (tmp_path / "gl_carry_stale.py").write_text(MODULE_SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("gl_carry_stale")
    payload = carry_kernels([module.scale])
    (tmp_path / "gl_carry_stale.py").write_text(MODULE_SOURCE.replace("twice(x[i])", "x[i]"))
    try:
        with pytest.raises(CarryError, match="differs from the one the parent imported"):
            load_kernels(payload)
    finally:
        sys.modules.pop("gl_carry_stale", None)


def test_a_child_error_names_its_type():
    with pytest.raises(ChildRunError, match="AttributeError") as err:
        run_child("graphlab.child.carry:no_such_function", {})
    assert err.value.child_type == "AttributeError"


def test_a_carried_kernel_keeps_the_line_numbers_of_its_cell(cell):
    """Rebuilt in a child (or from an export's stored source), a kernel reports its author's lines."""
    move = cell["move"]
    rebuilt = load_kernels(json.loads(json.dumps(carry_kernels([move]).to_dict())))[kernel_ref(move)]
    first = python_function(move).__code__.co_firstlineno
    assert first > 10  # below the cell's imports and constants: the lines had to be kept, not just counted
    assert python_function(rebuilt).__code__.co_firstlineno == first


def test_carried_sources_that_cannot_keep_their_lines_run_one_after_another():
    """Two cells of one notebook both number from line 1: the second cell's kernel cannot keep its line."""
    namespace = {"__name__": "__main__"}
    for i, source in enumerate((
        "import taichi as ti\n\n@ti.kernel\ndef first_cell(x: ti.types.ndarray(ndim=1)):\n    x[0] = 1\n",
        "import taichi as ti\n@ti.kernel\ndef second_cell(x: ti.types.ndarray(ndim=1)):\n    x[0] = 2\n",
    )):  # fmt: skip
        filename = f"<ipython-input-{next(_cells)}-graphlab-lines-{i}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
        exec(compile(source, filename, "exec"), namespace)
    payload = carry_kernels([namespace["first_cell"], namespace["second_cell"]])
    (source,) = payload.sources
    assert source.code.index("def first_cell") < source.code.index("def second_cell")
    assert set(load_kernels(payload)) == {"__main__:first_cell", "__main__:second_cell"}
