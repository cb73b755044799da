"""Long widget jobs (export, compare): throttled progress and one way of ending.

Both run seconds inside the kernel's message handling and report into a view dict the front-end
draws. What they share: progress passed on only when it moved enough to redraw, and an outcome
that is always one of done, failed (with the error's text) or interrupted, with the time taken.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from graphlab.core.errors import GraphlabError

__all__ = ["finish_job", "throttled"]

_log = logging.getLogger(__name__)

#: The least change of a stage's fraction worth a message to the front-end.
PROGRESS_STEP = 0.02


def throttled(report: Callable[[str, float], None]) -> Callable[[str, float], None]:
    """A progress callback that passes on a new stage, or a fraction moved by :data:`PROGRESS_STEP`:
    one message per call would flood the comm on a 500-step run."""
    last: list[Any] = ["", -1.0]

    def progress(stage: str, fraction: float) -> None:
        if stage == last[0] and fraction - last[1] < PROGRESS_STEP:
            return
        last[:] = [stage, fraction]
        report(stage, fraction)

    return progress


def finish_job(
    view: dict[str, Any], work: Callable[[], None], *, what: str, interrupted: str, started: float
) -> str | None:
    """Run ``work`` (it sets ``view["state"] = "done"``); the error text, or None when it succeeded.

    A graphlab error is the user's to read (its message, without the class name); any other
    exception is logged as a bug and shown too, so a failing job never takes the widget down.
    Interrupted (KeyboardInterrupt) leaves ``interrupted`` as the error; ``seconds`` is set whatever
    happens.
    """
    try:
        work()
        return None
    except GraphlabError as exc:  # the user's to read: the message alone, the class name is Python's
        view.update(state="failed", error=str(exc))
        return str(view["error"])
    except Exception as exc:  # a failing job must not take the widget down
        _log.exception("graphlab: the widget's %s failed", what)
        view.update(state="failed", error=f"{type(exc).__name__}: {exc}")
        return str(view["error"])
    finally:
        if view["state"] == "running":
            view.update(state="failed", error=interrupted)
        view.update(seconds=time.perf_counter() - started)
