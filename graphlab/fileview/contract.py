"""The names graphlab's Python side and its two front-ends must agree on, declared once.

JupyterLab's graphlab extension (``labextension/``) serves two contracts: the file viewer's REST route,
answered by :mod:`graphlab.fileview`, and the "open in its own tab" handshake with the editor widget
(``extension/src/wire/ownTab.ts``), three DOM event names. Written by hand on each side they drifted
silently; here they are declared once, and :mod:`graphlab.fileview.contract_ts` writes them into
``hostContract.gen.ts`` for both front-ends (a test fails when a committed copy is stale).
"""

from __future__ import annotations

#: The file viewer's REST route, under the server's base URL: ``GET graphlab/drawing?path=<path>``.
ROUTE = "graphlab/drawing"

#: Widget -> host, synchronous: "could you open the notebook output holding me in a tab?"
CAN_OPEN_TAB = "graphlab:can-open-tab"
#: Widget -> host: "open it", titled ``detail.title``.
OPEN_TAB = "graphlab:open-tab"
#: Host -> window, once its listener is in place: widgets drawn before that ask again.
TAB_HOST_READY = "graphlab:tab-host-ready"

#: What the generated TypeScript exports, in order, each with its doc comment.
CONTRACT: tuple[tuple[str, str, str], ...] = (
    ("ROUTE", ROUTE, "The file viewer's REST route under the server's base URL (graphlab.fileview)."),
    ("CAN_OPEN_TAB", CAN_OPEN_TAB, 'Widget -> host, synchronous: "could you open the output holding me in a tab?"'),
    ("OPEN_TAB", OPEN_TAB, 'Widget -> host: "open it", titled `detail.title`.'),
    (
        "TAB_HOST_READY",
        TAB_HOST_READY,
        "Host -> window, once its listener is in place: widgets drawn before it ask again.",
    ),
)
