"""The node records of a graph: dispatches, sequence uses, conditionals and loops.

Plain frozen data. A structure node (sequence use, conditional, loop) refers to named sequence
definitions; :func:`children` says which, and under which id segment they appear
(``substep/p2g``, ``branch/then/fix``, ``solve/jacobi``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from graphlab.model.kernels import KernelInfo


@dataclass(frozen=True)
class Dispatch:
    """A kernel launch; ``bindings`` maps each parameter (in order) to an arg name or None."""

    name: str
    kernel: KernelInfo
    bindings: tuple[tuple[str, str | None], ...]

    def binding(self, param: str) -> str | None:
        """The arg bound to ``param`` (None when unbound)."""
        return dict(self.bindings).get(param)

    @property
    def bound(self) -> dict[str, str | None]:
        """Bindings as a dict, in parameter order."""
        return dict(self.bindings)


@dataclass(frozen=True)
class SequenceUse:
    """A use of a named sequence, run ``repeat`` times in a row."""

    name: str
    sequence: str
    repeat: int = 1


@dataclass(frozen=True)
class Cond:
    """Run ``then`` when the one-element i32 ndarray ``flag`` is non-zero, else ``else_`` (if any).

    The flag is read on the host between compiled segments (one small device-to-host copy).
    """

    name: str
    flag: str
    then: str
    else_: str | None = None


@dataclass(frozen=True)
class Loop:
    """Run ``body`` repeatedly: ``count`` times (a scalar i32 arg), or while ``while_`` stays non-zero.

    A ``while_`` loop runs the body, then reads the flag; it stops when the flag is 0 or after
    ``max_iter`` iterations. With ``check_every=k`` the flag is read only after every k-th iteration
    (and after the last one ``max_iter`` allows), so the body may run up to k-1 times past the point
    where the flag cleared; ``guarded`` (the user's mark that the body is safe to repeat) makes it
    stop where reading every iteration would, by going back and replaying the last k iterations.
    """

    name: str
    body: str
    while_: str | None = None
    count: str | None = None
    max_iter: int | None = None
    check_every: int = 1
    guarded: bool = False


Node = Dispatch | SequenceUse | Cond | Loop
CONTROL = (Cond, Loop)


def children(node: Node) -> list[tuple[str, str]]:
    """``(id segment, sequence name)`` for each sequence a node contains, in program order."""
    if isinstance(node, SequenceUse):
        return [("", node.sequence)]
    if isinstance(node, Loop):
        return [("", node.body)]
    if isinstance(node, Cond):
        branches = [("then/", node.then)]
        if node.else_ is not None:
            branches.append(("else/", node.else_))
        return branches
    return []


def renamed(node: Node, name: str) -> Node:
    """A copy of a node under another name."""
    return replace(node, name=name)


def with_bindings(node: Dispatch, bindings: Mapping[str, str | None]) -> Dispatch:
    """A copy of a dispatch with its parameters bound to ``bindings`` (parameter -> arg name or None)."""
    return Dispatch(node.name, node.kernel, tuple(bindings.items()))
