import type { LoopView } from "../wire/protocol.gen";

/** How often a while loop reads its flag: "" every iteration, else "; flag read every k[, guarded…]". */
export function loopReads(node: Pick<LoopView, "check_every" | "guarded">): string {
  if (node.check_every <= 1) return "";
  const guard = node.guarded ? ", guarded: stops where every read would" : "";
  return `; flag read every ${node.check_every}${guard}`;
}
