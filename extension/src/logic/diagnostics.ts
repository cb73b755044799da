/**
 * Diagnostics grouped per drawn node, for the badges on the graph.
 */

import type { DiagnosticView, Severity } from "../wire/protocol";

export interface Badge {
  severity: Severity;
  count: number;
  /** The tooltip: one line per diagnostic. */
  text: string;
}

const RANK: Record<Severity, number> = { error: 0, warning: 1, info: 2 };

/** The definition-level id of a step id: `substep[3]/p2g` -> `substep/p2g`. */
export function definitionId(id: string): string {
  return id.replace(/\[[0-9]+\]/g, "");
}

/** One line of text for a diagnostic: `GL003 error [x]: ... (fix: ...)`. */
export function diagnosticLine(d: DiagnosticView): string {
  const where = d.arg ? ` [${d.arg}]` : "";
  const fix = d.hint ? ` (fix: ${d.hint})` : "";
  return `${d.code} ${d.severity}${where}: ${d.message}${fix}`;
}

/** The worst of two severities. */
export function worst(a: Severity, b: Severity): Severity {
  return RANK[a] <= RANK[b] ? a : b;
}

/** The drawing's id for an arg: graphlab's renderer draws arg `x` as the node `arg:x`. */
export function argNodeId(arg: string): string {
  return `arg:${arg}`;
}

/**
 * Badges by drawn id for the diagnostics that name a node (or, for graph-level ones, an arg) the
 * drawing has; the rest are returned apart, for the problems list.
 */
export function badgesByNode(
  diagnostics: readonly DiagnosticView[],
  isDrawn: (id: string) => boolean,
): { badges: Map<string, Badge>; unplaced: DiagnosticView[] } {
  const badges = new Map<string, Badge>();
  const unplaced: DiagnosticView[] = [];
  for (const d of diagnostics) {
    const id =
      d.node !== null ? (isDrawn(d.node) ? d.node : definitionId(d.node)) : d.arg !== null ? argNodeId(d.arg) : null;
    if (id === null || !isDrawn(id)) {
      unplaced.push(d);
      continue;
    }
    const badge = badges.get(id);
    if (badge) {
      badge.severity = worst(badge.severity, d.severity);
      badge.count += 1;
      badge.text += `\n${diagnosticLine(d)}`;
    } else {
      badges.set(id, { severity: d.severity, count: 1, text: diagnosticLine(d) });
    }
  }
  return { badges, unplaced };
}

/** Counts by severity. */
export function countBySeverity(diagnostics: readonly DiagnosticView[]): Record<Severity, number> {
  const out: Record<Severity, number> = { error: 0, warning: 0, info: 0 };
  for (const d of diagnostics) out[d.severity] += 1;
  return out;
}
