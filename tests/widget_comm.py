"""A stand-in for the Jupyter comm that records what a widget sends (shared by the widget tests)."""

import comm
import pytest


class RecordingComm:
    """Records every message; ``sent`` holds the message dicts, ``buffers`` their binary buffers."""

    def __init__(self, **kwargs):
        self.comm_id = f"test-{id(self)}"
        self.sent = []
        self.buffers = []
        self.handler = None

    def on_msg(self, callback):
        self.handler = callback

    def send(self, data=None, buffers=None, **kwargs):
        self.sent.append(data)
        self.buffers.append(buffers or [])

    def close(self, *args, **kwargs):
        pass

    def replies(self):
        return [m["content"] for m in self.sent if m.get("method") == "custom"]

    def updates(self):
        return [m["state"] for m in self.sent if m.get("method") == "update"]

    def updates_with_buffers(self):
        return [
            (m["state"], m.get("buffer_paths", []), b)
            for m, b in zip(self.sent, self.buffers)
            if m.get("method") == "update"
        ]

    def export_states(self):
        return [state["export"] for state in self.updates() if "export" in state]


@pytest.fixture(autouse=True)
def recording_comm(monkeypatch):
    """Every widget made in the test talks to a RecordingComm."""
    monkeypatch.setattr(comm, "create_comm", RecordingComm)
