/**
 * The front-end's view of the undo history.
 *
 * Python holds the real history (`Graph.snapshot()`/`restore()` in `graphlab.widget.history`) and
 * syncs its labels in the `history` trait. Between sending an undo or redo and hearing back, this
 * stack shows the request as already done, so the buttons, their tooltips and repeated Ctrl+Z
 * presses never ask for more steps than exist. A history sync from Python is the truth and drops
 * every request in flight (Python answers messages in order, so a sync covers all it has done);
 * a reply drops its own request (an undo that changed nothing leaves the history as it was).
 */

import type { HistoryView } from "../wire/protocol";

export type UndoOp = "undo" | "redo";

interface InFlight {
  request: number;
  op: UndoOp;
}

export class UndoStack {
  private base: HistoryView = { undo: [], redo: [] };
  private inflight: InFlight[] = [];

  /** Take Python's history as it now is. */
  sync(history: HistoryView): void {
    this.base = { undo: [...history.undo], redo: [...history.redo] };
    this.inflight = [];
  }

  /**
   * Record an undo or redo about to be sent as `request`; false (and nothing recorded) when the
   * history, with what is already in flight, has nothing to undo or redo.
   */
  request(op: UndoOp, request: number): boolean {
    if (op === "undo" ? !this.canUndo : !this.canRedo) return false;
    this.inflight.push({ request, op });
    return true;
  }

  /** Python answered `request`; it no longer counts as in flight. */
  settle(request: number): void {
    this.inflight = this.inflight.filter((entry) => entry.request !== request);
  }

  /** The history as it will be once the requests in flight are done (the next step last). */
  get view(): HistoryView {
    const undo = [...this.base.undo];
    const redo = [...this.base.redo];
    for (const { op } of this.inflight) {
      const [from, to] = op === "undo" ? [undo, redo] : [redo, undo];
      const label = from.pop();
      if (label !== undefined) to.push(label);
    }
    return { undo, redo };
  }

  get canUndo(): boolean {
    return this.view.undo.length > 0;
  }

  get canRedo(): boolean {
    return this.view.redo.length > 0;
  }

  /** What the next undo would undo ("rename p2g -> g2p"), or null. */
  get undoLabel(): string | null {
    return this.view.undo.at(-1) ?? null;
  }

  /** What the next redo would redo, or null. */
  get redoLabel(): string | null {
    return this.view.redo.at(-1) ?? null;
  }

  get pending(): number {
    return this.inflight.length;
  }
}
