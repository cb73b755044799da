"""A real Jupyter server with graphlab's server extension sends kernel messages without Nagle's delay.

No browser: a websocket client connects to a kernel's channels as JupyterLab does, and the server's end
of that TCP connection is read from the server process itself (``pidfd_getfd``, Linux 5.6+), so what is
checked is the option the running server set, not a copy of the code that sets it.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import json
import os
import socket
import time
import urllib.request
from pathlib import Path

import pytest
from tornado.websocket import websocket_connect

pytestmark = pytest.mark.e2e

_SYS_PIDFD_GETFD = 438  # the same number on every Linux architecture


def _request(lab, method: str, path: str) -> dict:
    req = urllib.request.Request(f"{lab.url}{path}", method=method, headers={"Authorization": f"token {lab.token}"})
    with urllib.request.urlopen(req, data=b"{}" if method == "POST" else None, timeout=30) as r:
        body = r.read()
    return json.loads(body) if body else {}


def _inode_of(local: tuple[str, int], remote: tuple[str, int]) -> str:
    """The socket inode of the IPv4 TCP connection from ``local`` to ``remote`` (from /proc/net/tcp)."""

    def hexed(address: tuple[str, int]) -> str:
        packed = socket.inet_aton(address[0])[::-1].hex().upper()
        return f"{packed}:{address[1]:04X}"

    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[1] == hexed(local) and fields[2] == hexed(remote):
            return fields[9]
    raise AssertionError(f"no TCP connection {local} -> {remote} in /proc/net/tcp")


def _holder(inode: str) -> tuple[int, int]:
    """The process and file descriptor that hold socket ``inode``."""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            for fd in (proc / "fd").iterdir():
                with contextlib.suppress(OSError):
                    if os.readlink(fd) == f"socket:[{inode}]":
                        return int(proc.name), int(fd.name)
    raise AssertionError(f"no process holds socket {inode}")


def _nodelay_of(pid: int, fd: int) -> int:
    """TCP_NODELAY of another process's socket, read through a duplicate of its descriptor."""
    libc = ctypes.CDLL(None, use_errno=True)
    pidfd = os.pidfd_open(pid)
    try:
        copy = libc.syscall(_SYS_PIDFD_GETFD, pidfd, fd, 0)
        if copy < 0:
            pytest.fail(f"pidfd_getfd: {os.strerror(ctypes.get_errno())} (needs Linux 5.6+ and ptrace rights)")
        with socket.socket(fileno=copy) as sock:
            return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
    finally:
        os.close(pidfd)


def test_a_kernel_websocket_sends_each_message_at_once(lab):
    kernel = _request(lab, "POST", "/api/kernels")["id"]
    try:
        port = int(lab.url.rsplit(":", 1)[1])

        async def server_nodelay() -> int:
            url = f"ws://127.0.0.1:{port}/api/kernels/{kernel}/channels?token={lab.token}"
            conn = await websocket_connect(url)
            try:
                local = conn.stream.socket.getsockname()
                server = _holder(_inode_of(("127.0.0.1", port), local))
                deadline = time.monotonic() + 10
                while True:  # the server sets it as the connection opens, just after the handshake
                    value = _nodelay_of(*server)
                    if value or time.monotonic() > deadline:
                        return value
                    await asyncio.sleep(0.05)
            finally:
                conn.close()

        assert asyncio.run(server_nodelay()) != 0, "the kernel websocket still batches small messages (Nagle)"
    finally:
        _request(lab, "DELETE", f"/api/kernels/{kernel}")
