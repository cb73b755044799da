"""The graph file viewer's server side: drawing a file without its kernels, and the cell that loads it.

The drawing runs with real Graphviz; the loader cell is run for real (all but its last line, which
opens the widget: tests/e2e/test_fileview_e2e.py runs the whole notebook in JupyterLab).
"""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphlab.fileview as fileview
from graphlab.api import doc_kernels
from graphlab.core.errors import GraphFileError
from graphlab.fileview.drawing import MAX_FILE_BYTES, draw_file, loader_cell, main, stand_in_kernels
from graphlab.model.graphfile import loads
from graphlab.model.kernels import KernelRegistry
from graphlab.model.nodes import Dispatch

ROOT = Path(__file__).resolve().parent.parent.parent
#: pytest itself needs tomli where the standard library has no tomllib (before Python 3.11).
toml = importlib.import_module("tomllib" if sys.version_info >= (3, 11) else "tomli")
SVG = "{http://www.w3.org/2000/svg}"
XLINK_TITLE = "{http://www.w3.org/1999/xlink}title"


def svg_groups(svg: str, kind: str) -> list[ET.Element]:
    return [g for g in ET.fromstring(svg).iter(f"{SVG}g") if g.get("class") == kind]


def test_a_saved_graph_is_drawn_with_its_nodes_and_bindings_without_directions(tmp_path):
    graph = doc_kernels.demo_graph()
    path = tmp_path / "demo.graph.json"
    graph.save(path)
    svg = draw_file(path)
    ids = sorted(g.get("id") for g in svg_groups(svg, "node"))
    dispatches = [node_id for node_id, node in graph.nodes() if isinstance(node, Dispatch)]
    assert ids == sorted([*dispatches, *(f"arg:{name}" for name in graph.args)])
    edges = svg_groups(svg, "edge")
    tips = {id(edge): next(a.get(XLINK_TITLE) for a in edge.iter(f"{SVG}a")) for edge in edges}
    # each dispatch binds a, x and y (the edge's tooltip says which); buffers are drawn without an arrow
    # head (unknown access), scalars read
    unknown = "{}: whether the kernel reads or writes it is unknown"
    assert sorted(tips.values()) == ["R a", "R a", *[unknown.format(b) for b in "xxyy"]]
    for edge in edges:
        heads = list(edge.iter(f"{SVG}polygon"))
        assert (len(heads) == 1) == tips[id(edge)].startswith("R "), "only reads have arrows"


def test_drawing_does_not_need_the_kernels_module(tmp_path):
    """A file naming a module nobody can import is drawn all the same (and nothing is imported)."""
    text = json.dumps({
        "format": "graphlab.graph/1", "name": "far", "sequences": [],
        "args": [{"name": "x", "kind": "ndarray", "dtype": "f32", "ndim": 1, "element_shape": []}],
        "body": [{"type": "dispatch", "name": "step", "kernel": "no_such_module.sub:step", "bindings": {"u": "x"}}],
    })  # fmt: skip
    path = tmp_path / "far.graph.json"
    path.write_text(text)
    svg = draw_file(path)
    assert sorted(g.get("id") for g in svg_groups(svg, "node")) == ["arg:x", "step"]
    assert "no_such_module" not in sys.modules


def test_file_problems_name_the_file_and_the_json_path(tmp_path):
    path = tmp_path / "bad.graph.json"
    path.write_text(json.dumps({"format": "graphlab.graph/1", "name": "b", "args": [], "sequences": [],
                                "body": [{"type": "dispatch", "name": "k", "kernel": "m:k", "bindings": 3}]}))  # fmt: skip
    with pytest.raises(GraphFileError, match=r"bad\.graph\.json: \$\.body\[0\]\.bindings: expected an object"):
        draw_file(path)
    with pytest.raises(GraphFileError, match=r"missing\.graph\.json: \$: cannot read the file"):
        draw_file(tmp_path / "missing.graph.json")
    big = tmp_path / "big.graph.json"
    with big.open("wb") as f:  # sparse: no 64 MiB written
        f.truncate(MAX_FILE_BYTES + 1)
    with pytest.raises(GraphFileError, match=r"big\.graph\.json: \$: file is 67,108,865 bytes, over the"):
        draw_file(big)


@settings(max_examples=200, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                    max_leaves=20))  # fmt: skip
def test_any_json_gives_stand_ins_or_a_located_file_error(data):
    """Whatever the file holds, the viewer loads it or names the place; it never fails another way."""
    text = json.dumps({"format": "graphlab.graph/1", "name": "g", "args": [], "sequences": [], "body": data})
    registry = KernelRegistry(stand_in_kernels(text))
    try:
        loads(text, kernels=registry)
    except GraphFileError as exc:
        assert exc.json_path.startswith("$")


def test_the_loader_cell_loads_the_file_with_the_module_it_names(tmp_path, monkeypatch):
    graph = doc_kernels.demo_graph()
    graph.save(tmp_path / "demo.graph.json")
    cell = loader_cell("demo.graph.json", (tmp_path / "demo.graph.json").read_bytes())
    assert cell == (
        "import graphlab as gl\nimport graphlab.api.doc_kernels\n\n"
        "g = gl.load('demo.graph.json', kernels=graphlab.api.doc_kernels)\ngl.editor(g)"
    )
    tree = ast.parse(cell)
    assert ast.unparse(tree.body[-1]) == "gl.editor(g)"
    monkeypatch.chdir(tmp_path)  # the notebook runs next to the file
    namespace: dict = {}
    exec(compile(ast.Module(tree.body[:-1], []), "cell", "exec"), namespace)
    assert namespace["g"].to_dict() == graph.to_dict()


def graph_text(*refs: str) -> str:
    body = [{"type": "dispatch", "name": f"k{i}", "kernel": ref, "bindings": {}} for i, ref in enumerate(refs)]
    return json.dumps({"format": "graphlab.graph/1", "name": "g", "args": [], "sequences": [], "body": body})


def test_the_loader_cell_takes_notebook_kernels_from_globals():
    assert loader_cell("a.graph.json", graph_text("__main__:seed", "__main__:smooth")) == (
        "import graphlab as gl\n\n"
        "# defined in a notebook: define seed, smooth in a cell above this one\n"
        "g = gl.load('a.graph.json', kernels=globals())\ngl.editor(g)"
    )
    mixed = loader_cell("a.graph.json", graph_text("__main__:seed", "pkg.kern:p2g", "other:g2p"))
    assert "import other\nimport pkg.kern\n" in mixed
    assert "kernels={**globals(), **vars(other), **vars(pkg.kern)})" in mixed
    two = loader_cell("a.graph.json", graph_text("b:x", "a:y"))
    assert "kernels={**vars(a), **vars(b)})" in two


def test_the_loader_cell_never_writes_a_module_name_that_is_not_one():
    cell = loader_cell("x'; import os.graph.json", graph_text("os; rm -rf:k", "class:k", "ok_mod:k"))
    assert [line for line in cell.splitlines() if line.startswith("import ")] == [
        "import graphlab as gl",
        "import ok_mod",
    ]
    assert 'gl.load("x\'; import os.graph.json", kernels=ok_mod)' in cell
    ast.parse(cell)


def test_main_answers_json_and_exit_codes(tmp_path, capsys):
    doc_kernels.demo_graph().save(tmp_path / "demo.graph.json")
    assert main([str(tmp_path / "demo.graph.json")]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["svg"].lstrip().startswith("<?xml") and "gl.editor(g)" in answer["cell"]
    assert main([str(tmp_path / "missing.graph.json")]) == 1
    assert "missing.graph.json: $: cannot read the file" in json.loads(capsys.readouterr().out)["error"]
    assert main([]) == 2
    assert "usage" in json.loads(capsys.readouterr().out)["error"]


def test_the_drawing_child_keeps_jupyter_and_the_banner_out(tmp_path):
    doc_kernels.demo_graph().save(tmp_path / "demo.graph.json")
    done = subprocess.run(
        [sys.executable, "-c", "import sys, graphlab.fileview.drawing as d; rc = d.main(sys.argv[1:]); "
         "assert 'jupyter_server' not in sys.modules, 'the drawing imported the Jupyter server'; sys.exit(rc)",
         "demo.graph.json"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert set(json.loads(done.stdout)) == {"svg", "cell"}  # stdout is the answer alone (Taichi's banner: stderr)


def test_the_server_extension_is_enabled_and_the_wheel_installs_both_halves():
    config = json.loads((ROOT / "jupyter-config/jupyter_server_config.d/graphlab.json").read_text())
    assert config == {"ServerApp": {"jpserver_extensions": {"graphlab.fileview": True}}}
    assert fileview._jupyter_server_extension_points() == [{"module": "graphlab.fileview"}]
    shared = toml.loads((ROOT / "pyproject.toml").read_text())["tool"]["hatch"]["build"]["targets"]["wheel"]
    name = json.loads((ROOT / "labextension/package.json").read_text())["name"]
    assert shared["shared-data"] == {
        "labextension/dist": f"share/jupyter/labextensions/{name}",
        "jupyter-config/jupyter_server_config.d/graphlab.json": "etc/jupyter/jupyter_server_config.d/graphlab.json",
    }


# --- the loader cell writes only names that pass the grammar ---------------------------------------

ALLOWED_CELL_STATEMENTS = (ast.Import, ast.Assign, ast.Expr)


def cell_statements_are_only_imports_load_and_editor(cell: str) -> None:
    tree = ast.parse(cell)
    *imports, load, editor = tree.body
    assert all(isinstance(s, ast.Import) for s in imports), ast.unparse(tree)
    assert ast.unparse(load).startswith("g = gl.load(") and ast.unparse(editor) == "gl.editor(g)"
    for line in cell.splitlines():  # comments hold names only: no code breaks out of them
        if line.startswith("#"):
            assert all(ch.isalnum() or ch in " _,:.()'" for ch in line[1:]), line


def test_a_kernel_reference_that_breaks_out_of_the_comment_never_reaches_the_cell(tmp_path):
    """``__main__:k\\nimport os; os.system(...)\\n#`` once ended the comment and ran when the cell did."""
    marker = tmp_path / "ran"
    hostile = f"__main__:k\nimport os; os.system('touch {marker}')\n#"
    cell = loader_cell("a.graph.json", graph_text(hostile, "__main__:fine", "mod.sub:k\rimport os"))
    cell_statements_are_only_imports_load_and_editor(cell)
    assert "os.system" not in cell and "import os" not in cell
    assert "# defined in a notebook: define fine in a cell above this one" in cell
    assert "# 2 kernel reference(s) in the file are not module:name and are left out" in cell
    namespace: dict = {}
    exec(compile(ast.Module(ast.parse(cell).body[:-2], []), "cell", "exec"), namespace)  # the imports
    assert not marker.exists()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(max_size=12) | st.from_regex(r"[a-z_.]{1,6}:[a-z_.\n#;]{1,8}", fullmatch=True), max_size=4))
def test_any_kernel_references_give_a_cell_of_imports_load_and_editor_only(refs):
    cell_statements_are_only_imports_load_and_editor(loader_cell("a.graph.json", graph_text(*refs)))


def test_an_arg_name_that_is_a_list_is_refused_at_its_json_path_not_a_crash(tmp_path):
    path = tmp_path / "listname.graph.json"
    path.write_text(json.dumps({
        "format": "graphlab.graph/1", "name": "g", "sequences": [],
        "args": [{"name": ["x"], "kind": "ndarray", "dtype": "f32", "ndim": 1, "element_shape": []}],
        "body": [{"type": "dispatch", "name": "k", "kernel": "m:k", "bindings": {"u": "x"}}],
    }))  # fmt: skip
    assert len(stand_in_kernels(path.read_bytes())) == 1
    with pytest.raises(GraphFileError, match=r"\$\.args\[0\]\.name: expected a string, got a list"):
        draw_file(path)


def test_main_reads_the_content_from_stdin_and_names_it_as_told(tmp_path):
    doc_kernels.demo_graph().save(tmp_path / "demo.graph.json")
    run = [sys.executable, "-m", "graphlab.fileview.drawing", "--stdin", "sub/demo.graph.json"]
    done = subprocess.run(run, input=(tmp_path / "demo.graph.json").read_bytes(), capture_output=True, timeout=300)
    answer = json.loads(done.stdout)
    assert done.returncode == 0 and "gl.load('demo.graph.json'" in answer["cell"]
    done = subprocess.run(run, input=b'{"format": 3}', capture_output=True, timeout=300)
    assert json.loads(done.stdout) == {"error": "sub/demo.graph.json: $.format: expected a string, got an integer"}
