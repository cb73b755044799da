/**
 * Kernel palette search: every word of the query must appear in the kernel's name, reference or
 * parameter names; matches on the name come first. Kernels the graph already dispatches come before
 * the rest (at equal match), since a graph is mostly built from its own kernels again. While the
 * pointer rests on the list that order is held (`heldOrder`), so an add does not move the row under it.
 */

import type { GraphView, KernelView } from "../wire/protocol";

/** The references (`module:qualname`) of the kernels the graph dispatches. */
export function usedKernels(graph: GraphView): Set<string> {
  const refs = new Set<string>();
  for (const node of graph.nodes) if (node.kind === "dispatch") refs.add(node.kernel);
  return refs;
}

export function searchKernels(
  kernels: readonly KernelView[],
  query: string,
  used: ReadonlySet<string> = new Set(),
): KernelView[] {
  const words = query
    .toLowerCase()
    .split(/\s+/)
    .filter((w) => w !== "");
  const unused = (k: KernelView): number => (used.has(k.ref) ? 0 : 1);
  if (words.length === 0) {
    return kernels
      .map((kernel, order) => ({ kernel, order }))
      .sort((a, b) => unused(a.kernel) - unused(b.kernel) || a.order - b.order)
      .map((s) => s.kernel);
  }
  const scored: { kernel: KernelView; score: number; order: number }[] = [];
  kernels.forEach((kernel, order) => {
    const name = kernel.name.toLowerCase();
    const haystack = [name, kernel.ref.toLowerCase(), ...kernel.params.map((p) => p.name.toLowerCase())].join(" ");
    if (!words.every((w) => haystack.includes(w))) return;
    const first = words[0]!;
    const score = name === first ? 0 : name.startsWith(first) ? 1 : name.includes(first) ? 2 : 3;
    scored.push({ kernel, score, order });
  });
  scored.sort((a, b) => a.score - b.score || unused(a.kernel) - unused(b.kernel) || a.order - b.order);
  return scored.map((s) => s.kernel);
}

/** `p2g(x, v, C, J, grid_v, grid_m)` */
export function signature(kernel: KernelView): string {
  return `${kernel.name}(${kernel.params.map((p) => p.name).join(", ")})`;
}

/**
 * `kernels` in the order of `shown` (the refs the list showed), the ones it did not show after them in
 * their own order: the row under the pointer stays the kernel it was when a click added it.
 */
export function heldOrder(shown: readonly string[], kernels: readonly KernelView[]): KernelView[] {
  const at = new Map(shown.map((ref, i) => [ref, i]));
  return kernels
    .map((kernel, order) => ({ kernel, order, held: at.get(kernel.ref) ?? shown.length + order }))
    .sort((a, b) => a.held - b.held)
    .map((s) => s.kernel);
}
