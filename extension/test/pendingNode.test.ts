import { describe, expect, it } from "vitest";

import { PENDING_SIZE, pendingAnchor, pendingBox } from "../src/pendingNode";
import { NodeIndex, insertionPoint } from "../src/selection";
import { sampleGraph } from "./fixtures";

const anchorFor = (index: NodeIndex, selected: string | null) => {
  const point = insertionPoint(index, selected);
  return pendingAnchor(index, point.into, point.index);
};

describe("pendingAnchor", () => {
  const index = new NodeIndex(sampleGraph());

  it("goes below the selected dispatch, in its container", () => {
    expect(anchorFor(index, "init")).toEqual({ id: "init", mode: "below" });
    expect(anchorFor(index, "substep/p2g")).toEqual({ id: "substep/p2g", mode: "below" });
  });

  it("goes below the last node of a selected sequence, or of the graph", () => {
    expect(anchorFor(index, "substep")).toEqual({ id: "substep/g2p", mode: "below" });
    expect(anchorFor(index, null)).toEqual({ id: "render", mode: "below" });
  });

  it("goes inside an empty container, and nowhere in particular in an empty graph", () => {
    const g = sampleGraph();
    const seq = g.nodes.find((n) => n.id === "substep")!;
    if (seq.kind === "sequence") seq.children = [];
    expect(pendingAnchor(new NodeIndex(g), "substep", null)).toEqual({ id: "substep", mode: "inside" });
    expect(pendingAnchor(new NodeIndex({ ...g, nodes: [], body: [] }), null, null)).toEqual({
      id: null,
      mode: "below",
    });
  });
});

describe("pendingBox", () => {
  const node = { x: 100, y: 40, width: 120, height: 36 };

  it("sits under its anchor, centred across, not overlapping it", () => {
    const box = pendingBox(node, "below", { x: 0, y: 0 });
    expect(box.x + box.width / 2).toBeCloseTo(160);
    expect(box.y).toBeGreaterThan(node.y + node.height);
    expect([box.width, box.height]).toEqual([PENDING_SIZE.width, PENDING_SIZE.height]);
  });

  it("sits inside an empty cluster, and on the given centre without an anchor", () => {
    const cluster = { x: 0, y: 0, width: 200, height: 90 };
    const inside = pendingBox(cluster, "inside", { x: 0, y: 0 });
    expect(inside.y).toBeGreaterThanOrEqual(cluster.y);
    expect(inside.y + inside.height).toBeLessThanOrEqual(cluster.y + cluster.height);
    const free = pendingBox(null, "below", { x: 300, y: 200 });
    expect(free.x + free.width / 2).toBe(300);
    expect(free.y + free.height / 2).toBe(200);
  });
});
