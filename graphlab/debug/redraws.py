"""Random draws the debugger runs again: going back over a ``ti.random`` dispatch, then forward.

Going back restores the buffers exactly, but running a dispatch that calls ``ti.random`` again
draws other numbers (Taichi's generator state moved on), so everything after it takes other
values than the first time. :class:`Redraws` remembers the random steps a ``back()``/``goto()`` or
``restart()`` went back over, and when the session runs forward past one again, says so once: a
:class:`RandomReplayWarning` and a line in the session's ``notes`` naming the step and the kernel.
Where going back (or reading a past value) must rebuild a state by replaying steps whose copies were
evicted, a random step among them warns at once: the rebuilt state is not the one first reached.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

from graphlab.kernelfacts.effects import REPRODUCIBLE_HINT, graph_effects
from graphlab.model.graph import Graph
from graphlab.model.unroll import Step

__all__ = ["RandomReplayWarning", "Redraws"]


class RandomReplayWarning(UserWarning):
    """A dispatch that draws random numbers ran again after going back: the values differ from the first run."""


class Redraws:
    """The random dispatches of one session's graph, and the rewound steps still to run again."""

    def __init__(self, graph: Graph) -> None:
        self.notes = {e.node: e.random_note() for e in graph_effects(graph) if e.effects.random}
        self._pending: dict[int, str] = {}  # step index -> its step id

    def rewound(self, steps: Sequence[Step], start: int, stop: int) -> None:
        """The session went back from ``stop`` to ``start`` over ``steps[start:stop]``."""
        if not self.notes:
            return
        for k in range(start, min(stop, len(steps))):
            if steps[k].node_id in self.notes:
                self._pending.setdefault(k, steps[k].id)

    def forward(self, steps: Sequence[Step], position: int, notes: list[str]) -> None:
        """The session stands at ``position``: warn once for each rewound random step that ran again."""
        again = sorted(k for k in self._pending if k < position)
        for k in again:
            step_id = self._pending.pop(k)
            node = steps[k].node_id if k < len(steps) else step_id
            note = (
                f"step {step_id!r} ran again after going back: {self.notes.get(node, f'dispatch {node!r}')}, so it "
                f"drew other numbers than the first time and the buffers after it differ from that run; "
                f"{REPRODUCIBLE_HINT}"
            )
            notes.append(note)
            warnings.warn(note, RandomReplayWarning, stacklevel=4)

    def replayed(self, steps: Sequence[Step], start: int, stop: int, notes: list[str]) -> None:
        """Going back (or reading a past value) rebuilt a state by running ``steps[start:stop]`` again (its
        copies were evicted): a random step among them drew other numbers, so the state rebuilt is not
        the one first reached."""
        drawn = [steps[k] for k in range(start, min(stop, len(steps))) if steps[k].node_id in self.notes]
        if not drawn:
            return
        first = drawn[0]
        note = (
            f"rebuilding step {stop} ran steps {start}..{stop - 1} again (their copies were "
            f"evicted), and step {first.id!r} among them draws random numbers ({self.notes[first.node_id]}): the "
            f"buffers now differ from the ones first reached there; raise DebugOptions(budget_bytes=...) to keep "
            f"the copies, or {REPRODUCIBLE_HINT}"
        )
        notes.append(note)
        warnings.warn(note, RandomReplayWarning, stacklevel=5)
