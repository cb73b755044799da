"""A checked run: the graph once under Taichi's own bounds checks, in a child process, before the real run.

Taichi 1.7.4 checks no index of an ndarray (a short array is read and written past its end; on the
CPU a segfault that kills the notebook). :mod:`graphlab.kernelfacts.shape_facts` proves from the source what it
can (``J[p]`` in ``for p in x``), but an access under an ``if`` or with index arithmetic
(``grid[base + offset]``) stays unchecked. Only ``ti.init(debug=True)`` checks those, and it makes
every kernel slower and needs its own ``ti.init``. So ``run(..., bounds="check")`` sends the graph,
its kernels (:mod:`graphlab.child.carry`) and copies of the run values to a fresh process, which runs the
graph once on x64 with ``debug=True`` and one thread (the first out-of-bounds index is then the same
every time) and stops at the dispatch Taichi's check fails in (the debugger narrows a failing span
to its dispatch). Here that becomes an :class:`~graphlab.core.errors.OutOfBoundsError` naming the
dispatch, the arg and param, the index and the arg's shape, before anything runs in this process.

The check always runs on x64, whatever this process's arch: Vulkan has no bounds checks in Taichi
1.7.4, and an index is out of bounds on every arch alike. Textures cannot run on x64, so a graph
with a texture arg is refused. The values are copies: the caller's arrays are not touched by the
check, and a graph the check passes then runs here as usual.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from graphlab.child.carry import carry_kernels
from graphlab.child.process import ChildRunError, run_child
from graphlab.core.errors import GraphRunError, OutOfBoundsError
from graphlab.core.leftovers import scratch_prefix
from graphlab.model.graphfile import dumps
from graphlab.model.nodes import Dispatch

if TYPE_CHECKING:
    from graphlab.model.graph import Graph

__all__ = ["Bounds", "check_bounds", "checked_bounds", "parse_taichi_bounds_message"]

#: ``"trust"``: run as Taichi does, unchecked indices; ``"check"``: a checked run in a child first.
Bounds = Literal["trust", "check"]
_CHILD = "graphlab.debug.bounds_child:run_checked"
#: Taichi 1.7.4's message (``TaichiAssertionError``) when ``debug=True`` catches an index.
_TAICHI_OOB = re.compile(r"Out of bound access to ndarray at arg (\d+) with indices \[([-\d,\s]*)\]")


def checked_bounds(bounds: object, where: str) -> Bounds:
    """``bounds`` if it is ``"trust"`` or ``"check"``, else a :class:`GraphRunError` naming ``where``."""
    if bounds not in ("trust", "check"):
        raise GraphRunError(
            f'{where}: bounds={bounds!r} is not an option; give bounds="trust" (run as Taichi does, indices '
            'unchecked) or bounds="check" (run once first in a child process under Taichi\'s bounds checks)'
        )
    return bounds  # type: ignore[return-value]


def parse_taichi_bounds_message(message: str) -> tuple[int, tuple[int, ...], str] | None:
    """``(parameter position, index, source line)`` from Taichi's out-of-bounds assertion, or None."""
    found = _TAICHI_OOB.search(message)
    if found is None:
        return None
    index = tuple(int(part) for part in found.group(2).split(",") if part.strip())
    code = [line.strip() for line in message[found.end() :].splitlines() if line.strip()]
    source = code[1] if len(code) > 1 and code[0].startswith("File ") else ""
    return int(found.group(1)), index, source


def check_bounds(graph: Graph, values: Mapping[str, Any], *, timeout: float = 600.0) -> None:
    """Run ``graph`` once on copies of ``values`` under Taichi's bounds checks, in a child process.

    ``values`` are run values as ``run()`` prepared them (Taichi ndarrays, numbers, matrices).

    Raises
    ------
    OutOfBoundsError
        A dispatch indexed an ndarray out of bounds: the message names the dispatch (its step id),
        the arg and param, the index and the arg's shape.
    GraphRunError
        A texture arg (textures do not run on x64), or the checked run failed in another way
        (the child's error is in the message).
    """
    textures = [name for name in values if graph.args[name].kind in ("texture", "rw_texture")]
    if textures:
        raise GraphRunError(
            f"bounds='check' of graph {graph.name!r}: arg {textures[0]!r} is a texture, and the checked run "
            "uses Taichi's x64 backend (the one with bounds checks), which cannot run textures; run with "
            "bounds='trust'",
            arg=textures[0],
        )
    arrays, numbers = _host_values(graph, values)
    payload = carry_kernels(dict.fromkeys(k.fn for k in graph.kernels))
    with tempfile.TemporaryDirectory(prefix=scratch_prefix("bounds")) as tmp:  # a killed run's goes next time
        np.savez(Path(tmp, "values.npz"), **arrays)  # type: ignore[arg-type]  # numpy stubs: kwds typed as bool
        request = {
            "payload": payload.to_dict(),
            "graph": dumps(graph),
            "values": str(Path(tmp, "values.npz")),
            "numbers": numbers,
        }
        try:
            answer = run_child(_CHILD, request, timeout=timeout)
        except ChildRunError as exc:  # the child crashed or raised: say so, with its output
            raise GraphRunError(f"bounds='check' of graph {graph.name!r}: the checked run failed: {exc}") from exc
    fault = answer.get("fault")
    if fault is not None:
        raise _out_of_bounds(graph, fault, {name: a.shape for name, a in arrays.items()})


def _host_values(graph: Graph, values: Mapping[str, Any]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Copies of the values the child can read back: arrays (ndarrays, matrices) and plain numbers."""
    arrays: dict[str, np.ndarray] = {}
    numbers: dict[str, Any] = {}
    for name, value in values.items():
        kind = graph.args[name].kind
        if kind == "scalar":
            numbers[name] = value.item() if isinstance(value, np.generic) else value
        elif kind == "ndarray" and not isinstance(value, np.ndarray):
            arrays[name] = np.asarray(value.to_numpy())
        else:  # a matrix (ti.Matrix or nested lists) or a numpy array
            arrays[name] = np.asarray(value.to_numpy() if hasattr(value, "to_numpy") else value)
    return arrays, numbers


def _out_of_bounds(graph: Graph, fault: Mapping[str, Any], shapes: Mapping[str, tuple[int, ...]]) -> GraphRunError:
    """The child's fault as an :class:`OutOfBoundsError` (or a plain :class:`GraphRunError` for another fault)."""
    step, node_id, message = fault["step"], fault["node"], str(fault["message"])
    node = graph.node(node_id) if node_id is not None else None
    parsed = parse_taichi_bounds_message(message)
    if parsed is None or not isinstance(node, Dispatch) or parsed[0] >= len(node.bindings):
        first = message.strip().splitlines()[0] if message.strip() else fault.get("type", "an error")
        return GraphRunError(
            f"bounds='check' of graph {graph.name!r}: dispatch {step!r} failed in the checked run: {first}"
        )
    position, index, source = parsed
    param, arg = node.bindings[position]
    ndim = graph.args[arg].ndim if arg is not None else len(index)
    shape = tuple(shapes[arg][:ndim]) if arg is not None and arg in shapes else None
    where = f" in `{source}`" if source else ""
    outside = f"outside its shape {shape}" if shape is not None else "out of bounds"
    text = (
        f"bounds='check' of graph {graph.name!r}: dispatch {step!r} (kernel {node.kernel.name}) indexes arg {arg!r} "
        f"(param {param!r}) at {list(index)}{where}, {outside}: Taichi would read or write past its end. "
        f"Nothing ran in this process; give {arg!r} a shape that holds that index, or fix the kernel's index"
    )
    return OutOfBoundsError(text, node=node_id, step=step, arg=arg, param=param, index=index, shape=shape)
