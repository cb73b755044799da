"""The child process of a checked run (``bounds="check"``, :mod:`graphlab.run.boundscheck`): what runs there.

A fresh process, so that ``ti.init(debug=True)`` (Taichi's bounds checks, on the CPU backend only) does
not replace the notebook's runtime, and a crash there cannot take the notebook with it. It rebuilds the kernels
(``payload.load_kernels``) and the graph (from its graph file text), loads the copied values, and
runs the graph in the debugger, which stops at the first dispatch that raises and names it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from graphlab.child.payload import load_kernels
from graphlab.model.graphfile import loads


def run_checked(request: Mapping[str, Any]) -> dict[str, Any]:
    """Run the graph once under Taichi's bounds checks; answer ``{"fault": None}`` or the failing step.

    Request: ``payload`` (carried kernels), ``graph`` (its graph file text), ``values`` (an ``.npz``
    of the arrays by arg name), ``numbers`` (scalar args by name). The fault is ``{"step", "node",
    "type", "message"}``: the step id and node id of the dispatch Taichi raised in, and its message.
    """
    kernels = load_kernels(request["payload"])  # before ti.init: a module may call ti.init itself
    import taichi as ti  # import cost: Taichi, loaded in the child only

    from graphlab.bridge.runtime import make_matrix, new_ndarray  # import cost: Taichi
    from graphlab.debug.session import DebugOptions, DebugSession  # import cost: Taichi

    ti.init(arch=ti.cpu, debug=True, cpu_max_num_threads=1, log_level=ti.ERROR)
    graph = loads(request["graph"], kernels=kernels, file="<checked run>")
    values: dict[str, Any] = dict(request["numbers"])
    with np.load(request["values"]) as arrays:
        for name in arrays.files:
            arg, array = graph.args[name], arrays[name]
            if arg.kind == "ndarray":
                values[name] = new_ndarray(arg.dtype or "f32", array.shape[: arg.ndim], arg.element_shape)
                values[name].from_numpy(array)
            else:
                values[name] = make_matrix(array)
    session = DebugSession(graph, values, options=DebugOptions(stats_on_stop=False))
    stop = session.continue_()
    if stop.reason != "fault" or stop.fault is None:
        return {"fault": None}
    return {
        "fault": {
            "step": stop.step_id,
            "node": stop.node_id,
            "type": type(stop.fault.error).__name__,
            "message": str(stop.fault.error),
        }
    }
