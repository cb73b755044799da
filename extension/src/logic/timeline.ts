/**
 * The debugger's timeline: positions 0..total of the unrolled graph, mapped to step ids and back,
 * computed from the `graph` trait without unrolling it (a sequence repeated 10,000 times costs what
 * one repetition costs).
 *
 * Graphs with loops or conditionals have no fixed steps (the debugger refuses them): their
 * control nodes count no dispatches here.
 *
 * Step ids follow `graphlab.Graph.steps()`: a dispatch `p2g` inside the `k`-th repetition of the
 * sequence use `substep` is `substep[k]/p2g`, and its node (definition-level) id is `substep/p2g`.
 * Position `i` is "before step `i`": `i` dispatches have run; position `total` is the end.
 */

import type { GraphView, NodeView } from "../wire/protocol";

export interface StepAt {
  index: number;
  /** `substep[3]/p2g` */
  stepId: string;
  /** `substep/p2g` */
  nodeId: string;
}

export class Timeline {
  readonly total: number;
  private readonly byId = new Map<string, NodeView>();
  /** Dispatches in one run of a container (null: the top level), and per node (a repetition's worth for sequences). */
  private readonly counts = new Map<string, number>();

  constructor(private readonly graph: GraphView) {
    for (const node of graph.nodes) this.byId.set(node.id, node);
    this.total = this.countOf(graph.body);
  }

  private countOf(ids: readonly string[]): number {
    let total = 0;
    for (const id of ids) total += this.nodeCount(id);
    return total;
  }

  /** Dispatches a node runs in all (a sequence: its repetitions times one repetition's). */
  private nodeCount(id: string): number {
    const cached = this.counts.get(id);
    if (cached !== undefined) return cached;
    const node = this.byId.get(id);
    let n = 0;
    if (node?.kind === "dispatch") n = 1;
    else if (node?.kind === "sequence") n = node.repeat * this.countOf(node.children);
    this.counts.set(id, n);
    return n;
  }

  /** The step at position `index` (null at or past the end, or before 0). */
  stepAt(index: number): StepAt | null {
    if (!Number.isInteger(index) || index < 0 || index >= this.total) return null;
    let rest = index;
    let ids: readonly string[] = this.graph.body;
    let stepPrefix = "";
    for (;;) {
      let found = false;
      for (const id of ids) {
        const n = this.nodeCount(id);
        if (rest >= n) {
          rest -= n;
          continue;
        }
        const node = this.byId.get(id)!;
        if (node.kind === "dispatch") return { index, stepId: stepPrefix + node.name, nodeId: id };
        if (node.kind !== "sequence") return null; // loops and conditionals have no fixed steps
        const per = n / node.repeat;
        const k = Math.floor(rest / per);
        rest -= k * per;
        stepPrefix += `${node.name}[${k}]/`;
        ids = node.children;
        found = true;
        break;
      }
      if (!found) return null; // counts and ids disagree: a malformed graph view
    }
  }

  /**
   * The position of a step id (`substep[3]/p2g`), or of the first dispatch of a repetition id
   * (`substep[3]`); null if the graph has no such step or repetition.
   */
  indexOf(stepId: string): number | null {
    const parts = stepId.split("/");
    let ids: readonly string[] = this.graph.body;
    let parent = "";
    let index = 0;
    for (let p = 0; p < parts.length; p++) {
      const m = /^(.*?)(?:\[([0-9]+)\])?$/.exec(parts[p]!)!;
      const name = m[1]!;
      const rep = m[2] === undefined ? null : Number(m[2]);
      const id = parent ? `${parent}/${name}` : name;
      let found: NodeView | undefined;
      for (const sibling of ids) {
        if (sibling === id) {
          found = this.byId.get(sibling);
          break;
        }
        index += this.nodeCount(sibling);
      }
      if (!found) return null;
      const last = p === parts.length - 1;
      if (found.kind === "dispatch") return last && rep === null ? index : null;
      if (found.kind !== "sequence" || rep === null || rep >= found.repeat) return null;
      index += rep * (this.nodeCount(found.id) / found.repeat);
      if (last) return this.nodeCount(found.id) > 0 ? index : null;
      ids = found.children;
      parent = id;
    }
    return null;
  }

  /**
   * Positions where a node's dispatches run (a sequence: where its repetitions start), at most
   * `limit` of them, in order; for drawing breakpoint marks on the timeline.
   */
  positionsOf(nodeId: string, limit = 200): number[] {
    const out: number[] = [];
    const walk = (ids: readonly string[], start: number): void => {
      let at = start;
      for (const id of ids) {
        if (out.length >= limit) return;
        const n = this.nodeCount(id);
        const node = this.byId.get(id);
        if (id === nodeId) {
          if (node?.kind === "sequence") {
            const per = n / node.repeat;
            for (let k = 0; k < node.repeat && out.length < limit; k++) out.push(at + k * per);
          } else out.push(at);
        } else if (node?.kind === "sequence" && nodeId.startsWith(`${id}/`)) {
          const per = n / node.repeat;
          for (let k = 0; k < node.repeat && out.length < limit; k++) walk(node.children, at + k * per);
        }
        at += n;
      }
    };
    walk(this.graph.body, 0);
    return out;
  }

  /** Text for a position: `step 5/16 · next substep[1]/p2g`, or `end (16/16)`. */
  label(index: number): string {
    if (index >= this.total) return `end (${this.total}/${this.total})`;
    const step = this.stepAt(index);
    return step ? `step ${index}/${this.total} \u00b7 next ${step.stepId}` : `step ${index}/${this.total}`;
  }
}

/** Where a position sits along a timeline of `total` steps, 0..1 (for marks over a range input). */
export function fractionOf(index: number, total: number): number {
  if (total <= 0) return 0;
  return Math.min(1, Math.max(0, index / total));
}
