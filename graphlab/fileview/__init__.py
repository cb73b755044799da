"""JupyterLab's viewer of graph files, server side: a Jupyter server extension that draws them.

Enabled by ``jupyter-config/jupyter_server_config.d/graphlab.json`` (installed into
``etc/jupyter/``); the viewer itself is the prebuilt JupyterLab extension in ``labextension/``.
"""

from __future__ import annotations

from typing import Any

from graphlab.fileview.contract import ROUTE  # GET graphlab/drawing?path=<path under the root>

__all__ = ["ROUTE"]


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "graphlab.fileview"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    """Add the drawing route, and send kernel messages unbatched (Jupyter server calls this once when the
    extension is enabled; see :mod:`graphlab.fileview.kernel_socket`)."""
    from jupyter_server.utils import url_path_join  # import cost: Jupyter server, loaded only by it

    from graphlab.fileview.handler import DrawingHandler  # import cost: Jupyter server (tornado)
    from graphlab.fileview.kernel_socket import use_nodelay  # import cost: Jupyter server

    web_app = serverapp.web_app
    base = web_app.settings["base_url"]
    web_app.add_handlers(".*$", [(url_path_join(base, ROUTE), DrawingHandler)])
    use_nodelay(web_app.settings)
