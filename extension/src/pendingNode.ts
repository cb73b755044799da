/**
 * Where the canvas draws a dispatch that is being added (a dashed "adding <kernel>..." box shown
 * at once, while Python analyses the kernel and the new drawing is laid out): below the node it
 * will follow, or at the bottom of the container it goes into. The drawing runs top to bottom in
 * program order (render.py's `rankdir=TB`), so that is where the new node lands.
 */

import type { Rect } from "./minimap";
import type { NodeIndex } from "./selection";

/** The drawn node the pending one is placed against, and how. */
export interface PendingAnchor {
  /** A node or cluster id of the drawing; null: none (an empty graph or container not drawn). */
  id: string | null;
  /** `below`: under that node; `inside`: at the bottom inside that (empty) cluster. */
  mode: "below" | "inside";
}

/** Size of the pending box, in drawing units (about a one-line dispatch). */
export const PENDING_SIZE = { width: 150, height: 34 };
/** Room between the node above and the pending box (about Graphviz's `ranksep`). */
const GAP = 18;

/** What the new dispatch goes after, from `insertionPoint`'s `into` and `index`. */
export function pendingAnchor(index: NodeIndex, into: string | null, at: number | null): PendingAnchor {
  const siblings = into === null ? index.graph.body : containerChildren(index, into);
  const before = at === null ? siblings.at(-1) : siblings[at - 1];
  if (before !== undefined) return { id: before, mode: "below" };
  if (into !== null) return { id: into, mode: "inside" };
  return { id: null, mode: "below" };
}

function containerChildren(index: NodeIndex, id: string): readonly string[] {
  const node = index.get(id);
  return node && node.kind !== "dispatch" ? node.children : [];
}

/**
 * The pending box in drawing units, given the anchor's box (null: centre it on `centre`, a point of
 * the drawing such as the middle of the view).
 */
export function pendingBox(anchor: Rect | null, mode: PendingAnchor["mode"], centre: { x: number; y: number }): Rect {
  const { width, height } = PENDING_SIZE;
  if (anchor === null) return { x: centre.x - width / 2, y: centre.y - height / 2, width, height };
  const x = anchor.x + anchor.width / 2 - width / 2;
  if (mode === "inside") return { x, y: anchor.y + Math.max(GAP, anchor.height - height - 8), width, height };
  return { x, y: anchor.y + anchor.height + GAP, width, height };
}
