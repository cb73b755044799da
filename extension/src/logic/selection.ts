/**
 * Node lookup, keyboard navigation and range selection over the `graph` trait.
 *
 * The `selected` trait holds one node (the anchor, edited in the side panel); a range of
 * consecutive siblings ending at another node can be added (Shift+click, Shift+arrows) to group
 * them into a sequence. The range is front-end state only.
 */

import type { GraphView, NodeView } from "../wire/protocol";

export class NodeIndex {
  readonly byId = new Map<string, NodeView>();
  /** Ids in program order (depth first, as the `nodes` trait lists them). */
  readonly order: string[];

  constructor(readonly graph: GraphView) {
    for (const node of graph.nodes) this.byId.set(node.id, node);
    this.order = graph.nodes.map((n) => n.id);
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  get(id: string): NodeView | undefined {
    return this.byId.get(id);
  }

  /** Ids of the nodes sharing `id`'s container, in order. */
  siblings(id: string): string[] {
    const node = this.byId.get(id);
    if (!node) return [];
    if (node.parent === null) return this.graph.body;
    const parent = this.byId.get(node.parent);
    return parent && parent.kind !== "dispatch" ? parent.children : [];
  }

  /** The node before or after `id` in program order (`from` null: the first or the last). */
  step(from: string | null, by: -1 | 1): string | null {
    if (this.order.length === 0) return null;
    if (from === null || !this.has(from)) return by > 0 ? this.order[0]! : this.order.at(-1)!;
    const i = this.order.indexOf(from) + by;
    return this.order[Math.max(0, Math.min(this.order.length - 1, i))]!;
  }
}

/**
 * The consecutive siblings from `anchor` to `other` inclusive, in order; just `[anchor]` when
 * they do not share a container (a group must be consecutive siblings) or `other` is null.
 */
export function siblingRange(index: NodeIndex, anchor: string, other: string | null): string[] {
  if (!index.has(anchor)) return [];
  if (other === null || other === anchor) return [anchor];
  const siblings = index.siblings(anchor);
  const a = siblings.indexOf(anchor);
  const b = siblings.indexOf(other);
  if (a < 0 || b < 0) return [anchor];
  const [lo, hi] = a <= b ? [a, b] : [b, a];
  return siblings.slice(lo, hi + 1);
}

/** Where a dispatch added from the palette goes: into a selected sequence, after a selected dispatch. */
export function insertionPoint(
  index: NodeIndex,
  selected: string | null,
): { into: string | null; index: number | null; where: string } {
  const node = selected === null ? undefined : index.get(selected);
  if (!node) return { into: null, index: null, where: "at the end of the graph" };
  if (node.kind === "sequence" || node.kind === "loop" || node.kind === "branch") {
    return { into: node.id, index: null, where: `at the end of ${node.id}` };
  }
  return { into: node.parent, index: node.index + 1, where: `after ${node.id}` };
}

/** A sequence name not yet used by a node or definition (`group`, `group_2`...). */
export function freeSequenceName(graph: GraphView, base = "group"): string {
  const taken = new Set<string>();
  for (const node of graph.nodes) {
    taken.add(node.name);
    if (node.kind === "sequence" || node.kind === "loop" || node.kind === "branch") taken.add(node.sequence);
  }
  if (!taken.has(base)) return base;
  for (let k = 2; ; k++) if (!taken.has(`${base}_${k}`)) return `${base}_${k}`;
}
