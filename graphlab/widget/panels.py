"""The editor's debug, inspect and export panels: their messages, and the traits they publish.

:class:`Panels` belongs to one :class:`~graphlab.widget.editor.GraphEditor`. It turns the panels'
checked messages (:mod:`graphlab.widget.messages`) into calls on a debug session
(:mod:`graphlab.widget.debug_panel`) or on the exporter (:mod:`graphlab.widget.export_panel`), and writes
the results into the widget's ``debugger``, ``inspect*`` and ``export`` traits. A message that cannot
be honoured (no session, a stale session number, a bad expression, a position out of range) raises
:class:`PanelRefusedError` with the reason; nothing was changed.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import weakref
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from IPython import get_ipython

from graphlab.api.graph import module_runner
from graphlab.core.errors import GraphlabError
from graphlab.model.sizes import dim_names
from graphlab.widget.debug_panel import DebugPanel, PanelError
from graphlab.widget.export_panel import ExportPanel, dims_field_problem, unsized_dim
from graphlab.widget.handlers import Handlers
from graphlab.widget.home import HomeThread
from graphlab.widget.protocol import (
    BreakpointCondition,
    BreakpointRemove,
    BreakpointToggle,
    DebugCompare,
    DebugControl,
    DebugGoto,
    DebugPrepareCompare,
    DebugStart,
    ExportMessage,
    InspectMessage,
    PanelMessage,
    ValueAllocate,
    ValueClear,
    ValueDim,
    ValueScalar,
    ValuesView,
    ValueVariable,
    WatchAdd,
    WatchRemove,
)
from graphlab.widget.values_panel import RunValues

if TYPE_CHECKING:
    from graphlab.debug import DebugSession
    from graphlab.widget.editor import GraphEditor

_log = logging.getLogger(__name__)


#: ``start``'s keywords that are the session's options, not run values by name (``DebugSession``'s).
_SESSION_OPTIONS = ("bounds", "options", "module_runner")


class PanelRefusedError(Exception):
    """A panel message was refused; ``str()`` says why (shown in the widget's banner)."""


class Panels:
    """The panels of one editor (see the module docs)."""

    def __init__(self, editor: GraphEditor, values: Mapping[str, Any] | None, *, home: HomeThread) -> None:
        self._editor = weakref.ref(editor)
        self._home = home
        self.run_values = RunValues(values)
        self.debug = DebugPanel()
        self.export = ExportPanel(editor.model.name)
        self._version: int | None = None
        self._unhook: Callable[[], None] | None = None

    @property
    def values(self) -> dict[str, Any] | None:
        """The editor's run values (the values panel's), or None when none were given."""
        return self.run_values.values

    @values.setter
    def values(self, values: Mapping[str, Any] | None) -> None:
        self.run_values.values = values
        self.publish_values()

    @property
    def editor(self) -> GraphEditor:
        editor = self._editor()
        if editor is None:  # pragma: no cover - the editor owns the panels
            raise RuntimeError("the editor of these panels is gone")
        return editor

    # --- sessions ---------------------------------------------------------------------------------

    def start(self, values: Mapping[str, Any] | None = None, /, **kwargs: Any) -> DebugSession:
        """Start a debug session on the editor's graph and show it (GraphlabError if it cannot start)."""
        from graphlab.debug import DebugOptions, DebugSession  # import cost: Taichi

        given = {name: value for name, value in kwargs.items() if name not in _SESSION_OPTIONS}  # values by name
        run_values = dict(values) if values is not None else self.run_values.for_run(self.editor.model)
        if values is None and run_values is not None:  # values by name replace the editor's of that name
            run_values = {name: value for name, value in run_values.items() if name not in given}
        if run_values is None and not given:
            missing = self.run_values.view(self.editor.model)["missing"]
            if missing:  # said as the values panel says it: the "Give value..." button opens it at the first
                names = ", ".join(map(repr, missing))
                raise PanelError(
                    f"Debug needs {'values' if len(missing) > 1 else 'a value'} for {names} (graph "
                    f"{self.editor.model.name!r}): give {'them' if len(missing) > 1 else 'it'} in the Values panel "
                    "(in Python: gl.editor(g, values={...}), or editor.debug(x=..., ...) in a cell)"
                )
            run_values = {}  # a graph that takes no values
        if values is None and not given:
            _refuse_missing_dims(self.run_values.view(self.editor.model))
        args = self.editor.model.args
        sizes = set(dim_names(args.values()))  # dims by name (m=64) size temps, as in g.debug(): kept too
        named = {name: value for name, value in given.items() if name in args or name in sizes}
        kwargs.setdefault("options", DebugOptions(stats_on_stop=False))
        kwargs.setdefault("module_runner", module_runner)  # compare(folder): the exporter runs the module
        session = self._checked_start(lambda: DebugSession(self.editor.model, run_values, **kwargs), kwargs)
        if values is not None or named:
            # the session's values become the editor's: Export (and the Debug button) use them next
            self.values = {**(run_values or {}), **named}
        self.attach(session)
        return session

    def _checked_start(self, open_session: Callable[[], DebugSession], kwargs: Mapping[str, Any]) -> DebugSession:
        """Open the session; with ``bounds="check"`` the panel says "checking bounds..." while the child run
        goes on (seconds), then shows its outcome: an ``OutOfBoundsError`` stays in the panel, no session opens."""
        bounds = self.debug.bounds
        if kwargs.get("bounds", "trust") != "check":
            bounds.skip()
            return open_session()
        bounds.begin()
        self.publish_debugger()  # sent now: the check below holds this thread for seconds
        try:
            session = open_session()
        except Exception as exc:
            bounds.failed(exc)
            self.publish_debugger()
            raise
        bounds.passed()
        return session

    def attach(self, session: DebugSession) -> None:
        """Show ``session`` (made from this editor's graph as it is now) in the panels."""
        self.debug.attach(session)
        self._version = self.editor.model.version
        self._hook_cells()
        self.publish_debug()

    def graph_changed(self) -> None:
        """End the session when the graph it was made for was edited since."""
        if self.debug.session is not None and self.editor.model.version != self._version:
            self.debug.end("the graph was edited since the session started; press Debug to start a new one")
            self.publish_debug()

    def stop(self, why: str = "stopped") -> None:
        self.debug.end(why)
        self.publish_debug()

    # --- publishing --------------------------------------------------------------------------------

    def publish_debug(self) -> None:
        """Write the ``debugger`` and inspect traits (one message to the front-end)."""
        editor = self.editor
        try:
            inspection = self.debug.inspection()
        except GraphlabError as exc:  # a stale view, a failed replay: say so, keep the panel
            _log.info("graphlab: inspection failed: %s", exc)
            inspection = None
            problem = str(exc)
        else:
            problem = ""
        view = self.debug.view()
        with editor.hold_sync():
            editor.debugger = view
            if inspection is not None:
                editor.inspect = inspection.view
                editor.inspect_picture = inspection.picture
                editor.inspect_diff = inspection.diff
                editor.inspect_page = inspection.page
            else:
                editor.inspect = {"session": self.debug.number, "buffer": None, "problem": problem}

    def publish_debugger(self) -> None:
        """Write only the ``debugger`` trait (a comparison's progress: the inspect traits stay)."""
        self.editor.debugger = self.debug.view()

    def publish_values(self) -> None:
        """Write the ``values`` trait: what the graph needs, what is given, what is missing."""
        self.run_values.follow(self.editor.model)
        self.editor.values = dict(self.run_values.view(self.editor.model))

    def publish_export(self, view: dict[str, Any]) -> None:
        self.editor.export = view

    # --- messages -------------------------------------------------------------------------------------

    def handle(self, message: PanelMessage) -> None:
        """Act on a panel message; PanelRefusedError when it cannot be done (nothing changed then)."""
        try:
            _PANEL_MESSAGES(message, self)
        except GraphlabError as exc:
            raise PanelRefusedError(str(exc)) from exc

    def export_graph(self, message: ExportMessage) -> None:
        """Export the graph as the export panel asked (``gl.export``, then ``gl.verify``)."""
        if self.export.view()["state"] == "running":
            raise PanelRefusedError("an export is running already; wait for it to finish")
        args = self.editor.model.args
        sizes = set(dim_names(args.values()))  # the editor's values may size temps by dim name (m=64)
        given = self.run_values.for_run(self.editor.model)
        dims = {k: v for k, v in (given or {}).items() if k not in args and k in sizes}
        refused = dims_field_problem(message["dims"]) or unsized_dim(
            self.run_values.view(self.editor.model), dims=message["dims"], verify=message["verify"]
        )
        if refused is not None:  # said in the panels' terms before anything runs (the exporter says dims={...})
            self.export.refuse(refused, arch=message["arch"], path=message["path"], publish=self.publish_export)
            raise PanelRefusedError(f"export refused: {refused}")
        error = self.export.run(
            self.editor.model,
            arch=message["arch"],
            path=message["path"],
            overwrite=message["overwrite"],
            verify=message["verify"],
            cpu_threads=message["cpu_threads"],
            dims={**dims, **message["dims"]},
            values={k: v for k, v in given.items() if k not in dims} if given is not None else None,
            publish=self.publish_export,
        )
        if error is not None:
            raise PanelRefusedError(f"export failed: {error}")

    # --- sessions moved from Python -------------------------------------------------------------------

    def refresh(self, result: Any = None) -> bool:
        """Show changes made to the session from Python (stepping it in a cell); True if there were.

        ``result``: the value the cell ended with (a Stop of this move shows as the reason).
        """
        if self.debug.session is None or not self.debug.changed_elsewhere(result):
            return False
        self.publish_debug()
        return True

    def _hook_cells(self) -> None:
        """After each notebook cell, show what the cell did to the session (IPython only)."""
        if self._unhook is not None:
            return
        shell = get_ipython()
        if shell is None:
            return
        ref = weakref.ref(self)

        def after_cell(outcome: Any = None) -> None:
            panels = ref()
            if panels is None:
                return
            result = getattr(outcome, "result", None)
            try:  # a cell of a subshell console ends on its own thread: read the session on the editor's
                panels._home.post(functools.partial(panels.refresh, result))
            except Exception:  # never break the user's cell over a panel refresh
                _log.exception("graphlab: refreshing the debug panel after a cell failed")

        shell.events.register("post_run_cell", after_cell)

        def unhook() -> None:
            with contextlib.suppress(ValueError):
                shell.events.unregister("post_run_cell", after_cell)

        self._unhook = unhook

    def close(self) -> None:
        if self._unhook is not None:
            self._unhook()
            self._unhook = None
        self.debug.end("the editor was closed")


# --- the panels' messages: one handler per message record -------------------------------------------------

#: The panel message handlers; those of a session's messages first check it is the one they were made for.
_PANEL_MESSAGES: Handlers[PanelMessage, [Panels], None] = Handlers(PanelMessage)


@_PANEL_MESSAGES.on(ExportMessage)
def _export(message: ExportMessage, panels: Panels) -> None:
    panels.export_graph(message)


@_PANEL_MESSAGES.on(DebugStart)
def _start(message: DebugStart, panels: Panels) -> None:
    panels.start(bounds=message["bounds"])  # shows the new session itself


@_PANEL_MESSAGES.on(DebugControl)
def _control(message: DebugControl, panels: Panels) -> None:
    panels.debug.require(message["session"])
    action = message["action"]
    if action == "stop":
        panels.debug.end("stopped; press Debug to start a new session")
    else:
        panels.debug.control(action)
    panels.publish_debug()


@_PANEL_MESSAGES.on(DebugGoto)
def _goto(message: DebugGoto, panels: Panels) -> None:
    panels.debug.require(message["session"])
    panels.debug.control(message["action"], message["target"])
    panels.publish_debug()


@_PANEL_MESSAGES.on(DebugPrepareCompare)
def _prepare_compare(message: DebugPrepareCompare, panels: Panels) -> None:
    panels.debug.require(message["session"])
    panels.debug.prepare_compare(message["against"])
    panels.publish_debug()


@_PANEL_MESSAGES.on(DebugCompare)
def _compare(message: DebugCompare, panels: Panels) -> None:
    panels.debug.require(message["session"])
    args = (message["against"], message["rtol"], message["atol"], panels.publish_debugger, message["timeout"])
    error = panels.debug.compare(*args)
    panels.publish_debug()  # on a failure the panel shows it; the session did not move
    if error is not None:
        raise PanelRefusedError(f"compare failed: {error}")


@_PANEL_MESSAGES.on(BreakpointToggle)
def _toggle_breakpoint(message: BreakpointToggle, panels: Panels) -> None:
    panels.debug.require(message["session"])
    panels.debug.toggle_breakpoint(message["node"])
    panels.publish_debug()


@_PANEL_MESSAGES.on(BreakpointCondition)
def _add_condition(message: BreakpointCondition, panels: Panels) -> None:
    panels.debug.require(message["session"])
    panels.debug.add_condition(message["expression"], message["every"])
    panels.publish_debug()


@_PANEL_MESSAGES.on(BreakpointRemove)
def _remove_breakpoint(message: BreakpointRemove, panels: Panels) -> None:
    panels.debug.require(message["session"])
    panels.debug.remove_breakpoint(message["id"])
    panels.publish_debug()


@_PANEL_MESSAGES.on(WatchAdd)
def _watch(message: WatchAdd, panels: Panels) -> None:
    panels.debug.require(message["session"])
    panels.debug.watch(message["expression"])
    panels.publish_debug()


@_PANEL_MESSAGES.on(WatchRemove)
def _unwatch(message: WatchRemove, panels: Panels) -> None:
    panels.debug.require(message["session"])
    panels.debug.unwatch(message["expression"])
    panels.publish_debug()


@_PANEL_MESSAGES.on(InspectMessage)
def _inspect(message: InspectMessage, panels: Panels) -> None:
    panels.debug.require(message["session"])
    panels.debug.choose(message["buffer"], message["component"], message["page"], message["slice"])
    panels.publish_debug()


@_PANEL_MESSAGES.on(ValueScalar)
def _value_scalar(message: ValueScalar, panels: Panels) -> None:
    panels.run_values.give_scalar(panels.editor.model, message["arg"], message["value"])
    panels.publish_values()


@_PANEL_MESSAGES.on(ValueAllocate)
def _value_allocate(message: ValueAllocate, panels: Panels) -> None:
    model = panels.editor.model
    panels.run_values.allocate(model, message["arg"], message["shape"], fill=message["fill"], seed=message["seed"])
    panels.publish_values()


@_PANEL_MESSAGES.on(ValueVariable)
def _value_variable(message: ValueVariable, panels: Panels) -> None:
    panels.run_values.from_variable(panels.editor.model, message["arg"], message["variable"])
    panels.publish_values()


def _refuse_missing_dims(view: ValuesView) -> None:
    """Say which dim Debug lacks a size for, in the values panel's terms, before the run says it in Python's."""
    for entry in view["dims"]:
        if entry["needed"]:
            temps = ", ".join(map(repr, entry["args"]))
            raise PanelError(
                f"Debug needs a size for dim {entry['dim']!r} (the shape of {temps} names it, and no value given "
                f"sizes it): give it in the Values panel, under Dims ({entry['dim']}=64), or give those args values "
                f"(in Python: editor.debug({entry['dim']}=...))"
            )


@_PANEL_MESSAGES.on(ValueDim)
def _value_dim(message: ValueDim, panels: Panels) -> None:
    panels.run_values.give_dim(panels.editor.model, message["dim"], message["size"])
    panels.publish_values()


@_PANEL_MESSAGES.on(ValueClear)
def _value_clear(message: ValueClear, panels: Panels) -> None:
    panels.run_values.clear(panels.editor.model, message["arg"])
    panels.publish_values()


_PANEL_MESSAGES.complete()
