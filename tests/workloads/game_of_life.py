"""Conway's Game of Life: an ndarray port of Taichi's ``examples/simulation/game_of_life.py``.

What it exercises: i32 ndarrays, a scratch buffer (``count``) filled by one dispatch and read by the
next in every repetition, struct-for over one ndarray while indexing another, ``ti.static`` loops
over the birth/survival rule, and a sequence repeated once per generation.

Where it differs from the example:
- the fields ``alive`` and ``count`` are 2-D i32 ndarray parameters; the grid size comes from their shape;
- the example's one kernel ``run`` holds two loops (count, then apply the rule); here each loop is its
  own kernel (``count_neighbours``, ``apply_rule``) so the graph carries the scratch buffer between them;
- the bounds test in ``alive_at`` is an ``if`` statement: the example's conditional expression
  evaluates both sides, which would read an ndarray out of range at the border;
- the grid is 32x32 instead of 64x64; the random ``init`` kernel is replaced by a seeded numpy draw;
- the GUI, mouse editing and pause are removed.
"""

import sys
from types import ModuleType
from typing import Any

import numpy as np
import taichi as ti

import graphlab as gl

N = 32
GENERATIONS = 4
FRAMES = 2
BIRTH, SURVIVE = (3,), (2, 3)

Grid = ti.types.ndarray(dtype=ti.i32, ndim=2)


@ti.func
def alive_at(alive: ti.template(), i, j):
    n = alive.shape[0]
    value = 0
    if 0 <= i < n and 0 <= j < n:
        value = alive[i, j]
    return value


@ti.func
def neighbours(alive: ti.template(), i, j):
    return (
        alive_at(alive, i - 1, j)
        + alive_at(alive, i + 1, j)
        + alive_at(alive, i, j - 1)
        + alive_at(alive, i, j + 1)
        + alive_at(alive, i - 1, j - 1)
        + alive_at(alive, i + 1, j - 1)
        + alive_at(alive, i - 1, j + 1)
        + alive_at(alive, i + 1, j + 1)
    )


@ti.func
def next_state(a, c):
    if a == 0:
        for born in ti.static(BIRTH):
            if c == born:
                a = 1
    elif a == 1:
        a = 0
        for stays in ti.static(SURVIVE):
            if c == stays:
                a = 1
    return a


@ti.kernel
def count_neighbours(alive: Grid, count: Grid):
    for i, j in alive:
        count[i, j] = neighbours(alive, i, j)


@ti.kernel
def apply_rule(alive: Grid, count: Grid):
    for i, j in alive:
        alive[i, j] = next_state(alive[i, j], count[i, j])


def kernels() -> ModuleType:
    return sys.modules[__name__]


def graphs(m: ModuleType) -> list[gl.Graph]:
    g = gl.Graph("life")
    alive = g.ndarray("alive", ti.i32, ndim=2, shape=("n", "n"))
    count = g.ndarray("count", ti.i32, ndim=2, shape=("n", "n"), role="temp")
    with g.sequence("generation", repeat=GENERATIONS) as s:
        s.dispatch(m.count_neighbours, alive, count)
        s.dispatch(m.apply_rule, alive, count)
    return [g]


def by_hand(m: ModuleType, v: dict[str, Any]) -> None:
    for _ in range(GENERATIONS):
        m.count_neighbours(v["alive"], v["count"])
        m.apply_rule(v["alive"], v["count"])


def values(m: ModuleType) -> dict[str, Any]:
    rng = np.random.default_rng(11)
    return {
        "alive": (rng.random((N, N)) > 0.8).astype(np.int32),
        "count": np.zeros((N, N), np.int32),
    }
