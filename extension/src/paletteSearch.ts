/**
 * Kernel palette search: every word of the query must appear in the kernel's name, reference or
 * parameter names; matches on the name come first.
 */

import type { KernelView } from "./protocol";

export function searchKernels(kernels: readonly KernelView[], query: string): KernelView[] {
  const words = query
    .toLowerCase()
    .split(/\s+/)
    .filter((w) => w !== "");
  if (words.length === 0) return [...kernels];
  const scored: { kernel: KernelView; score: number; order: number }[] = [];
  kernels.forEach((kernel, order) => {
    const name = kernel.name.toLowerCase();
    const haystack = [name, kernel.ref.toLowerCase(), ...kernel.params.map((p) => p.name.toLowerCase())].join(" ");
    if (!words.every((w) => haystack.includes(w))) return;
    const first = words[0]!;
    const score = name === first ? 0 : name.startsWith(first) ? 1 : name.includes(first) ? 2 : 3;
    scored.push({ kernel, score, order });
  });
  scored.sort((a, b) => a.score - b.score || a.order - b.order);
  return scored.map((s) => s.kernel);
}

/** `p2g(x, v, C, J, grid_v, grid_m)` */
export function signature(kernel: KernelView): string {
  return `${kernel.name}(${kernel.params.map((p) => p.name).join(", ")})`;
}
