/**
 * ELK in a web worker, off the main thread. anywidget loads one file, so the worker's script is
 * bundled into widget.js as text (build.mjs's `elk-worker-source` module) and started from a Blob URL.
 *
 * The worker is started once a page (for every editor in it) and warmed with a two-node layout: starting it (parsing and
 * compiling ELK's 1.5 MB of script) is a one-off cost of the page, timed apart from the layouts, so a
 * graph's layout time is ELK's work on that graph.
 */

import ELK from "elkjs/lib/elk-api.js";
import workerSource from "elk-worker-source";

import type { GraphView } from "../wire/protocol";
import { LAYOUT_OPTIONS, elkGraph, elkPositions } from "./elkGraph";
import type { Point, Size } from "./geometry";

type Elk = InstanceType<typeof ELK>;

type Started = Promise<{ elk: Elk; ms: number }>;
type PageWorker = { started: Started; ready: boolean };

/**
 * Where the page keeps its worker: anywidget imports the bundle anew for each widget, so a
 * module-level variable would start one worker (and parse ELK again) per editor on the page.
 */
const PAGE_KEY = Symbol.for("graphlab.elk-worker");
const page = globalThis as typeof globalThis & { [PAGE_KEY]?: PageWorker };

const WARM_UP = {
  id: "warm-up",
  layoutOptions: LAYOUT_OPTIONS,
  children: [
    { id: "a", width: 10, height: 10 },
    { id: "b", width: 10, height: 10 },
  ],
  edges: [{ id: "a-b", sources: ["a"], targets: ["b"] }],
};

/** The page's ELK worker, started (and warmed) on first use; `ms`: how long starting it took; `ready`: it has. */
export function elkWorker(): PageWorker {
  let worker = page[PAGE_KEY];
  if (worker === undefined) {
    const begin = performance.now();
    const url = URL.createObjectURL(new Blob([workerSource], { type: "text/javascript" }));
    const elk = new ELK({ workerFactory: () => new Worker(url) });
    const started = elk.layout(WARM_UP).then(() => {
      worker!.ready = true;
      return { elk, ms: performance.now() - begin };
    });
    worker = page[PAGE_KEY] = { started, ready: false };
  }
  return worker;
}

/**
 * Lay out every node of `graph` with ELK in the worker; resolves to leaf positions, the time the
 * layout took (ms) and the time the worker took to start before it (0 once it has started).
 */
export async function elkLayout(
  graph: GraphView,
  sizes: ReadonlyMap<string, Size>,
): Promise<{ positions: Map<string, Point>; ms: number; startMs: number }> {
  const worker = elkWorker();
  const waited = worker.ready ? null : performance.now();
  const { elk, ms: startup } = await worker.started;
  const startMs = waited === null ? 0 : Math.min(startup, performance.now() - waited);
  const start = performance.now();
  const result = await elk.layout(elkGraph(graph, sizes));
  return { positions: elkPositions(result), ms: performance.now() - start, startMs };
}
