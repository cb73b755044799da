import { describe, expect, it } from "vitest";

import { NodeIndex, freeSequenceName, insertionPoint, siblingRange } from "../src/logic/selection";
import { sampleGraph } from "./fixtures";

describe("NodeIndex", () => {
  const index = new NodeIndex(sampleGraph());

  it("finds siblings at the top level and inside a sequence", () => {
    expect(index.siblings("render")).toEqual(["init", "substep", "render"]);
    expect(index.siblings("substep/g2p")).toEqual(["substep/p2g", "substep/g2p"]);
    expect(index.siblings("nope")).toEqual([]);
  });

  it("steps through nodes in program order, stopping at the ends", () => {
    expect(index.step(null, 1)).toBe("init");
    expect(index.step(null, -1)).toBe("render");
    expect(index.step("substep", 1)).toBe("substep/p2g");
    expect(index.step("render", 1)).toBe("render");
    expect(index.step("init", -1)).toBe("init");
  });
});

describe("siblingRange", () => {
  const index = new NodeIndex(sampleGraph());

  it("spans consecutive siblings in either direction", () => {
    expect(siblingRange(index, "render", "init")).toEqual(["init", "substep", "render"]);
    expect(siblingRange(index, "init", "substep")).toEqual(["init", "substep"]);
  });

  it("keeps only the anchor across containers", () => {
    expect(siblingRange(index, "init", "substep/p2g")).toEqual(["init"]);
    expect(siblingRange(index, "init", null)).toEqual(["init"]);
    expect(siblingRange(index, "gone", "init")).toEqual([]);
  });
});

describe("insertionPoint", () => {
  const index = new NodeIndex(sampleGraph());

  it("adds after a selected dispatch, in its container", () => {
    expect(insertionPoint(index, "substep/p2g")).toMatchObject({ into: "substep", index: 1 });
    expect(insertionPoint(index, "init")).toMatchObject({ into: null, index: 1 });
  });

  it("adds at the end of a selected sequence, or of the graph", () => {
    expect(insertionPoint(index, "substep")).toMatchObject({ into: "substep", index: null });
    expect(insertionPoint(index, null)).toMatchObject({ into: null, index: null });
  });
});

describe("freeSequenceName", () => {
  it("avoids node and sequence names", () => {
    const g = sampleGraph();
    expect(freeSequenceName(g)).toBe("group");
    expect(freeSequenceName(g, "substep")).toBe("substep_2");
  });
});
