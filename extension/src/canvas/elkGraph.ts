/**
 * The graph as ELK's input, and ELK's answer as canvas positions: layered, top to bottom, with each
 * dispatch's parameters as ports on its top side and sequences, loops and conditionals (with their
 * branches) as compound nodes. Program order is kept by an edge, seen only by ELK, from each node
 * to the next of its container. Pure: the worker that runs ELK is `elkWorker.ts`.
 */

import type { ElkExtendedEdge, ElkNode } from "elkjs/lib/elk-api.js";

import type { GraphView } from "../wire/protocol";
import { GROUP_PAD, GROUP_TITLE, type Point, type Size, argId } from "./geometry";

export const LAYOUT_OPTIONS: Record<string, string> = {
  "elk.algorithm": "layered",
  "elk.direction": "DOWN",
  "elk.hierarchyHandling": "INCLUDE_CHILDREN",
  "elk.layered.spacing.nodeNodeBetweenLayers": "36",
  "elk.spacing.nodeNode": "28",
  "elk.layered.nodePlacement.strategy": "BRANDES_KOEPF",
  "elk.layered.considerModelOrder.strategy": "NODES_AND_EDGES",
};

/** The port id of a dispatch's parameter (ELK's ids are one namespace). */
export function portId(node: string, param: string): string {
  return `${node}\u0000${param}`;
}

/**
 * Above this many nodes the bindings are left out of ELK's input and the quicker strategies are
 * used: every binding from an arg (drawn at the top) to a port many layers down becomes a chain of
 * dummy nodes, one per layer it crosses, which made a 500-dispatch graph take minutes.
 */
export const LARGE_GRAPH = 60;

const LARGE_OPTIONS: Record<string, string> = {
  "elk.layered.thoroughness": "1",
  "elk.layered.nodePlacement.strategy": "SIMPLE",
  "elk.layered.considerModelOrder.strategy": "NONE",
  "elk.layered.crossingMinimization.strategy": "INTERACTIVE",
};

export function elkGraph(graph: GraphView, sizes: ReadonlyMap<string, Size>): ElkNode {
  const large = graph.nodes.length > LARGE_GRAPH;
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  const edges: ElkExtendedEdge[] = [];
  const build = (id: string): ElkNode => {
    const node = byId.get(id)!;
    const size = sizes.get(id);
    if (node.kind === "dispatch") {
      const width = size?.width ?? 80;
      const step = width / (node.params.length + 1);
      return {
        id,
        width,
        height: size?.height ?? 40,
        layoutOptions: { "elk.portConstraints": "FIXED_POS" },
        ports: node.params.map((p, i) => ({
          id: portId(id, p.name),
          x: step * (i + 1),
          y: 0,
          width: 1,
          height: 1,
          layoutOptions: { "elk.port.side": "NORTH" },
        })),
      };
    }
    if (node.children.length === 0) return { id, width: size?.width ?? 80, height: size?.height ?? 40 };
    order(node.children);
    return {
      id,
      layoutOptions: {
        "elk.padding": `[top=${GROUP_TITLE + 6},left=${GROUP_PAD},bottom=${GROUP_PAD},right=${GROUP_PAD}]`,
      },
      children: node.children.map(build),
    };
  };
  const order = (ids: readonly string[]): void => {
    for (let i = 1; i < ids.length; i++) {
      edges.push({ id: `order\u0000${ids[i - 1]}\u0000${ids[i]}`, sources: [ids[i - 1]!], targets: [ids[i]!] });
    }
  };
  order(graph.body);
  const args: ElkNode[] = graph.args.map((a) => {
    const size = sizes.get(argId(a.name));
    return { id: argId(a.name), width: size?.width ?? 80, height: size?.height ?? 40 };
  });
  for (const node of large ? [] : graph.nodes) {
    if (node.kind !== "dispatch") continue;
    for (const [param, arg] of Object.entries(node.bindings)) {
      if (arg === null) continue;
      edges.push({
        id: `${argId(arg)}->${node.id}.${param}`,
        sources: [argId(arg)],
        targets: [portId(node.id, param)],
      });
    }
  }
  const layoutOptions = large ? { ...LAYOUT_OPTIONS, ...LARGE_OPTIONS } : LAYOUT_OPTIONS;
  return { id: "root", layoutOptions, children: [...args, ...graph.body.map(build)], edges };
}

/** Absolute positions of the leaves (dispatches, args, empty containers) from ELK's nested answer. */
export function elkPositions(root: ElkNode): Map<string, Point> {
  const at = new Map<string, Point>();
  const walk = (node: ElkNode, dx: number, dy: number): void => {
    for (const child of node.children ?? []) {
      const x = dx + (child.x ?? 0);
      const y = dy + (child.y ?? 0);
      if (child.children && child.children.length > 0) walk(child, x, y);
      else at.set(child.id, { x: Math.round(x), y: Math.round(y) });
    }
  };
  walk(root, 0, 0);
  return at;
}
