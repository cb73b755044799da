"""The step debugger: sessions over a compiled graph, and the device-side building blocks.

``g.debug(...)`` gives a :class:`DebugSession` (:mod:`graphlab.debug.session`): stepping,
breakpoints, conditions and watches (:mod:`~graphlab.debug.breakpoints`, :mod:`~graphlab.debug.expr`),
going back (:mod:`~graphlab.debug.snapshots`), buffer views and diffs (:mod:`~graphlab.debug.inspect`,
:mod:`~graphlab.debug.stats`, :mod:`~graphlab.debug.pictures`), timing (:mod:`~graphlab.debug.timing`)
and fast-forward through compiled segments (:mod:`~graphlab.debug.runner`) over the unrolled steps
(:mod:`~graphlab.debug.steps`) with copies kept to go back (:mod:`~graphlab.debug.timeline`); graphs with
conditionals and loops have their timeline recorded as they run (:mod:`~graphlab.debug.flow`).
The records it returns are in :mod:`~graphlab.debug.report`, their text in
:mod:`~graphlab.debug.report_text`; ``dbg.compare(arch)`` and its :class:`Divergence` are in
:mod:`~graphlab.debug.compare`. Importing this package imports Taichi.
"""

from graphlab.debug.breakpoints import Breakpoint, Watch
from graphlab.debug.compare import Divergence
from graphlab.debug.inspect import BufferView, DiffView
from graphlab.debug.redraws import RandomReplayWarning
from graphlab.debug.report import (
    Decision,
    Fault,
    NonfiniteHit,
    ParityReport,
    ParityRow,
    Position,
    SnapshotUsage,
    StaleViewError,
    StepRef,
    Stop,
    StopStats,
)
from graphlab.debug.session import DebugError, DebugOptions, DebugSession, RebuildError
from graphlab.debug.timing import LoopTime, NodeTime, SegmentTime, StepTime, TimingReport

__all__ = [
    "Breakpoint",
    "BufferView",
    "DebugError",
    "DebugOptions",
    "DebugSession",
    "Decision",
    "DiffView",
    "Divergence",
    "Fault",
    "LoopTime",
    "NodeTime",
    "NonfiniteHit",
    "ParityReport",
    "ParityRow",
    "Position",
    "RandomReplayWarning",
    "RebuildError",
    "SegmentTime",
    "SnapshotUsage",
    "StaleViewError",
    "StepRef",
    "StepTime",
    "Stop",
    "StopStats",
    "TimingReport",
    "Watch",
]
