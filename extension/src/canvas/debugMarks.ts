/**
 * What the debugger draws on the graph, from the `debugger` trait: step and repetition ids map to
 * the node drawn for them (`substep[3]/p2g` -> `substep/p2g`), and ids the drawing does not show
 * (folded bodies) to their nearest drawn ancestor.
 */

import { formatSeconds } from "../logic/colorScale";
import { definitionId } from "../logic/diagnostics";
import type { DebugMarks } from "./graphView";
import type { DebugView } from "../wire/protocol";

/**
 * The drawn id standing for a node, step or repetition id: itself, its definition (loop iterations
 * `solve/iter[7]/jacobi` and repetitions `substep[3]/p2g` dropped), or its nearest drawn ancestor.
 */
export function drawnIdOf(id: string, isDrawn: (id: string) => boolean): string | null {
  let at: string | null = definitionId(id.replace(/\/iter\[[0-9]+\](?=\/|$)/g, ""));
  if (isDrawn(id)) return id;
  while (at !== null) {
    if (isDrawn(at)) return at;
    const slash = at.lastIndexOf("/");
    at = slash < 0 ? null : at.slice(0, slash);
  }
  return null;
}

export function debugMarks(view: DebugView, isDrawn: (id: string) => boolean): DebugMarks {
  if (!view.active) {
    return {
      active: false,
      current: null,
      breakpoints: new Set(),
      faults: new Map(),
      times: new Map(),
      nonfinite: null,
      diverged: null,
    };
  }
  const breakpoints = new Set<string>();
  for (const bp of view.breakpoints) {
    if (bp.kind === "condition" || !bp.enabled) continue;
    const id = drawnIdOf(bp.target, isDrawn);
    if (id !== null) breakpoints.add(id);
  }
  const faults = new Map<string, string>();
  for (const f of view.faults) {
    const id = drawnIdOf(f.node_id, isDrawn);
    if (id !== null) faults.set(id, `${f.step_id} failed: ${f.error}`);
  }
  const times = new Map<string, readonly [string, string]>();
  for (const t of view.timing) {
    const text = t.calls > 1 ? `${formatSeconds(t.mean_s)} \u00d7${t.calls}` : formatSeconds(t.mean_s);
    const title = `${t.node_id}: ${t.calls} stepped call(s), mean ${formatSeconds(t.mean_s)}, total ${formatSeconds(t.total_s)}, ${(100 * t.share).toFixed(1)}% of the stepped time`;
    times.set(t.node_id, [text, title]);
  }
  const current = view.position?.node_id ? drawnIdOf(view.position.node_id, isDrawn) : null;
  const nonfinite = view.nonfinite?.node_id ? drawnIdOf(view.nonfinite.node_id, isDrawn) : null;
  const found = view.compare.divergence;
  const divergedId = found?.node_id ? drawnIdOf(found.node_id, isDrawn) : null;
  const diverged = divergedId !== null && found ? ([divergedId, found.text] as const) : null;
  return { active: true, current, breakpoints, faults, times, nonfinite, diverged };
}
