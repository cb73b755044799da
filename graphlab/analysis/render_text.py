"""What a drawing's nodes say: short labels, and the full text they leave out, for the hover.

A label is measured by Graphviz and must stay short to be readable at the zoom a real graph is drawn
at (a buffer's ``ndarray vec2 f32, ndim=1 [n]`` made its node wider than the dispatches it feeds):
``x  f32[n,2]`` on the node, the whole declaration in its tooltip; a dispatch shows its number and
name, its bindings on hover.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from graphlab.core.spec import element_label
from graphlab.kernelfacts.access import AccessFlag

if TYPE_CHECKING:
    from graphlab.analysis.dataflow import DataflowFacts
    from graphlab.core.spec import Arg
    from graphlab.model.nodes import Dispatch

_ACCESS_WORDS = {AccessFlag.READ: "reads", AccessFlag.WRITE: "writes", AccessFlag.READ_WRITE: "reads and writes"}


def dispatch_tooltip(
    node_id: str, node: Dispatch, number: int, within: Sequence[str], facts: DataflowFacts | None = None
) -> str:
    """What the short label leaves out, for the hover: the kernel, where it runs and every binding.

    ``within`` names the enclosing structures (``substep ×2,500``); ``facts`` (dataflow facts, or None
    when the analysis failed) adds whether the kernel reads or writes each bound buffer.
    """
    lines = [f"{number}. {node_id}: kernel {node.kernel.name}"]
    if within:
        lines.append(f"in {' > '.join(within)}")
    flags = facts.args.get(node_id, {}) if facts is not None else {}
    for param, bound in node.bindings:
        if bound is None:
            lines.append(f"  {param}: unbound")
            continue
        access = _ACCESS_WORDS.get(flags[bound]) if bound in flags else None
        lines.append(f"  {param} = {bound}" + (f" ({access})" if access else ""))
    return "\n".join(lines)


def short_type(arg: Arg, inferred: str | None = None) -> str:
    """``f32[n,2]``: the dtype, then the dims (declared, else the bounds inferred from the kernels'
    loops, ``≥n``, else ``?``) followed by the element's dims, numpy-style. Short enough for a label;
    :func:`arg_declaration` spells it out."""
    if arg.kind in ("texture", "rw_texture"):
        return f"{'rw ' if arg.kind == 'rw_texture' else ''}texture {arg.ndim}d" + (f" {arg.fmt}" if arg.fmt else "")
    element = [str(n) for n in arg.element_shape]
    if arg.kind != "ndarray":
        dims = element
    elif arg.shape is not None:
        dims = [str(d) for d in arg.shape] + element
    elif inferred:
        dims = [inferred.strip("[]"), *element]
    else:
        dims = ["?"] * arg.ndim + element
    return f"{arg.dtype or 'any'}[{','.join(dims)}]" if dims else (arg.dtype or "any")


def arg_declaration(arg: Arg, inferred: str | None = None) -> list[str]:
    """The full declaration of an arg, one fact a line: kind, dtype, element shape, dims and role."""
    lines = [f"{arg.name}: {arg.describe()}", f"kind: {arg.kind}"]
    if arg.dtype is not None:
        lines.append(f"dtype: {arg.dtype}")
    if arg.element_shape:
        each = element_label(None, arg.element_shape).split()[0]  # vec2, mat2x2
        lines.append(f"element shape: {'x'.join(map(str, arg.element_shape))} (each value a {each})")
    if arg.kind in ("texture", "rw_texture"):
        lines.append(f"ndim: {arg.ndim}" + (f", format: {arg.fmt}" if arg.fmt else ""))
    elif arg.kind == "ndarray":
        if arg.shape is not None:
            lines.append(f"dims: [{', '.join(map(str, arg.shape))}] (declared)")
        elif inferred:
            lines.append(f"dims: not declared; the kernels' loops need {inferred}")
        else:
            lines.append(f"dims: not declared (any shape with ndim={arg.ndim})")
    lines.append(f"role: {arg.role}")
    return lines
