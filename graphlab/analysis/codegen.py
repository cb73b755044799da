"""``Graph.to_code``: the equivalent plain ``ti.graph`` Python, for users who want to leave graphlab.

The code builds the same GraphBuilder that :mod:`graphlab.run.compiled` builds: top-level dispatches,
one Sequential per sequence appended ``repeat`` times, nested sequences unrolled in their parent.
Kernels are imported from their modules; kernels defined in a notebook (``__main__``) are expected
in the namespace that runs the code.

Names become parts of Python identifiers (``sym_x``, ``seq_substep``) and strings (``repr``); the
model only holds checked names, and each is checked again here so nothing else can reach the code.
"""

from __future__ import annotations

import keyword
from typing import TYPE_CHECKING

from graphlab.core.errors import GraphError
from graphlab.core.names import check_name, shown
from graphlab.model.nodes import Dispatch, SequenceUse

if TYPE_CHECKING:
    from graphlab.core.spec import Arg
    from graphlab.model.graph import Graph

_KIND = {
    "scalar": "SCALAR",
    "ndarray": "NDARRAY",
    "matrix": "MATRIX",
    "texture": "TEXTURE",
    "rw_texture": "RWTEXTURE",
}


def dtype_code(dtype: str, element_shape: tuple[int, ...]) -> str:
    """Python source for a Taichi dtype: ``ti.f32``, ``ti.types.vector(2, ti.f32)``."""
    if len(element_shape) == 1:
        return f"ti.types.vector({element_shape[0]}, ti.{dtype})"
    if len(element_shape) == 2:
        return f"ti.types.matrix({element_shape[0]}, {element_shape[1]}, ti.{dtype})"
    return f"ti.{dtype}"


def arg_code(arg: Arg) -> str:
    """The ``ti.graph.Arg(...)`` expression for an arg."""
    kind = f"ti.graph.ArgKind.{_KIND[arg.kind]}"
    if arg.kind in ("scalar", "matrix"):
        return f"ti.graph.Arg({kind}, {arg.name!r}, dtype={dtype_code(arg.dtype or 'f32', arg.element_shape)})"
    if arg.kind == "ndarray":
        dtype = dtype_code(arg.dtype or "f32", arg.element_shape)
        return f"ti.graph.Arg({kind}, {arg.name!r}, dtype={dtype}, ndim={arg.ndim})"
    if arg.kind == "texture":
        return f"ti.graph.Arg({kind}, {arg.name!r}, ndim={arg.ndim})"
    return f"ti.graph.Arg({kind}, {arg.name!r}, ndim={arg.ndim}, fmt=ti.Format.{arg.fmt})"


def to_code(graph: Graph) -> str:
    """Plain ti.graph code that builds and compiles this graph into ``graph_<name>``."""
    if graph.has_control_flow:
        raise GraphError(
            f"graph {graph.name!r} has conditionals or loops, which plain ti.graph cannot express "
            "(Taichi 1.7.4 has no such nodes); keep it in graphlab, or export it with gl.export"
        )
    check_name(graph.name, "graph")
    for name in graph.args:
        check_name(name, "arg")
    for name in graph.sequences:
        check_name(name, "sequence")
    lines = ["import taichi as ti"]
    notebook: list[str] = []
    imports: dict[str, list[str]] = {}
    for info in graph.kernels:
        module, _, qualname = info.ref.partition(":")
        _python_name(info.name, "kernel")
        if module == "__main__" or "." in qualname or "<" in qualname:
            notebook.append(info.name)
        else:
            for part in (*module.split("."), qualname):
                _python_name(part, f"kernel {info.ref!r}: module or function")
            imports.setdefault(module, []).append(qualname)
    lines += [f"from {module} import {', '.join(sorted(set(names)))}" for module, names in sorted(imports.items())]
    if notebook:
        lines.append(f"# defined in the notebook: {', '.join(notebook)}")
    lines.append("")
    symbols = {name: f"sym_{name}" for name in graph.args}
    lines += [f"{symbols[arg.name]} = {arg_code(arg)}" for arg in graph.args.values() if graph.uses_of(arg.name)]
    builder = f"builder_{graph.name}"
    lines += ["", f"{builder} = ti.graph.GraphBuilder()"]
    declared: dict[str, str] = {}
    for node in graph.body:
        if isinstance(node, Dispatch):
            lines.append(_dispatch_line(builder, node, symbols))
            continue
        assert isinstance(node, SequenceUse)  # control flow was refused above
        seq_var = declared.get(node.sequence)
        if seq_var is None:
            seq_var = f"seq_{node.sequence}"
            declared[node.sequence] = seq_var
            lines.append(f"{seq_var} = {builder}.create_sequential()")
            lines += _fill(graph, seq_var, node.sequence, symbols, "")
        if node.repeat == 1:
            lines.append(f"{builder}.append({seq_var})")
        else:
            lines += [f"for _ in range({node.repeat}):", f"    {builder}.append({seq_var})"]
    lines += [f"graph_{graph.name} = {builder}.compile()", ""]
    return "\n".join(lines)


def _python_name(text: str, what: str) -> str:
    """``text`` if it can stand as a Python name in the generated code, else a GraphError."""
    if not text.isidentifier() or keyword.iskeyword(text):
        raise GraphError(f"{what} name {shown(text)} cannot be written as Python code; rename it")
    return text


def _fill(graph: Graph, seq_var: str, sequence: str, symbols: dict[str, str], indent: str) -> list[str]:
    lines: list[str] = []
    for node in graph.sequences[sequence]:
        if isinstance(node, Dispatch):
            lines.append(indent + _dispatch_line(seq_var, node, symbols))
        elif isinstance(node, SequenceUse) and node.repeat == 1:
            lines += _fill(graph, seq_var, node.sequence, symbols, indent)
        elif isinstance(node, SequenceUse):
            depth = len(indent) // 4
            lines.append(f"{indent}for _{depth} in range({node.repeat}):  # sequence {node.sequence!r}")
            lines += _fill(graph, seq_var, node.sequence, symbols, indent + "    ")
    return lines


def _dispatch_line(target: str, node: Dispatch, symbols: dict[str, str]) -> str:
    args = ", ".join(symbols[bound] for _, bound in node.bindings if bound is not None)
    return f"{target}.dispatch({node.kernel.name}, {args})"
