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


def deliver(widget, message):
    """Deliver a custom message through ipywidgets' comm handler, as the browser does; return the one reply.

    Every message gets exactly one reply: a handler that answered twice, or not at all, fails here.
    """
    before = len(widget.comm.replies())
    widget._handle_msg({"content": {"data": {"method": "custom", "content": message}}, "buffers": []})
    replies = widget.comm.replies()
    assert len(replies) == before + 1, "every message gets exactly one reply"
    return replies[-1]
