"""graphlab: assemble, check, debug and ship Taichi compute graphs from a notebook.

Importing graphlab is light: it does not import Taichi, Jupyter or the widget; those load when
first used.
"""

from __future__ import annotations

import contextlib
import importlib.util
import sys
from typing import TYPE_CHECKING, Any

from graphlab._version import __version__
from graphlab.api.graph import Graph
from graphlab.api.graph import load as _load
from graphlab.api.graph import loads as _loads
from graphlab.api.graph import open_capture as _open_capture
from graphlab.core.diagnostics import Diagnostic
from graphlab.core.errors import (
    GraphError,
    GraphFileError,
    GraphlabError,
    GraphRunError,
    KernelError,
    OutOfBoundsError,
    ReplayError,
    StaleGraphError,
    ToolMissingError,
)
from graphlab.core.spec import Arg
from graphlab.model.graph import SequenceBuilder
from graphlab.model.graphdata import GraphChange
from graphlab.model.kernels import KernelInfo, KernelRegistry, Param, kernel_info
from graphlab.model.nodes import Cond, Dispatch, Loop, SequenceUse
from graphlab.model.unroll import Step

if TYPE_CHECKING:
    from graphlab.deploy.exporter import export

__all__ = [
    "Arg",
    "Cond",
    "Diagnostic",
    "Dispatch",
    "Graph",
    "GraphChange",
    "GraphError",
    "GraphFileError",
    "GraphRunError",
    "GraphlabError",
    "KernelError",
    "KernelInfo",
    "KernelRegistry",
    "Loop",
    "OutOfBoundsError",
    "Param",
    "ReplayError",
    "SequenceBuilder",
    "SequenceUse",
    "StaleGraphError",
    "Step",
    "ToolMissingError",
    "__version__",
    "editor",
    "export",
    "kernel_info",
    "load",
    "load_module",
    "loads",
    "open_capture",
    "verify",
]


def __getattr__(name: str) -> Any:
    """``gl.export`` is :func:`graphlab.deploy.exporter.export` itself, imported on first use."""
    if name == "export":
        from graphlab.deploy.exporter import export  # import cost: numpy and the exporter stay out of `import graphlab`

        globals()["export"] = export
        return export
    raise AttributeError(f"module 'graphlab' has no attribute {name!r}")


def load(path: Any, *, kernels: Any) -> Graph:
    """Load a graph file; kernels resolve only from ``kernels`` (module, dict, list or registry).

    A graph file names its kernels by reference (``module:qualname``) and never imports them:
    each must be among ``kernels``, so loading a file runs no code of its choosing.

    Parameters
    ----------
    path
        The file :meth:`Graph.save` wrote (``graphlab.graph/1`` JSON).
    kernels
        Where the kernels come from: a module, a dict (``globals()``), a list of ``@ti.kernel``s
        or a :class:`KernelRegistry`.

    Returns
    -------
    Graph
        The graph, checked as every edit checks it.

    Raises
    ------
    GraphFileError
        ``path`` is no path, the file cannot be read, is not a graph file, or names a kernel not
        given; the message names the file and the JSON path (``$.body[1].kernel``).

    Examples
    --------
    >>> import os, tempfile
    >>> from graphlab.api import doc_kernels
    >>> path = os.path.join(tempfile.mkdtemp(), "demo.json")
    >>> doc_kernels.demo_graph().save(path)
    >>> g = gl.load(path, kernels=doc_kernels)
    >>> g
    <graphlab.Graph 'demo': 3 args, 1 top-level nodes, 6 dispatches unrolled>
    >>> gl.load(path, kernels=[fill])  # doctest: +ELLIPSIS +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
      ...
    graphlab.core.errors.GraphFileError: ...demo.json: $.sequences[0].body[0].kernel: kernel
      'graphlab.api.doc_kernels:saxpy' is not among the kernels given (graphlab.api.doc_kernels:fill)
    """
    return _load(path, kernels=kernels)


def editor(graph: Graph, kernels: Any = None, **options: Any) -> Any:
    """Open the notebook widget on ``graph``: edit, debug (``values=``) and export it (see graphlab.widget.editor).

    Edits in the widget and in Python show in both: the widget edits ``graph`` itself.

    Parameters
    ----------
    graph
        The graph to edit, in place.
    kernels
        What the palette offers besides the kernels the graph uses: a module, a dict, a list of
        ``@ti.kernel``s or a :class:`KernelRegistry`; by default the notebook's ``@ti.kernel``s.
    **options
        ``values=`` (run values by arg name for the debug and export panels) and ``access=``
        (how validation learns what kernels read and write): see :func:`graphlab.widget.editor`.

    Returns
    -------
    GraphEditor
        The widget; the last expression of a notebook cell shows it.

    Raises
    ------
    TypeError
        ``graph`` is not a :class:`Graph`, or ``values`` not a dict.

    Examples
    --------
    >>> g = gl.Graph("demo")
    >>> x = g.ndarray("x", ti.f32, ndim=1)
    >>> g.dispatch(fill, x, g.scalar("value", ti.f32))
    'fill'
    >>> editor = gl.editor(g, kernels=[fill, saxpy])
    >>> [kernel["name"] for kernel in editor.palette]
    ['fill', 'saxpy']
    >>> g.dispatch(saxpy, g.scalar("a", ti.f32), x)  # an edit in Python, y left unbound
    'saxpy'
    >>> [node["id"] for node in editor.graph["nodes"]], [d["code"] for d in editor.diagnostics]
    (['fill', 'saxpy'], ['GL001'])
    """
    from graphlab.widget import editor as _editor  # import cost: Jupyter

    return _editor(graph, kernels, **options)


def loads(text: str | bytes, *, kernels: Any) -> Graph:
    """Load a graph from JSON text.

    Parameters
    ----------
    text
        A graph file's content (``json.dumps(g.to_dict())``), as ``str`` or UTF-8 ``bytes``.
    kernels
        Where the kernels come from, as for :func:`load`.

    Returns
    -------
    Graph
        The graph.

    Raises
    ------
    GraphFileError
        The text is not valid JSON or not a graph file, or names a kernel not given; the message
        gives the JSON path.

    Examples
    --------
    >>> import json
    >>> g = gl.Graph("demo")
    >>> g.dispatch(fill, g.ndarray("x", ti.f32, ndim=1), g.scalar("value", ti.f32))
    'fill'
    >>> text = json.dumps(g.to_dict())
    >>> gl.loads(text, kernels=[fill]).to_dict() == g.to_dict()
    True
    >>> gl.loads('{"format": "graphlab.graph/1"}', kernels=[fill])
    Traceback (most recent call last):
      ...
    graphlab.core.errors.GraphFileError: $.name: missing
    """
    return _loads(text, kernels=kernels)


def verify(path: Any, inputs: Any = None, **options: Any) -> Any:
    """Compare an exported module in the C runtime with Taichi's Python frontend (see graphlab.deploy.verify).

    The folder's generated C host is built and run on the inputs, so is a child process that
    rebuilds the graphs with Taichi's Python frontend; every ndarray they write is compared.
    It executes the kernels' code stored in the folder: verify only folders you trust.

    Parameters
    ----------
    path
        A folder :func:`export` wrote.
    inputs
        Values by arg name (numpy arrays, numbers); the other args are drawn at random.
    **options
        ``seed``, ``frames``, ``rtol``, ``kernels``, ``cc``, ``baseline``, ``timeout``: see
        :func:`graphlab.deploy.verify.verify`.

    Returns
    -------
    VerifyReport
        Per output: the largest absolute and relative difference, Python against a second run of
        itself, and a verdict: ``identical``, ``within run-to-run noise``, ``depends on ti.random``,
        ``within rtol`` or ``differs`` (only this one fails); ``verdict`` and ``passed`` for the whole;
        printed, a table.

    Raises
    ------
    VerifyError, ManifestError
        The folder is not what the export sealed, lacks its sources, or an input does not fit.
    ToolMissingError, HostBuildError
        No C compiler, or this machine cannot run the module's arch.

    Examples
    --------
    >>> import os, tempfile
    >>> g = gl.Graph("demo")
    >>> x, y = g.ndarray("x", ti.f32, ndim=1, shape="n"), g.ndarray("y", ti.f32, ndim=1, shape="n")
    >>> g.dispatch(saxpy, g.scalar("a", ti.f32), x, y)
    'saxpy'
    >>> result = gl.export(g, os.path.join(tempfile.mkdtemp(), "demo"), arch="x64", dims={"n": 64})
    >>> report = gl.verify(result.path)  # random inputs (seed 0), sized by the dims
    >>> report.passed, report.inputs, [(out.name, out.shape, out.identical) for out in report.outputs]
    (True, 'random (seed 0)', [('y', (64,), True)])
    """
    from graphlab.deploy.verify import verify as _verify  # import cost: Taichi

    return _verify(path, inputs, **options)


def load_module(path: Any) -> Any:
    """Load an exported module into Taichi's C runtime, to run its graphs "as deployed".

    No Taichi Python frontend is involved: the module runs through ``libtaichi_c_api`` as a C
    host would run it (see :mod:`graphlab.deploy.cruntime`).

    Parameters
    ----------
    path
        A folder :func:`export` wrote (``manifest.json`` and ``module/``).

    Returns
    -------
    Module
        ``module.graphs[name].run(values)`` (a dict, or keywords) runs a graph on numpy values, updating them in
        place; ``close()`` (or a ``with`` block) frees the runtime.

    Raises
    ------
    ManifestError
        The folder is not what the export sealed (a file missing or changed, a malformed manifest).
    CRuntimeError
        The C runtime refused the arch or the module; the message names the C call.

    Examples
    --------
    >>> import os, tempfile
    >>> g = gl.Graph("demo")
    >>> g.dispatch(fill, g.ndarray("x", ti.f32, ndim=1), g.scalar("value", ti.f32))
    'fill'
    >>> result = gl.export(g, os.path.join(tempfile.mkdtemp(), "demo"), arch="x64")
    >>> xs = np.zeros(3, np.float32)
    >>> with gl.load_module(result.path) as module:
    ...     module.graphs["demo"].run(x=xs, value=1.5)
    {'x': array([1.5, 1.5, 1.5], dtype=float32)}
    >>> xs
    array([1.5, 1.5, 1.5], dtype=float32)
    """
    from graphlab.deploy.cruntime import load_module as _load_module  # import cost: Taichi

    return _load_module(path)


def open_capture(folder: Any, *, graph: Graph, module: Any = None, **options: Any) -> Any:
    """Open a field capture (one run recorded where a module was deployed) as a debug session of ``graph``.

    The capture (format ``graphlab.capture/1``, see :mod:`graphlab.core.capture_format`) is recorded by
    the C runtime library on a user's device, or from Python with
    ``gl.load_module(folder).graphs[name].capture(capture_folder, values, segments=True)``. It is
    checked against the notebook's graph before anything runs, and the session starts from its
    inputs on this notebook's arch; ``dbg.compare(dbg.capture)`` names the first segment, and the
    dispatch where the data decides it, where the notebook departs from the field run, or the flag
    read that differs (see :mod:`graphlab.debug.compare_capture`).

    Parameters
    ----------
    folder
        The capture folder (``capture.json``, ``inputs/``, ``outputs/``, maybe ``segments/``).
    graph
        The notebook's :class:`Graph` the capture is of (its kernels run the notebook side).
    module
        The exported module folder it was recorded with: its ``manifest.json`` must be the very one.
    **options
        ``max_bytes=`` (the most bytes of arrays read, default 8 GiB) and ``g.debug``'s own options.

    Returns
    -------
    DebugSession
        A session on the captured inputs; its ``capture`` is the checked capture.

    Raises
    ------
    CaptureError
        The capture is missing, incomplete (no ``capture.json``), corrupt, too big, or not of this
        graph; the message names the file, the JSON path (``$.inputs.x``) and the fix.

    Examples
    --------
    >>> import os, tempfile
    >>> g = gl.Graph("demo")
    >>> g.dispatch(fill, g.ndarray("x", ti.f32, ndim=1), g.scalar("value", ti.f32))
    'fill'
    >>> root = tempfile.mkdtemp()
    >>> module = gl.export(g, os.path.join(root, "demo"), arch="x64").path
    >>> with gl.load_module(module) as loaded:
    ...     _ = loaded.graphs["demo"].capture(os.path.join(root, "cap"), {"x": np.zeros(3, np.float32), "value": 1.5})
    >>> dbg = gl.open_capture(os.path.join(root, "cap"), graph=g, module=module)
    >>> dbg.compare(dbg.capture) is None
    True
    """
    return _open_capture(folder, graph=graph, module=module, **options)


def _note_taichi_runtimes() -> None:
    """Have :mod:`graphlab.bridge.runtime` note the Taichi runtime of every ndarray and texture made
    from now on (one made before ``ti.reset()``/``ti.init()`` would segfault a graph). Taichi is not
    imported here: when it is not loaded yet, a one-shot import hook loads the bridge right after it."""
    if "taichi" in sys.modules:
        import graphlab.bridge.runtime  # noqa: F401  (import cost: Taichi)

        return

    class AfterTaichi:
        def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
            if name != "taichi":
                return None
            sys.meta_path.remove(self)
            spec = importlib.util.find_spec(name)
            loader = getattr(spec, "loader", None)
            if loader is None or not hasattr(loader, "exec_module"):
                return spec
            exec_taichi = loader.exec_module

            def exec_module(module: Any) -> None:
                exec_taichi(module)
                with contextlib.suppress(Exception):  # never break `import taichi`; the bridge fails when used
                    import graphlab.bridge.runtime  # noqa: F401  (import cost: Taichi)

            loader.exec_module = exec_module
            return spec

    sys.meta_path.insert(0, AfterTaichi())


_note_taichi_runtimes()
