"""One name grammar at every boundary (graphlab.core.names), and escaping in every emitter.

A dims key once went unescaped into the generated ``main.c`` that ``gl.verify`` compiles and runs:
code ran from ``gl.export``, ``graphlab export --dim`` and the widget's export panel. These tests
send such names (and newlines, NUL, non-ASCII, 50 MB names, sizes past the C API's u32 shapes)
through each entry point and check they are refused before anything is written, then check each
emitter (C string literals compiled by gcc, CMake, DOT, ``to_code``) escapes what it writes anyway.
"""

# No `from __future__ import annotations`: Taichi reads kernel annotations as objects.

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import taichi as ti
from widget_comm import recording_comm  # noqa: F401  (autouse fixture)

import graphlab as gl
from graphlab.cli import main
from graphlab.core.diagnostics import Diagnostic
from graphlab.core.errors import GraphError, GraphFileError
from graphlab.core.names import MAX_DIM_SIZE, MAX_NAME_LENGTH, a_or_an, check_dim_size, check_name, check_node_name
from graphlab.core.spec import Arg
from graphlab.deploy import hostgen
from graphlab.deploy.cruntime import GraphSpec, Manifest
from graphlab.deploy.errors import HostGenError, ManifestError
from graphlab.deploy.exporter import ExportError
from graphlab.deploy.manifest import _Reader


@ti.kernel
def copy(src: ti.types.ndarray(dtype=ti.f32, ndim=1), dst: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in src:
        dst[i] = src[i]


@ti.kernel
def fill(a: ti.types.ndarray(dtype=ti.f32, ndim=2)):
    for i, j in a:
        a[i, j] = 1.0


KERNELS_PY = textwrap.dedent(
    """
    import taichi as ti

    @ti.kernel
    def copy(src: ti.types.ndarray(dtype=ti.f32, ndim=1), dst: ti.types.ndarray(dtype=ti.f32, ndim=1)):
        for i in src:
            dst[i] = src[i]
    """
)


def evil_dim(marker: Path) -> str:
    """A dims key that, pasted into main.c's DIM_DEFAULTS unescaped, breaks out of its C string."""
    return f'n", 1}}}}; int x = system("touch {marker}"); //'


def small_graph(name: str = "small") -> gl.Graph:
    g = gl.Graph(name)
    g.dispatch(copy, g.ndarray("x", ti.f32, ndim=1, shape="n", role="input"), g.ndarray("y", ti.f32, ndim=1, shape="n"))
    return g


# --- (a) the injection, through every entry point ------------------------------------------------------


def test_export_refuses_an_injected_dims_key_before_writing(ti_cpu, tmp_path):
    marker = tmp_path / "PWNED_xyz"
    out = tmp_path / "out"
    with pytest.raises(ExportError, match=r"dims\[.*\]: not a dim name \(character '\"' at index 1") as info:
        gl.export(small_graph(), out, "x64", dims={evil_dim(marker): 4}, progress=False)
    assert "ASCII letters, digits and '_'" in str(info.value)
    assert not out.exists() and not marker.exists()
    assert list(tmp_path.iterdir()) == [], "no temporary folder either"


def test_cli_export_refuses_an_injected_dim_with_exit_2(tmp_path):
    marker = tmp_path / "PWNED_xyz"
    (tmp_path / "kern.py").write_text(KERNELS_PY)
    g = gl.Graph("cli")
    g.ndarray("x", ti.f32, ndim=1, shape="n")
    g.save(tmp_path / "g.graph.json")
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "graphlab.cli", "export", str(tmp_path / "g.graph.json"), "--kernels",
         str(tmp_path / "kern.py"), "--arch", "cpu", "-o", str(out), "--dim", f"{evil_dim(marker)}=4"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "graphlab export: --dim" in done.stderr and "is not a dim name" in done.stderr
    assert "Traceback" not in done.stderr
    assert not out.exists() and not marker.exists()


def test_widget_export_refuses_an_injected_dims_key(ti_cpu, tmp_path):
    marker = tmp_path / "PWNED_xyz"
    widget = gl.editor(small_graph(), kernels=[], access="ast")
    message = {"kind": "export", "request": 3, "arch": "x64", "path": str(tmp_path / "w"), "verify": True,
               "dims": {evil_dim(marker): 4}}  # fmt: skip
    widget._handle_msg({"content": {"data": {"method": "custom", "content": message}}, "buffers": []})
    reply = widget.comm.replies()[-1]
    assert reply["ok"] is False and reply["request"] == 3
    assert widget.export["state"] == "failed" and "not a dim name" in widget.export["error"]
    assert not (tmp_path / "w").exists() and not marker.exists()
    widget.close()


def test_host_generation_refuses_a_hand_edited_manifest_with_a_bad_name(tmp_path):
    marker = tmp_path / "PWNED_xyz"
    manifest = _manifest(dims={evil_dim(marker): 4})
    with pytest.raises(HostGenError, match="dims key .* is not a dim name"):
        hostgen.generate_host(tmp_path, manifest=manifest)
    bad_graph = _manifest(graph="g\n")
    with pytest.raises(HostGenError, match=r"graph 'g\\n': not a valid name"):
        hostgen.generate_host(tmp_path, manifest=bad_graph)
    assert not (tmp_path / "host").exists()


def test_reading_a_manifest_refuses_an_arg_the_model_would_refuse(tmp_path):
    """manifest.json args are read into spec.Arg, so a hand-edited name or size fails at its JSON path."""
    reader = _Reader(tmp_path)
    entry = {"name": "x", "kind": "ndarray", "dtype": "f32", "ndim": 1, "role": "state", "shape": ["n"]}
    assert reader.arg(entry, "$.graphs[0].args[0]") == Arg("x", "ndarray", "f32", 1, shape=("n",))
    with pytest.raises(ManifestError, match=r"\$\.graphs\[0\]\.args\[0\]: .*'x\\n'.*re-export"):
        reader.arg({**entry, "name": "x\n"}, "$.graphs[0].args[0]")
    with pytest.raises(ManifestError, match=r"\$\.graphs\[0\]\.args\[0\]: .*4294967296"):
        reader.arg({**entry, "shape": [2**32]}, "$.graphs[0].args[0]")


# --- (b), (c), (d): one grammar for graph, node, sequence, arg and dim names ------------------------------


def _graph_named(name):
    return gl.Graph(name)


def _renamed_graph(name):
    gl.Graph("g").name = name


def _node(name):
    g = gl.Graph("g")
    g.dispatch(copy, g.ndarray("a", ti.f32, ndim=1), g.ndarray("b", ti.f32, ndim=1), name=name)


def _node_renamed(name):
    g = gl.Graph("g")
    node = g.dispatch(copy, g.ndarray("a", ti.f32, ndim=1), g.ndarray("b", ti.f32, ndim=1))
    g.rename(node, name)


def _sequence(name):
    gl.Graph("g").sequence(name)


def _defined(name):
    gl.Graph("g").define(name)


def _grouped(name):
    g = gl.Graph("g")
    node = g.dispatch(copy, g.ndarray("a", ti.f32, ndim=1), g.ndarray("b", ti.f32, ndim=1))
    g.group([node], name)


def _arg(name):
    gl.Graph("g").ndarray(name, ti.f32, ndim=1)


def _dim(name):
    gl.Graph("g").ndarray("x", ti.f32, ndim=1, shape=(name,))


ENTRY_POINTS = {
    "graph": _graph_named,
    "graph.name =": _renamed_graph,
    "node": _node,
    "rename": _node_renamed,
    "sequence": _sequence,
    "define": _defined,
    "group": _grouped,
    "arg": _arg,
    "dim": _dim,
}
BAD_NAMES = {
    "trailing newline": "abc\n",
    "trailing newline after a suffix": "abc#2\n",
    "NUL": "ab\x00c",
    "non-ASCII letter": "größe",
    "non-ASCII digit": "n\u0663",
    "fullwidth letter": "\uff41bc",
    "empty": "",
    "too long": "a" * (MAX_NAME_LENGTH + 1),
}


@pytest.mark.parametrize(
    ("entry", "bad"),
    # name="" for a node means "the kernel's name", as name=None does
    [(e, b) for e in ENTRY_POINTS for b in BAD_NAMES if (e, b) != ("node", "empty")],
)
def test_every_name_entry_point_refuses_bad_names(entry, bad):
    with pytest.raises(GraphError, match=r"is not a valid identifier|must be an identifier|is not a dim name"):
        ENTRY_POINTS[entry](BAD_NAMES[bad])


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_the_length_limit_is_exact_at_every_entry_point(entry):
    ENTRY_POINTS[entry]("a" * MAX_NAME_LENGTH)
    with pytest.raises(GraphError, match=f"it has {MAX_NAME_LENGTH + 1} characters, over the limit of 128"):
        ENTRY_POINTS[entry]("a" * (MAX_NAME_LENGTH + 1))


def test_the_reason_names_the_bad_character():
    with pytest.raises(GraphError, match=r"arg name 'x\\n' .*character '\\n' at index 1 is not an ASCII letter"):
        gl.Graph("g").ndarray("x\n", ti.f32, ndim=1)
    with pytest.raises(GraphError, match=r"character '\\x00' at index 2"):
        check_name("ab\x00c", "sequence")
    with pytest.raises(GraphError, match="it is a Python keyword"):
        check_name("lambda", "arg")
    with pytest.raises(GraphError, match="not a '#<digits>' suffix"):
        check_node_name("p2g#x")
    assert check_node_name("while#12") == "while#12", "node names never become Python names"


def test_a_fifty_megabyte_name_gives_a_short_message():
    huge = "x" * 50_000_000
    for call in (lambda: check_name(huge, "arg"), lambda: gl.Graph(huge), lambda: _dim(huge + "\n")):
        with pytest.raises(GraphError) as info:
            call()
        assert len(str(info.value)) < 400 and "50,000,00" in str(info.value)


def test_a_graph_file_loads_every_name_the_model_accepts(tmp_path):
    longest = "n" * MAX_NAME_LENGTH
    g = gl.Graph("g" * MAX_NAME_LENGTH)
    a = g.ndarray("a" * MAX_NAME_LENGTH, ti.f32, ndim=1, shape=(longest,))
    b = g.ndarray("b" * MAX_NAME_LENGTH, ti.f32, ndim=1, shape=(longest,))
    with g.sequence("s" * MAX_NAME_LENGTH, repeat=2) as s:
        for _ in range(3):  # node names get '#2', '#3' past the length of a name
            s.dispatch(copy, a, b, name="c" * MAX_NAME_LENGTH)
    g.save(tmp_path / "g.graph.json")
    loaded = gl.load(tmp_path / "g.graph.json", kernels=[copy])
    ids = [n for n, _ in loaded.nodes()]
    assert ids == [n for n, _ in g.nodes()] and ids[-1].endswith("#3")
    text = (tmp_path / "g.graph.json").read_text().replace("a" * MAX_NAME_LENGTH, "a" * (MAX_NAME_LENGTH + 1))
    with pytest.raises(GraphFileError, match=r"\$\.args\[0\].*over the limit of 128"):
        gl.loads(text, kernels=[copy])


def test_a_graph_file_with_a_newline_name_is_refused(tmp_path):
    g = gl.Graph("g")
    g.ndarray("x", ti.f32, ndim=1)
    g.save(tmp_path / "g.graph.json")
    text = (tmp_path / "g.graph.json").read_text()
    assert text.count('"name": "x"') == 1
    (tmp_path / "g.graph.json").write_text(text.replace('"name": "x"', '"name": "x\\n"'))
    with pytest.raises(GraphFileError, match=r"not a valid identifier"):
        gl.load(tmp_path / "g.graph.json", kernels=[copy])


# --- (e) dim sizes past the C API's u32 shapes ----------------------------------------------------------------


def test_dim_size_checks_refuse_bools_floats_negatives_and_u32_overflow():
    assert check_dim_size(MAX_DIM_SIZE, "dims['n']") == 2**32 - 1
    assert check_dim_size(np.int64(8), "dims['n']") == 8
    for bad in (2**32, -1, True, 8.0, "8", 10**5000):
        with pytest.raises(GraphError, match=r"dims\['n'\] = .*a dim size is an int from 0 to 4,294,967,295"):
            check_dim_size(bad, "dims['n']")


def test_a_declared_shape_past_u32_is_refused():
    with pytest.raises(GraphError, match=r"arg 'x': shape\[0\] = 4294967296 out of range"):
        gl.Graph("g").ndarray("x", ti.f32, ndim=1, shape=2**32)


def test_export_refuses_u32_overflow_in_dims_and_values(ti_cpu, tmp_path):
    out = tmp_path / "out"
    with pytest.raises(ExportError, match=r"dims\['n'\] = 4294967296 out of range"):
        gl.export(small_graph(), out, "x64", dims={"n": 2**32}, progress=False)
    huge = np.broadcast_to(np.float32(0), (2**32,))  # no memory behind it: refused before it is scanned
    with pytest.raises(ExportError, match=r"values\['x'\]\.shape\[0\] = 4294967296 out of range"):
        gl.export(small_graph(), out, "x64", values={"x": huge}, progress=False)
    g = gl.Graph("square")
    g.dispatch(fill, g.ndarray("a", ti.f32, ndim=2, shape=("n", "n")))
    with pytest.raises(ExportError, match=r"arg 'a': shape \(4294967295, 4294967295\) of 4-byte elements"):
        gl.export(g, out, "x64", dims={"n": MAX_DIM_SIZE}, progress=False)
    assert list(tmp_path.iterdir()) == []


def test_cli_dim_sizes_must_fit_u32(tmp_path, capsys):
    args = ["export", str(tmp_path / "missing.json"), "--kernels", "m", "-o", str(tmp_path / "o"), "--dim"]
    for value, message in [("n=4294967296", "--dim n = 4294967296 out of range"),
                           ("n=" + "9" * 5000, "--dim n = '999"), ("n=-1", "not a non-negative integer"),
                           ("n", "expected NAME=SIZE")]:  # fmt: skip
        assert main([*args, value]) == 2
        assert message in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_host_generation_refuses_u32_overflow_in_a_manifest(tmp_path):
    with pytest.raises(HostGenError, match=r"dims\['n'\] = 4294967296 is not a size"):
        hostgen.generate_host(tmp_path, manifest=_manifest(dims={"n": 2**32}))


def test_the_c_host_refuses_dims_past_u32(tmp_path):
    """The generated host (real gcc, Taichi's C API headers) checks --dim and input shapes itself."""
    manifest = _manifest(arg=Arg("x", "ndarray", "f32", 2, shape=("n", "m")), dims={"n": 2, "m": 2})
    hostgen.generate_host(tmp_path, manifest=manifest)
    exe = hostgen.build_host(tmp_path)
    for dim in ("n=4294967296", "n=-1", "n=12x"):
        done = subprocess.run([str(exe), "--dim", dim], capture_output=True, text=True, cwd=tmp_path, timeout=60)
        assert done.returncode == 1 and f"--dim {dim}: the size must be an integer from 0 to 4294967295" in done.stderr
    (tmp_path / "inputs").mkdir()
    np.save(tmp_path / "inputs" / "x.npy", np.zeros((0, 2**32), np.float32))  # no data: a header only
    done = subprocess.run([str(exe)], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert done.returncode == 1 and "shape[1] is 4294967296, over the 4294967295" in done.stderr


# --- (f) every emitter escapes what it writes ----------------------------------------------------------------

TRICKY = [
    'n", 1}}; int x = system("touch /tmp/x"); //',
    "ends in a backslash \\",
    '\\\\ two, then a quote \\"',
    "trigraphs ??/ ??= ??' ??( ??) ??! ??< ??> ??-",
    "line\nbreak\r\ttab\x0bvt\x1besc\x7fdel",
    "\x01" + "234 octal must not swallow digits",
    "\x08" + "89 and hex-looking \\x41",
    "größe 日本 🎉",
    "%s %n %d printf is not involved",
    "/* not a comment */ // nor this",
    "",
]


def test_c_string_literals_round_trip_through_gcc(tmp_path):
    literals = ",\n".join(f"  {hostgen.c_string_literal(text)}" for text in TRICKY)
    source = f"#include <stdio.h>\nstatic const char *S[] = {{\n{literals}\n}};\n" + textwrap.dedent(
        """
        int main(void) {
          for (unsigned i = 0; i < sizeof S / sizeof *S; ++i) {
            fputs(S[i], stdout);
            putchar(0);
          }
          return 0;
        }
        """
    )
    (tmp_path / "t.c").write_text(source)
    cc = hostgen.find_compiler("gcc")
    build = subprocess.run([cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "t.c", "-o", "t"],
                           cwd=tmp_path, capture_output=True, text=True)  # fmt: skip
    assert build.returncode == 0, build.stderr
    out = subprocess.run([str(tmp_path / "t")], capture_output=True, check=True).stdout
    assert out.split(b"\0")[:-1] == [text.encode("utf-8") for text in TRICKY]


def test_c_string_literals_refuse_nul():
    with pytest.raises(HostGenError, match="NUL character"):
        hostgen.c_string_literal("ab\x00c")


def test_cmake_strings_keep_quotes_dollars_and_semicolons(tmp_path):
    text = 'a "quoted" ${HOME} $ENV{PATH} x;y \\ end") message(FATAL_ERROR "pwned'
    (tmp_path / "script.cmake").write_text(f'message(STATUS "[{hostgen.cmake_string(text)}]")\n')
    done = subprocess.run(["cmake", "-P", "script.cmake"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert f"-- [{text}]" in done.stdout


def _dot_objects(source: str) -> dict:
    """What Graphviz's own parser makes of DOT source: node name -> attributes."""
    done = subprocess.run(["dot", "-Tjson"], input=source, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return {o["name"]: o for o in json.loads(done.stdout).get("objects", [])}


def test_dot_tooltips_cannot_break_out(ti_cpu):
    g = small_graph()
    message = 'odd backslash \\" ] ; evil [shape=star label="pwned"] ; "tail \\'
    dot = g.render(diagnostics=[Diagnostic("GL001", "error", message, "copy")])
    objects = _dot_objects(dot.source)
    assert set(objects) == {"copy", "arg.x", "arg.y"}
    problem, _, about = objects["copy"]["tooltip"].replace("\\\\", "\\").partition("\n\n")
    assert problem == f"GL001: {message}" and about.startswith("1. copy: kernel ")  # then the node's own text
    assert all(o.get("shape") != "star" for o in objects.values())


def test_dot_labels_are_never_html():
    from graphlab.analysis.render import _digraph

    dot = _digraph()(name="g")
    dot.node("a", "<<b>html</b>>", tooltip="<i>x</i>")
    objects = _dot_objects(dot.source)
    assert objects["a"]["label"] == "<<b>html</b>>" and objects["a"]["tooltip"] == "<i>x</i>"
    assert '"<<b>html</b>>"' in dot.source, "quoted: a plain string, not an HTML-like label"


def test_emitters_check_names_again_when_the_model_is_bypassed(ti_cpu):
    from graphlab.analysis.render import _digraph

    g = gl.Graph("g" * MAX_NAME_LENGTH)
    a = g.ndarray("a" * MAX_NAME_LENGTH, ti.f32, ndim=1)
    with g.sequence("s" * MAX_NAME_LENGTH, repeat=2) as s:
        s.dispatch(copy, a, a)
    compile(g.to_code(), "<to_code>", "exec")  # the longest names make valid Python
    g._name = "g\nimport os"  # a corrupted model: every emitter still refuses it
    with pytest.raises(GraphError, match="graph name 'g\\\\nimport os' is not a valid identifier"):
        g.to_code()
    with pytest.raises(GraphError, match="cannot draw a node named"):
        g.render(diagnostics=[])
    with pytest.raises(GraphError, match="cannot draw a node named"):
        _digraph()().node('a" [shape=star] "b')


def _manifest(*, arg: Arg | None = None, dims: dict | None = None, graph: str = "g") -> Manifest:
    arg = arg or Arg("x", "ndarray", "f32", 1, shape=("n",))
    return Manifest(Path("."), "x64", "1.7.4", (GraphSpec(graph, (arg,)),), dims or {}, {}, {})


@pytest.mark.parametrize(
    ("kind", "said"), [("ndarray", "an ndarray"), ("scalar", "a scalar"), ("texture", "a texture"), ("arg", "an arg")]
)
def test_a_kind_is_named_with_its_article(kind, said):
    assert a_or_an(kind) == said
