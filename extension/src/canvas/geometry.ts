/**
 * The canvas's geometry, kept pure so it is tested without a browser: node sizes from measured
 * labels, where a node without a stored position goes (without moving any other), the boxes of
 * groups around what they hold, and the minimap's corner away from the node in focus.
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
export function minimapCorner(canvas: Size, map: Size, focus: Box | null, margin = 10): Corner {
  const corners: Corner[] = ["bottom-right", "top-right", "bottom-left", "top-left"];
  if (focus === null) return corners[0]!;
  for (const corner of corners) {
    const x = corner.endsWith("right") ? canvas.width - map.width - margin : margin;
    const y = corner.startsWith("bottom") ? canvas.height - map.height - margin : margin;
    if (!overlaps({ x, y, ...map }, focus, 4)) return corner;
  }
  return corners[0]!;
}
