import { describe, expect, it } from "vitest";
import type { Edge, Node } from "@xyflow/react";

import {
  type CanvasEvents,
  type CanvasModel,
  flowEdges,
  newsOf,
  reuseUnchanged,
  sameModel,
  sameNodes,
} from "../src/canvas/FlowView";
import { NO_MARKS } from "../src/canvas/graphView";
import { arg, param, sampleGraph } from "./fixtures";

function node(id: string, x: number, data: Record<string, unknown> = {}): Node {
  return { id, type: "dispatch", position: { x, y: 0 }, data: { id, title: id, ...data } };
}

describe("reuseUnchanged (an edit redraws only the nodes and edges it changed)", () => {
  it("keeps the last drawing's object for an unchanged node and takes the new one for a changed node", () => {
    const cache = new Map<string, [string, Node]>();
    const first = reuseUnchanged([node("a", 0), node("b", 0)], cache);
    const second = reuseUnchanged([node("a", 0), node("b", 40), node("c", 0)], cache);
    expect(second[0]).toBe(first[0]);
    expect(second[1]).not.toBe(first[1]);
    expect(second[1]!.position.x).toBe(40);
    expect(second[2]!.id).toBe("c");
  });

  it("forgets removed nodes, so one added again is drawn from its new object", () => {
    const cache = new Map<string, [string, Node]>();
    reuseUnchanged([node("a", 0), node("b", 0)], cache);
    reuseUnchanged([node("a", 0)], cache);
    expect([...cache.keys()]).toEqual(["a"]);
    const again = node("b", 0);
    expect(reuseUnchanged([node("a", 0), again], cache)[1]).toBe(again);
  });

  it("ignores the callbacks and the debugger's marks of other nodes, but not a node's own mark", () => {
    const cache = new Map<string, [string, Node]>();
    const active = { ...NO_MARKS, active: true, current: "b" };
    const [a0] = reuseUnchanged([node("a", 0, { marks: NO_MARKS, events: {} })], cache);
    const [a1] = reuseUnchanged([node("a", 0, { marks: NO_MARKS, events: { other: 1 } })], cache);
    expect(a1).toBe(a0);
    const [a2] = reuseUnchanged([node("a", 0, { marks: active })], cache);
    expect(a2).not.toBe(a1); // the overlay appears when the debugger starts
    const [a3] = reuseUnchanged([node("a", 0, { marks: { ...active, current: "c" } })], cache);
    expect(a3).toBe(a2); // the current node moved from b to c: nothing changed for a
    const [a4] = reuseUnchanged([node("a", 0, { marks: { ...active, current: "a" } })], cache);
    expect(a4).not.toBe(a3);
  });

  it("keeps the edges of a graph sent anew, and renews only the one whose binding changed", () => {
    const cache = new Map<string, [string, Edge]>();
    const events = {} as CanvasEvents;
    const graph = sampleGraph();
    graph.args = [arg("x"), arg("v")];
    for (const n of graph.nodes) {
      if (n.kind !== "dispatch") continue;
      n.params = [param("x"), param("v")];
      n.bindings = { x: "x", v: "v" };
    }
    const first = reuseUnchanged(flowEdges(graph, events), cache);
    expect(first.length).toBeGreaterThan(1);
    const again = reuseUnchanged(flowEdges(structuredClone(graph), events), cache);
    again.forEach((edge, k) => expect(edge).toBe(first[k]));
    const changed = structuredClone(graph);
    const dispatch = changed.nodes.find((n) => n.kind === "dispatch" && Object.keys(n.bindings).length > 0)!;
    if (dispatch.kind !== "dispatch") throw new Error("the sample graph has a bound dispatch");
    const bound = Object.keys(dispatch.bindings)[0]!;
    dispatch.guessed = [...(dispatch.guessed ?? []), bound]; // drawn dashed now
    const third = reuseUnchanged(flowEdges(changed, events), cache);
    const renewed = third.filter((edge, k) => edge !== again[k]).map((edge) => edge.id);
    expect(renewed).toEqual([third.find((e) => e.id.endsWith(`${dispatch.id}.${bound}`))!.id]);
  });
});

describe("sameModel (a render that would draw the same is skipped)", () => {
  const base = (): CanvasModel => ({
    graph: sampleGraph(),
    positions: new Map(),
    sizes: new Map(),
    groups: new Map(),
    selection: new Set(["a", "b"]),
    badges: new Map(),
    marks: NO_MARKS,
    pending: null,
    minimap: { wanted: false, shown: false, corner: "bottom-right" },
    note: null,
    renaming: null,
    bindings: true,
  });

  it("takes a new selection with the same ids and a new minimap record with the same values as the same", () => {
    const a = base();
    const b = { ...a, selection: new Set(["b", "a"]), minimap: { ...a.minimap } };
    expect(sameModel(a, b)).toBe(true);
  });

  it("sees a changed selection, minimap, note or position map", () => {
    const a = base();
    expect(sameModel(a, { ...a, selection: new Set(["a"]) })).toBe(false);
    expect(sameModel(a, { ...a, selection: new Set(["a", "c"]) })).toBe(false);
    expect(sameModel(a, { ...a, minimap: { ...a.minimap, shown: true } })).toBe(false);
    expect(sameModel(a, { ...a, note: "refused" })).toBe(false);
    expect(sameModel(a, { ...a, bindings: false })).toBe(false);
    expect(sameModel(a, { ...a, positions: new Map() })).toBe(false);
  });

  it("draws the same nodes when only the overview or the note changed (a pan's end rebuilds no node)", () => {
    const a = base();
    expect(sameNodes(a, { ...a, minimap: { wanted: true, shown: true, corner: "top-left" }, bindings: false })).toBe(
      true,
    );
    expect(sameNodes(a, { ...a, selection: new Set(["a"]) })).toBe(false);
    expect(sameNodes(a, { ...a, renaming: "a" })).toBe(false);
    expect(sameNodes(a, { ...a, pending: { at: { x: 0, y: 0 }, text: "adding" } })).toBe(false);
    expect(sameNodes(a, { ...a, marks: { ...NO_MARKS } })).toBe(false);
  });
});

describe("newsOf (size reports that change nothing are not applied)", () => {
  const drawn: Node[] = [{ ...node("a", 0), width: 150, height: 46 }, node("b", 0)];

  it("drops a node's size report equal to the size it was given, keeps the others", () => {
    const same = { id: "a", type: "dimensions" as const, dimensions: { width: 150, height: 46 } };
    const other = { id: "a", type: "dimensions" as const, dimensions: { width: 151, height: 46 } };
    const unsized = { id: "b", type: "dimensions" as const, dimensions: { width: 80, height: 40 } };
    const resizing = { ...same, resizing: true };
    const select = { id: "a", type: "select" as const, selected: true };
    expect(newsOf([same], drawn)).toEqual([]);
    expect(newsOf([same, other, unsized, resizing, select], drawn)).toEqual([other, unsized, resizing, select]);
  });
});
