"""Kernel websockets that send each message at once (TCP_NODELAY), so the editor's redraw is not held.

The editor's round trip ends with the kernel's trait update travelling from the Jupyter server to the
browser over the kernel's websocket. Jupyter server leaves Nagle's algorithm on for that socket
(Tornado turns it back on after the HTTP upgrade), so a message written while an earlier small one
(the kernel's ``status: idle``) waits for its ACK is held until the browser's delayed ACK, about
40 ms on Linux: on Taichi's mpm88, a third of the click-to-redraw time of an edit
(``bench/canvas_latency.py``). Tornado's own remedy is ``WebSocketHandler.set_nodelay(True)``;
:class:`NoDelayConnection` calls it as each kernel websocket connects.

The server extension (:mod:`graphlab.fileview`) puts it in place of Jupyter server's default connection
class only where that default is in use: a gateway's or another extension's class is left alone.
"""

from __future__ import annotations

from typing import Any

from jupyter_server.services.kernels.connection.channels import ZMQChannelsWebsocketConnection

__all__ = ["NoDelayConnection", "use_nodelay"]

SETTING = "kernel_websocket_connection_class"


class NoDelayConnection(ZMQChannelsWebsocketConnection):  # type: ignore[misc]
    """Jupyter server's ZMQ-to-websocket connection, with the websocket's messages sent unbatched."""

    def connect(self) -> Any:
        handler = self.websocket_handler
        if handler is not None and handler.ws_connection is not None:
            handler.set_nodelay(True)
        return super().connect()


def use_nodelay(settings: dict[str, Any]) -> bool:
    """Use :class:`NoDelayConnection` for kernel websockets if the server uses the default class.

    ``settings``: the Tornado application's settings. Returns whether it was put in place.
    """
    current = settings.get(SETTING)
    if current is ZMQChannelsWebsocketConnection:
        settings[SETTING] = NoDelayConnection
    return settings.get(SETTING) is NoDelayConnection
