"""The notebook widget: :func:`editor` opens a :class:`GraphEditor` on a graph.

The editor edits the graph (palette, bindings, sequences, undo), debugs it (``values=`` or
``editor.debug(values)``: step, breakpoints, timeline, buffer inspection) and exports it
(``gl.export`` and ``gl.verify`` with their progress). Imported only when a widget is made
(``gl.editor``), so ``import graphlab`` stays free of Jupyter.
"""

from graphlab.widget.editor import GraphEditor, editor
from graphlab.widget.messages import MessageError

__all__ = ["GraphEditor", "MessageError", "editor"]
