/**
 * A dispatch's parameters as ports: their colour by kind, and whether an arg dragged onto one fits
 * (the same rule the side panel and Python's checker use, `bindingFilter.bindingProblem`), so a
 * port that cannot take it says why at once, before anything is sent.
 */

import { bindingProblem } from "../logic/bindingFilter";
import type { ArgView, GraphView, ParamKind, ParamView } from "../wire/protocol";

/** CSS class of a port (and of an arg's handle) by kind: the colours are in widget.css. */
export function kindClass(kind: ParamKind): string {
  return `gl-kind-${kind.replace("_", "-")}`;
}

/** Why the arg of node `source` (`arg:x`) cannot go to `node`'s parameter `param`, or null when it fits. */
export function portProblem(graph: GraphView, source: string, node: string, param: string): string | null {
  if (!source.startsWith("arg:")) return "drag from a buffer or scalar (an arg's node) onto a parameter";
  const arg: ArgView | undefined = graph.args.find((a) => `arg:${a.name}` === source);
  const target = graph.nodes.find((n) => n.id === node);
  if (!arg) return `arg ${source.slice(4)} is not declared`;
  if (!target || target.kind !== "dispatch") return `${node} is not a dispatch; drop the arg on a dispatch's parameter`;
  const p: ParamView | undefined = target.params.find((q) => q.name === param);
  if (!p) return `${node} has no parameter ${param}`;
  const problem = bindingProblem(p, arg);
  return problem === null ? null : `${node}.${param} refuses ${arg.name}: ${problem}`;
}
