"""Property: any file given to ``gl.load`` loads or raises GraphFileError naming the file, and nothing is written.

And every arg a file can hold is one the model's builders make (``g.scalar`` ... ``g.rw_texture``)
and Taichi takes in the code ``g.to_code()`` writes: the loader checks no less than the builders.

tests/model/test_graphfile.py damages a valid mpm88 file; here the content is generated from nothing:
any JSON value, any bytes, and objects shaped like a graph file whose fields take any value (kernel
references included: ``os:system`` must resolve to nothing, since only the kernels given count).
Paths and texts that are not paths or texts at all get the same error.
"""

import json
import os
from pathlib import Path

import pytest
import taichi as ti
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import graphlab as gl
from graphlab.analysis.codegen import arg_code, dtype_code
from graphlab.api import doc_kernels
from graphlab.core.spec import DTYPES
from graphlab.model.graphfile import FORMAT

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3),
    max_leaves=12,
)
NAMES = st.one_of(st.sampled_from(["x", "y", "a", "value", "fill", "n", "", "for", "x#2", "a" * 300]), JSON)
KERNELS = st.one_of(
    st.sampled_from(
        [
            "graphlab.api.doc_kernels:fill",
            "graphlab.api.doc_kernels:saxpy",
            "os:system",
            "builtins:eval",
            "graphlab.api.doc_kernels:demo_graph",
            "graphlab.api.doc_kernels",
            ":",
            "graphlab.api.doc_kernels:fill.__globals__",
        ]
    ),
    JSON,
)
ARGS = st.fixed_dictionaries(
    {
        "name": NAMES,
        "kind": st.sampled_from(["ndarray", "scalar", "matrix", "texture", "rw_texture", "blob"]) | JSON,
        "dtype": st.sampled_from(["f32", "i32", "f64", "u1", None]) | JSON,
        "ndim": st.integers(-1, 4) | JSON,
        "element_shape": st.lists(st.integers(-1, 5), max_size=3) | JSON,
        "role": st.sampled_from(["state", "input", "output", "temp", "boss"]) | JSON,
        "shape": st.none() | st.lists(st.integers(-1, 9) | st.sampled_from(["n", ""]), max_size=3) | JSON,
    },
    optional={"fmt": JSON},
)
NODES = st.fixed_dictionaries(
    {"type": st.sampled_from(["dispatch", "sequence", "cond", "loop", "eval"]) | JSON, "name": NAMES},
    optional={
        "kernel": KERNELS,
        "bindings": st.dictionaries(NAMES.filter(lambda n: isinstance(n, str)), NAMES, max_size=3) | JSON,
        "sequence": NAMES,
        "repeat": st.integers(-1, 2**40) | JSON,
        "flag": NAMES,
        "then": NAMES,
        "else": NAMES,
        "body": NAMES,
        "while": NAMES,
        "count": NAMES,
        "max_iter": st.integers(-1, 2**40) | JSON,
    },
)
GRAPH_SHAPED = st.fixed_dictionaries(
    {
        "format": st.sampled_from([FORMAT, "graphlab.graph/2", ""]) | JSON,
        "name": NAMES,
        "args": st.lists(ARGS, max_size=3) | JSON,
        "sequences": st.lists(st.fixed_dictionaries({"name": NAMES, "body": st.lists(NODES, max_size=2)}), max_size=2)
        | JSON,
        "body": st.lists(NODES, max_size=3) | JSON,
    }
)
CONTENTS = st.one_of(
    JSON.map(json.dumps),
    GRAPH_SHAPED.map(json.dumps),
    st.binary(max_size=64),
    st.text(max_size=40),
)


def listing(folder: Path) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in sorted(os.listdir(folder))}


def test_any_content_loads_or_raises_graph_file_error_naming_the_file(tmp_path):
    ti.init(arch=ti.cpu, log_level=ti.WARN)
    folder = tmp_path / "graphs"
    folder.mkdir()
    path = folder / "fuzz.graph.json"

    def check(content: str | bytes) -> None:
        if isinstance(content, str):
            path.write_text(content, encoding="utf-8", errors="surrogatepass")
        else:
            path.write_bytes(content)
        before = listing(folder)
        refused = None
        try:
            graph = gl.load(path, kernels=doc_kernels)
        except gl.GraphFileError as exc:
            refused = exc
            assert str(exc).startswith(f"{path}: {exc.json_path}: "), exc
            assert exc.json_path.startswith("$") and exc.reason
        else:
            assert isinstance(graph, gl.Graph)
            assert {k.fn for k in graph.kernels} <= {doc_kernels.fill, doc_kernels.saxpy}
        assert listing(folder) == before
        if refused is None:
            gl.loads(path.read_bytes(), kernels=doc_kernels)
        else:  # the text alone is refused for the same reason
            with pytest.raises(gl.GraphFileError) as again:
                gl.loads(path.read_bytes(), kernels=doc_kernels)
            assert again.value.reason == refused.reason

    fuzz = given(CONTENTS)(check)
    fuzz = example(json.dumps(doc_kernels.demo_graph().to_dict()))(fuzz)  # the valid file loads
    fuzz = example(json.dumps({**doc_kernels.demo_graph().to_dict(), "body": [_OS_SYSTEM]}))(fuzz)
    settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))(fuzz)()


_OS_SYSTEM = {"type": "dispatch", "name": "fill", "kernel": "os:system", "bindings": {}}


@pytest.mark.parametrize("path", [None, 3, b"out.json", "a\x00b.json"], ids=["none", "int", "bytes", "nul"])
def test_a_path_that_is_no_path_is_a_graph_file_error(path):
    with pytest.raises(gl.GraphFileError, match="path"):
        gl.load(path, kernels=doc_kernels)


@pytest.mark.parametrize("text", [None, 3, memoryview(b"{}")], ids=["none", "int", "memoryview"])
def test_a_text_that_is_no_text_is_a_graph_file_error(text):
    with pytest.raises(gl.GraphFileError, match="expected the file's text as str or bytes"):
        gl.loads(text, kernels=doc_kernels)


# --- what the loader accepts, the model's builders accept, and Taichi takes ------------------------

ARG_FIELDS = st.fixed_dictionaries(
    {
        "name": st.sampled_from(["a", "b"]),
        "kind": st.sampled_from(["scalar", "ndarray", "matrix", "texture", "rw_texture"]),
        "dtype": st.sampled_from([None, *DTYPES]),
        "ndim": st.integers(0, 3),
        "element_shape": st.lists(st.integers(1, 4), max_size=2),
        "role": st.sampled_from(["state", "input", "output", "temp"]),
    },
    optional={"fmt": st.sampled_from([None, "r32f", "rgba8", "r32i"]), "shape": st.none() | st.just([4, "n", 2])},
)


def built_again(arg: gl.Arg) -> gl.Arg:
    """The arg declared through its kind's builder, from the loaded arg's fields."""
    g = gl.Graph("again")
    if arg.kind in ("texture", "rw_texture"):
        if arg.kind == "texture":
            return g.texture(arg.name, arg.ndim, role=arg.role)
        return g.rw_texture(arg.name, arg.ndim, getattr(ti.Format, arg.fmt), role=arg.role)
    dtype = eval(dtype_code(arg.dtype, arg.element_shape), {"ti": ti})
    if arg.kind == "ndarray":
        return g.ndarray(arg.name, dtype, arg.ndim, shape=arg.shape, role=arg.role)
    return getattr(g, arg.kind)(arg.name, dtype, role=arg.role)


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(ARG_FIELDS, max_size=2))
@example([{"name": "t", "kind": "rw_texture", "dtype": None, "ndim": 2, "element_shape": [], "role": "state",
           "fmt": None}])  # fmt: skip
@example([{"name": "s", "kind": "scalar", "dtype": "f32", "ndim": 0, "element_shape": [2], "role": "state"}])
def test_every_arg_the_loader_accepts_the_builders_make_and_taichi_takes(ti_cpu, args):
    text = json.dumps({"format": FORMAT, "name": "g", "args": args, "sequences": [], "body": []})
    try:
        graph = gl.loads(text, kernels={})
    except gl.GraphFileError as exc:
        assert exc.json_path.startswith("$.args[")
        return
    for arg in graph.args.values():
        assert built_again(arg) == arg
        eval(arg_code(arg), {"ti": ti})  # the code g.to_code() writes for it builds a ti.graph.Arg
