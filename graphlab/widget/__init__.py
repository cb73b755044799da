"""The notebook widget: :func:`editor` opens a :class:`GraphEditor` on a graph.

Imported only when a widget is made (``gl.editor``), so ``import graphlab`` stays free of Jupyter.
"""

from graphlab.widget.editor import GraphEditor, editor
from graphlab.widget.messages import MessageError

__all__ = ["GraphEditor", "MessageError", "editor"]
