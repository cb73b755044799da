"""The public :class:`graphlab.Graph`: the model's graph plus the uses users love.

``g.validate()``, ``g.check()``, ``g.compile()``, ``g.run()``, ``g.debug()``, ``g.render()``,
``g.save()``, ``g.to_code()``, ``g.memory_plan()`` and ``g.dataflow()`` are work of the layers above
the model (analysis, the Taichi runtime, the debugger, the exporter), which the model must not
import. So the model's :class:`graphlab.model.graph.Graph` is plain data with its editing API, and the
public ``graphlab.Graph`` is this subclass, defined above every layer it calls (the way networkx
keeps its algorithms off ``nx.Graph``): each method imports what it needs and calls it. Nothing is
registered at import time. The light layers are imported at the top; the compiler, the debugger and
the exporter pull in Taichi, so they load when called and ``import graphlab`` stays light.

:func:`load` and :func:`loads` read a graph file into this class; :func:`module_runner` is the
exported module as the other side of ``dbg.compare(folder)``, built here, where both the debugger
and the exporter (siblings that must not import each other) can be seen.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

import networkx as nx

from graphlab.analysis import check as _check
from graphlab.analysis import codegen, dataflow, memory, render
from graphlab.model import graphfile
from graphlab.model.graph import Graph as GraphModel
from graphlab.model.kernels import KernelSource

if TYPE_CHECKING:
    from graphlab.analysis.memory import MemoryPlan
    from graphlab.core.diagnostics import Diagnostic
    from graphlab.debug.session import DebugSession
    from graphlab.deploy.module_runner import ModuleRunner
    from graphlab.run.boundscheck import Bounds
    from graphlab.run.compiled import CompiledGraph


AccessSource = Literal["auto", "vulkan", "ast"]
RenderView = Literal["program", "dataflow", "unrolled"]


class Graph(GraphModel):
    """A compute graph of Taichi kernels over symbolic args (``graphlab.Graph``).

    Building, editing and reading come from the model (:class:`graphlab.model.graph.Graph`); the methods
    defined here validate, compile, run, debug, render and save it, each calling the module that
    owns the work.

    Examples
    --------
    >>> import graphlab as gl
    >>> g = gl.Graph("update")
    >>> x = g.ndarray("x", "f32", ndim=1)
    >>> x.describe()
    'ndarray f32, ndim=1'
    """

    def __init__(self, name: str = "graph") -> None:
        super().__init__(name)
        #: What :meth:`run` compiled, with the graph version it was compiled at (kept here, not in the model).
        self._compiled: tuple[int, CompiledGraph] | None = None

    def __getstate__(self) -> dict[str, Any]:
        """The model's state without the compiled graph (Taichi's handles cannot be pickled)."""
        return {**super().__getstate__(), "_compiled": None}

    def validate(self, *, target: str | None = None, access: AccessSource = "auto") -> list[Diagnostic]:
        """Every problem found, as located diagnostics (see :mod:`graphlab.analysis.check`).

        ``target`` adds what an export target cannot take; ``access`` picks where read/write facts
        come from (``"vulkan"``: Taichi's compiler, ``"ast"``: the source, ``"auto"``: the first that works).

        Parameters
        ----------
        target
            An export arch (``"vulkan"``, ``"x64"``, ``"cuda"``) whose limits to check too, or None.
        access
            Where the facts of what each kernel reads and writes come from.

        Returns
        -------
        list of Diagnostic
            Errors and warnings, each with a code, the node and arg it concerns, and a fix; empty
            for a graph that compiles.

        Examples
        --------
        >>> g = gl.Graph("demo")
        >>> g.dispatch(saxpy, g.scalar("a", ti.f32), g.ndarray("x", ti.f32, ndim=1))  # y left unbound
        'saxpy'
        >>> for diagnostic in g.validate():  # doctest: +NORMALIZE_WHITESPACE
        ...     print(diagnostic)
        GL001 error at saxpy [y]: parameter 'y' (ndarray f32, ndim=1) is unbound
          (fix: bind it: g.rebind('saxpy', 'y', arg))
        >>> g.rebind("saxpy", "y", g.ndarray("y", ti.f32, ndim=1))
        >>> g.validate()
        []
        """
        return _check.validate(self, target=target, access=access)

    def check(self, *, target: str | None = None, access: AccessSource = "auto") -> None:
        """Raise :class:`GraphError` listing the errors :meth:`validate` finds.

        Parameters
        ----------
        target, access
            As for :meth:`validate`.

        Raises
        ------
        GraphError
            The graph has errors (warnings pass); the message lists each with its fix.

        Examples
        --------
        >>> g = gl.Graph("demo")
        >>> g.dispatch(saxpy, g.scalar("a", ti.f32), g.ndarray("x", ti.f32, ndim=1))
        'saxpy'
        >>> g.check()  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
          ...
        graphlab.core.errors.GraphError: graph 'demo' has 1 error(s):
          GL001 error at saxpy [y]: parameter 'y' (ndarray f32, ndim=1) is unbound
          (fix: bind it: g.rebind('saxpy', 'y', arg))
        """
        _check.check(self, target=target, access=access)

    def memory_plan(self, **shapes: Any) -> MemoryPlan:
        """Bytes, lifetimes and shared storage slots of the buffers (see :mod:`graphlab.analysis.memory`)."""
        return memory.memory_plan(self, **shapes)

    def render(self, *, view: RenderView = "program", highlight: str | None = None, **options: Any) -> Any:
        """A ``graphviz.Digraph`` of the graph (see :mod:`graphlab.analysis.render`).

        A notebook shows the graph itself drawn (``_repr_mimebundle_``); this gives the drawing to
        save or restyle.

        Parameters
        ----------
        view
            ``"program"``: nodes, sequences and the args they read and write; ``"dataflow"``: what
            feeds what; ``"unrolled"``: the dispatches in launch order.
        highlight
            A node id to outline.
        **options
            ``diagnostics``, ``max_steps``, ``access``: see :func:`graphlab.analysis.render.render`.

        Returns
        -------
        graphviz.Digraph
            ``.source`` is the DOT text; ``.render(file, format="svg")`` writes a picture.

        Raises
        ------
        GraphError
            An unknown view.

        Examples
        --------
        >>> g = gl.Graph("demo")
        >>> x = g.ndarray("x", ti.f32, ndim=1)
        >>> g.dispatch(fill, x, g.scalar("value", ti.f32))
        'fill'
        >>> g.dispatch(saxpy, g.scalar("a", ti.f32), x, g.ndarray("y", ti.f32, ndim=1))
        'saxpy'
        >>> dot = g.render(view="unrolled")
        >>> print(dot.source)  # doctest: +NORMALIZE_WHITESPACE
        digraph demo {
            graph [fontname="DejaVu Sans" label=demo labelloc=t newrank=true rankdir=TB tooltip=demo]
            node [fontname="DejaVu Sans" fontsize=11]
            edge [fontname="DejaVu Sans" fontsize=9]
            fill [label="0: fill" id=fill shape=box style=rounded tooltip="0: fill"]
            saxpy [label="1: saxpy" id=saxpy shape=box style=rounded tooltip="1: saxpy"]
            fill -> saxpy
        }
        """
        return render.render(self, view=view, highlight=highlight, **options)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return render.mimebundle(self)

    def dataflow(self, *, access: AccessSource = "auto") -> nx.DiGraph:
        """The read/write data-flow graph (see :mod:`graphlab.analysis.dataflow`)."""
        return dataflow.dataflow_graph(self, access=access)

    def compile(self) -> CompiledGraph:
        """Check the graph and build a real ``ti.graph`` CompiledGraph for the current Taichi runtime.

        Returns
        -------
        CompiledGraph
            Runs with ``run(values)`` as many times as wanted, checking the values each time; it
            refuses to run once ``ti.init()``/``ti.reset()`` replaced the runtime (Taichi would crash).

        Raises
        ------
        GraphError
            The graph has errors (see :meth:`check`).

        Examples
        --------
        >>> g = gl.Graph("demo")
        >>> x = g.ndarray("x", ti.f32, ndim=1)
        >>> g.dispatch(fill, x, g.scalar("value", ti.f32))
        'fill'
        >>> compiled = g.compile()
        >>> compiled
        <graphlab.CompiledGraph 'demo' on x64: 1 dispatches, live>
        >>> xs = np.zeros(3, np.float32)
        >>> compiled.run(x=xs, value=0.5)
        >>> xs
        array([0.5, 0.5, 0.5], dtype=float32)
        """
        from graphlab.run.compiled import compile_graph  # import cost: Taichi

        return compile_graph(self)

    def run(self, values: Mapping[str, Any] | None = None, /, *, bounds: Bounds = "trust", **kwargs: Any) -> None:
        """Compile once (per edit and Taichi runtime) and run with checked values.

        Every value is checked against its arg (dtype, ndim, element shape, shared dims) before
        anything runs. numpy arrays are copied to the device and the results copied back.

        Parameters
        ----------
        values, **kwargs
            Run values by arg name: ``ti.ndarray`` or numpy arrays for ndarrays, numbers for
            scalars, ``ti.Matrix`` or nested lists for matrices. Temps may be left out.
        bounds
            ``"trust"`` (default): run as Taichi does; indices the kernels' source does not prove
            (``validate()``'s GL029) go unchecked. ``"check"``: first run once on copies of the
            values in a child process under Taichi's bounds checks (slow; x64; no textures).
            A graph arg named ``bounds`` goes in the ``values`` dict.

        Raises
        ------
        GraphRunError
            A value is missing or does not fit its arg; nothing ran. The message names the arg and
            the fix.
        OutOfBoundsError
            With ``bounds="check"``: a dispatch indexed out of bounds in the checked run; the message
            names the dispatch, arg, param and index. Nothing ran in this process.
        GraphError
            The graph has errors (see :meth:`check`).

        Examples
        --------
        >>> g = gl.Graph("demo")
        >>> x, y = g.ndarray("x", ti.f32, ndim=1, shape="n"), g.ndarray("y", ti.f32, ndim=1, shape="n")
        >>> g.dispatch(fill, x, g.scalar("value", ti.f32))
        'fill'
        >>> g.dispatch(saxpy, g.scalar("a", ti.f32), x, y)
        'saxpy'
        >>> ys = np.ones(4, np.float32)
        >>> g.run(x=np.zeros(4, np.float32), y=ys, value=2.0, a=3.0)
        >>> ys
        array([7., 7., 7., 7.], dtype=float32)
        >>> yt = ti.ndarray(ti.f32, shape=4)  # device arrays are used in place
        >>> g.run(x=ti.ndarray(ti.f32, shape=4), y=yt, value=1.0, a=2.0)
        >>> yt.to_numpy()
        array([2., 2., 2., 2.], dtype=float32)
        >>> g.run(x=np.zeros(4, np.float32), y=np.ones(3, np.float32), value=2.0, a=3.0)
        ... # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
          ...
        graphlab.core.errors.GraphRunError: run(): arg 'y' has shape (3,), so dim 'n' = 3, but arg 'x' set
          'n' = 4; arrays sharing a dim must agree (Taichi would index out of bounds)
        """
        kept = self._compiled
        if kept is None or kept[0] != self.version or not kept[1].is_current():
            kept = self._compiled = (self.version, self.compile())
        kept[1].run(values, bounds=bounds, **kwargs)

    def debug(self, values: Mapping[str, Any] | None = None, /, **kwargs: Any) -> DebugSession:
        """A step debugger over this graph and these run values (see :mod:`graphlab.debug.session`).

        Parameters
        ----------
        values, **kwargs
            The run values, as for :meth:`run`. The session works in place on ``ti.ndarray``
            values; numpy arrays receive the results when the session reaches the end.
        options
            (keyword) a :class:`graphlab.debug.DebugOptions`: snapshot budget, statistics, fast-forward.
        bounds
            (keyword) ``"check"`` runs the graph once first, as ``run(..., bounds="check")`` does,
            and raises ``OutOfBoundsError`` before the session opens; ``"trust"`` (default) does not.

        Returns
        -------
        DebugSession
            At position 0; ``step()``, ``continue_()``, ``back()``, ``goto()``, ``break_at()``,
            ``inspect()``, ``watch()``, ``timing()``... move and look.

        Raises
        ------
        GraphRunError, GraphError
            As for :meth:`run`; nothing ran.

        Examples
        --------
        >>> g = gl.Graph("demo")
        >>> x = g.ndarray("x", ti.f32, ndim=1)
        >>> g.dispatch(fill, x, g.scalar("value", ti.f32))
        'fill'
        >>> g.dispatch(saxpy, g.scalar("a", ti.f32), x, g.ndarray("y", ti.f32, ndim=1))
        'saxpy'
        >>> ys = np.zeros(4, np.float32)
        >>> dbg = g.debug(x=np.zeros(4, np.float32), y=ys, value=2.0, a=3.0)
        >>> print(dbg.position)
        before fill (step 0; 0 of 2 dispatches done)
        >>> dbg.step().step_id
        'saxpy'
        >>> dbg.continue_().reason, ys
        ('end', array([6., 6., 6., 6.], dtype=float32))
        """
        from graphlab.debug.session import DebugSession  # import cost: Taichi

        kwargs.setdefault("module_runner", module_runner)  # compare(folder): the exporter runs the module
        return DebugSession(self, values, **kwargs)

    def save(self, path: Any) -> None:
        """Write the graph file (JSON, ``graphlab.graph/1``) atomically.

        The file names kernels by reference (``module:qualname``); :func:`graphlab.load` resolves
        them from the kernels it is given. The text is read back before anything is written, so
        a file that would not load is never written, and an old file is replaced whole or not at all.

        Parameters
        ----------
        path
            The file to write (``str`` or ``os.PathLike``).

        Raises
        ------
        GraphFileError
            The graph would not load back, or the file cannot be written; the old file is unchanged.

        Examples
        --------
        >>> import os, tempfile
        >>> g = gl.Graph("demo")
        >>> g.dispatch(fill, g.ndarray("x", ti.f32, ndim=1), g.scalar("value", ti.f32))
        'fill'
        >>> path = os.path.join(tempfile.mkdtemp(), "demo.json")
        >>> g.save(path)
        >>> gl.load(path, kernels=[fill]).to_dict() == g.to_dict()
        True
        """
        graphfile.save(self, path)

    def to_dict(self) -> dict[str, Any]:
        """The graph file's content as a dict."""
        return graphfile.to_dict(self)

    def to_code(self) -> str:
        """The equivalent plain ``ti.graph`` Python code.

        Returns
        -------
        str
            A script that builds and compiles the same graph with ``ti.graph.GraphBuilder`` and no
            graphlab, importing the kernels from their modules.

        Raises
        ------
        GraphError
            The graph has conditionals or loops, which plain ``ti.graph`` cannot express.

        Examples
        --------
        >>> g = gl.Graph("demo")
        >>> x = g.ndarray("x", ti.f32, ndim=1)
        >>> g.dispatch(fill, x, g.scalar("value", ti.f32))
        'fill'
        >>> code = g.to_code()
        >>> print(code)
        import taichi as ti
        from graphlab.api.doc_kernels import fill
        <BLANKLINE>
        sym_x = ti.graph.Arg(ti.graph.ArgKind.NDARRAY, 'x', dtype=ti.f32, ndim=1)
        sym_value = ti.graph.Arg(ti.graph.ArgKind.SCALAR, 'value', dtype=ti.f32)
        <BLANKLINE>
        builder_demo = ti.graph.GraphBuilder()
        builder_demo.dispatch(fill, sym_x, sym_value)
        graph_demo = builder_demo.compile()
        <BLANKLINE>
        >>> namespace = {}
        >>> exec(code, namespace)  # it runs as it is
        >>> xt = ti.ndarray(ti.f32, shape=2)
        >>> namespace["graph_demo"].run({"x": xt, "value": 4.0})
        >>> xt.to_numpy()
        array([4., 4.], dtype=float32)
        """
        return codegen.to_code(self)


def load(path: str | os.PathLike[str], *, kernels: KernelSource) -> Graph:
    """A graph file read into a :class:`Graph` (see :func:`graphlab.model.graphfile.load`)."""
    return graphfile.load(path, kernels=kernels, graph_type=Graph)


def loads(text: str | bytes, *, kernels: KernelSource, file: str | None = None) -> Graph:
    """Graph file text read into a :class:`Graph` (see :func:`graphlab.model.graphfile.loads`)."""
    return graphfile.loads(text, kernels=kernels, file=file, graph_type=Graph)


def module_runner(folder: Any, graph: GraphModel, start: Mapping[str, Any]) -> ModuleRunner:
    """An exported module as the other side of ``dbg.compare(folder)``: built here, where both the
    debugger and the exporter (siblings that must not import each other) can be seen."""
    from graphlab.deploy.module_runner import ModuleRunner  # import cost: Taichi's C runtime

    return ModuleRunner(folder, graph, start)


def open_capture(
    folder: str | os.PathLike[str],
    *,
    graph: Graph,
    module: str | os.PathLike[str] | None = None,
    max_bytes: int | None = None,
    **debug_options: Any,
) -> DebugSession:
    """A debug session of ``graph`` on the inputs a field run captured, on this notebook's arch.

    The capture is read and checked first (:func:`graphlab.debug.capture.read_capture`); the
    session's ``capture`` is it, so ``dbg.compare(dbg.capture)`` says where the notebook and the
    field run part. ``debug_options`` go to :meth:`Graph.debug` (``options=``, ``bounds=``). Here, above
    the debugger, since it opens the session as ``g.debug()`` does.
    """
    from graphlab.debug.capture import DEFAULT_MAX_BYTES, read_capture  # import cost: Taichi

    limit = DEFAULT_MAX_BYTES if max_bytes is None else max_bytes
    capture = read_capture(folder, graph=graph, module=module, max_bytes=limit)
    session = graph.debug(capture.start_values(), **debug_options)
    session.capture = capture
    return session
