import { describe, expect, it } from "vitest";

import type { GraphView, NodeView } from "../src/wire/protocol";
import { Timeline, fractionOf } from "../src/logic/timeline";
import { sampleGraph } from "./fixtures";

/** outer (x2) { a; inner (x3) { b; c } }; z: the step ids graphlab.Graph.steps() gives, in order. */
function nested(): GraphView {
  const d = (id: string, parent: string | null, index: number): NodeView => ({
    id,
    kind: "dispatch",
    name: id.split("/").at(-1)!,
    parent,
    index,
    kernel: `m:${id}`,
    kernel_name: id,
    params: [],
    bindings: {},
  });
  const nodes: NodeView[] = [
    {
      id: "outer",
      kind: "sequence",
      name: "outer",
      parent: null,
      index: 0,
      sequence: "outer",
      repeat: 2,
      children: ["outer/a", "outer/inner"],
    },
    d("outer/a", "outer", 0),
    {
      id: "outer/inner",
      kind: "sequence",
      name: "inner",
      parent: "outer",
      index: 1,
      sequence: "inner",
      repeat: 3,
      children: ["outer/inner/b", "outer/inner/c"],
    },
    d("outer/inner/b", "outer/inner", 0),
    d("outer/inner/c", "outer/inner", 1),
    d("z", null, 1),
  ];
  return { name: "n", version: 1, args: [], nodes, body: ["outer", "z"], layout: {} };
}

const NESTED_STEPS = [
  "outer[0]/a",
  ...[0, 1, 2].flatMap((k) => [`outer[0]/inner[${k}]/b`, `outer[0]/inner[${k}]/c`]),
  "outer[1]/a",
  ...[0, 1, 2].flatMap((k) => [`outer[1]/inner[${k}]/b`, `outer[1]/inner[${k}]/c`]),
  "z",
];

describe("Timeline", () => {
  it("counts the unrolled dispatches", () => {
    expect(new Timeline(sampleGraph()).total).toBe(1 + 3 * 2 + 1);
    expect(new Timeline(nested()).total).toBe(NESTED_STEPS.length);
  });

  it("maps every position to the step id graphlab gives it, and back", () => {
    const t = new Timeline(nested());
    NESTED_STEPS.forEach((id, i) => {
      expect(t.stepAt(i)?.stepId).toBe(id);
      expect(t.indexOf(id)).toBe(i);
    });
    expect(t.stepAt(8)?.nodeId).toBe("outer/inner/b");
  });

  it("has no step at the end or outside 0..total", () => {
    const t = new Timeline(sampleGraph());
    expect(t.stepAt(t.total)).toBeNull();
    expect(t.stepAt(-1)).toBeNull();
    expect(t.stepAt(1.5)).toBeNull();
  });

  it("finds where a repetition starts, and refuses ids the graph does not have", () => {
    const t = new Timeline(nested());
    expect(t.indexOf("outer[1]")).toBe(7);
    expect(t.indexOf("outer[1]/inner[2]")).toBe(12);
    expect(t.indexOf("outer[2]/a")).toBeNull();
    expect(t.indexOf("outer/a")).toBeNull();
    expect(t.indexOf("nope")).toBeNull();
    expect(t.indexOf("z[0]")).toBeNull();
  });

  it("lists where a node runs and where a sequence's repetitions start", () => {
    const t = new Timeline(nested());
    expect(t.positionsOf("outer/inner/c")).toEqual([2, 4, 6, 9, 11, 13]);
    expect(t.positionsOf("outer/inner")).toEqual([1, 3, 5, 8, 10, 12]);
    expect(t.positionsOf("z")).toEqual([14]);
    expect(t.positionsOf("outer/inner/c", 2)).toEqual([2, 4]);
  });

  it("does not unroll a sequence repeated many times", () => {
    const g = sampleGraph();
    const seq = g.nodes.find((n) => n.id === "substep")!;
    if (seq.kind === "sequence") seq.repeat = 10_000_000;
    const t = new Timeline(g);
    expect(t.total).toBe(1 + 2 * 10_000_000 + 1);
    expect(t.stepAt(2 * 9_999_999 + 2)?.stepId).toBe("substep[9999999]/g2p");
    expect(t.label(t.total)).toBe(`end (${t.total}/${t.total})`);
  });

  it("labels a position with the step that runs next", () => {
    expect(new Timeline(sampleGraph()).label(2)).toBe("step 2/8 \u00b7 next substep[0]/g2p");
  });
});

describe("fractionOf", () => {
  it("places positions along the slider, clamped", () => {
    expect(fractionOf(0, 8)).toBe(0);
    expect(fractionOf(4, 8)).toBe(0.5);
    expect(fractionOf(9, 8)).toBe(1);
    expect(fractionOf(3, 0)).toBe(0);
  });
});
