/**
 * Generated from graphlab/widget/protocol.py by `python -m graphlab.widget.protocol_ts --write`; do not edit.
 *
 * The widget's wire protocol, declared once: the synced traits' payloads and the custom messages.
 *
 * Over 500 lines on purpose: it is only declarations, one record per payload and message, kept in one
 * module so the TypeScript generator and the message checks read a single source.
 *
 * Every record the notebook widget sends or receives is a `TypedDict` here, so the one declaration
 * serves both sides:
 *
 * - Python checks what the front-end sends against it (`graphlab.widget.messages` reads the
 *   fields, which are required and their defaults from these classes, and refuses anything else);
 * - the front-end's TypeScript types are generated from it (`graphlab.widget.protocol_ts` writes
 *   `extension/src/wire/protocol.gen.ts`; a test fails when the committed file is not what it writes).
 *
 * Synced traits carry state (Python is the single writer, except `error`, which the banner may
 * clear). Custom messages carry intents: the front-end never edits the graph itself, it asks Python,
 * which edits the model through its API and sends the new state back as traits. The debug, inspect and
 * export panels work the same way over a Python debug session and `gl.export`/`gl.verify`; arrays
 * (pictures, pages of values) travel as bytes, never JSON lists.
 *
 * Conventions the generator and the checks rely on: `__all__` lists the wire types in the order the
 * TypeScript declares them; `NotRequired[...]` marks a field that may be left out, and in a message
 * from the front-end it wraps `Annotated[type, Default(value)]`, the value Python assumes; a string
 * after a field or an alias documents it (it becomes the TypeScript doc comment). Records with a field
 * named like a Python keyword (`while`, `from`) use the functional `TypedDict("Name", {...})`
 * form. Vocabularies that belong to the model (arg kinds, roles, severities) are imported from the
 * modules that define them, so a new value shows up here by itself; the debugger's (stop reasons,
 * breakpoint kinds) are repeated here, because importing `graphlab.debug` would import Taichi with
 * the widget, and a test holds them equal.
 */

// --- traits: Python -> front-end ---------------------------------------------------------------------

/** The values of `graphlab.core.spec.ArgKind`. */
export type ArgKind = "scalar" | "ndarray" | "matrix" | "texture" | "rw_texture";

/** What a kernel parameter takes: an arg kind, or what no arg can bind (`ti.template()`, a struct). */
export type ParamKind = ArgKind | "template" | "struct" | "unknown";

/** The values of `graphlab.core.spec.Role`. */
export type Role = "input" | "output" | "state" | "temp";

/** The values of `graphlab.core.diagnostics.Severity`. */
export type Severity = "error" | "warning" | "info";

/** A symbolic arg of the graph (`graphlab.core.spec.Arg`). */
export interface ArgView {
  name: string;
  kind: ArgKind;
  dtype: string | null;
  ndim: number;
  element_shape: number[];
  fmt: string | null;
  role: Role;
  /** Declared shape: ints and symbolic dim names; null accepts any shape. */
  shape: (number | string)[] | null;
  /**
   * With no declared shape: lower bounds read from the kernels' loops (`[≥n]`, `[≥x.shape[0], ?]`), checked
   * before every run; null when nothing bounds it.
   */
  inferred_shape: string | null;
  /** `ndarray vec2 f32, ndim=1` */
  label: string;
}

/** A kernel parameter (`graphlab.model.kernels.Param`); null fields are left open by the annotation. */
export interface ParamView {
  name: string;
  kind: ParamKind;
  dtype: string | null;
  ndim: number | null;
  element_shape: number[] | null;
  fmt: string | null;
  label: string;
}

/** What every node of the `graph` trait has. */
export interface NodeBase {
  /** Path id: `init`, `substep/p2g`. */
  id: string;
  name: string;
  /** Id of the sequence use holding this node; null at the top level. */
  parent: string | null;
  /** Position among its siblings. */
  index: number;
}

/** A kernel dispatch. */
export interface DispatchView extends NodeBase {
  kind: "dispatch";
  /** `module:qualname` */
  kernel: string;
  kernel_name: string;
  params: ParamView[];
  /** Parameter name -> bound arg name (null: unbound), in parameter order. */
  bindings: Record<string, string | null>;
  /** What its kernel draws at random (`ti.random() in init, line 12`); left out when it draws nothing. */
  random?: string;
  /** Parameters whose binding the editor guessed by type (drawn dashed until accepted); left out when none. */
  guessed?: string[];
}

/** A use of a sequence definition, repeated `repeat` times. */
export interface SequenceView extends NodeBase {
  kind: "sequence";
  /** Name of the sequence definition this node uses. */
  sequence: string;
  repeat: number;
  children: string[];
}

/**
 * A loop: its body (a sequence definition) `count` times, or while the flag `while` is non-zero
 * (read after every `check_every`-th iteration; `guarded`: yet stopping where every read would).
 */
export interface LoopView {
  id: string;
  name: string;
  parent: string | null;
  index: number;
  kind: "loop";
  sequence: string;
  while: string | null;
  count: string | null;
  max_iter: number | null;
  check_every: number;
  guarded: boolean;
  children: string[];
}

/** A conditional on a one-element i32 flag; its children are its `branch` nodes (`then`, `else`). */
export interface CondView extends NodeBase {
  kind: "cond";
  flag: string;
  children: string[];
}

/** One branch of a conditional (`decide/then`): a container, not a node of the model. */
export interface BranchView extends NodeBase {
  kind: "branch";
  sequence: string;
  children: string[];
}

/** A node of the `graph` trait, told apart by its `kind`. */
export type NodeView = DispatchView | SequenceView | LoopView | CondView | BranchView;

/** Nodes that hold other nodes. */
export type ContainerView = SequenceView | LoopView | CondView | BranchView;

/** The `graph` trait: a JSON view of the model. */
export interface GraphView {
  name: string;
  /** Bumped by every edit (`Graph.version`). */
  version: number;
  args: ArgView[];
  /** Every node, depth first in program order. */
  nodes: NodeView[];
  /** Ids of the top-level nodes, in order. */
  body: string[];
  /** Canvas positions `[x, y]` by node id, of the nodes placed so far (`graphlab.model.layout`). */
  layout: Record<string, number[]>;
}

/** One entry of the `palette` trait (`graphlab.model.kernels.KernelInfo`). */
export interface KernelView {
  name: string;
  ref: string;
  params: ParamView[];
  returns: boolean;
  dispatchable: boolean;
  why_not: string | null;
}

/** One entry of the `diagnostics` trait (`graphlab.core.diagnostics.Diagnostic`). */
export interface DiagnosticView {
  code: string;
  severity: Severity;
  message: string;
  node: string | null;
  arg: string | null;
  hint: string | null;
}

/** The `history` trait: labels of what undo and redo would do, the next one last. */
export interface HistoryView {
  undo: string[];
  redo: string[];
}

// --- the debug panel: the `debugger` trait -----------------------------------------------------------

/** Why the session stopped (`graphlab.debug.report.StopReason`). */
export type StopReason = "step" | "breakpoint" | "condition" | "end" | "nonfinite" | "fault" | "start";

/** What a breakpoint stops at (`graphlab.debug.breakpoints.BreakKind`). */
export type BreakKind = "node" | "step" | "repetition" | "sequence" | "condition";

/** How often a condition is checked (`graphlab.debug.breakpoints.Every`). */
export type Every = "repetition" | "dispatch";

/** A number as JSON carries it; NaN and infinities travel as strings. */
export type Num = number | "nan" | "inf" | "-inf";

/** Where the session stands: `index` dispatches have run; `step_id` runs next (null at the end). */
export interface PositionView {
  index: number;
  total: number;
  step_id: string | null;
  /** Definition-level id of the next dispatch (`substep/p2g`): the node drawn as current. */
  node_id: string | null;
  last_step_id: string | null;
  /**
   * False while a graph with loops or conditionals has not run to its end in this session: `total`
   * then counts the steps recorded so far (the session records its timeline as it decides).
   */
  total_known: boolean;
}

/** A breakpoint of the session. */
export interface BreakpointView {
  id: number;
  kind: BreakKind;
  /** A node, step, repetition or sequence id; the expression of a condition. */
  target: string;
  every: Every | null;
  enabled: boolean;
  hits: number;
}

/** A dispatch that raised; the session stayed before it, its buffers restored. */
export interface FaultView {
  index: number;
  step_id: string;
  node_id: string;
  kernel: string;
  error: string;
}

/** The dispatch that first left NaN/Inf in a buffer (null step: there before the hunt). */
export interface NonfiniteView {
  step_id: string | null;
  node_id: string | null;
  buffer: string;
  nan: number;
  inf: number;
  first_index: number[] | null;
}

/** A node's stepped dispatches, summed (seconds). */
export interface NodeTimeView {
  node_id: string;
  kernel: string;
  calls: number;
  total_s: number;
  mean_s: number;
  share: number;
}

/** A control point the session passed: the flag the host read, and what it chose. */
export interface DecisionView {
  /** Dispatches run before the read. */
  index: number;
  node_id: string;
  /** This run of the conditional or loop (`outer[1]/solve`). */
  scope: string;
  kind: "cond" | "loop";
  value: number;
  /** `then`, `else`, `skip`; `again`, `done`, `limit`. */
  outcome: string;
}

/** A watched expression and its value at the position. */
export interface WatchView {
  text: string;
  value: Num | boolean | null;
}

/** Where `DebugSession.compare` found the two runs first disagree (`Divergence.to_dict()`). */
export interface DivergenceView {
  kind: "buffer" | "control";
  /** This session's arch, then the other side's (an arch, or `module <folder>`). */
  archs: string[];
  /** The diverging step's index: the dispatches run before it (the session is moved there). */
  index: number;
  step_id: string | null;
  /** The node marked on the graph (null: the difference shows only at the end of the run). */
  node_id: string | null;
  buffer: string | null;
  first_index: number[] | null;
  /** Both sides' values at `first_index` (this session's first). */
  values: (Num | boolean | null)[] | null;
  count: number;
  size: number;
  max_abs: Num;
  max_rel: Num;
  control_node: string | null;
  decisions: string[] | null;
  /**
   * Set when the dispatch that differs draws random numbers (`ti.random`): the two sides drew other
   * numbers, not a value divergence.
   */
  random: string | null;
  /** The divergence in a sentence. */
  text: string;
  /** The absolute difference drawn (a `data:` URL of a PNG heat map or an SVG line plot), or null. */
  picture: string | null;
}

/** The debug panel's "Compare with..." run: its progress, then the divergence or the error. */
export interface CompareView {
  /** Comparisons are numbered from 1 (0: none yet in this session). */
  run: number;
  state: "idle" | "running" | "done" | "failed";
  /** The archs the other side can run on (`against` may also be an exported module's folder). */
  archs: string[];
  against: string | null;
  rtol: number;
  atol: number;
  stage: string;
  fraction: number;
  /** Null with `state` done: the two runs agree to the end. */
  divergence: DivergenceView | null;
  error: string | null;
  seconds: number;
}

/** The values of `graphlab.run.boundscheck.Bounds`. */
export type Bounds = "trust" | "check";

/** Where the checked run found an index out of bounds (the fields of `gl.OutOfBoundsError`). */
export interface OutOfBoundsView {
  /** The dispatch's node id (marked on the graph). */
  node: string | null;
  step: string | null;
  arg: string | null;
  param: string | null;
  index: number[];
  /** The arg's field dims in that run (null when unknown). */
  shape: number[] | null;
}

/**
 * The checked start (Debug with "check bounds first", `bounds="check"`): a run of the graph in a child
 * process under Taichi's bounds checks before the session opens; `idle` when the last start was unchecked.
 */
export interface BoundsCheckView {
  state: "idle" | "checking" | "passed" | "failed";
  /**
   * Why the checked start failed (`OutOfBoundsError: ...` names the dispatch, arg and index); no session
   * started.
   */
  error: string | null;
  /** Set when the failure is an index out of bounds. */
  out_of_bounds: OutOfBoundsView | null;
  seconds: number;
}

/** The `debugger` trait: the session the panel shows (`active` false when none runs). */
export interface DebugView {
  /** Sessions are numbered from 1; panel messages name the number they were made for. */
  session: number;
  active: boolean;
  /** Why the last session ended ("" while one runs). */
  ended: string;
  position: PositionView | null;
  reason: StopReason | null;
  /** One line about the last stop. */
  message: string;
  note: string;
  breakpoints: BreakpointView[];
  watches: WatchView[];
  fault: FaultView | null;
  /** The last fault of each node that raised in this session. */
  faults: FaultView[];
  nonfinite: NonfiniteView | null;
  timing: NodeTimeView[];
  /** The buffers (ndarray args) that can be inspected. */
  buffers: string[];
  /** The latest control-flow decisions up to the position (graphs with loops or conditionals). */
  decisions: DecisionView[];
  /** The last "Compare with..." of this session. */
  compare: CompareView;
  /** The last start's bounds check (kept after a failed start, when no session runs). */
  bounds: BoundsCheckView;
}

// --- the inspect panel: `inspect` and its three byte traits ------------------------------------------

/** The values of `graphlab.widget.inspect_panel.PictureKind`. */
export type PictureKind = "heatmap" | "line" | "scatter" | "none";

/** Device statistics of a buffer or one of its components. */
export interface StatsView {
  label: string;
  count: number;
  finite: number;
  min: Num | null;
  max: Num | null;
  mean: Num | null;
  std: Num | null;
  nan: number;
  inf: number;
  zeros: number;
  first_nonfinite: number[] | null;
}

/**
 * The header of a picture's bytes: little-endian `dtype` values laid out as `shape` (heat map
 * `[h, w]`; line `[n, 2]` of (min, max) per bucket; scatter `[n, 2]` of (x, y)). `step` is the
 * source elements per value along each axis (downsampling); `origin` the fixed leading indexes of
 * a 2-D slice of a 3-D or higher field.
 */
export interface PictureView {
  kind: PictureKind;
  dtype: "f32" | "f64";
  shape: number[];
  step: number[];
  origin: number[];
  label: string;
  note: string;
}

/** How the buffer changed from position `from` to `to` (the previous position the session stood at). */
export interface DiffView {
  from: number;
  to: number;
  count: number;
  changed: number;
  max_abs: Num | null;
  max_rel: Num | null;
  nonfinite_mismatch: number;
  first_changed: number[] | null;
  picture: PictureView;
}

/** The header of `inspect_page`: `count` field elements from `offset`, each with `columns` f64 values. */
export interface PageView {
  page: number;
  pages: number;
  size: number;
  offset: number;
  count: number;
  total: number;
  columns: string[];
}

/** The `inspect` trait (`buffer` null: nothing to inspect; `problem` says why when known). */
export interface InspectView {
  session: number;
  buffer: string | null;
  problem?: string;
  position?: number;
  dtype?: string;
  shape?: number[];
  element_shape?: number[];
  last_writer?: string | null;
  /** The component pictured (flat index), or null for the element's norm. */
  component?: number | null;
  components?: string[];
  stats?: StatsView;
  component_stats?: StatsView[];
  picture?: PictureView;
  diff?: DiffView | null;
  page?: PageView;
}

// --- the export panel: the `export` trait ------------------------------------------------------------

/** A target of `gl.export(arch=)`. */
export type ExportArch = "x64" | "vulkan" | "cuda";

/**
 * `gl.verify`'s verdict: bit for bit; no larger than Python's own run-to-run difference where an atomic add
 * or a race can cause it; downstream of a `ti.random` draw; within `rtol` with nothing to explain it; beyond
 * all of these (fails).
 */
export type Verdict = "identical" | "within run-to-run noise" | "depends on ti.random" | "within rtol" | "differs";

/** How one output of the exported module compared with Python's. */
export interface OutputDiffView {
  name: string;
  dtype: string;
  shape: number[];
  max_abs: number;
  max_rel: number;
  /** Max abs difference of Python against a second run of itself (null: not measured). */
  noise: number | null;
  mismatched: number;
  passed: boolean;
  verdict: Verdict;
}

/** The verdict of `gl.verify` on the exported module. */
export interface VerifyView {
  passed: boolean;
  identical: boolean;
  verdict: Verdict;
  /** The report as text (`str(gl.verify(...))`). */
  text: string;
  outputs: OutputDiffView[];
  notes: string[];
}

/** The `export` trait: the export panel's state, progress, files written and verification. */
export interface ExportView {
  /** Exports are numbered from 1 (0: none yet). */
  run: number;
  state: "idle" | "running" | "done" | "failed";
  targets: ExportArch[];
  default_arch: ExportArch;
  default_path: string;
  arch: ExportArch | null;
  path: string | null;
  stage: string;
  /** 0..1 over export and verification. */
  fraction: number;
  /** Files written, relative to `path` (the first 200). */
  files: string[];
  /** How many files were written (`result` counts the same ones). */
  file_count: number;
  result: string;
  verify: VerifyView | null;
  /** The module was written but verification could not run: why, and how to fix it. */
  verify_error: string | null;
  /** The export failed (nothing written): why. */
  error: string | null;
  seconds: number;
}

// --- the values panel: the `values` trait ------------------------------------------------------------

/** One run value the graph takes, as the values panel lists it. */
export interface ValueEntryView {
  arg: string;
  kind: ArgKind;
  dtype: string | null;
  role: Role;
  /** The arg's declared shape (ints and dim names), null when it declares none. */
  shape: (number | string)[] | null;
  ndim: number;
  /** False for what the run allocates itself (temps with a known shape) and for an arg no node uses. */
  needed: boolean;
  given: boolean;
  /** What was given: `2.5`, `f32 ndarray 64 x 3, zeros`, `notebook variable x0`; "" when nothing. */
  summary: string;
}

/** The `values` trait: the run values the graph needs, what is given and what is missing. */
export interface ValuesView {
  entries: ValueEntryView[];
  /** The args Debug would refuse for want of a value, in the graph's order. */
  missing: string[];
  /** The symbolic dims of the args the nodes use, in order of first use. */
  dims: DimEntryView[];
  /** The dims Debug would refuse for want of a size (`needed` ones), in that order. */
  missing_dims: string[];
  /** Whether notebook variables can be used (false outside IPython). */
  in_notebook: boolean;
}

/** One symbolic dim of the args' shapes (`m` of `shape=("m",)`), as the values panel lists it. */
export interface DimEntryView {
  dim: string;
  /** Its size in a run: given by name, or set by a given value's shape; null while unknown. */
  size: number | null;
  /** Whether the size was given by name (`m=64`), as `run(m=64)` takes it. */
  given: boolean;
  /** The arg whose given value sizes it (then it needs no size by name), or null. */
  set_by: string | null;
  /** The args whose declared shapes name it. */
  args: string[];
  /** Whether Debug would refuse for want of it: a temp the run allocates names it and nothing sizes it. */
  needed: boolean;
}

/** Every synced trait of `GraphEditor`, by name. Bytes arrive as a DataView (null until the first sync). */
export interface Traits {
  graph: GraphView;
  palette: KernelView[];
  dot: string;
  diagnostics: DiagnosticView[];
  error: string;
  selected: string;
  history: HistoryView;
  debugger: DebugView;
  inspect: InspectView;
  inspect_picture: DataView | null;
  inspect_diff: DataView | null;
  inspect_page: DataView | null;
  export: ExportView;
  values: ValuesView;
}

// --- custom messages: front-end -> Python ------------------------------------------------------------

/** The spec of a new arg (`graphlab.core.spec.Arg`'s fields). */
export interface ArgSpec {
  name: string;
  kind: ArgKind;
  /** Default: `null`. */
  dtype?: string | null;
  /** Default: `0`. */
  ndim?: number;
  /** Default: `[]`. */
  element_shape?: number[];
  /** Default: `null`. */
  fmt?: string | null;
  /** Default: `"state"`. */
  role?: Role;
  /** Ints and symbolic dim names; null accepts any shape. Default: `null`. */
  shape?: (number | string)[] | null;
}

/** The parameter a new arg is bound to. */
export interface BindTarget {
  node: string;
  param: string;
}

/** Every edit carries a request number that the reply echoes. */
export interface EditBase {
  kind: "edit";
  request: number;
}

/** `graph.insert(kernel, index=, into=, name=, bindings=)` */
export interface DispatchEdit extends EditBase {
  op: "dispatch";
  kernel: string;
  /** Default: `{}`. */
  bindings?: Record<string, string | null>;
  /** Default: `null`. */
  into?: string | null;
  /** Default: `null`. */
  index?: number | null;
  /** Default: `null`. */
  name?: string | null;
  /**
   * Parameters of `bindings` the front-end guessed by type: marked as suggestions, and dropped where
   * the guess would alias an arg another parameter of the dispatch is bound to. Default: `[]`.
   */
  guessed?: string[];
  /** Where the canvas places the new node (null: the canvas picks a free place). Default: `null`. */
  position?: number[] | null;
}

/** `graph.remove(node)` */
export interface RemoveEdit extends EditBase {
  op: "remove";
  node: string;
}

/** `graph.move(node, index)`: a new position among its siblings. */
export interface MoveEdit extends EditBase {
  op: "move";
  node: string;
  index: number;
}

/** `graph.rebind(node, param, arg)`; arg null unbinds. */
export interface RebindEdit extends EditBase {
  op: "rebind";
  node: string;
  param: string;
  arg: string | null;
}

/** `graph.rename(node, name)` */
export interface RenameEdit extends EditBase {
  op: "rename";
  node: string;
  name: string;
}

/** `graph.set_repeat(node, repeat)` */
export interface SetRepeatEdit extends EditBase {
  op: "set_repeat";
  node: string;
  repeat: number;
}

/** `graph.group(nodes, name, repeat=)`: consecutive siblings into a new sequence. */
export interface GroupEdit extends EditBase {
  op: "group";
  nodes: string[];
  name: string;
  /** Default: `1`. */
  repeat?: number;
}

/** `graph.declare(Arg(...))`, then `graph.rebind(bind.node, bind.param, name)` in the same undo step. */
export interface NewArgEdit extends EditBase {
  op: "new_arg";
  arg: ArgSpec;
  /** Default: `null`. */
  bind?: BindTarget | null;
}

/** `graph.rename_arg(arg, name)`: every binding to it follows the new name. */
export interface RenameArgEdit extends EditBase {
  op: "rename_arg";
  arg: string;
  name: string;
}

/** `graph.set_role(arg, role)` */
export interface SetRoleEdit extends EditBase {
  op: "set_role";
  arg: string;
  role: Role;
}

/** `graph.redeclare(Arg(...))`: a declared arg's new spec (its shape or dims); bindings keep its name. */
export interface RedeclareEdit extends EditBase {
  op: "redeclare";
  arg: ArgSpec;
}

/** `graph.remove_arg(arg)`: refused while a dispatch binds it. */
export interface RemoveArgEdit extends EditBase {
  op: "remove_arg";
  arg: string;
}

/** Put nodes at canvas positions (a drag, or Tidy storing the whole layout): one undo step. */
export interface PlaceEdit extends EditBase {
  op: "place";
  /** `[x, y]` by node id. */
  positions: Record<string, number[]>;
  /**
   * The group (sequence, loop, conditional) dragged as a whole: `positions` are its members', every
   * member with a saved position among them, so they keep their offsets (null: nodes placed one by one). Default: `null`.
   */
  group?: string | null;
}

/** Delete several nodes in one undo step (a box selection, Delete). */
export interface RemoveNodesEdit extends EditBase {
  op: "remove_nodes";
  nodes: string[];
}

/** Duplicate nodes with their bindings (copy/paste, duplicate), under unique names. */
export interface PasteEdit extends EditBase {
  op: "paste";
  nodes: string[];
  /** The container to paste into (null: the top level). Default: `null`. */
  into?: string | null;
  /** Position of the first copy there (null: at the end). Default: `null`. */
  index?: number | null;
  /** How far right of its original each copy lands on the canvas, px (null: a small step). Default: `null`. */
  dx?: number | null;
  /** How far below its original each copy lands on the canvas, px (null: a small step). Default: `null`. */
  dy?: number | null;
}

/** Accept a binding the editor guessed (`param` null: all of the node's). */
export interface AcceptGuessEdit extends EditBase {
  op: "accept_guess";
  node: string;
  /** Default: `null`. */
  param?: string | null;
}

/** An edit: one call on the graph's editing API, told apart by its `op`. */
export type EditMessage =
  | DispatchEdit
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
  | AcceptGuessEdit;

/**
 * `graph.loop(body, ...)` around `nodes` (consecutive siblings, moved into the new sequence `body`),
 * in their place; no nodes: an empty body at `index` of `into`. One undo step.
 */
export interface MakeLoopEdit extends EditBase {
  op: "make_loop";
  nodes: string[];
  /** The new sequence that holds the loop's body. */
  body: string;
  mode: "while" | "count";
  /** `while`: the one-element i32 ndarray arg read after iterations (non-zero: again). Default: `null`. */
  flag?: string | null;
  /** `count`: the scalar i32 arg that says how many times the body runs. Default: `null`. */
  count?: string | null;
  /** Default: `null`. */
  max_iter?: number | null;
  /** Default: `1`. */
  check_every?: number;
  /** Default: `false`. */
  guarded?: boolean;
  /** Default: `"loop"`. */
  name?: string;
  /** Default: `null`. */
  into?: string | null;
  /** Default: `null`. */
  index?: number | null;
}

/**
 * `graph.cond(flag, then, else_)` with `nodes` (consecutive siblings) moved into the new sequence
 * `body` as the then branch, in their place; no nodes: empty branches at `index` of `into`.
 */
export interface MakeCondEdit extends EditBase {
  op: "make_cond";
  nodes: string[];
  /** The new sequence of the then branch. */
  body: string;
  /** The one-element i32 ndarray arg read on the host: non-zero runs `then`. */
  flag: string;
  /** A new, empty sequence for the else branch (null: no else branch). Default: `null`. */
  else_body?: string | null;
  /** Default: `"cond"`. */
  name?: string;
  /** Default: `null`. */
  into?: string | null;
  /** Default: `null`. */
  index?: number | null;
}

/** The edits that wrap nodes in a loop or a conditional (the loop form's). */
export type StructureEdit = MakeLoopEdit | MakeCondEdit;

/** How the values panel fills an ndarray it allocates. */
export type ValueFill = "zeros" | "random";

/** Give a scalar arg its run value. */
export interface ValueScalar {
  kind: "values";
  request: number;
  op: "scalar";
  arg: string;
  value: number;
}

/** Allocate an ndarray arg's run value of `shape` (field dims), zeros or uniform in [0, 1) from `seed`. */
export interface ValueAllocate {
  kind: "values";
  request: number;
  op: "allocate";
  arg: string;
  shape: number[];
  /** Default: `"zeros"`. */
  fill?: ValueFill;
  /** Default: `0`. */
  seed?: number;
}

/** Use a notebook variable (by name, in IPython's user namespace) as an arg's run value. */
export interface ValueVariable {
  kind: "values";
  request: number;
  op: "variable";
  arg: string;
  variable: string;
}

/** Forget an arg's run value. */
export interface ValueClear {
  kind: "values";
  request: number;
  op: "clear";
  arg: string;
}

/**
 * Give a symbolic dim its size by name (`m=64`, as `run(m=64)` takes it), for the temps that no given
 * value sizes; a null size forgets it.
 */
export interface ValueDim {
  kind: "values";
  request: number;
  op: "dim";
  dim: string;
  size: number | null;
}

/** The values panel's messages: the run values Debug, Export and Compare use. */
export type ValuesMessage = ValueScalar | ValueAllocate | ValueVariable | ValueClear | ValueDim;

/** How the debugger moves a running session (`stop` ends it). */
export type DebugAction = "step" | "step_over" | "continue" | "back" | "restart" | "find_nonfinite" | "stop";

/** Start a session with the values the editor was given (`gl.editor(g, values=...)`). */
export interface DebugStart {
  kind: "debug";
  request: number;
  action: "start";
  /**
   * `check`: run the graph once first in a child process under Taichi's bounds checks, and open no
   * session if a dispatch indexes an ndarray out of bounds (`g.debug(..., bounds="check")`). Default: `"trust"`.
   */
  bounds?: Bounds;
}

/**
 * Move the session (the debugger's messages name the session they were made for; another one
 * refuses them as stale).
 */
export interface DebugControl {
  kind: "debug";
  request: number;
  action: DebugAction;
  session: number;
}

/** Travel to a position 0..total (the timeline). */
export interface DebugGoto {
  kind: "debug";
  request: number;
  action: "goto";
  session: number;
  target: number;
}

/**
 * Run the session's graph from its start values here and on another arch (or an exported module's
 * folder) and stop before the first dispatch where they disagree (`DebugSession.compare`).
 */
export interface DebugCompare {
  kind: "debug";
  request: number;
  action: "compare";
  session: number;
  /** An arch name, or the folder of a module `gl.export` wrote. */
  against: string;
  /** Default: `0.0`. */
  rtol?: number;
  /** Tolerances as in `numpy.isclose`; both 0: bit for bit. Default: `0.0`. */
  atol?: number;
  /** Seconds the other arch's process may take over one command (start, a span, a dispatch). Default: `600.0`. */
  timeout?: number;
}

/**
 * Start the other arch's process now (`DebugSession.prepare_compare`), as the user picks the arch
 * in the "Compare with..." form, so that the comparison pays only the search.
 */
export interface DebugPrepareCompare {
  kind: "debug";
  request: number;
  action: "prepare_compare";
  session: number;
  against: string;
}

/** The debugger's messages, told apart by their `action`. */
export type DebugMessage = DebugStart | DebugControl | DebugGoto | DebugCompare | DebugPrepareCompare;

/** Set, or remove, the location breakpoint on a node, sequence or step id. */
export interface BreakpointToggle {
  kind: "breakpoint";
  request: number;
  op: "toggle";
  session: number;
  node: string;
}

/** Stop when an expression over the buffers holds, checked after every repetition or dispatch. */
export interface BreakpointCondition {
  kind: "breakpoint";
  request: number;
  op: "condition";
  session: number;
  expression: string;
  /** Default: `"repetition"`. */
  every?: Every;
}

/** Remove a breakpoint by its id. */
export interface BreakpointRemove {
  kind: "breakpoint";
  request: number;
  op: "remove";
  session: number;
  id: number;
}

export type BreakpointMessage = BreakpointToggle | BreakpointCondition | BreakpointRemove;

/** Watch an expression over the buffers. */
export interface WatchAdd {
  kind: "watch";
  request: number;
  op: "add";
  session: number;
  expression: string;
}

/** Stop watching an expression. */
export interface WatchRemove {
  kind: "watch";
  request: number;
  op: "remove";
  session: number;
  expression: string;
}

export type WatchMessage = WatchAdd | WatchRemove;

/** Choose what the inspect panel shows. */
export interface InspectMessage {
  kind: "inspect";
  request: number;
  session: number;
  buffer: string;
  /** A component index, or null for the element's norm. Default: `null`. */
  component?: number | null;
  /** Default: `0`. */
  page?: number;
  /** For a 3-D or higher buffer: the leading indexes of the 2-D slice pictured (null: the first). Default: `null`. */
  slice?: number[] | null;
}

/** Export the graph (`gl.export`), then verify the module (`gl.verify`). */
export interface ExportMessage {
  kind: "export";
  request: number;
  arch: ExportArch;
  path: string;
  /** Default: `false`. */
  overwrite?: boolean;
  /** Default: `true`. */
  verify?: boolean;
  /** Default: `null`. */
  cpu_threads?: number | null;
  /** Sizes of symbolic dims, by name. Default: `{}`. */
  dims?: Record<string, number>;
}

/** The debug, inspect, export and values panels' messages; each carries a request number the reply echoes. */
export type PanelMessage =
  DebugMessage | BreakpointMessage | WatchMessage | InspectMessage | ExportMessage | ValuesMessage;

/** Undo the last edit. */
export interface UndoMessage {
  kind: "undo";
  request?: number;
}

/** Redo the last undone edit. */
export interface RedoMessage {
  kind: "redo";
  request?: number;
}

/** Select a node (null or "" clears the selection). */
export interface SelectMessage {
  kind: "select";
  node: string | null;
  request?: number;
}

/** Every message the front-end sends. */
export type ClientMessage = EditMessage | StructureEdit | UndoMessage | RedoMessage | SelectMessage | PanelMessage;

// --- custom messages: Python -> front-end ------------------------------------------------------------

/** The answer to a message: `ok`, or why nothing was changed. */
export interface ReplyMessage {
  kind: "reply";
  request: number | null;
  ok: boolean;
  error: string | null;
}

/** Every message Python sends. */
export type ServerMessage = ReplyMessage;
