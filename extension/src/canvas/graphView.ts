/**
 * What the canvas draws besides the graph itself, shared by the app, the debugger's marks and the
 * panels: the debugger's marks on nodes, and the text of a failure. The canvas is `canvas/` (React
 * Flow); Graphviz stays for `g.render()`, static output and the file viewer.
 */

/** What the debugger draws on the graph (ids are drawn ids: nodes and sequence clusters). */
export interface DebugMarks {
  active: boolean;
  /** The node of the next dispatch. */
  current: string | null;
  /** Ids with a location breakpoint. */
  breakpoints: ReadonlySet<string>;
  /** Node id -> error text of its last fault. */
  faults: ReadonlyMap<string, string>;
  /** Node id -> [short time text, tooltip]. */
  times: ReadonlyMap<string, readonly [string, string]>;
  /** The node that first wrote NaN/Inf. */
  nonfinite: string | null;
  /** The node where a "Compare with..." found the two runs first disagree, and the sentence saying so. */
  diverged: readonly [string, string] | null;
}

export const NO_MARKS: DebugMarks = {
  active: false,
  current: null,
  breakpoints: new Set(),
  faults: new Map(),
  times: new Map(),
  nonfinite: null,
  diverged: null,
};
