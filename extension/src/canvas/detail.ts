/**
 * How much of each node the canvas draws at a zoom, as node editors do when zoomed out: below a
 * zoom where the labels are too small to read (11 px ports, 13 px titles: under ~4 px on screen),
 * the nodes are drawn as plain boxes in their colours; in the overview of a large graph, where a node
 * is a few pixels wide, the bindings are left out too. Painting every label, port and binding of
 * 500 nodes on each frame of a pan is what dropped frames (bench/canvas_latency.py); the boxes keep
 * their place, so a click, a drag or a box selection works the same at every level.
 */

export type Detail = "full" | "boxes" | "overview";

/** Below this zoom the labels, ports and handles are not drawn (a 13 px title is under 4 px). */
export const BOXES_BELOW = 0.3;
/** Below this zoom the bindings are not drawn either (a 150 px node is under 15 px wide). */
export const OVERVIEW_BELOW = 0.1;

export function detailAt(zoom: number): Detail {
  if (zoom < OVERVIEW_BELOW) return "overview";
  if (zoom < BOXES_BELOW) return "boxes";
  return "full";
}

const RANK: Record<Detail, number> = { overview: 0, boxes: 1, full: 2 };

/**
 * The detail to draw now: less detail at once, as soon as the zoom asks for it (each frame of a zoom
 * out gets cheaper), but more detail only when the view stops moving: drawing a hundred nodes' labels
 * in the middle of a zoom is what would drop a frame, and nobody reads them while the view moves.
 */
export function nextDetail(current: Detail, zoom: number, moving: boolean): Detail {
  const wanted = detailAt(zoom);
  return moving && RANK[wanted] > RANK[current] ? current : wanted;
}

/** What the canvas says while it leaves something out, so nobody takes a hidden binding for a missing one. */
export function detailNote(detail: Detail): string | null {
  if (detail === "overview") return "Zoomed out: labels show from 30% zoom, bindings from 10%";
  if (detail === "boxes") return "Zoomed out: labels show from 30% zoom";
  return null;
}
