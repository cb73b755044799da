/**
 * What the UI components read (one immutable snapshot per change) and the actions they may ask
 * the app for. Components never talk to the model directly.
 */

import type { Badge } from "../logic/diagnostics";
import type {
  ArgView,
  DebugAction,
  DiagnosticView,
  EditOp,
  Every,
  ExportMessage,
  HistoryView,
  KernelView,
  Traits,
  ValuesOp,
} from "../wire/protocol";
import type { ValuesTarget } from "../logic/giveValue";
import type { NodeIndex } from "../logic/selection";
import type { Timeline } from "../logic/timeline";

/** The side panel's tabs. */
export type PanelTab = "node" | "debug" | "inspect" | "export" | "values";

/** What an export asks for (the export message without its kind and request number). */
export type ExportOptions = Omit<ExportMessage, "kind" | "request">;

export interface ViewState {
  traits: Traits;
  index: NodeIndex;
  /** The selected node (the `selected` trait), or null. */
  anchor: string | null;
  /** The arg whose buffer node was clicked (its editor is open), while no node is selected; else null. */
  arg: ArgView | null;
  /** Consecutive siblings selected with Shift, the anchor included; `[anchor]` normally. */
  range: string[];
  /** Undo history as it will be once requests in flight are answered. */
  history: HistoryView;
  badges: Map<string, Badge>;
  /** Diagnostics about the whole graph or about nodes not drawn. */
  unplaced: DiagnosticView[];
  /** Whether the drawing has a node or cluster with this id (graph nodes and `arg:<name>`). */
  isDrawn: (id: string) => boolean;
  /** Positions of the unrolled graph, for the debugger's timeline. */
  timeline: Timeline;
  /** The side panel's open tab. */
  tab: PanelTab;
  /** A panel request in flight (its buttons wait), by kind. */
  busy: ReadonlySet<string>;
  /** The Debug start's "check bounds first" option (sent as `bounds: "check"`). */
  checkBounds: boolean;
  /** A start with the bounds check is out (its reply not in yet): the panel says "Checking bounds...". */
  checkingStart: boolean;
}

export interface Actions {
  /** Ask Python for an edit; `label` names it in messages. */
  edit(op: EditOp): void;
  select(id: string | null, extend?: boolean): void;
  undo(): void;
  redo(): void;
  addDispatch(kernel: KernelView): void;
  group(ids: readonly string[]): void;
  move(id: string, by: -1 | 1): void;
  remove(id: string): void;
  fit(): void;
  zoom(factor: number): void;
  dismissError(): void;
  /** A debugger control on the session shown (`start` uses the values the editor was given). */
  debug(action: DebugAction | "start"): void;
  /** Set the Debug start's "check bounds first" option. */
  setCheckBounds(check: boolean): void;
  /** Travel to a position of the timeline. */
  goto(index: number): void;
  /** Run the session's graph here and on `against` (an arch or an exported module's folder); stop before the first divergence. */
  compare(against: string, rtol: number, atol: number, timeout: number): void;
  /** Start the process of a later comparison against the arch `against` now (picked in the form). */
  prepareCompare(against: string): void;
  toggleBreakpoint(node: string): void;
  addCondition(expression: string, every: Every): void;
  removeBreakpoint(id: number): void;
  watch(expression: string): void;
  unwatch(expression: string): void;
  /** Show a buffer (a component: null for the norm; a page of the value table; the 2-D slice of a 3-D buffer). */
  inspect(buffer: string, component: number | null, page: number, slice?: number[] | null): void;
  exportGraph(options: ExportOptions): void;
  showTab(tab: PanelTab): void;
  /** Give, allocate or clear a run value (the Values tab). */
  giveValue(op: ValuesOp): void;
  /** Open the Values tab at an arg's or a dim's row (null: at the top). */
  openValues(target: ValuesTarget): void;
  /** Open the loop form on these nodes (none: the selection, or an empty body). */
  makeLoop(ids: readonly string[]): void;
  /** Send the loop form's edit (its reply settles the form). */
  makeStructure(op: EditOp): void;
}
