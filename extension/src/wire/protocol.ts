/**
 * The wire contract between `graphlab.widget.GraphEditor` (Python) and this front-end.
 *
 * Its types (the synced traits, the custom messages both ways) are declared once, in Python
 * (`graphlab/widget/protocol.py`), and generated into `protocol.gen.ts` by
 * `python -m graphlab.widget.protocol_ts --write`; a Python test fails when that file is stale. This
 * file re-exports them and adds what only the front-end needs: the edit payload the app builds, the
 * reply parser and the traits' values until the first sync. Import the wire types from here.
 */

import type {
  DebugView,
  EditMessage,
  ExportView,
  GraphView,
  HistoryView,
  InspectView,
  ServerMessage,
  StructureEdit,
  ValuesMessage,
  ValuesView,
} from "./protocol.gen";

export type * from "./protocol.gen";

/** `Omit` on each member of a union (a plain `Omit` would merge the members into one type). */
type OmitEach<U, K extends PropertyKey> = U extends unknown ? Omit<U, K> : never;

/** An edit as the app builds it: an edit message without the `kind` and `request` added when it is sent. */
export type EditOp = OmitEach<EditMessage | StructureEdit, "kind" | "request">;

/** A values panel message as the panel builds it (the app adds `kind` and `request`). */
export type ValuesOp = OmitEach<ValuesMessage, "kind" | "request">;

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
export const EMPTY_GRAPH: GraphView = { name: "", version: 0, args: [], nodes: [], body: [], layout: {} };
export const EMPTY_HISTORY: HistoryView = { undo: [], redo: [] };
export const EMPTY_DEBUG: DebugView = {
  session: 0,
  active: false,
  ended: "",
  position: null,
  reason: null,
  message: "",
  note: "",
  breakpoints: [],
  watches: [],
  fault: null,
  faults: [],
  nonfinite: null,
  timing: [],
  buffers: [],
  decisions: [],
  compare: {
    run: 0,
    state: "idle",
    archs: [],
    against: null,
    rtol: 0,
    atol: 0,
    stage: "",
    fraction: 0,
    divergence: null,
    error: null,
    seconds: 0,
  },
  bounds: { state: "idle", error: null, out_of_bounds: null, seconds: 0 },
};
export const EMPTY_INSPECT: InspectView = { session: 0, buffer: null };
export const EMPTY_EXPORT: ExportView = {
  run: 0,
  state: "idle",
  targets: ["x64", "vulkan", "cuda"],
  default_arch: "vulkan",
  default_path: "out/graph",
  arch: null,
  path: null,
  stage: "",
  fraction: 0,
  files: [],
  file_count: 0,
  result: "",
  verify: null,
  verify_error: null,
  error: null,
  seconds: 0,
};
export const EMPTY_VALUES: ValuesView = { entries: [], missing: [], dims: [], missing_dims: [], in_notebook: false };
