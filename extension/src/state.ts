/**
 * What the UI components read (one immutable snapshot per change) and the actions they may ask
 * the app for. Components never talk to the model directly.
 */

import type { Badge } from "./diagnostics";
import type { DiagnosticView, EditOp, HistoryView, KernelView, Traits } from "./protocol";
import type { NodeIndex } from "./selection";

export interface ViewState {
  traits: Traits;
  index: NodeIndex;
  /** The selected node (the `selected` trait), or null. */
  anchor: string | null;
  /** Consecutive siblings selected with Shift, the anchor included; `[anchor]` normally. */
  range: string[];
  /** Undo history as it will be once requests in flight are answered. */
  history: HistoryView;
  badges: Map<string, Badge>;
  /** Diagnostics about the whole graph or about nodes not drawn. */
  unplaced: DiagnosticView[];
  /** Whether the drawing has a node or cluster with this id (graph nodes and `arg:<name>`). */
  isDrawn: (id: string) => boolean;
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
}
