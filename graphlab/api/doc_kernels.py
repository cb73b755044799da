"""Three small kernels, and a graph of them, that the examples in graphlab's docstrings use.

Taichi compiles a kernel from its source file, so a kernel cannot be defined inside a doctest; the
docstrings of :class:`graphlab.Graph`, :func:`graphlab.deploy`, the debugger and friends use these
instead. The repository's ``conftest.py`` puts them (with ``ti``, ``np`` and ``gl``) into the doctest
namespace on a one-thread ``ti.cpu`` runtime; to run an example yourself, import them::

    import numpy as np, taichi as ti, graphlab as gl
    from graphlab.api.doc_kernels import count_down, demo_graph, fill, saxpy
    ti.init(arch=ti.cpu, cpu_max_num_threads=1)

Importing this module imports Taichi (not ``import graphlab``). It must not use
``from __future__ import annotations``: Taichi reads the parameter annotations as objects.
"""

import taichi as ti

from graphlab.api.graph import Graph

__all__ = ["count_down", "demo_graph", "fill", "saxpy"]


@ti.kernel
def fill(x: ti.types.ndarray(dtype=ti.f32, ndim=1), value: ti.f32):
    """Set every element of ``x`` to ``value``."""
    for i in x:
        x[i] = value


@ti.kernel
def saxpy(a: ti.f32, x: ti.types.ndarray(dtype=ti.f32, ndim=1), y: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    """``y = a * x + y``, element by element."""
    for i in x:
        y[i] += a * x[i]


@ti.kernel
def count_down(left: ti.types.ndarray(dtype=ti.i32, ndim=1), flag: ti.types.ndarray(dtype=ti.i32, ndim=1)):
    """Take one from ``left[0]``; ``flag[0]`` says whether any is left (a ``while_`` loop's flag)."""
    left[0] -= 1
    flag[0] = 1 if left[0] > 0 else 0


def demo_graph(repeat: int = 3) -> Graph:
    """A graph to debug in examples: sequence ``steps`` runs ``saxpy`` then ``again`` (saxpy too).

    Run with ``a=1`` and ``x`` all ones, ``y`` counts the dispatches that ran.

    Parameters
    ----------
    repeat
        How many times ``steps`` runs.

    Returns
    -------
    Graph
        ``demo``, with args ``a`` (f32 scalar), ``x`` and ``y`` (f32 ndarrays).

    Examples
    --------
    >>> g = demo_graph()
    >>> [step.id for step in g.steps()][:3]
    ['steps[0]/saxpy', 'steps[0]/again', 'steps[1]/saxpy']
    >>> y = np.zeros(4, np.float32)
    >>> g.run(a=1.0, x=np.ones(4, np.float32), y=y)
    >>> y
    array([6., 6., 6., 6.], dtype=float32)
    """
    g = Graph("demo")
    a, x, y = g.scalar("a", ti.f32), g.ndarray("x", ti.f32, ndim=1), g.ndarray("y", ti.f32, ndim=1)
    with g.sequence("steps", repeat=repeat) as s:
        s.dispatch(saxpy, a, x, y)
        s.dispatch(saxpy, a, x, y, name="again")
    return g
