/**
 * The canvas's geometry, kept pure so it is tested without a browser: node sizes from measured
 * labels, where a node without a stored position goes (without moving any other), the boxes of
 * groups around what they hold, the minimap's corner away from the node in focus, and the part of
 * the canvas the drawers (palette, side panel) leave uncovered, which Fit and the selection use.
 */

import type { GraphView, NodeView } from "../wire/protocol";

export interface Point {
  x: number;
  y: number;
}
export interface Size {
  width: number;
  height: number;
}
export type Box = Point & Size;

/** Measures a label's width in px in the canvas's font (the browser's canvas 2-D `measureText`). */
export type Measure = (text: string, font: "title" | "port") => number;

/** Room around a label in its node, and between a port's label and its neighbours (px). */
export const PAD = 10;
export const TITLE_HEIGHT = 24;
export const PORT_HEIGHT = 22;
/** Space kept between nodes placed without a stored position. */
export const GAP = 28;
/** Room between a group's outline and what it holds; its title sits in the top margin. */
export const GROUP_PAD = 14;
export const GROUP_TITLE = 20;

/** The drawn id of an arg's node (`arg:x`), the same the diagnostics and the Graphviz drawing use. */
export function argId(name: string): string {
  return `arg:${name}`;
}

/** Whether a node of the `graph` trait holds others (drawn as a group). */
export function isContainer(node: NodeView): boolean {
  return node.kind !== "dispatch";
}

/** Program order numbers of the dispatches: 1, 2, 3... depth first, as the trait lists them. */
export function programNumbers(graph: GraphView): Map<string, number> {
  const numbers = new Map<string, number>();
  for (const node of graph.nodes) if (node.kind === "dispatch") numbers.set(node.id, numbers.size + 1);
  return numbers;
}

/** A dispatch's title: `3. p2g`. */
export function dispatchTitle(number: number | undefined, name: string): string {
  return number === undefined ? name : `${number}. ${name}`;
}

/** Sizes of the leaf nodes (dispatches, args) and of empty containers, from measured labels. */
export function nodeSizes(graph: GraphView, measure: Measure): Map<string, Size> {
  const numbers = programNumbers(graph);
  const sizes = new Map<string, Size>();
  for (const arg of graph.args) {
    const width = Math.max(measure(arg.name, "title"), measure(shortType(arg), "port")) + 2 * PAD;
    sizes.set(argId(arg.name), { width: Math.ceil(Math.max(width, 60)), height: TITLE_HEIGHT + PORT_HEIGHT });
  }
  for (const node of graph.nodes) {
    if (node.kind === "dispatch") {
      const title = measure(dispatchTitle(numbers.get(node.id), node.name), "title") + 2 * PAD;
      const ports = node.params.reduce((sum, p) => sum + measure(p.name, "port") + PAD, PAD);
      sizes.set(node.id, {
        width: Math.ceil(Math.max(title, ports, 80)),
        height: TITLE_HEIGHT + (node.params.length > 0 ? PORT_HEIGHT : 0),
      });
    } else if (node.children.length === 0) {
      sizes.set(node.id, { width: Math.ceil(measure(node.name, "title") + 2 * PAD), height: TITLE_HEIGHT + GROUP_PAD });
    }
  }
  return sizes;
}

/** An arg's short type: `f32[n, 2]`, `scalar i32`, `texture 2d`. */
export function shortType(arg: GraphView["args"][number]): string {
  if (arg.kind === "scalar") return `scalar ${arg.dtype ?? ""}`.trim();
  if (arg.kind === "texture" || arg.kind === "rw_texture") return `${arg.kind} ${arg.ndim}d`;
  const dims: (string | number)[] = arg.shape ?? Array.from({ length: arg.ndim }, () => "?");
  const all = [...dims, ...arg.element_shape];
  return `${arg.dtype ?? "?"}[${all.join(", ")}]`;
}

export function overlaps(a: Box, b: Box, margin = 0): boolean {
  return (
    a.x < b.x + b.width + margin &&
    b.x < a.x + a.width + margin &&
    a.y < b.y + b.height + margin &&
    b.y < a.y + a.height + margin
  );
}

/**
 * A place for a node of `size` near `near` (below it), moved right until it overlaps none of
 * `taken`: nothing already drawn moves.
 */
export function freeSpot(near: Point, size: Size, taken: readonly Box[]): Point {
  const spot = { x: near.x, y: near.y };
  for (let tries = 0; tries < 10_000; tries++) {
    const clash = taken.find((b) => overlaps({ ...spot, ...size }, b, GAP / 2));
    if (!clash) return spot;
    spot.x = clash.x + clash.width + GAP;
  }
  return spot;
}

/**
 * How far a paste of `copied` lands from the originals: beside the copied block on its right, at the
 * first place where the copy covers no box drawn now (`boxes`, by id; a copied group's members are the
 * ids under it). A copy that landed a few pixels off its original hid it and the groups around it.
 */
export function pasteOffset(copied: readonly string[], boxes: ReadonlyMap<string, Box>): { dx: number; dy: number } {
  const inside = (id: string): boolean => copied.some((c) => id === c || id.startsWith(`${c}/`));
  const block = [...boxes].filter(([id]) => inside(id)).map(([, b]) => b);
  if (block.length === 0) return { dx: GAP, dy: GAP };
  const bounds = boundsOf(block);
  const others = [...boxes].filter(([id]) => !inside(id)).map(([, b]) => b);
  const size = { width: bounds.width, height: bounds.height };
  const spot = freeSpot({ x: bounds.x + bounds.width + GAP, y: bounds.y }, size, [...block, ...others]);
  return { dx: spot.x - bounds.x, dy: spot.y - bounds.y };
}

/**
 * Positions for every leaf node: the stored ones, the ones laid out before (`known`), and a free
 * spot for each node that has neither: below the node before it in program order (or its
 * container's first place), args to the right of the other args. No node that has a place moves.
 */
export function placeAll(
  graph: GraphView,
  sizes: ReadonlyMap<string, Size>,
  stored: Readonly<Record<string, readonly number[]>>,
  known: ReadonlyMap<string, Point>,
): Map<string, Point> {
  const at = new Map<string, Point>();
  for (const id of sizes.keys()) {
    const s = stored[id];
    if (s && s.length === 2) at.set(id, { x: s[0]!, y: s[1]! });
    else if (known.has(id)) at.set(id, known.get(id)!);
  }
  const boxes = (): Box[] => [...at].map(([id, p]) => ({ ...p, ...(sizes.get(id) ?? { width: 0, height: 0 }) }));
  for (const arg of graph.args) {
    const id = argId(arg.name);
    if (at.has(id)) continue;
    const args = [...at].filter(([k]) => k.startsWith("arg:")).map(([, p]) => p);
    const top = args.length ? Math.min(...args.map((p) => p.y)) : 0;
    at.set(id, freeSpot({ x: 0, y: top }, sizes.get(id)!, boxes()));
  }
  const below = (id: string): Point => {
    const p = at.get(id);
    const s = sizes.get(id);
    if (p && s) return { x: p.x, y: p.y + s.height + GAP };
    const inside = leafIds(graph, id).filter((k) => at.has(k));
    if (inside.length === 0) return { x: 0, y: 0 };
    const box = boundsOf(inside.map((k) => ({ ...at.get(k)!, ...sizes.get(k)! })));
    return { x: box.x, y: box.y + box.height + GAP };
  };
  const argBottom = (): Point => {
    const args = graph.args.map((a) => argId(a.name)).filter((k) => at.has(k));
    if (args.length === 0) return { x: 0, y: 0 };
    return below(args.reduce((a, b) => (at.get(a)!.y >= at.get(b)!.y ? a : b)));
  };
  for (const node of graph.nodes) {
    if (!sizes.has(node.id) || at.has(node.id)) continue;
    const siblings = node.parent === null ? graph.body : childrenOf(graph, node.parent);
    const before = siblings[siblings.indexOf(node.id) - 1];
    const near = before !== undefined ? below(before) : node.parent !== null ? parentStart(node.parent) : argBottom();
    at.set(node.id, freeSpot(near, sizes.get(node.id)!, boxes()));
  }
  return at;

  function parentStart(parent: string): Point {
    const p = graph.nodes.find((n) => n.id === parent);
    if (!p) return argBottom();
    const siblings = p.parent === null ? graph.body : childrenOf(graph, p.parent);
    const before = siblings[siblings.indexOf(parent) - 1];
    const start = before !== undefined ? below(before) : p.parent !== null ? parentStart(p.parent) : argBottom();
    return { x: start.x + GROUP_PAD, y: start.y + GROUP_TITLE };
  }
}

function childrenOf(graph: GraphView, id: string): readonly string[] {
  const node = graph.nodes.find((n) => n.id === id);
  return node && node.kind !== "dispatch" ? node.children : [];
}

/** The leaf ids (dispatches, empty containers) inside a container, all levels down. */
export function leafIds(graph: GraphView, id: string): string[] {
  const node = graph.nodes.find((n) => n.id === id);
  if (!node) return [];
  if (node.kind === "dispatch" || node.children.length === 0) return [node.id];
  return node.children.flatMap((c) => leafIds(graph, c));
}

export function boundsOf(boxes: readonly Box[]): Box {
  if (boxes.length === 0) return { x: 0, y: 0, width: 0, height: 0 };
  const x0 = Math.min(...boxes.map((b) => b.x));
  const y0 = Math.min(...boxes.map((b) => b.y));
  const x1 = Math.max(...boxes.map((b) => b.x + b.width));
  const y1 = Math.max(...boxes.map((b) => b.y + b.height));
  return { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
}

/** Each group's box: around the groups and leaves it holds, with room for its title. Innermost first. */
export function groupBoxes(
  graph: GraphView,
  at: ReadonlyMap<string, Point>,
  sizes: ReadonlyMap<string, Size>,
): Map<string, Box> {
  const boxes = new Map<string, Box>();
  const boxOf = (id: string): Box | null => {
    const node = graph.nodes.find((n) => n.id === id);
    if (!node) return null;
    if (node.kind === "dispatch" || node.children.length === 0) {
      const p = at.get(id);
      const s = sizes.get(id);
      if (!p || !s) return null;
      if (node.kind !== "dispatch") boxes.set(id, { ...p, ...s });
      return { ...p, ...s };
    }
    const inner = node.children.map(boxOf).filter((b): b is Box => b !== null);
    if (inner.length === 0) return null;
    const b = boundsOf(inner);
    const box = {
      x: b.x - GROUP_PAD,
      y: b.y - GROUP_TITLE,
      width: b.width + 2 * GROUP_PAD,
      height: b.height + GROUP_TITLE + GROUP_PAD,
    };
    boxes.set(id, box);
    return box;
  };
  for (const id of graph.body) boxOf(id);
  return boxes;
}

export type Corner = "top-right" | "bottom-right" | "bottom-left" | "top-left";

/**
 * The minimap's corner: the first of the usual ones whose box does not cover `focus` (the selected
 * or just-added node, in screen px relative to the canvas); bottom-right when nothing is in focus.
 */
export function minimapCorner(
  canvas: Size,
  map: Size,
  focus: Box | null,
  margin = 10,
  insets: Insets = NO_INSETS,
): Corner {
  const corners: Corner[] = ["bottom-right", "top-right", "bottom-left", "top-left"];
  if (focus === null) return corners[0]!;
  for (const corner of corners) {
    if (!overlaps(minimapBox(canvas, map, corner, margin, insets), focus, 4)) return corner;
  }
  return corners[0]!;
}

/** Where the minimap sits in `corner`: inside the part of the canvas the drawers leave uncovered. */
export function minimapBox(canvas: Size, map: Size, corner: Corner, margin = 10, insets: Insets = NO_INSETS): Box {
  const view = uncovered(canvas, insets);
  const x = corner.endsWith("right") ? view.x + view.width - map.width - margin : view.x + margin;
  const y = corner.startsWith("bottom") ? canvas.height - map.height - margin : margin;
  return { x, y, ...map };
}

/** How much of the canvas's edges the drawers floating over it cover (px on screen). */
export interface Insets {
  left: number;
  right: number;
}

export const NO_INSETS: Insets = { left: 0, right: 0 };

/**
 * The part of a `canvas` of this size that no drawer covers, in screen px relative to the canvas.
 * A drawer wider than the canvas leaves a strip of at least `least` px (the user can still pan).
 */
export function uncovered(canvas: Size, insets: Insets, least = 80): Box {
  const left = Math.max(0, insets.left);
  const right = Math.max(0, insets.right);
  if (canvas.width - left - right >= least) {
    return { x: left, y: 0, width: canvas.width - left - right, height: canvas.height };
  }
  const width = Math.min(least, canvas.width);
  const x = Math.max(0, Math.min(left, canvas.width - width));
  return { x, y: 0, width, height: canvas.height };
}

export interface Viewport {
  x: number;
  y: number;
  zoom: number;
}

/**
 * The viewport that shows the drawing `box` in `view` (the uncovered part of the canvas) with `pad`
 * px around it, centred, at most `maxZoom`. With `minZoom` (the least readable zoom) a drawing that
 * does not fit at that zoom shows its start (top left) instead, the rest is a pan away.
 */
export function fitViewport(box: Box, view: Box, { pad = 16, maxZoom = 1.5, minZoom = 0 } = {}): Viewport {
  const room = { width: Math.max(view.width - 2 * pad, 1), height: Math.max(view.height - 2 * pad, 1) };
  let zoom = Math.min(room.width / Math.max(box.width, 1), room.height / Math.max(box.height, 1), maxZoom);
  zoom = Math.max(zoom, minZoom);
  const fitsX = box.width * zoom <= room.width + 1e-9;
  const fitsY = box.height * zoom <= room.height + 1e-9;
  const x = view.x + (fitsX ? (view.width - box.width * zoom) / 2 : pad) - box.x * zoom;
  const y = view.y + (fitsY ? (view.height - box.height * zoom) / 2 : pad) - box.y * zoom;
  return { x, y, zoom };
}

/**
 * How far to pan (screen px) so that `box` (on screen) lies inside `view` with `margin` px to spare:
 * {0, 0} when it already does. A box larger than the view shows its top left corner.
 */
export function panIntoView(box: Box, view: Box, margin = 12): Point {
  const axis = (start: number, size: number, viewStart: number, viewSize: number): number => {
    const lo = viewStart + margin;
    const hi = viewStart + viewSize - margin;
    if (size > hi - lo || start < lo) return lo - start;
    if (start + size > hi) return hi - (start + size);
    return 0;
  };
  return { x: axis(box.x, box.width, view.x, view.width), y: axis(box.y, box.height, view.y, view.height) };
}
