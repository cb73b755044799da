/**
 * ELK in a web worker, off the main thread. anywidget loads one file, so the worker's script is
 * bundled into widget.js as text (build.mjs's `elk-worker-source` module) and started from a Blob URL.
 */

import ELK from "elkjs/lib/elk-api.js";
import workerSource from "elk-worker-source";

import type { GraphView } from "../wire/protocol";
import { elkGraph, elkPositions } from "./elkGraph";
import type { Point, Size } from "./geometry";

let elk: InstanceType<typeof ELK> | null = null;

function instance(): InstanceType<typeof ELK> {
  if (elk === null) {
    const url = URL.createObjectURL(new Blob([workerSource], { type: "text/javascript" }));
    elk = new ELK({ workerFactory: () => new Worker(url) });
  }
  return elk;
}

/** Lay out every node of `graph` with ELK in the worker; resolves to leaf positions and the time taken (ms). */
export async function elkLayout(
  graph: GraphView,
  sizes: ReadonlyMap<string, Size>,
): Promise<{ positions: Map<string, Point>; ms: number }> {
  const start = performance.now();
  const result = await instance().layout(elkGraph(graph, sizes));
  return { positions: elkPositions(result), ms: performance.now() - start };
}
