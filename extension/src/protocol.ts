/**
 * The wire contract between `graphlab.widget.GraphEditor` (Python) and this front-end.
 *
 * Synced traits carry state (Python is the single writer, except `error`, which the banner may
 * clear). Custom messages carry intents: the front-end never edits the graph itself, it asks
 * Python, which edits the model through its API and sends the new state back as traits. Keep this
 * file and `graphlab/widget/editor.py` (the trait declarations) and `graphlab/widget/messages.py`
 * (the message checks) in step.
 */

// --- traits: Python -> front-end ---------------------------------------------------------------

export type ArgKind = "scalar" | "ndarray" | "matrix" | "texture" | "rw_texture";
export type ParamKind = ArgKind | "template" | "struct" | "unknown";
export type Role = "input" | "output" | "state" | "temp";
export type Severity = "error" | "warning" | "info";

/** A symbolic arg of the graph (`graphlab.spec.Arg`). */
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
  /** `ndarray vec2 f32, ndim=1` */
  label: string;
}

/** A kernel parameter (`graphlab.kernels.Param`); null fields are left open by the annotation. */
export interface ParamView {
  name: string;
  kind: ParamKind;
  dtype: string | null;
  ndim: number | null;
  element_shape: number[] | null;
  fmt: string | null;
  label: string;
}

interface NodeBase {
  /** Path id: `init`, `substep/p2g`. */
  id: string;
  name: string;
  /** Id of the sequence use holding this node; null at the top level. */
  parent: string | null;
  /** Position among its siblings. */
  index: number;
}

export interface DispatchView extends NodeBase {
  kind: "dispatch";
  /** `module:qualname` */
  kernel: string;
  kernel_name: string;
  params: ParamView[];
  /** Parameter name -> bound arg name (null: unbound), in parameter order. */
  bindings: Record<string, string | null>;
}

export interface SequenceView extends NodeBase {
  kind: "sequence";
  /** Name of the sequence definition this node uses. */
  sequence: string;
  repeat: number;
  children: string[];
}

export type NodeView = DispatchView | SequenceView;

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
}

/** One entry of the `palette` trait (`graphlab.kernels.KernelInfo`). */
export interface KernelView {
  name: string;
  ref: string;
  params: ParamView[];
  returns: boolean;
  dispatchable: boolean;
  why_not: string | null;
}

/** One entry of the `diagnostics` trait (`graphlab.diagnostics.Diagnostic`). */
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

/** Every synced trait of `GraphEditor`, by name. */
export interface Traits {
  graph: GraphView;
  palette: KernelView[];
  dot: string;
  diagnostics: DiagnosticView[];
  error: string;
  selected: string;
  history: HistoryView;
}

// --- custom messages: front-end -> Python --------------------------------------------------------

/** The spec of a new arg (`graphlab.spec.Arg`'s fields). */
export interface ArgSpec {
  name: string;
  kind: ArgKind;
  dtype: string | null;
  ndim: number;
  element_shape: number[];
  fmt: string | null;
  role: Role;
}

export type EditOp =
  /** `graph.insert(kernel, index=, into=, name=, bindings=)` */
  | {
      op: "dispatch";
      kernel: string;
      bindings: Record<string, string | null>;
      into: string | null;
      index: number | null;
      name: string | null;
    }
  /** `graph.remove(node)` */
  | { op: "remove"; node: string }
  /** `graph.move(node, index)`: a new position among its siblings. */
  | { op: "move"; node: string; index: number }
  /** `graph.rebind(node, param, arg)`; arg null unbinds. */
  | { op: "rebind"; node: string; param: string; arg: string | null }
  /** `graph.rename(node, name)` */
  | { op: "rename"; node: string; name: string }
  /** `graph.set_repeat(node, repeat)` */
  | { op: "set_repeat"; node: string; repeat: number }
  /** `graph.group(nodes, name, repeat=)`: consecutive siblings into a new sequence. */
  | { op: "group"; nodes: string[]; name: string; repeat: number }
  /** `graph.declare(Arg(...))`, then `graph.rebind(bind.node, bind.param, name)` in the same undo step. */
  | { op: "new_arg"; arg: ArgSpec; bind: { node: string; param: string } | null };

export type EditOpName = EditOp["op"];

/** Every edit carries a request number that the reply echoes. */
export type EditMessage = { kind: "edit"; request: number } & EditOp;

export type ClientMessage =
  | EditMessage
  | { kind: "undo"; request?: number }
  | { kind: "redo"; request?: number }
  /** Select a node (null or "" clears the selection). */
  | { kind: "select"; node: string | null; request?: number };

// --- custom messages: Python -> front-end ---------------------------------------------------------

/** The answer to a message: `ok`, or why nothing was changed. */
export interface ReplyMessage {
  kind: "reply";
  request: number | null;
  ok: boolean;
  error: string | null;
}

export type ServerMessage = ReplyMessage;

/** Check an incoming custom message; anything else is ignored by the caller. */
export function parseServerMessage(content: unknown): ServerMessage | null {
  if (typeof content !== "object" || content === null) return null;
  const msg = content as Record<string, unknown>;
  if (msg.kind !== "reply" || typeof msg.ok !== "boolean") return null;
  const request = typeof msg.request === "number" ? msg.request : null;
  const error = typeof msg.error === "string" ? msg.error : null;
  return { kind: "reply", request, ok: msg.ok, error };
}

/** Empty values for every trait, used until the first sync arrives. */
export const EMPTY_GRAPH: GraphView = { name: "", version: 0, args: [], nodes: [], body: [] };
export const EMPTY_HISTORY: HistoryView = { undo: [], redo: [] };
