"""The widget's wire protocol, declared once: the synced traits' payloads and the custom messages.

Over 500 lines on purpose: it is only declarations, one record per payload and message, kept in one
module so the TypeScript generator and the message checks read a single source.

Every record the notebook widget sends or receives is a ``TypedDict`` here, so the one declaration
serves both sides:

- Python checks what the front-end sends against it (:mod:`graphlab.widget.messages` reads the
  fields, which are required and their defaults from these classes, and refuses anything else);
- the front-end's TypeScript types are generated from it (:mod:`graphlab.widget.protocol_ts` writes
  ``extension/src/wire/protocol.gen.ts``; a test fails when the committed file is not what it writes).

Synced traits carry state (Python is the single writer, except ``error``, which the banner may
clear). Custom messages carry intents: the front-end never edits the graph itself, it asks Python,
which edits the model through its API and sends the new state back as traits. The debug, inspect and
export panels work the same way over a Python debug session and ``gl.export``/``gl.verify``; arrays
(pictures, pages of values) travel as bytes, never JSON lists.

Conventions the generator and the checks rely on: ``__all__`` lists the wire types in the order the
TypeScript declares them; ``NotRequired[...]`` marks a field that may be left out, and in a message
from the front-end it wraps ``Annotated[type, Default(value)]``, the value Python assumes; a string
after a field or an alias documents it (it becomes the TypeScript doc comment). Records with a field
named like a Python keyword (``while``, ``from``) use the functional ``TypedDict("Name", {...})``
form. Vocabularies that belong to the model (arg kinds, roles, severities) are imported from the
modules that define them, so a new value shows up here by itself; the debugger's (stop reasons,
breakpoint kinds) are repeated here, because importing :mod:`graphlab.debug` would import Taichi with
the widget, and a test holds them equal.
"""

import sys
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from graphlab.core.diagnostics import Severity
from graphlab.core.spec import ArgKind, Role
from graphlab.run.boundscheck import Bounds
from graphlab.widget.inspect_panel import PictureKind

if sys.version_info >= (3, 11):
    from typing import NotRequired, TypedDict
else:  # pragma: no cover - Python 3.10: typing's TypedDict does not know NotRequired
    from typing_extensions import NotRequired, TypedDict

__all__ = [  # noqa: RUF022 - in the order protocol.gen.ts declares them, sections named by the comments
    # traits: Python -> front-end
    "ArgKind",
    "ParamKind",
    "Role",
    "Severity",
    "ArgView",
    "ParamView",
    "NodeBase",
    "DispatchView",
    "SequenceView",
    "LoopView",
    "CondView",
    "BranchView",
    "NodeView",
    "ContainerView",
    "GraphView",
    "KernelView",
    "DiagnosticView",
    "HistoryView",
    # the debug panel: the `debugger` trait
    "StopReason",
    "BreakKind",
    "Every",
    "Num",
    "PositionView",
    "BreakpointView",
    "FaultView",
    "NonfiniteView",
    "NodeTimeView",
    "DecisionView",
    "WatchView",
    "DivergenceView",
    "CompareView",
    "Bounds",
    "OutOfBoundsView",
    "BoundsCheckView",
    "DebugView",
    # the inspect panel: `inspect` and its three byte traits
    "PictureKind",
    "StatsView",
    "PictureView",
    "DiffView",
    "PageView",
    "InspectView",
    # the export panel: the `export` trait
    "ExportArch",
    "Verdict",
    "OutputDiffView",
    "VerifyView",
    "ExportView",
    # the values panel: the `values` trait
    "ValueEntryView",
    "ValuesView",
    "DimEntryView",
    "Traits",
    # custom messages: front-end -> Python
    "ArgSpec",
    "BindTarget",
    "EditBase",
    "DispatchEdit",
    "RemoveEdit",
    "MoveEdit",
    "RebindEdit",
    "RenameEdit",
    "SetRepeatEdit",
    "GroupEdit",
    "NewArgEdit",
    "RenameArgEdit",
    "SetRoleEdit",
    "RedeclareEdit",
    "RemoveArgEdit",
    "PlaceEdit",
    "RemoveNodesEdit",
    "PasteEdit",
    "AcceptGuessEdit",
    "EditMessage",
    "MakeLoopEdit",
    "MakeCondEdit",
    "StructureEdit",
    "ValueFill",
    "ValueScalar",
    "ValueAllocate",
    "ValueVariable",
    "ValueClear",
    "ValueDim",
    "ValuesMessage",
    "DebugAction",
    "DebugStart",
    "DebugControl",
    "DebugGoto",
    "DebugCompare",
    "DebugPrepareCompare",
    "DebugMessage",
    "BreakpointToggle",
    "BreakpointCondition",
    "BreakpointRemove",
    "BreakpointMessage",
    "WatchAdd",
    "WatchRemove",
    "WatchMessage",
    "InspectMessage",
    "ExportMessage",
    "PanelMessage",
    "UndoMessage",
    "RedoMessage",
    "SelectMessage",
    "ClientMessage",
    # custom messages: Python -> front-end
    "ReplyMessage",
    "ServerMessage",
]


@dataclass(frozen=True)
class Default:
    """What Python assumes for a message field the front-end leaves out (the field is ``NotRequired``)."""

    value: Any


#: The field that names a message's operation, where one kind has several (edits, breakpoints and
#: watches have an ``op``, the debugger an ``action``).
OPERATION_FIELDS = ("op", "action")


# --- traits: Python -> front-end -----------------------------------------------------------------------

ParamKind = ArgKind | Literal["template", "struct", "unknown"]
"""What a kernel parameter takes: an arg kind, or what no arg can bind (``ti.template()``, a struct)."""


class ArgView(TypedDict):
    """A symbolic arg of the graph (``graphlab.core.spec.Arg``)."""

    name: str
    kind: ArgKind
    dtype: str | None
    ndim: int
    element_shape: list[int]
    fmt: str | None
    role: Role
    shape: list[int | str] | None
    """Declared shape: ints and symbolic dim names; null accepts any shape."""
    inferred_shape: str | None
    """With no declared shape: lower bounds read from the kernels' loops (``[≥n]``, ``[≥x.shape[0], ?]``), checked
    before every run; null when nothing bounds it."""
    label: str
    """``ndarray vec2 f32, ndim=1``"""


class ParamView(TypedDict):
    """A kernel parameter (``graphlab.model.kernels.Param``); null fields are left open by the annotation."""

    name: str
    kind: ParamKind
    dtype: str | None
    ndim: int | None
    element_shape: list[int] | None
    fmt: str | None
    label: str


class NodeBase(TypedDict):
    """What every node of the ``graph`` trait has."""

    id: str
    """Path id: ``init``, ``substep/p2g``."""
    name: str
    parent: str | None
    """Id of the sequence use holding this node; null at the top level."""
    index: int
    """Position among its siblings."""


class DispatchView(NodeBase):
    """A kernel dispatch."""

    kind: Literal["dispatch"]
    kernel: str
    """``module:qualname``"""
    kernel_name: str
    params: list[ParamView]
    bindings: dict[str, str | None]
    """Parameter name -> bound arg name (null: unbound), in parameter order."""
    random: NotRequired[str]
    """What its kernel draws at random (``ti.random() in init, line 12``); left out when it draws nothing."""
    guessed: NotRequired[list[str]]
    """Parameters whose binding the editor guessed by type (drawn dashed until accepted); left out when none."""


class SequenceView(NodeBase):
    """A use of a sequence definition, repeated ``repeat`` times."""

    kind: Literal["sequence"]
    sequence: str
    """Name of the sequence definition this node uses."""
    repeat: int
    children: list[str]


# ``while`` is a Python keyword, hence the functional form (which cannot extend NodeBase).
LoopView = TypedDict(
    "LoopView",
    {
        "id": str,
        "name": str,
        "parent": str | None,
        "index": int,
        "kind": Literal["loop"],
        "sequence": str,
        "while": str | None,
        "count": str | None,
        "max_iter": int | None,
        "check_every": int,
        "guarded": bool,
        "children": list[str],
    },
)
"""A loop: its body (a sequence definition) ``count`` times, or while the flag ``while`` is non-zero
(read after every ``check_every``-th iteration; ``guarded``: yet stopping where every read would)."""


class CondView(NodeBase):
    """A conditional on a one-element i32 flag; its children are its ``branch`` nodes (``then``, ``else``)."""

    kind: Literal["cond"]
    flag: str
    children: list[str]


class BranchView(NodeBase):
    """One branch of a conditional (``decide/then``): a container, not a node of the model."""

    kind: Literal["branch"]
    sequence: str
    children: list[str]


NodeView = DispatchView | SequenceView | LoopView | CondView | BranchView
"""A node of the ``graph`` trait, told apart by its ``kind``."""

ContainerView = SequenceView | LoopView | CondView | BranchView
"""Nodes that hold other nodes."""


class GraphView(TypedDict):
    """The ``graph`` trait: a JSON view of the model."""

    name: str
    version: int
    """Bumped by every edit (``Graph.version``)."""
    args: list[ArgView]
    nodes: list[NodeView]
    """Every node, depth first in program order."""
    body: list[str]
    """Ids of the top-level nodes, in order."""
    layout: dict[str, list[float]]
    """Canvas positions ``[x, y]`` by node id, of the nodes placed so far (``graphlab.model.layout``)."""


class KernelView(TypedDict):
    """One entry of the ``palette`` trait (``graphlab.model.kernels.KernelInfo``)."""

    name: str
    ref: str
    params: list[ParamView]
    returns: bool
    dispatchable: bool
    why_not: str | None


class DiagnosticView(TypedDict):
    """One entry of the ``diagnostics`` trait (``graphlab.core.diagnostics.Diagnostic``)."""

    code: str
    severity: Severity
    message: str
    node: str | None
    arg: str | None
    hint: str | None


class HistoryView(TypedDict):
    """The ``history`` trait: labels of what undo and redo would do, the next one last."""

    undo: list[str]
    redo: list[str]


# --- the debug panel: the `debugger` trait -----------------------------------------------------------

StopReason = Literal["step", "breakpoint", "condition", "end", "nonfinite", "fault", "start"]
"""Why the session stopped (``graphlab.debug.report.StopReason``)."""

BreakKind = Literal["node", "step", "repetition", "sequence", "condition"]
"""What a breakpoint stops at (``graphlab.debug.breakpoints.BreakKind``)."""

Every = Literal["repetition", "dispatch"]
"""How often a condition is checked (``graphlab.debug.breakpoints.Every``)."""

Num = float | Literal["nan", "inf", "-inf"]
"""A number as JSON carries it; NaN and infinities travel as strings."""


class PositionView(TypedDict):
    """Where the session stands: ``index`` dispatches have run; ``step_id`` runs next (null at the end)."""

    index: int
    total: int
    step_id: str | None
    node_id: str | None
    """Definition-level id of the next dispatch (``substep/p2g``): the node drawn as current."""
    last_step_id: str | None
    total_known: bool
    """False while a graph with loops or conditionals has not run to its end in this session: ``total``
    then counts the steps recorded so far (the session records its timeline as it decides)."""


class BreakpointView(TypedDict):
    """A breakpoint of the session."""

    id: int
    kind: BreakKind
    target: str
    """A node, step, repetition or sequence id; the expression of a condition."""
    every: Every | None
    enabled: bool
    hits: int


class FaultView(TypedDict):
    """A dispatch that raised; the session stayed before it, its buffers restored."""

    index: int
    step_id: str
    node_id: str
    kernel: str
    error: str


class NonfiniteView(TypedDict):
    """The dispatch that first left NaN/Inf in a buffer (null step: there before the hunt)."""

    step_id: str | None
    node_id: str | None
    buffer: str
    nan: int
    inf: int
    first_index: list[int] | None


class NodeTimeView(TypedDict):
    """A node's stepped dispatches, summed (seconds)."""

    node_id: str
    kernel: str
    calls: int
    total_s: float
    mean_s: float
    share: float


class DecisionView(TypedDict):
    """A control point the session passed: the flag the host read, and what it chose."""

    index: int
    """Dispatches run before the read."""
    node_id: str
    scope: str
    """This run of the conditional or loop (``outer[1]/solve``)."""
    kind: Literal["cond", "loop"]
    value: int
    outcome: str
    """``then``, ``else``, ``skip``; ``again``, ``done``, ``limit``."""


class WatchView(TypedDict):
    """A watched expression and its value at the position."""

    text: str
    value: Num | bool | None


class DivergenceView(TypedDict):
    """Where ``DebugSession.compare`` found the two runs first disagree (``Divergence.to_dict()``)."""

    kind: Literal["buffer", "control"]
    archs: list[str]
    """This session's arch, then the other side's (an arch, or ``module <folder>``)."""
    index: int
    """The diverging step's index: the dispatches run before it (the session is moved there)."""
    step_id: str | None
    node_id: str | None
    """The node marked on the graph (null: the difference shows only at the end of the run)."""
    buffer: str | None
    first_index: list[int] | None
    values: list[Num | bool | None] | None
    """Both sides' values at ``first_index`` (this session's first)."""
    count: int
    size: int
    max_abs: Num
    max_rel: Num
    control_node: str | None
    decisions: list[str] | None
    random: str | None
    """Set when the dispatch that differs draws random numbers (``ti.random``): the two sides drew other
    numbers, not a value divergence."""
    text: str
    """The divergence in a sentence."""
    picture: str | None
    """The absolute difference drawn (a ``data:`` URL of a PNG heat map or an SVG line plot), or null."""


class CompareView(TypedDict):
    """The debug panel's "Compare with..." run: its progress, then the divergence or the error."""

    run: int
    """Comparisons are numbered from 1 (0: none yet in this session)."""
    state: Literal["idle", "running", "done", "failed"]
    archs: list[str]
    """The archs the other side can run on (``against`` may also be an exported module's folder)."""
    against: str | None
    rtol: float
    atol: float
    stage: str
    fraction: float
    divergence: DivergenceView | None
    """Null with ``state`` done: the two runs agree to the end."""
    error: str | None
    seconds: float


class OutOfBoundsView(TypedDict):
    """Where the checked run found an index out of bounds (the fields of ``gl.OutOfBoundsError``)."""

    node: str | None
    """The dispatch's node id (marked on the graph)."""
    step: str | None
    arg: str | None
    param: str | None
    index: list[int]
    shape: list[int] | None
    """The arg's field dims in that run (null when unknown)."""


class BoundsCheckView(TypedDict):
    """The checked start (Debug with "check bounds first", ``bounds="check"``): a run of the graph in a child
    process under Taichi's bounds checks before the session opens; ``idle`` when the last start was unchecked."""

    state: Literal["idle", "checking", "passed", "failed"]
    error: str | None
    """Why the checked start failed (``OutOfBoundsError: ...`` names the dispatch, arg and index); no session
    started."""
    out_of_bounds: OutOfBoundsView | None
    """Set when the failure is an index out of bounds."""
    seconds: float


class DebugView(TypedDict):
    """The ``debugger`` trait: the session the panel shows (``active`` false when none runs)."""

    session: int
    """Sessions are numbered from 1; panel messages name the number they were made for."""
    active: bool
    ended: str
    """Why the last session ended ("" while one runs)."""
    position: PositionView | None
    reason: StopReason | None
    message: str
    """One line about the last stop."""
    note: str
    breakpoints: list[BreakpointView]
    watches: list[WatchView]
    fault: FaultView | None
    faults: list[FaultView]
    """The last fault of each node that raised in this session."""
    nonfinite: NonfiniteView | None
    timing: list[NodeTimeView]
    buffers: list[str]
    """The buffers (ndarray args) that can be inspected."""
    decisions: list[DecisionView]
    """The latest control-flow decisions up to the position (graphs with loops or conditionals)."""
    compare: CompareView
    """The last "Compare with..." of this session."""
    bounds: BoundsCheckView
    """The last start's bounds check (kept after a failed start, when no session runs)."""


# --- the inspect panel: `inspect` and its three byte traits --------------------------------------------


class StatsView(TypedDict):
    """Device statistics of a buffer or one of its components."""

    label: str
    count: int
    finite: int
    min: Num | None
    max: Num | None
    mean: Num | None
    std: Num | None
    nan: int
    inf: int
    zeros: int
    first_nonfinite: list[int] | None


class PictureView(TypedDict):
    """The header of a picture's bytes: little-endian ``dtype`` values laid out as ``shape`` (heat map
    ``[h, w]``; line ``[n, 2]`` of (min, max) per bucket; scatter ``[n, 2]`` of (x, y)). ``step`` is the
    source elements per value along each axis (downsampling); ``origin`` the fixed leading indexes of
    a 2-D slice of a 3-D or higher field."""

    kind: PictureKind
    dtype: Literal["f32", "f64"]
    shape: list[int]
    step: list[int]
    origin: list[int]
    label: str
    note: str


# ``from`` is a Python keyword, hence the functional form.
DiffView = TypedDict(
    "DiffView",
    {
        "from": int,
        "to": int,
        "count": int,
        "changed": int,
        "max_abs": Num | None,
        "max_rel": Num | None,
        "nonfinite_mismatch": int,
        "first_changed": list[int] | None,
        "picture": PictureView,
    },
)
"""How the buffer changed from position ``from`` to ``to`` (the previous position the session stood at)."""


class PageView(TypedDict):
    """The header of ``inspect_page``: ``count`` field elements from ``offset``, each with ``columns`` f64 values."""

    page: int
    pages: int
    size: int
    offset: int
    count: int
    total: int
    columns: list[str]


class InspectView(TypedDict):
    """The ``inspect`` trait (``buffer`` null: nothing to inspect; ``problem`` says why when known)."""

    session: int
    buffer: str | None
    problem: NotRequired[str]
    position: NotRequired[int]
    dtype: NotRequired[str]
    shape: NotRequired[list[int]]
    element_shape: NotRequired[list[int]]
    last_writer: NotRequired[str | None]
    component: NotRequired[int | None]
    """The component pictured (flat index), or null for the element's norm."""
    components: NotRequired[list[str]]
    stats: NotRequired[StatsView]
    component_stats: NotRequired[list[StatsView]]
    picture: NotRequired[PictureView]
    diff: NotRequired[DiffView | None]
    page: NotRequired[PageView]


# --- the export panel: the `export` trait ----------------------------------------------------------------

ExportArch = Literal["x64", "vulkan", "cuda"]
"""A target of ``gl.export(arch=)``."""


Verdict = Literal["identical", "within run-to-run noise", "depends on ti.random", "within rtol", "differs"]
"""``gl.verify``'s verdict: bit for bit; no larger than Python's own run-to-run difference where an atomic add
or a race can cause it; downstream of a ``ti.random`` draw; within ``rtol`` with nothing to explain it; beyond
all of these (fails)."""


class OutputDiffView(TypedDict):
    """How one output of the exported module compared with Python's."""

    name: str
    dtype: str
    shape: list[int]
    max_abs: float
    max_rel: float
    noise: float | None
    """Max abs difference of Python against a second run of itself (null: not measured)."""
    mismatched: int
    passed: bool
    verdict: Verdict


class VerifyView(TypedDict):
    """The verdict of ``gl.verify`` on the exported module."""

    passed: bool
    identical: bool
    verdict: Verdict
    text: str
    """The report as text (``str(gl.verify(...))``)."""
    outputs: list[OutputDiffView]
    notes: list[str]


class ExportView(TypedDict):
    """The ``export`` trait: the export panel's state, progress, files written and verification."""

    run: int
    """Exports are numbered from 1 (0: none yet)."""
    state: Literal["idle", "running", "done", "failed"]
    targets: list[ExportArch]
    default_arch: ExportArch
    default_path: str
    arch: ExportArch | None
    path: str | None
    stage: str
    fraction: float
    """0..1 over export and verification."""
    files: list[str]
    """Files written, relative to ``path`` (the first 200)."""
    file_count: int
    """How many files were written (``result`` counts the same ones)."""
    result: str
    verify: VerifyView | None
    verify_error: str | None
    """The module was written but verification could not run: why, and how to fix it."""
    error: str | None
    """The export failed (nothing written): why."""
    seconds: float


# --- the values panel: the `values` trait ----------------------------------------------------------------


class ValueEntryView(TypedDict):
    """One run value the graph takes, as the values panel lists it."""

    arg: str
    kind: ArgKind
    dtype: str | None
    role: Role
    shape: list[int | str] | None
    """The arg's declared shape (ints and dim names), null when it declares none."""
    ndim: int
    needed: bool
    """False for what the run allocates itself (temps with a known shape) and for an arg no node uses."""
    given: bool
    summary: str
    """What was given: ``2.5``, ``f32 ndarray 64 x 3, zeros``, ``notebook variable x0``; "" when nothing."""


class DimEntryView(TypedDict):
    """One symbolic dim of the args' shapes (``m`` of ``shape=("m",)``), as the values panel lists it."""

    dim: str
    size: int | None
    """Its size in a run: given by name, or set by a given value's shape; null while unknown."""
    given: bool
    """Whether the size was given by name (``m=64``), as ``run(m=64)`` takes it."""
    set_by: str | None
    """The arg whose given value sizes it (then it needs no size by name), or null."""
    args: list[str]
    """The args whose declared shapes name it."""
    needed: bool
    """Whether Debug would refuse for want of it: a temp the run allocates names it and nothing sizes it."""


class ValuesView(TypedDict):
    """The ``values`` trait: the run values the graph needs, what is given and what is missing."""

    entries: list[ValueEntryView]
    missing: list[str]
    """The args Debug would refuse for want of a value, in the graph's order."""
    dims: list[DimEntryView]
    """The symbolic dims of the args the nodes use, in order of first use."""
    missing_dims: list[str]
    """The dims Debug would refuse for want of a size (``needed`` ones), in that order."""
    in_notebook: bool
    """Whether notebook variables can be used (false outside IPython)."""


class Traits(TypedDict):
    """Every synced trait of ``GraphEditor``, by name. Bytes arrive as a DataView (null until the first sync)."""

    graph: GraphView
    palette: list[KernelView]
    dot: str
    diagnostics: list[DiagnosticView]
    error: str
    selected: str
    history: HistoryView
    debugger: DebugView
    inspect: InspectView
    inspect_picture: bytes
    inspect_diff: bytes
    inspect_page: bytes
    export: ExportView
    values: ValuesView


# --- custom messages: front-end -> Python --------------------------------------------------------------


class ArgSpec(TypedDict):
    """The spec of a new arg (``graphlab.core.spec.Arg``'s fields)."""

    name: str
    kind: ArgKind
    dtype: NotRequired[Annotated[str | None, Default(None)]]
    ndim: NotRequired[Annotated[int, Default(0)]]
    element_shape: NotRequired[Annotated[list[int], Default([])]]
    fmt: NotRequired[Annotated[str | None, Default(None)]]
    role: NotRequired[Annotated[Role, Default("state")]]
    shape: NotRequired[Annotated[list[int | str] | None, Default(None)]]
    """Ints and symbolic dim names; null accepts any shape."""


class BindTarget(TypedDict):
    """The parameter a new arg is bound to."""

    node: str
    param: str


class EditBase(TypedDict):
    """Every edit carries a request number that the reply echoes."""

    kind: Literal["edit"]
    request: int


class DispatchEdit(EditBase):
    """``graph.insert(kernel, index=, into=, name=, bindings=)``"""

    op: Literal["dispatch"]
    kernel: str
    bindings: NotRequired[Annotated[dict[str, str | None], Default({})]]
    into: NotRequired[Annotated[str | None, Default(None)]]
    index: NotRequired[Annotated[int | None, Default(None)]]
    name: NotRequired[Annotated[str | None, Default(None)]]
    guessed: NotRequired[Annotated[list[str], Default([])]]
    """Parameters of ``bindings`` the front-end guessed by type: marked as suggestions, and dropped where
    the guess would alias an arg another parameter of the dispatch is bound to."""
    position: NotRequired[Annotated[list[float] | None, Default(None)]]
    """Where the canvas places the new node (null: the canvas picks a free place)."""


class RemoveEdit(EditBase):
    """``graph.remove(node)``"""

    op: Literal["remove"]
    node: str


class MoveEdit(EditBase):
    """``graph.move(node, index)``: a new position among its siblings."""

    op: Literal["move"]
    node: str
    index: int


class RebindEdit(EditBase):
    """``graph.rebind(node, param, arg)``; arg null unbinds."""

    op: Literal["rebind"]
    node: str
    param: str
    arg: str | None


class RenameEdit(EditBase):
    """``graph.rename(node, name)``"""

    op: Literal["rename"]
    node: str
    name: str


class SetRepeatEdit(EditBase):
    """``graph.set_repeat(node, repeat)``"""

    op: Literal["set_repeat"]
    node: str
    repeat: int


class GroupEdit(EditBase):
    """``graph.group(nodes, name, repeat=)``: consecutive siblings into a new sequence."""

    op: Literal["group"]
    nodes: list[str]
    name: str
    repeat: NotRequired[Annotated[int, Default(1)]]


class NewArgEdit(EditBase):
    """``graph.declare(Arg(...))``, then ``graph.rebind(bind.node, bind.param, name)`` in the same undo step."""

    op: Literal["new_arg"]
    arg: ArgSpec
    bind: NotRequired[Annotated[BindTarget | None, Default(None)]]


class RenameArgEdit(EditBase):
    """``graph.rename_arg(arg, name)``: every binding to it follows the new name."""

    op: Literal["rename_arg"]
    arg: str
    name: str


class SetRoleEdit(EditBase):
    """``graph.set_role(arg, role)``"""

    op: Literal["set_role"]
    arg: str
    role: Role


class RedeclareEdit(EditBase):
    """``graph.redeclare(Arg(...))``: a declared arg's new spec (its shape or dims); bindings keep its name."""

    op: Literal["redeclare"]
    arg: ArgSpec


class RemoveArgEdit(EditBase):
    """``graph.remove_arg(arg)``: refused while a dispatch binds it."""

    op: Literal["remove_arg"]
    arg: str


# --- the canvas's edits (direct manipulation on the node editor) ---


class PlaceEdit(EditBase):
    """Put nodes at canvas positions (a drag, or Tidy storing the whole layout): one undo step."""

    op: Literal["place"]
    positions: dict[str, list[float]]
    """``[x, y]`` by node id."""
    group: NotRequired[Annotated[str | None, Default(None)]]
    """The group (sequence, loop, conditional) dragged as a whole: ``positions`` are its members', every
    member with a saved position among them, so they keep their offsets (null: nodes placed one by one)."""


class RemoveNodesEdit(EditBase):
    """Delete several nodes in one undo step (a box selection, Delete)."""

    op: Literal["remove_nodes"]
    nodes: list[str]


class PasteEdit(EditBase):
    """Duplicate nodes with their bindings (copy/paste, duplicate), under unique names."""

    op: Literal["paste"]
    nodes: list[str]
    into: NotRequired[Annotated[str | None, Default(None)]]
    """The container to paste into (null: the top level)."""
    index: NotRequired[Annotated[int | None, Default(None)]]
    """Position of the first copy there (null: at the end)."""
    dx: NotRequired[Annotated[float | None, Default(None)]]
    """How far right of its original each copy lands on the canvas, px (null: a small step)."""
    dy: NotRequired[Annotated[float | None, Default(None)]]
    """How far below its original each copy lands on the canvas, px (null: a small step)."""


class AcceptGuessEdit(EditBase):
    """Accept a binding the editor guessed (``param`` null: all of the node's)."""

    op: Literal["accept_guess"]
    node: str
    param: NotRequired[Annotated[str | None, Default(None)]]


EditMessage = (
    DispatchEdit
    | RemoveEdit
    | MoveEdit
    | RebindEdit
    | RenameEdit
    | SetRepeatEdit
    | GroupEdit
    | NewArgEdit
    | RenameArgEdit
    | SetRoleEdit
    | RedeclareEdit
    | RemoveArgEdit
    | PlaceEdit
    | RemoveNodesEdit
    | PasteEdit
    | AcceptGuessEdit
)
"""An edit: one call on the graph's editing API, told apart by its ``op``."""

# --- the panels engineer's block: structure edits (loop/cond forms) and the values panel ---------------


class MakeLoopEdit(EditBase):
    """``graph.loop(body, ...)`` around ``nodes`` (consecutive siblings, moved into the new sequence ``body``),
    in their place; no nodes: an empty body at ``index`` of ``into``. One undo step."""

    op: Literal["make_loop"]
    nodes: list[str]
    body: str
    """The new sequence that holds the loop's body."""
    mode: Literal["while", "count"]
    flag: NotRequired[Annotated[str | None, Default(None)]]
    """``while``: the one-element i32 ndarray arg read after iterations (non-zero: again)."""
    count: NotRequired[Annotated[str | None, Default(None)]]
    """``count``: the scalar i32 arg that says how many times the body runs."""
    max_iter: NotRequired[Annotated[int | None, Default(None)]]
    check_every: NotRequired[Annotated[int, Default(1)]]
    guarded: NotRequired[Annotated[bool, Default(False)]]
    name: NotRequired[Annotated[str, Default("loop")]]
    into: NotRequired[Annotated[str | None, Default(None)]]
    index: NotRequired[Annotated[int | None, Default(None)]]


class MakeCondEdit(EditBase):
    """``graph.cond(flag, then, else_)`` with ``nodes`` (consecutive siblings) moved into the new sequence
    ``body`` as the then branch, in their place; no nodes: empty branches at ``index`` of ``into``."""

    op: Literal["make_cond"]
    nodes: list[str]
    body: str
    """The new sequence of the then branch."""
    flag: str
    """The one-element i32 ndarray arg read on the host: non-zero runs ``then``."""
    else_body: NotRequired[Annotated[str | None, Default(None)]]
    """A new, empty sequence for the else branch (null: no else branch)."""
    name: NotRequired[Annotated[str, Default("cond")]]
    into: NotRequired[Annotated[str | None, Default(None)]]
    index: NotRequired[Annotated[int | None, Default(None)]]


StructureEdit = MakeLoopEdit | MakeCondEdit
"""The edits that wrap nodes in a loop or a conditional (the loop form's)."""

ValueFill = Literal["zeros", "random"]
"""How the values panel fills an ndarray it allocates."""


class ValueScalar(TypedDict):
    """Give a scalar arg its run value."""

    kind: Literal["values"]
    request: int
    op: Literal["scalar"]
    arg: str
    value: float


class ValueAllocate(TypedDict):
    """Allocate an ndarray arg's run value of ``shape`` (field dims), zeros or uniform in [0, 1) from ``seed``."""

    kind: Literal["values"]
    request: int
    op: Literal["allocate"]
    arg: str
    shape: list[int]
    fill: NotRequired[Annotated[ValueFill, Default("zeros")]]
    seed: NotRequired[Annotated[int, Default(0)]]


class ValueVariable(TypedDict):
    """Use a notebook variable (by name, in IPython's user namespace) as an arg's run value."""

    kind: Literal["values"]
    request: int
    op: Literal["variable"]
    arg: str
    variable: str


class ValueDim(TypedDict):
    """Give a symbolic dim its size by name (``m=64``, as ``run(m=64)`` takes it), for the temps that no given
    value sizes; a null size forgets it."""

    kind: Literal["values"]
    request: int
    op: Literal["dim"]
    dim: str
    size: int | None


class ValueClear(TypedDict):
    """Forget an arg's run value."""

    kind: Literal["values"]
    request: int
    op: Literal["clear"]
    arg: str


ValuesMessage = ValueScalar | ValueAllocate | ValueVariable | ValueClear | ValueDim
"""The values panel's messages: the run values Debug, Export and Compare use."""

DebugAction = Literal["step", "step_over", "continue", "back", "restart", "find_nonfinite", "stop"]
"""How the debugger moves a running session (``stop`` ends it)."""


class DebugStart(TypedDict):
    """Start a session with the values the editor was given (``gl.editor(g, values=...)``)."""

    kind: Literal["debug"]
    request: int
    action: Literal["start"]
    bounds: NotRequired[Annotated[Bounds, Default("trust")]]
    """``check``: run the graph once first in a child process under Taichi's bounds checks, and open no
    session if a dispatch indexes an ndarray out of bounds (``g.debug(..., bounds="check")``)."""


class DebugControl(TypedDict):
    """Move the session (the debugger's messages name the session they were made for; another one
    refuses them as stale)."""

    kind: Literal["debug"]
    request: int
    action: DebugAction
    session: int


class DebugGoto(TypedDict):
    """Travel to a position 0..total (the timeline)."""

    kind: Literal["debug"]
    request: int
    action: Literal["goto"]
    session: int
    target: int


class DebugCompare(TypedDict):
    """Run the session's graph from its start values here and on another arch (or an exported module's
    folder) and stop before the first dispatch where they disagree (``DebugSession.compare``)."""

    kind: Literal["debug"]
    request: int
    action: Literal["compare"]
    session: int
    against: str
    """An arch name, or the folder of a module ``gl.export`` wrote."""
    rtol: NotRequired[Annotated[float, Default(0.0)]]
    atol: NotRequired[Annotated[float, Default(0.0)]]
    """Tolerances as in ``numpy.isclose``; both 0: bit for bit."""
    timeout: NotRequired[Annotated[float, Default(600.0)]]
    """Seconds the other arch's process may take over one command (start, a span, a dispatch)."""


class DebugPrepareCompare(TypedDict):
    """Start the other arch's process now (``DebugSession.prepare_compare``), as the user picks the arch
    in the "Compare with..." form, so that the comparison pays only the search."""

    kind: Literal["debug"]
    request: int
    action: Literal["prepare_compare"]
    session: int
    against: str


DebugMessage = DebugStart | DebugControl | DebugGoto | DebugCompare | DebugPrepareCompare
"""The debugger's messages, told apart by their ``action``."""


class BreakpointToggle(TypedDict):
    """Set, or remove, the location breakpoint on a node, sequence or step id."""

    kind: Literal["breakpoint"]
    request: int
    op: Literal["toggle"]
    session: int
    node: str


class BreakpointCondition(TypedDict):
    """Stop when an expression over the buffers holds, checked after every repetition or dispatch."""

    kind: Literal["breakpoint"]
    request: int
    op: Literal["condition"]
    session: int
    expression: str
    every: NotRequired[Annotated[Every, Default("repetition")]]


class BreakpointRemove(TypedDict):
    """Remove a breakpoint by its id."""

    kind: Literal["breakpoint"]
    request: int
    op: Literal["remove"]
    session: int
    id: int


BreakpointMessage = BreakpointToggle | BreakpointCondition | BreakpointRemove


class WatchAdd(TypedDict):
    """Watch an expression over the buffers."""

    kind: Literal["watch"]
    request: int
    op: Literal["add"]
    session: int
    expression: str


class WatchRemove(TypedDict):
    """Stop watching an expression."""

    kind: Literal["watch"]
    request: int
    op: Literal["remove"]
    session: int
    expression: str


WatchMessage = WatchAdd | WatchRemove


class InspectMessage(TypedDict):
    """Choose what the inspect panel shows."""

    kind: Literal["inspect"]
    request: int
    session: int
    buffer: str
    component: NotRequired[Annotated[int | None, Default(None)]]
    """A component index, or null for the element's norm."""
    page: NotRequired[Annotated[int, Default(0)]]
    slice: NotRequired[Annotated[list[int] | None, Default(None)]]
    """For a 3-D or higher buffer: the leading indexes of the 2-D slice pictured (null: the first)."""


class ExportMessage(TypedDict):
    """Export the graph (``gl.export``), then verify the module (``gl.verify``)."""

    kind: Literal["export"]
    request: int
    arch: ExportArch
    path: str
    overwrite: NotRequired[Annotated[bool, Default(False)]]
    verify: NotRequired[Annotated[bool, Default(True)]]
    cpu_threads: NotRequired[Annotated[int | None, Default(None)]]
    dims: NotRequired[Annotated[dict[str, int], Default({})]]
    """Sizes of symbolic dims, by name."""


PanelMessage = DebugMessage | BreakpointMessage | WatchMessage | InspectMessage | ExportMessage | ValuesMessage
"""The debug, inspect, export and values panels' messages; each carries a request number the reply echoes."""


class UndoMessage(TypedDict):
    """Undo the last edit."""

    kind: Literal["undo"]
    request: NotRequired[int]


class RedoMessage(TypedDict):
    """Redo the last undone edit."""

    kind: Literal["redo"]
    request: NotRequired[int]


class SelectMessage(TypedDict):
    """Select a node (null or "" clears the selection)."""

    kind: Literal["select"]
    node: str | None
    request: NotRequired[int]


ClientMessage = EditMessage | StructureEdit | UndoMessage | RedoMessage | SelectMessage | PanelMessage
"""Every message the front-end sends."""


# --- custom messages: Python -> front-end ----------------------------------------------------------------


class ReplyMessage(TypedDict):
    """The answer to a message: ``ok``, or why nothing was changed."""

    kind: Literal["reply"]
    request: int | None
    ok: bool
    error: str | None


ServerMessage = ReplyMessage
"""Every message Python sends."""
