"""``GraphEditor``: the notebook widget that edits, debugs and exports a :class:`graphlab.Graph`.

Over 500 lines on purpose: one widget class whose message dispatch, trial edits, undo and trait sync share one state
(graph, history, pending changes); its panels, views, history and message parsing already live in sibling modules.

The widget and Python share one model, the ``Graph``. The traits below are the wire contract
(declared in :mod:`graphlab.widget.protocol`, which the TypeScript types are generated from);
Python is their only writer, except ``error``, which the front-end may clear. The front-end asks
for edits with custom messages (see
:mod:`graphlab.widget.messages`); each edit is one call on the graph's editing API, refused edits
change nothing and say why in ``error``, and changes made to the graph from Python show in the
widget through ``graph.observe``. The debug, inspect and export panels work the same way over a
:class:`~graphlab.debug.DebugSession` and ``gl.export``/``gl.verify`` (:mod:`graphlab.widget.panels`).

Everything the editor does runs on the thread that made it, where Taichi was initialised: messages
that ipykernel 7 hands over on a subshell thread are queued there (:mod:`graphlab.widget.home`).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import sys
import weakref
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import anywidget
import traitlets

from graphlab.analysis.check import validate
from graphlab.analysis.render import render
from graphlab.core.diagnostics import Diagnostic
from graphlab.core.errors import GraphError, GraphlabError
from graphlab.core.spec import Arg
from graphlab.model.graph import Graph
from graphlab.model.graphdata import GraphChange, GraphState
from graphlab.model.kernels import KernelInfo, KernelRegistry, is_kernel
from graphlab.model.layout import placeable_ids
from graphlab.model.nodes import Dispatch
from graphlab.widget.group_drag import check_group_drag
from graphlab.widget.handlers import Handlers, key_of
from graphlab.widget.history import History
from graphlab.widget.home import HomeThread, HomeThreadError
from graphlab.widget.loop_form import make_cond, make_loop
from graphlab.widget.messages import (
    PANEL_MESSAGES,
    MessageError,
    clip,
    echo,
    kind_of,
    parse_message,
    request_of,
)
from graphlab.widget.panels import PanelRefusedError, Panels
from graphlab.widget.paste import OFFSET, outermost, paste_nodes, placed_copies
from graphlab.widget.protocol import (
    AcceptGuessEdit,
    ArgSpec,
    DispatchEdit,
    EditMessage,
    GroupEdit,
    MakeCondEdit,
    MakeLoopEdit,
    MoveEdit,
    NewArgEdit,
    PanelMessage,
    PasteEdit,
    PlaceEdit,
    RebindEdit,
    RedeclareEdit,
    RedoMessage,
    RemoveArgEdit,
    RemoveEdit,
    RemoveNodesEdit,
    RenameArgEdit,
    RenameEdit,
    SetRepeatEdit,
    SetRoleEdit,
    StructureEdit,
    UndoMessage,
)
from graphlab.widget.view import diagnostic_view, graph_view, palette_view
from graphlab.widget.wording import ui_text

if TYPE_CHECKING:
    from graphlab.debug import DebugSession

_log = logging.getLogger(__name__)

_STATIC = Path(__file__).parent / "static"
_BUNDLE = _STATIC / "widget.js"
_STYLES = _STATIC / "widget.css"

#: Shown in place of the editor when the front-end bundle was not built.
_MISSING_BUNDLE = """
export function render({ el }) {
  el.innerHTML = "<pre style='color:#b00020;white-space:pre-wrap'>graphlab's widget front-end is not " +
    "built (graphlab/widget/static/widget.js is missing).\\nBuild it with `make frontend`, or " +
    "`npm ci && npm run build` in extension/, then restart the kernel.</pre>";
}
export default { render };
"""

Access = Literal["auto", "vulkan", "ast"]


class GraphEditor(anywidget.AnyWidget):  # type: ignore[misc]
    """An editor for a graph: palette, drawing, bindings, sequences, undo. Make one with :func:`editor`."""

    _esm = _BUNDLE if _BUNDLE.is_file() else _MISSING_BUNDLE
    if _STYLES.is_file():
        _css = _STYLES

    graph = traitlets.Dict().tag(sync=True)
    """JSON view of the model: ``{name, version, args, nodes, body}`` (``GraphView``)."""
    palette = traitlets.List(traitlets.Dict()).tag(sync=True)
    """Kernels that can be added: ``[{name, ref, params, returns, dispatchable, why_not}]``."""
    dot = traitlets.Unicode("").tag(sync=True)
    """The drawing, as DOT source the front-end lays out with WebAssembly Graphviz."""
    diagnostics = traitlets.List(traitlets.Dict()).tag(sync=True)
    """What validation found: ``[{code, severity, message, node, arg, hint}]``."""
    error = traitlets.Unicode("").tag(sync=True)
    """Why the last edit was refused (empty when it was not); the front-end may clear it."""
    selected = traitlets.Unicode("").tag(sync=True)
    """The selected node id, or ``""``."""
    history = traitlets.Dict().tag(sync=True)
    """Labels of what undo and redo would do: ``{undo: [...], redo: [...]}``, the next one last."""
    debugger = traitlets.Dict().tag(sync=True)
    """The debug session as the panel shows it (``DebugView``): position, stop, breakpoints, watches,
    faults, per-node time; ``session`` numbers the sessions, ``active`` is false when none runs."""
    inspect = traitlets.Dict().tag(sync=True)
    """The inspected buffer (``InspectView``): device statistics and the headers of the three byte traits."""
    inspect_picture = traitlets.Bytes(b"").tag(sync=True)
    """The picture's values, little-endian f32 (or f64), laid out as ``inspect.picture.shape``."""
    inspect_diff = traitlets.Bytes(b"").tag(sync=True)
    """The diff map's values since the previous position, laid out as ``inspect.diff.picture.shape``."""
    inspect_page = traitlets.Bytes(b"").tag(sync=True)
    """One page of values, little-endian f64, ``inspect.page.count`` rows of ``len(columns)``."""
    export = traitlets.Dict().tag(sync=True)
    """The export panel (``ExportView``): state, progress, files written, verification."""
    values = traitlets.Dict().tag(sync=True)
    """The values panel (``ValuesView``): the run values the graph needs, what is given, what is missing."""

    _unsubscribe: Callable[[], None] | None = None

    def __init__(
        self,
        graph: Graph,
        kernels: Any = None,
        *,
        access: Access = "auto",
        history_limit: int = 200,
        values: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if not isinstance(graph, Graph):
            raise TypeError(f"GraphEditor edits a graphlab.Graph, got {type(graph).__name__}")
        if values is not None and not isinstance(values, Mapping):
            raise TypeError(f"values= takes a dict of run values by arg name, got {type(values).__name__}")
        self._home = HomeThread()  # before the comm opens: its messages go through it
        super().__init__(**kwargs)
        self._graph = graph
        self._kernels = KernelRegistry(kernels) if kernels is not None else KernelRegistry()
        self._access: Access = access
        self._history: History[GraphState] = History(limit=history_limit)
        self._applying = False
        self._pending: list[GraphChange] = []
        self._flush_scheduled = False
        self._state = graph.snapshot()
        ref = weakref.ref(self)

        def on_change(change: GraphChange) -> None:
            editor = ref()
            if editor is None:
                unsubscribe()
            else:
                editor._on_graph_change(change)

        unsubscribe = graph.observe(on_change)
        self._unsubscribe = unsubscribe
        try:
            self.on_msg(self._on_message)
            self._panels = Panels(self, values, home=self._home)
            self._sync()  # publishes the values panel too
            with self.hold_sync():
                self.debugger = self._panels.debug.view()
                self.inspect = {"session": 0, "buffer": None}
                self.export = self._panels.export.view()
        except BaseException:
            self.close()  # stop following the graph: a half-built editor must not stay subscribed
            raise

    # --- public ----------------------------------------------------------------------------------

    @property
    def model(self) -> Graph:
        """The graph being edited (the same object the notebook holds)."""
        return self._graph

    @property
    def session(self) -> DebugSession | None:
        """The debug session the panel shows, or None."""
        return self._panels.debug.session

    def debug(self, values: Mapping[str, Any] | None = None, /, **kwargs: Any) -> DebugSession:
        """Start a debug session on the graph with these run values (default: the editor's ``values=``),
        show it in the debug panel and return it; stepping it in a cell shows in the panel too.

        Takes what :meth:`graphlab.Graph.debug` takes (``options=``, values by name). The values
        become the editor's: the Debug button and Export use them from then on. Called from another
        thread, it runs on the editor's (Taichi's) thread and waits for it.
        """
        return self._home.call(functools.partial(self._panels.start, values, **kwargs))

    def refresh(self, stop: Any = None) -> bool:
        """Show changes made to the session from Python now (done after every notebook cell anyway).

        ``stop``: the :class:`~graphlab.debug.Stop` the move returned, so the panel shows why the
        session stopped (after a cell, the Stop the cell ends with is used).
        """
        return self._home.call(functools.partial(self._panels.refresh, stop))

    def close(self) -> None:
        """Stop following the graph, end the debug session and close the widget.

        Safe on an editor whose ``__init__`` raised (ipywidgets calls it again on garbage collection).
        """
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        panels = getattr(self, "_panels", None)  # absent when __init__ raised before making them
        if panels is not None:
            panels.close()
        super().close()

    def handle_message(self, content: Any) -> dict[str, Any]:
        """Act on one front-end message and return the reply (also sent to the front-end).

        The widget's comm calls this for every custom message; tests and scripts may call it too.
        Every message is answered: a malformed one with an error reply (see
        :mod:`graphlab.widget.messages`), and nothing raises out of here. Called from another
        thread, it runs on the editor's (Taichi's) thread and waits for the reply.
        """
        if not self._home.here:
            try:
                return self._home.call(functools.partial(self.handle_message, content))
            except HomeThreadError as exc:
                reply = self._refuse(request_of(content), f"message ignored: {exc}", set_error=False)
                self.send(reply)
                return reply
        try:
            reply = self._handle(content)
        except Exception as exc:  # a bug must cost one refused message, not an unanswered front-end
            _log.exception("graphlab: the widget failed on a message")
            reply = self._refuse(request_of(content), f"the message failed (a graphlab bug): {_exc_text(exc)}")
        self.send(reply)
        return reply

    # --- traits ------------------------------------------------------------------------------------

    @traitlets.validate("selected")
    def _valid_selection(self, proposal: dict[str, Any]) -> str:
        node = proposal["value"]
        if node and not self._exists(node):
            raise traitlets.TraitError(f"cannot select {node!r}: graph {self._graph.name!r} has no such node")
        return node

    def _palette_kernels(self) -> list[KernelInfo]:
        kernels = {info.ref: info for info in self._kernels}
        for info in self._graph.kernels:
            kernels.setdefault(info.ref, info)
        return list(kernels.values())

    def _diagnostics(self) -> list[Diagnostic]:
        try:
            return validate(self._graph, access=self._access)
        except Exception as exc:  # a failing checker must not take the editor down
            _log.exception("graphlab: validation failed in the widget")
            message = f"validation failed: {type(exc).__name__}: {exc}"
            return [Diagnostic("GL000", "error", message, hint="a bug in graphlab's checker; please report it")]

    def _dot(self, diagnostics: list[Diagnostic]) -> str:
        try:
            return render(self._graph, diagnostics=diagnostics, access=self._access).source
        except Exception as exc:  # show the rest of the editor even if the drawing fails
            _log.exception("graphlab: rendering failed in the widget")
            reason = f"drawing failed: {type(exc).__name__}: {exc}".replace("\\", "\\\\").replace('"', '\\"')
            return f'digraph {{ label="{reason}" }}'

    def _sync(self) -> None:
        """Refresh every trait from the model (one message to the front-end)."""
        graph = self._graph
        diagnostics = self._diagnostics()
        with self.hold_sync():
            self.graph = graph_view(graph)
            self.palette = palette_view(self._palette_kernels())
            self.dot = self._dot(diagnostics)
            self.diagnostics = [_in_ui_terms(diagnostic_view(d)) for d in diagnostics]
            self.history = self._history.labels()
            if self.selected and not self._exists(self.selected):
                self.selected = ""
            panels = getattr(self, "_panels", None)
            if panels is not None:
                panels.graph_changed()
                panels.publish_values()
        self._state = graph.snapshot()

    # --- changes made in Python ----------------------------------------------------------------------

    def _on_graph_change(self, change: GraphChange) -> None:
        if not self._home.here:
            try:
                self._home.post(functools.partial(self._on_graph_change, change))
                return
            except HomeThreadError:  # no loop at home: drawing touches no Taichi runtime, so draw here
                pass
        if self._applying:
            return
        self._pending.append(change)
        if self._flush_scheduled:
            return
        loop = _running_loop()
        if loop is None:
            self._flush()
        else:
            # In a notebook cell: draw once after the cell, however many edits it made.
            self._flush_scheduled = True
            loop.call_soon(self._flush)

    def _flush(self) -> None:
        """Show changes made from Python, as one undoable step."""
        self._flush_scheduled = False
        if not self._pending:
            return
        changes, self._pending = self._pending, []
        if len(changes) == 1:
            change = changes[0]
            what = change.node or change.detail.get("arg") or change.detail.get("new") or ""
            label = " ".join(filter(None, [change.kind.replace("_", " "), str(what), "(in Python)"]))
        else:
            label = f"{len(changes)} edits in Python"
        self._history.record(label, self._state)
        self._sync()

    # --- messages from the front-end -----------------------------------------------------------------

    def _handle_msg(self, msg: Any) -> None:
        """Every comm message (custom messages, trait updates, state requests) runs on the home thread.

        ipykernel 7 calls this on a subshell thread for JupyterLab's widget messages; the message is
        queued for the editor's thread and this returns at once.
        """
        try:
            self._home.post(functools.partial(super()._handle_msg, msg))
        except HomeThreadError as exc:
            _log.error("graphlab: %s", exc)
            data = msg.get("content", {}).get("data", {}) if isinstance(msg, dict) else {}
            if isinstance(data, dict) and data.get("method") == "custom":
                self.send(self._refuse(request_of(data.get("content")), f"message ignored: {exc}", set_error=False))

    def _on_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        self.handle_message(content)

    def _handle(self, content: Any) -> dict[str, Any]:
        self._flush()
        request = request_of(content)
        try:
            message = parse_message(content)
        except MessageError as exc:
            # a malformed edit shows in the banner; the panels show their own refusals from the reply
            panel = kind_of(content) in PANEL_MESSAGES
            return self._refuse(request, f"message ignored: {exc}", set_error=not panel)
        # narrowed on ``kind`` (mypy follows it): each branch sees its own message records
        if message["kind"] == "select":
            node = message["node"]
            if node is not None and not self._exists(node):
                return self._refuse(message.get("request"), self._stale(node), set_error=False)
            self.selected = node or ""
            return _reply(message.get("request"))
        if message["kind"] == "undo" or message["kind"] == "redo":
            return self._undo_redo(message)
        if message["kind"] == "edit":
            return self._edit(message)
        return self._panel(message)

    def _panel(self, message: PanelMessage) -> dict[str, Any]:
        """A debug, breakpoint, watch, inspect or export message (see :mod:`graphlab.widget.panels`)."""
        try:
            self._panels.handle(message)
        except PanelRefusedError as exc:
            return self._refuse(message["request"], str(exc), set_error=False)
        except Exception as exc:
            kind, op = key_of(message)
            _log.exception("graphlab: the widget's %s message failed", kind)
            what = f"{kind} {op}" if op else kind
            return self._refuse(message["request"], f"{what} failed (a graphlab bug): {_exc_text(exc)}")
        return _reply(message["request"])

    def _edit(self, edit: EditMessage | StructureEdit) -> dict[str, Any]:
        graph = self._graph
        stale = self._first_stale(_node_refs(edit))
        if stale is not None:
            return self._refuse(edit["request"], self._stale(stale))
        # Try the edit on a copy first: a refused edit then leaves the graph untouched, its version
        # included (a version bump would end the debug session and show in other editors).
        trial = type(graph)(graph.name)
        trial.restore(graph.snapshot())
        try:
            _EDITS(edit, self, trial)
        except Exception as exc:
            return self._refuse(edit["request"], self._refusal(edit, exc))
        before = graph.snapshot()
        version = graph.version
        self._applying = True
        try:
            label, selection = _EDITS(edit, self, graph)
        except Exception as exc:  # the trial passed, so this is not expected; put the graph back
            self._rollback(before, version)
            return self._refuse(edit["request"], self._refusal(edit, exc))
        finally:
            self._applying = False
        self._history.record(label, before)
        with self.hold_sync():
            self.error = ""
            self._sync()
            self.selected = selection if selection and self._exists(selection) else ""
        return _reply(edit["request"])

    @staticmethod
    def _refusal(edit: EditMessage | StructureEdit, exc: Exception) -> str:
        """Why an edit was refused: the graph's reason, or a bug report for an unexpected exception."""
        if isinstance(exc, (GraphlabError, KeyError)):
            reason = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
            return f"{_OP_VERB[edit['op']]} refused: {reason}"
        _log.error("graphlab: the widget's %s edit failed", edit["op"], exc_info=exc)
        return f"{edit['op']} failed (a graphlab bug): {_exc_text(exc)}"

    def _rollback(self, before: GraphState, version: int) -> None:
        if self._graph.version != version:
            self._applying = True
            try:
                self._graph.restore(before)
            finally:
                self._applying = False
            self._sync()

    def _undo_redo(self, message: UndoMessage | RedoMessage) -> dict[str, Any]:
        history, undo = self._history, message["kind"] == "undo"
        if not (history.can_undo if undo else history.can_redo):
            return self._refuse(message.get("request"), f"nothing to {message['kind']}", set_error=False)
        current = self._graph.snapshot()
        state = history.undo(current) if undo else history.redo(current)
        self._applying = True
        try:
            self._graph.restore(state)
        finally:
            self._applying = False
        with self.hold_sync():
            self.error = ""
            self._sync()
        return _reply(message.get("request"))

    def _refuse(self, request: int | None, reason: str, *, set_error: bool = True) -> dict[str, Any]:
        reason = clip(ui_text(reason))  # said in the widget's terms; the reply stays small
        if set_error:
            self.error = reason
        return _reply(request, reason)

    # --- helpers ---------------------------------------------------------------------------------------

    def _resolve(self, ref: str) -> KernelInfo:
        registry = KernelRegistry(self._palette_kernels())
        return registry.resolve(ref)

    def _exists(self, node_id: str) -> bool:
        try:
            self._graph.node(node_id)
        except GraphlabError:
            # a conditional's branch (``decide/then``) is a container the view shows, not a model node
            return any(n["id"] == node_id and n.get("kind") == "branch" for n in self.graph.get("nodes", ()))
        return True

    def _first_stale(self, node_ids: list[str]) -> str | None:
        """The first of ``node_ids`` that does not exist (one pass: a set of the drawn ids, and the
        graph asked only about an id not drawn, so a million stale ids cost one look-up)."""
        drawn = {n["id"] for n in self.graph.get("nodes", ())}
        for node_id in node_ids:
            if node_id not in drawn and not self._exists(node_id):
                return node_id
        return None

    def _stale(self, node_id: str) -> str:
        return (
            f"node {echo(node_id)} no longer exists in graph {self._graph.name!r} (it changed since the view was "
            "drawn); nothing was changed"
        )

    def _neighbour(self, node_id: str) -> str | None:
        """The node to select once ``node_id`` is deleted: the next sibling, else the previous, else the parent."""
        by_id = {n["id"]: n for n in self.graph.get("nodes", ())}
        node = by_id.get(node_id)
        if node is None:
            return None
        parent = node["parent"]
        siblings = self.graph["body"] if parent is None else by_id[parent]["children"]
        i = siblings.index(node_id)
        if i + 1 < len(siblings):
            return str(siblings[i + 1])
        if i > 0:
            return str(siblings[i - 1])
        return str(parent) if parent is not None else None


_OP_VERB = {
    "dispatch": "adding the dispatch",
    "remove": "deleting",
    "move": "moving",
    "rebind": "binding",
    "rename": "renaming",
    "set_repeat": "setting the repeat count",
    "group": "grouping",
    "new_arg": "declaring the arg",
    "rename_arg": "renaming the arg",
    "set_role": "setting the arg's role",
    "redeclare": "changing the arg's spec",
    "remove_arg": "deleting the arg",
    "make_loop": "making the loop",
    "make_cond": "making the conditional",
    "place": "placing",
    "remove_nodes": "deleting",
    "paste": "pasting",
    "accept_guess": "accepting the guessed binding",
}


def _arg_of(spec: ArgSpec) -> Arg:
    """An ``Arg`` from a checked ``ArgSpec`` message field (its defaults filled in by the parser; JSON
    lists become the tuples an Arg holds)."""
    shape = spec["shape"]
    return Arg(
        name=spec["name"],
        kind=spec["kind"],
        dtype=spec["dtype"],
        ndim=spec["ndim"],
        element_shape=tuple(spec["element_shape"]),
        fmt=spec["fmt"],
        role=spec["role"],
        shape=tuple(shape) if shape is not None else None,
    )


# --- the edits: one handler per edit message, each one call on the graph's editing API ----------------

#: An edit's history label and the node to select after it.
Outcome = tuple[str, str | None]

#: The edit handlers: each takes its message, the editor, and the graph to edit (the editor's, or a
#: copy of it to try the edit on first).
_EDITS: Handlers[EditMessage | StructureEdit, [GraphEditor, Graph], Outcome] = Handlers(EditMessage | StructureEdit)


@_EDITS.on(DispatchEdit)
def _dispatch(edit: DispatchEdit, editor: GraphEditor, graph: Graph) -> Outcome:
    info = editor._resolve(edit["kernel"])
    node_id = graph.insert(info, index=edit["index"], into=edit["into"], name=edit["name"], bindings=edit["bindings"])
    _mark_guesses(graph, node_id, edit["guessed"])
    if edit["position"] is not None:
        graph.layout = graph.layout.placed({node_id: edit["position"]})
    return f"add {node_id}", node_id


def _mark_guesses(graph: Graph, node_id: str, guessed: list[str]) -> None:
    """Mark the guessed bindings of a new dispatch, unbinding a guess that would alias another parameter's
    arg (the user never asked for two parameters of one kernel to share a buffer; GL012)."""
    node = graph.node(node_id)
    if not guessed or not isinstance(node, Dispatch):
        return
    bound = node.bound
    uses: dict[str, int] = {}
    for arg in bound.values():
        if arg is not None:
            uses[arg] = uses.get(arg, 0) + 1
    kept = []
    for param in guessed:
        arg = bound.get(param)
        if arg is None:
            continue
        if uses[arg] > 1:
            graph.rebind(node_id, param, None)
            uses[arg] -= 1
        else:
            kept.append(param)
    if kept:
        graph.layout = graph.layout.guess(node_id, kept)


@_EDITS.on(RemoveEdit)
def _remove(edit: RemoveEdit, editor: GraphEditor, graph: Graph) -> Outcome:
    node_id = edit["node"]
    after = editor._neighbour(node_id)
    graph.remove(node_id)
    graph.layout = graph.layout.without([node_id])
    return f"delete {node_id}", after


@_EDITS.on(MoveEdit)
def _move(edit: MoveEdit, editor: GraphEditor, graph: Graph) -> Outcome:
    node_id = edit["node"]
    new_id = graph.move(node_id, edit["index"])
    return f"move {node_id} to position {edit['index'] + 1}", new_id


@_EDITS.on(RebindEdit)
def _rebind(edit: RebindEdit, editor: GraphEditor, graph: Graph) -> Outcome:
    node_id, param, arg = edit["node"], edit["param"], edit["arg"]
    graph.rebind(node_id, param, arg)
    graph.layout = graph.layout.accepted(node_id, param)  # bound by hand: no longer a guess
    return (f"bind {node_id}.{param} to {arg}" if arg else f"unbind {node_id}.{param}"), node_id


@_EDITS.on(RenameEdit)
def _rename(edit: RenameEdit, editor: GraphEditor, graph: Graph) -> Outcome:
    node_id = edit["node"]
    new_id = graph.rename(node_id, edit["name"])
    graph.layout = graph.layout.renamed(node_id, new_id)
    return f"rename {node_id} to {edit['name']}", new_id


@_EDITS.on(SetRepeatEdit)
def _set_repeat(edit: SetRepeatEdit, editor: GraphEditor, graph: Graph) -> Outcome:
    graph.set_repeat(edit["node"], edit["repeat"])
    return f"repeat {edit['node']} \u00d7{edit['repeat']}", edit["node"]


@_EDITS.on(GroupEdit)
def _group(edit: GroupEdit, editor: GraphEditor, graph: Graph) -> Outcome:
    nodes = edit["nodes"]
    new_id = graph.group(nodes, edit["name"], repeat=edit["repeat"])
    for node_id in nodes:  # the grouped nodes keep their places inside the new sequence
        graph.layout = graph.layout.renamed(node_id, f"{new_id}/{node_id.rsplit('/', 1)[-1]}")
    return f"group {len(nodes)} node(s) into {edit['name']}", new_id


@_EDITS.on(NewArgEdit)
def _new_arg(edit: NewArgEdit, editor: GraphEditor, graph: Graph) -> Outcome:
    arg = graph.declare(_arg_of(edit["arg"]))
    bind = edit["bind"]
    if bind is None:
        return f"new arg {arg.name}", editor.selected or None
    node, param = bind["node"], bind["param"]
    graph.rebind(node, param, arg.name)
    graph.layout = graph.layout.accepted(node, param)  # bound by hand: no longer a guess
    return f"new arg {arg.name} for {node}.{param}", node


# The edits of an arg's editor (a click on a buffer) keep the selection.


@_EDITS.on(RenameArgEdit)
def _rename_arg(edit: RenameArgEdit, editor: GraphEditor, graph: Graph) -> Outcome:
    graph.rename_arg(edit["arg"], edit["name"])
    graph.layout = graph.layout.renamed(f"arg:{edit['arg']}", f"arg:{edit['name']}")
    editor._panels.run_values.follow_rename(graph, edit["arg"], edit["name"])  # its run value goes with it
    return f"rename arg {edit['arg']} to {edit['name']}", editor.selected or None


@_EDITS.on(SetRoleEdit)
def _set_role(edit: SetRoleEdit, editor: GraphEditor, graph: Graph) -> Outcome:
    graph.set_role(edit["arg"], edit["role"])
    return f"arg {edit['arg']} role {edit['role']}", editor.selected or None


@_EDITS.on(RedeclareEdit)
def _redeclare(edit: RedeclareEdit, editor: GraphEditor, graph: Graph) -> Outcome:
    arg = _arg_of(edit["arg"])
    before = graph.args.get(arg.name)  # absent: redeclare refuses it with the model's reason
    graph.redeclare(arg)
    if before is not None and before.shape != arg.shape:
        shape = "any shape" if arg.shape is None else f"shape ({', '.join(map(str, arg.shape))})"
        return f"arg {arg.name} {shape}", editor.selected or None
    return f"redeclare arg {arg.name}", editor.selected or None


@_EDITS.on(RemoveArgEdit)
def _remove_arg(edit: RemoveArgEdit, editor: GraphEditor, graph: Graph) -> Outcome:
    graph.remove_arg(edit["arg"])
    graph.layout = graph.layout.without([f"arg:{edit['arg']}"])
    return f"delete arg {edit['arg']}", editor.selected or None


# The canvas's edits (direct manipulation): each is one undo step.


@_EDITS.on(PlaceEdit)
def _place(edit: PlaceEdit, editor: GraphEditor, graph: Graph) -> Outcome:
    positions = edit["positions"]
    ids = placeable_ids(graph)
    for node_id in positions:
        if node_id not in ids:
            raise GraphError(f"no node {echo(node_id)} in graph {graph.name!r} to place; the view may be stale")
    group = edit["group"]
    if group is not None:
        check_group_drag(graph, group, positions)
        graph.layout = graph.layout.placed(positions)
        return f"move {group}", editor.selected or None
    graph.layout = graph.layout.placed(positions)
    what = next(iter(positions)) if len(positions) == 1 else f"{len(positions)} nodes"
    return f"place {what}", editor.selected or None


@_EDITS.on(RemoveNodesEdit)
def _remove_nodes(edit: RemoveNodesEdit, editor: GraphEditor, graph: Graph) -> Outcome:
    nodes = list(dict.fromkeys(edit["nodes"]))
    if not nodes:
        raise GraphError("no nodes given to delete; select one or more nodes first")
    # a node inside another one deleted goes with it
    outer = [n for n in nodes if not any(n.startswith(o + "/") for o in nodes if o != n)]
    after = editor._neighbour(outer[-1])
    for node_id in outer:
        graph.remove(node_id)
    graph.layout = graph.layout.without(outer)
    gone = set(outer)
    if after is not None and any(after == o or after.startswith(o + "/") for o in gone):
        after = None
    label = f"delete {outer[0]}" if len(outer) == 1 else f"delete {len(outer)} nodes"
    return label, after


@_EDITS.on(PasteEdit)
def _paste(edit: PasteEdit, editor: GraphEditor, graph: Graph) -> Outcome:
    nodes = outermost(edit["nodes"])  # a group copied with a node inside it: the group copies that node
    if not nodes:
        raise GraphError("nothing to paste: copy one or more nodes (dispatches or groups) first")
    made = paste_nodes(graph, nodes, into=edit["into"], index=edit["index"])
    # beside the originals, which stay put: where the canvas found room for the copied block
    step = (edit["dx"] if edit["dx"] is not None else OFFSET, edit["dy"] if edit["dy"] is not None else OFFSET)
    graph.layout = placed_copies(graph.layout, zip(nodes, made), offset=step)
    label = f"paste {made[0]}" if len(made) == 1 else f"paste {len(made)} nodes"
    return label, made[-1]


@_EDITS.on(AcceptGuessEdit)
def _accept_guess(edit: AcceptGuessEdit, editor: GraphEditor, graph: Graph) -> Outcome:
    node_id, param = edit["node"], edit["param"]
    guessed = graph.layout.guessed.get(node_id, frozenset())
    if param is not None and param not in guessed:
        raise GraphError(
            f"{node_id}.{param} holds no guessed binding (guessed: {', '.join(sorted(guessed)) or 'none'})"
        )
    graph.layout = graph.layout.accepted(node_id, param)
    return f"accept {node_id}.{param}" if param else f"accept the bindings of {node_id}", node_id


@_EDITS.on(MakeLoopEdit)
def _make_loop(edit: MakeLoopEdit, editor: GraphEditor, graph: Graph) -> Outcome:
    loop_id = make_loop(graph, edit, editor.graph)
    _follow_wrapped(graph, edit["nodes"], f"{loop_id}/")
    how = f"while {edit['flag']}" if edit["mode"] == "while" else f"{edit['count']} times"
    return f"make loop {loop_id} ({how})", loop_id


@_EDITS.on(MakeCondEdit)
def _make_cond(edit: MakeCondEdit, editor: GraphEditor, graph: Graph) -> Outcome:
    cond_id = make_cond(graph, edit, editor.graph)
    _follow_wrapped(graph, edit["nodes"], f"{cond_id}/then/")
    return f"make conditional {cond_id} on {edit['flag']}", cond_id


def _follow_wrapped(graph: Graph, nodes: list[str], inside: str) -> None:
    """The wrapped nodes keep their canvas places and guessed bindings under their ids in the new body."""
    for node_id in nodes:
        graph.layout = graph.layout.renamed(node_id, inside + node_id.rsplit("/", 1)[-1])


_EDITS.complete()


#: The edit fields that hold node ids, read across all edits by the stale check (a test holds them declared):
#: a node id, a node id or null, a list of node ids, and a ``BindTarget`` or null.
NODE_FIELDS = ("node", "into", "nodes", "bind")


def _node_refs(edit: EditMessage | StructureEdit) -> list[str]:
    """Node ids an edit refers to (checked for staleness before anything is done)."""
    fields: Mapping[str, Any] = edit  # read across records: NODE_FIELDS are checked against the declarations
    node, into, nodes, bind = (fields.get(name) for name in NODE_FIELDS)
    refs = [ref for ref in (node, into) if isinstance(ref, str)]
    refs += list(nodes or [])
    if isinstance(bind, dict):
        refs.append(bind["node"])
    return refs


def _in_ui_terms(view: dict[str, Any]) -> dict[str, Any]:
    """A diagnostic's hint said in the widget's terms (``g.rebind(...)`` kept as the Python hint)."""
    hint = view.get("hint")
    return {**view, "hint": ui_text(hint)} if isinstance(hint, str) else view


def _exc_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {clip(str(exc), 1000)}"


def _reply(request: int | None, error: str | None = None) -> dict[str, Any]:
    return {"kind": "reply", "request": request, "ok": error is None, "error": error}


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _notebook_kernels() -> dict[str, Any]:
    """The ``@ti.kernel``s defined in the notebook (``__main__``)."""
    main = sys.modules.get("__main__")
    found: dict[str, Any] = {}
    for name, value in list(vars(main).items()) if main is not None else []:
        try:
            if is_kernel(value):
                found[name] = value
        except Exception:  # an object whose attribute lookup fails is not a kernel
            continue
    return found


def editor(
    graph: Graph, kernels: Any = None, *, access: Access = "auto", values: Mapping[str, Any] | None = None
) -> GraphEditor:
    """Open the widget on ``graph``; edits in the widget and in Python show in both.

    Parameters
    ----------
    graph
        The graph to edit, in place.
    kernels
        What the palette offers besides the kernels the graph already uses: a module, a dict
        (``globals()``), a list of ``@ti.kernel``s or a :class:`~graphlab.KernelRegistry`. By
        default, the ``@ti.kernel``s defined in the notebook.
    access
        How validation learns what each kernel reads and writes (see :func:`graphlab.analysis.check.validate`).
    values
        Run values by arg name for the debug panel's Debug button (``g.debug(**values)``) and for
        the export panel (their shapes set the symbolic dims). A session can also be started from
        Python with ``editor.debug(values)`` or ``editor.debug(x=..., ...)``; its values then become
        the editor's, so Export sizes and verifies with them.
    """
    if kernels is None:
        kernels = _notebook_kernels()
    return GraphEditor(graph, kernels, access=access, values=values)
