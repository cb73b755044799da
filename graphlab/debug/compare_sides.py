"""The two runs ``dbg.compare`` drives in lock step: this process's session, and a child on another arch.

Both answer the same two commands, ``goto(index)`` and ``step()``, with where they stand (position,
the flag reads since the last answer) and the buffers asked for, as numpy arrays. The child is a
server (:mod:`graphlab.debug.compare_child`) over two pipes, one JSON line per command; its buffers
come back as ``.npy`` files, read and deleted at once, so a long run holds one boundary's buffers.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from graphlab.childrun import ChildRunError
from graphlab.debug.session_errors import DebugError

if TYPE_CHECKING:
    from graphlab.debug.session import DebugSession

__all__ = ["BOOT", "COMMAND_TIMEOUT", "ChildSide", "LocalSide", "Side", "side_state"]

BOOT = "import sys; from graphlab.debug.compare_child import main; sys.exit(main(sys.argv[1:]))"
#: Seconds the other side may take over one command (``start`` compiles; ``goto`` runs up to a whole
#: span): past it the child is taken as hung, killed, and the comparison fails naming the command.
COMMAND_TIMEOUT = 600.0


def side_state(session: DebugSession, since: int) -> dict[str, Any]:
    """Where a session stands and the flag reads after the first ``since`` (both sides report this)."""
    pos = session.position  # at a control point this decides it, as both sides do
    decisions = [[d.index, d.node_id, d.scope, d.kind, d.value, d.outcome] for d in session.decisions[since:]]
    return {"index": pos.index, "done": pos.step_id is None, "decisions": decisions, "last": pos.last_step_id}


class Side(Protocol):
    """One run of the graph the comparison drives (this process's session, or the child's)."""

    arch: str

    def goto(self, index: int, names: Sequence[str], since: int) -> tuple[dict[str, Any], dict[str, np.ndarray]]: ...

    def step(self, names: Sequence[str], since: int) -> tuple[dict[str, Any], dict[str, np.ndarray]]: ...


class LocalSide:
    """This process's side: a session of its own on copies of the start values."""

    def __init__(self, session: DebugSession) -> None:
        self.session = session
        self.arch = session.arch

    def _answer(self, names: Sequence[str], since: int) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        buffers = self.session.buffers
        return side_state(self.session, since), {name: buffers[name].to_numpy() for name in names}

    def goto(self, index: int, names: Sequence[str], since: int) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """Travel to step ``index``; the named buffers there."""
        self.session.goto(index)
        return self._answer(names, since)

    def step(self, names: Sequence[str], since: int) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """Run one dispatch; the named buffers after it."""
        self.session.step()
        return self._answer(names, since)


class ChildSide:
    """The other arch's side: a child process serving the same commands (:mod:`~graphlab.debug.compare_child`)."""

    def __init__(
        self,
        arch: str,
        graph_text: str,
        payload: dict[str, Any],
        values_dir: Path,
        threads: int | None,
        timeout: float = COMMAND_TIMEOUT,
    ):
        self.arch = arch
        self.timeout = timeout
        self.folder = values_dir.parent / "buffers"
        self.folder.mkdir()
        self._log = (values_dir.parent / "child.log").open("w+")
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        env = dict(os.environ)
        root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join([root, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        self.proc = subprocess.Popen(
            [sys.executable, "-c", BOOT, str(to_child_r), str(from_child_w)],
            pass_fds=(to_child_r, from_child_w),
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=env,
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._out = os.fdopen(to_child_w, "w")
        self._in = from_child_r  # read with a deadline (select), not a blocking readline
        self._pending = b""
        request = {"payload": payload, "graph": graph_text, "arch": arch, "threads": threads}
        try:
            answer = self._call("start", **request, values_dir=str(values_dir))
        except BaseException:
            self.close()
            raise
        if "fallback" in answer:
            self.close()
            raise DebugError(
                f"compare(against={arch!r}): Taichi cannot start {arch} on this machine (it fell back to "
                f"{answer['fallback']}); install its driver or compare against another arch"
            )

    def _readline(self, command: str) -> str:
        """The child's next answer line; "" when it closed its end; ChildRunError past ``timeout``."""
        deadline = time.monotonic() + self.timeout
        while b"\n" not in self._pending:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._in], [], [], max(left, 0.0))
            if not ready:
                self.proc.kill()
                self.proc.wait()
                raise ChildRunError(
                    f"compare: the {self.arch} process did not answer {command!r} within {self.timeout:g} s "
                    "and was stopped; a kernel that never ends there? (compare(timeout=...) gives it longer)"
                )
            chunk = os.read(self._in, 1 << 16)
            if not chunk:
                return ""
            self._pending += chunk
        line, _, self._pending = self._pending.partition(b"\n")
        return line.decode()

    def _call(self, command: str, **request: Any) -> dict[str, Any]:
        try:
            self._out.write(json.dumps({"command": command, **request}) + "\n")
            self._out.flush()
            line = self._readline(command)
        except BrokenPipeError:
            line = ""
        if not line:
            self.proc.wait(timeout=30)
            self._log.seek(0)
            tail = self._log.read()[-3000:]
            raise ChildRunError(
                f"compare: the {self.arch} process ended (status {self.proc.returncode}) during {command!r}; "
                f"its output:\n{tail}"
            )
        answer = json.loads(line)
        if "error" in answer:
            raise ChildRunError(f"compare: the {self.arch} side failed during {command!r}: {answer['error']}")
        return dict(answer["ok"])

    def _answer(self, state: dict[str, Any], names: Sequence[str]) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        arrays = {}
        for name in names:
            path = self.folder / f"{name}.npy"
            arrays[name] = np.load(path)
            path.unlink()
        return state, arrays

    def goto(self, index: int, names: Sequence[str], since: int) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """Travel to step ``index`` there; the named buffers."""
        state = self._call("goto", index=index, names=list(names), folder=str(self.folder), since=since)
        return self._answer(state, names)

    def step(self, names: Sequence[str], since: int) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """Run one dispatch there; the named buffers after it."""
        state = self._call("step", names=list(names), folder=str(self.folder), since=since)
        return self._answer(state, names)

    def close(self) -> None:
        """Stop the child (it exits on ``quit``; killed if it does not within 30 s)."""
        with contextlib.suppress(OSError):
            self._out.write(json.dumps({"command": "quit"}) + "\n")
            self._out.flush()
        with contextlib.suppress(OSError):
            self._out.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        with contextlib.suppress(OSError):
            os.close(self._in)
        self._log.close()
