"""Control flow in an exported module: a graph's plan as ``manifest.json`` records it.

A graph with conditionals or loops runs as several segments with host-side decisions between them
(:mod:`graphlab.model.plan`, the one plan type). Exported, each segment is one compute graph of the AOT
module, and the manifest keeps the plan's tree as JSON::

    {"op": "segment", "graph": "poisson_seg0", "args": ["u", "f", "u_new", "tol", "flag"]}
    {"op": "repeat", "node": "outer", "times": 2, "body": [...]}
    {"op": "cond", "node": "branch", "flag": "flag", "then": [...], "else": [...] or null}
    {"op": "loop", "node": "solve", "while": "flag", "count": null, "max_iter": 5000, "body": [...]}

A while loop with ``check_every`` other than 1 also has ``"check_every": k`` (absent means 1); a
guarded one also has ``"guarded": true`` and ``"saves"``, the args its body may write, which a host
copies aside before each group of k iterations and back before replaying the last one.

A graph without control flow stays one module graph named after it and has no tree (``control``
absent). Reading a manifest (:mod:`graphlab.deploy.manifest`) gives the same plan ops back, segments
numbered in program order as :func:`graphlab.model.plan.build_plan` numbers them, so ``gl.load_module``
runs them with the plan's own cursor and the generated C host's table is made from them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from graphlab.model.plan import Branch, ControlEvent, Iterate, Op, Plan, Repeat, Segment

__all__ = [
    "EVENT_RE",
    "FrameEvent",
    "event_line",
    "parse_event_lines",
    "plan_to_json",
]


def plan_to_json(
    plan: Plan, order: Sequence[str], saves: Mapping[str, tuple[str, ...]] | None = None
) -> list[dict[str, Any]] | None:
    """The plan's tree as ``manifest.json`` records it (None without control flow); each segment lists
    the args it binds, in the order of ``order`` (the module's arg order); ``saves`` gives each guarded
    loop's saved args by node id (:func:`graphlab.run.rollback.guarded_writes`)."""
    if not plan.control:
        return None
    return _ops_json(plan.body, order, saves or {})


def _ops_json(ops: Sequence[Op], order: Sequence[str], saves: Mapping[str, tuple[str, ...]]) -> list[dict[str, Any]]:
    return [_op_json(op, order, saves) for op in ops]


def _op_json(op: Op, order: Sequence[str], saves: Mapping[str, tuple[str, ...]]) -> dict[str, Any]:
    if isinstance(op, Segment):
        used = set(op.args)
        return {"op": "segment", "graph": op.name, "args": [name for name in order if name in used]}
    if isinstance(op, Repeat):
        return {"op": "repeat", "node": op.node_id, "times": op.times, "body": _ops_json(op.body, order, saves)}
    if isinstance(op, Branch):
        other = None if op.else_ is None else _ops_json(op.else_, order, saves)
        return {"op": "cond", "node": op.node_id, "flag": op.flag, "then": _ops_json(op.then, order, saves),
                "else": other}  # fmt: skip
    assert isinstance(op, Iterate)
    loop: dict[str, Any] = {"op": "loop", "node": op.node_id, "while": op.while_, "count": op.count,
                            "max_iter": op.max_iter}  # fmt: skip
    if op.check_every != 1:  # the flag is read after every check_every-th iteration only
        loop["check_every"] = op.check_every
    if op.guarded:  # it ends where reading every iteration would: these are copied aside and back
        loop["guarded"] = True
        loop["saves"] = list(saves.get(op.node_id, op.saves))
    return {**loop, "body": _ops_json(op.body, order, saves)}


# --- events of a run -------------------------------------------------------------------------------


@dataclass(frozen=True)
class FrameEvent:
    """A control event of one graph in one frame (frames count from 0)."""

    frame: int
    graph: str
    event: ControlEvent

    def __str__(self) -> str:
        e = self.event
        limit = " (max_iter reached)" if e.limit_reached else ""
        what = f"{e.value} iteration(s)" if e.kind == "loop" else f"took {e.value}"
        return f"frame {self.frame}, {self.graph}/{e.node}: {e.kind} {what}{limit}"


#: How the C host prints an event with ``--events`` (one line each, on stdout).
EVENT_RE = re.compile(r"^event frame=(\d+) graph=(\S+) node=(\S+) (cond|loop)=(\S+)( limit_reached)?$", re.MULTILINE)


def event_line(event: FrameEvent) -> str:
    """One event as the C host prints it (the format :data:`EVENT_RE` parses)."""
    e = event.event
    limit = " limit_reached" if e.limit_reached else ""
    return f"event frame={event.frame} graph={event.graph} node={e.node} {e.kind}={e.value}{limit}"


def parse_event_lines(text: str) -> list[FrameEvent]:
    """The events in the C host's output."""
    events = []
    for frame, graph, node, kind, value, limit in EVENT_RE.findall(text):
        typed: str | int = int(value) if kind == "loop" else value
        events.append(FrameEvent(int(frame), graph, ControlEvent(node, kind, typed, bool(limit))))
    return events
