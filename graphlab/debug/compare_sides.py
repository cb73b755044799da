"""The two runs ``dbg.compare`` drives in lock step: this process's session, and a child on another arch.

Both answer the same two commands, ``goto(index)`` and ``step()``, with where they stand (position,
the flag reads since the last answer) and the buffers asked for, as numpy arrays. A command returns a
:data:`Pending`, called for the answer later: the child gets its command at once and works while this
process runs its own side, so the two runs overlap (the child's start overlaps the first boundary's
local work too: its answer is read with the first command's). A child outlives one comparison
(:mod:`graphlab.debug.compare_children` keeps it warm): ``start`` once, ``values`` per comparison,
``graph`` when the graph changed. The child is a
server (:mod:`graphlab.debug.compare_child`) over two pipes, one JSON line per command; its buffers
come back as ``.npy`` files, read and deleted at once, so a long run holds one boundary's buffers.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from graphlab.child.process import ChildRunError
from graphlab.core.leftovers import scratch_prefix
from graphlab.core.parentwatch import child_env
from graphlab.debug.session_errors import DebugError

if TYPE_CHECKING:
    from graphlab.debug.session import DebugSession

__all__ = ["BOOT", "COMMAND_TIMEOUT", "Answer", "ChildSide", "LocalSide", "Pending", "Side", "side_state"]

BOOT = "import sys; from graphlab.debug.compare_child import main; sys.exit(main(sys.argv[1:]))"
#: Seconds the other side may take over one command (``start`` compiles; ``goto`` runs up to a whole
#: span): past it the child is taken as hung, killed, and the comparison fails naming the command.
COMMAND_TIMEOUT = 600.0

#: A side's answer to a command: its state (:func:`side_state`) and the buffers asked for.
Answer = tuple[dict[str, Any], dict[str, np.ndarray]]
#: A command under way: call it for the :data:`Answer` (it waits for the side if need be).
Pending = Callable[[], Answer]


def side_state(session: DebugSession, since: int) -> dict[str, Any]:
    """Where a session stands and the flag reads after the first ``since`` (both sides report this)."""
    pos = session.position  # at a control point this decides it, as both sides do
    decisions = [[d.index, d.node_id, d.scope, d.kind, d.value, d.outcome] for d in session.decisions[since:]]
    return {"index": pos.index, "done": pos.step_id is None, "decisions": decisions, "last": pos.last_step_id}


#: In a folder of start values: ``{name: owner}`` for names bound to the buffer of an earlier name.
ALIASES = "aliases.json"


def save_values(folder: Path, values: Mapping[str, np.ndarray]) -> None:
    """Write start values as ``<name>.npy``; names given the very array of an earlier name (temps
    sharing a memory-plan slot) are listed in :data:`ALIASES` instead, so the child binds them to one
    buffer as this side does (else a write through one name would not show through the other)."""
    owners: dict[int, str] = {}
    aliases: dict[str, str] = {}
    for name, array in values.items():
        owner = owners.setdefault(id(array), name)
        if owner != name:
            aliases[name] = owner
            continue
        np.save(folder / f"{name}.npy", array)
    if aliases:
        (folder / ALIASES).write_text(json.dumps(aliases))


class Side(Protocol):
    """One run of the graph the comparison drives (this process's session, or the child's).

    A command is started by the call and answered by the :data:`Pending` it returns; start it on
    every side before asking any for its answer, so the sides run at the same time.
    """

    arch: str

    def goto(self, index: int, names: Sequence[str], since: int) -> Pending: ...

    def step(self, names: Sequence[str], since: int) -> Pending: ...


class LocalSide:
    """This process's side: a session of its own on copies of the start values.

    It does its work when the answer is asked for, by then the other side has its command.
    """

    def __init__(self, session: DebugSession) -> None:
        self.session = session
        self.arch = session.arch

    def _answer(self, names: Sequence[str], since: int) -> Answer:
        buffers = self.session.buffers
        return side_state(self.session, since), {name: buffers[name].to_numpy() for name in names}

    def goto(self, index: int, names: Sequence[str], since: int) -> Pending:
        """Travel to step ``index``; the named buffers there."""

        def answer() -> Answer:
            self.session.goto(index)
            return self._answer(names, since)

        return answer

    def step(self, names: Sequence[str], since: int) -> Pending:
        """Run one dispatch; the named buffers after it."""

        def answer() -> Answer:
            self.session.step()
            return self._answer(names, since)

        return answer


class ChildSide:
    """The other arch's side: a child process serving the same commands (:mod:`~graphlab.debug.compare_child`).

    Made with the process starting (nothing waited for); :meth:`build` sends the graph, :meth:`load`
    a comparison's start values. The answers to those are read before the next command's, or by
    :meth:`ready`; an error in them (Taichi fell back to another arch, the kernels failed to load)
    is raised there. The process and its scratch folder (``values``, ``buffers``, ``child.log``)
    last until :meth:`close`.
    """

    def __init__(self, arch: str, threads: int | None, timeout: float = COMMAND_TIMEOUT):
        self.arch = arch
        self.threads = threads
        self.timeout = timeout
        self.scratch = Path(tempfile.mkdtemp(prefix=scratch_prefix("compare")))
        self.values_dir = self.scratch / "values"
        self.folder = self.scratch / "buffers"
        self.folder.mkdir()
        self.built: str | None = None  # digest of the graph and kernels the child compiled
        self._unread: list[str] = []  # commands sent whose answers are still to be read, oldest first
        self._log = (self.scratch / "child.log").open("w+")
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        env = child_env(os.environ)  # the child dies with this process (graphlab.core.parentwatch)
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
        self._closed = False

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        """Whether the process still runs and can take commands."""
        return not self._closed and self.proc.poll() is None

    def build(self, graph_text: str, payload: dict[str, Any], access: str) -> None:
        """Have the child compile this graph (``start`` the first time, ``graph`` when it changed); not waited for."""
        digest = hashlib.sha256(json.dumps([graph_text, payload, access], sort_keys=True).encode()).hexdigest()
        if digest == self.built:
            return
        request: dict[str, Any] = {"payload": payload, "graph": graph_text, "access": access}
        command = "graph" if self.built is not None else "start"
        if command == "start":
            request.update(arch=self.arch, threads=self.threads)
        self.built = digest
        self._send(command, **request)
        self._unread.append(command)

    def load(self, values: dict[str, np.ndarray]) -> None:
        """Give the child a comparison's start values (a new session there); not waited for."""
        self.ready_values()
        shutil.rmtree(self.values_dir, ignore_errors=True)
        self.values_dir.mkdir()
        save_values(self.values_dir, values)
        self._send("values", values_dir=str(self.values_dir))
        self._unread.append("values")

    def rehearse(self, values: dict[str, np.ndarray], steps: int) -> None:
        """Have the child run the graph once on ``values`` (and ``steps`` dispatches from Python), so
        its kernels are compiled before the comparison; not waited for."""
        folder = self.scratch / "rehearsal"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        save_values(folder, values)
        self._send("rehearse", values_dir=str(folder), steps=steps)
        self._unread.append("rehearse")

    def ready_values(self) -> None:
        """Read a ``values`` answer still pending, so its folder may be written again."""
        if "values" in self._unread:
            self.ready()

    def ready(self) -> None:
        """Wait for the answers to the commands sent so far (``start``, ``graph``, ``values``);
        the fallback error when Taichi could not start the arch."""
        while self._unread:
            command = self._unread.pop(0)
            answer = self._receive(command)
            if "fallback" in answer:
                raise DebugError(
                    f"compare(against={self.arch!r}): Taichi cannot start {self.arch} on this machine (it fell "
                    f"back to {answer['fallback']}); install its driver or compare against another arch"
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

    def _send(self, command: str, **request: Any) -> None:
        """Write one command; a child that has gone is reported by the next :meth:`_receive`."""
        with contextlib.suppress(BrokenPipeError):
            self._out.write(json.dumps({"command": command, **request}) + "\n")
            self._out.flush()

    def _receive(self, command: str) -> dict[str, Any]:
        """The answer to the oldest command not yet answered (the child answers in order)."""
        line = self._readline(command)
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

    def _command(self, command: str, names: Sequence[str], **request: Any) -> Pending:
        """Send ``command`` now; the returned call reads its answer and the buffers it wrote."""
        self._send(command, names=list(names), folder=str(self.folder), **request)

        def answer() -> Answer:
            self.ready()
            state = self._receive(command)
            arrays = {}
            for name in names:
                path = self.folder / f"{name}.npy"
                arrays[name] = np.load(path)
                path.unlink()
            return state, arrays

        return answer

    def goto(self, index: int, names: Sequence[str], since: int) -> Pending:
        """Travel to step ``index`` there; the named buffers."""
        return self._command("goto", names, index=index, since=since)

    def step(self, names: Sequence[str], since: int) -> Pending:
        """Run one dispatch there; the named buffers after it."""
        return self._command("step", names, since=since)

    def close(self, *, kill: bool = False) -> None:
        """Stop the child (it exits on ``quit``; killed if it does not within 30 s, or at once with
        ``kill``: its state is unknown after a failed comparison) and remove its scratch folder; once."""
        if self._closed:
            return
        self._closed = True
        if kill and self.proc.poll() is None:
            self.proc.kill()
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
        shutil.rmtree(self.scratch, ignore_errors=True)
