import ELK from "elkjs/lib/elk.bundled.js";
import { describe, expect, it } from "vitest";

import { guessBindings } from "../src/logic/bindingFilter";
import { elkGraph, elkPositions, portId } from "../src/canvas/elkGraph";
import {
  type Box,
  boundsOf,
  freeSpot,
  groupBoxes,
  minimapCorner,
  nodeSizes,
  overlaps,
  pasteOffset,
  placeAll,
  programNumbers,
  shortType,
} from "../src/canvas/geometry";
import { portProblem } from "../src/canvas/ports";
import type { DispatchView, GraphView } from "../src/wire/protocol";
import { arg, param, sampleGraph } from "./fixtures";

const measure = (text: string): number => text.length * 7;

function dispatch(
  id: string,
  parent: string | null,
  index: number,
  bindings: Record<string, string | null>,
): DispatchView {
  return {
    id,
    kind: "dispatch",
    name: id.split("/").pop()!,
    parent,
    index,
    kernel: `m:${id}`,
    kernel_name: id,
    params: Object.keys(bindings).map((p) => param(p, p === "n" ? { dtype: "i32" } : {})),
    bindings,
  };
}

function bound(): GraphView {
  return {
    name: "b",
    version: 1,
    args: [arg("x"), arg("y"), arg("n", { dtype: "i32" })],
    nodes: [dispatch("a", null, 0, { x: "x", y: "y" }), dispatch("b", null, 1, { x: "y", n: "n" })],
    body: ["a", "b"],
    layout: {},
  };
}

describe("placement", () => {
  it("keeps every stored position and puts a new node where it overlaps nothing", () => {
    const graph = bound();
    const sizes = nodeSizes(graph, measure);
    const stored = { a: [0, 100], "arg:x": [0, 0], "arg:y": [120, 0], "arg:n": [240, 0] };
    const at = placeAll(graph, sizes, stored, new Map());
    for (const [id, [x, y]] of Object.entries(stored)) expect(at.get(id)).toEqual({ x, y });
    const boxes: Box[] = [...at].map(([id, p]) => ({ ...p, ...sizes.get(id)! }));
    const b = boxes[[...at.keys()].indexOf("b")]!;
    expect(b.y).toBeGreaterThan(100); // below `a`, its predecessor in program order
    for (const other of boxes) if (other !== b) expect(overlaps(b, other)).toBe(false);
  });

  it("moves a free spot right past what is there", () => {
    const taken = [{ x: 0, y: 0, width: 100, height: 40 }];
    const spot = freeSpot({ x: 10, y: 10 }, { width: 50, height: 20 }, taken);
    expect(overlaps({ ...spot, width: 50, height: 20 }, taken[0]!)).toBe(false);
    expect(spot.y).toBe(10);
  });

  it("lands a paste beside the copied block, past whatever is there, covering nothing", () => {
    const boxes = new Map<string, Box>([
      ["loop", { x: 0, y: 0, width: 200, height: 160 }],
      ["loop/a", { x: 20, y: 30, width: 150, height: 50 }],
      ["loop/b", { x: 20, y: 100, width: 150, height: 50 }],
      ["beside", { x: 220, y: 40, width: 120, height: 50 }],
    ]);
    const { dx, dy } = pasteOffset(["loop"], boxes);
    expect(dy).toBe(0);
    expect(dx).toBeGreaterThan(200); // not a few pixels off the original
    const copy = { x: dx, y: dy, width: 200, height: 160 };
    for (const box of boxes.values()) expect(overlaps(copy, box)).toBe(false);
    expect(pasteOffset(["gone"], boxes)).toEqual({ dx: 28, dy: 28 });
  });

  it("draws a group around what it holds, with room for its title", () => {
    const graph = sampleGraph();
    const sizes = nodeSizes(graph, measure);
    const at = placeAll(graph, sizes, {}, new Map());
    const groups = groupBoxes(graph, at, sizes);
    const substep = groups.get("substep")!;
    for (const child of ["substep/p2g", "substep/g2p"]) {
      const box = { ...at.get(child)!, ...sizes.get(child)! };
      expect(boundsOf([substep, box])).toEqual(substep);
      expect(box.y).toBeGreaterThan(substep.y + 10);
    }
  });

  it("numbers dispatches in program order and writes types short", () => {
    expect([...programNumbers(sampleGraph())]).toEqual([
      ["init", 1],
      ["substep/p2g", 2],
      ["substep/g2p", 3],
      ["render", 4],
    ]);
    expect(shortType(arg("x", { shape: ["n"], element_shape: [2] }))).toBe("f32[n, 2]");
    expect(shortType(arg("s", { kind: "scalar", ndim: 0 }))).toBe("scalar f32");
  });
});

describe("minimap", () => {
  const canvas = { width: 800, height: 500 };
  const map = { width: 160, height: 110 };
  it("leaves the bottom right unless the node in focus is there", () => {
    expect(minimapCorner(canvas, map, null)).toBe("bottom-right");
    expect(minimapCorner(canvas, map, { x: 10, y: 10, width: 50, height: 20 })).toBe("bottom-right");
    expect(minimapCorner(canvas, map, { x: 700, y: 450, width: 50, height: 20 })).toBe("top-right");
  });
  it("never covers a node that spans the right side", () => {
    const focus = { x: 600, y: 0, width: 200, height: 500 };
    const corner = minimapCorner(canvas, map, focus);
    expect(corner.endsWith("left")).toBe(true);
  });
});

describe("ports", () => {
  it("refuses an arg that does not fit, saying why, and takes one that does", () => {
    const graph = bound();
    expect(portProblem(graph, "arg:x", "b", "n")).toBe("b.n refuses x: dtype f32 does not fit dtype i32");
    expect(portProblem(graph, "arg:n", "b", "n")).toBeNull();
    expect(portProblem(graph, "a", "b", "n")).toContain("drag from a buffer");
    expect(portProblem(graph, "arg:x", "b", "zz")).toBe("b has no parameter zz");
  });
});

describe("guessed bindings", () => {
  it("never guesses one arg for two parameters of a dispatch", () => {
    // the axpy: a, x, y with x and y the only f32 ndarrays named otherwise
    const params = [param("a", { kind: "scalar", ndim: 0 }), param("x"), param("y")];
    const args = [arg("v"), arg("x"), arg("s", { kind: "scalar", ndim: 0 })];
    const { bindings, guessed } = guessBindings(params, args);
    expect(bindings).toEqual({ a: "s", x: "x", y: null });
    expect(guessed).toEqual(["a", "x"]);
  });
});

describe("ELK input", () => {
  it("gives each dispatch its parameters as ports on top, containers as compound nodes and program order as edges", () => {
    const graph = bound();
    const root = elkGraph(graph, nodeSizes(graph, measure));
    const a = root.children!.find((c) => c.id === "a")!;
    expect(a.ports!.map((p) => p.id)).toEqual([portId("a", "x"), portId("a", "y")]);
    expect(root.edges!.some((e) => e.sources[0] === "a" && e.targets[0] === "b")).toBe(true);
    expect(root.edges!.some((e) => e.sources[0] === "arg:n" && e.targets[0] === portId("b", "n"))).toBe(true);
    const nested = elkGraph(sampleGraph(), nodeSizes(sampleGraph(), measure));
    expect(nested.children!.find((c) => c.id === "substep")!.children!.map((c) => c.id)).toEqual([
      "substep/p2g",
      "substep/g2p",
    ]);
  });

  it("reads nested positions back as absolute ones", () => {
    const at = elkPositions({
      id: "root",
      children: [{ id: "g", x: 100, y: 50, children: [{ id: "g/a", x: 10, y: 20, width: 5, height: 5 }] }],
    });
    expect(at.get("g/a")).toEqual({ x: 110, y: 70 });
  });
});

/** A graph of `count` dispatches one after another, each binding the same x and y: large, and one chain. */
function chain(count: number): GraphView {
  const nodes: DispatchView[] = Array.from({ length: count }, (_, k) => dispatch(`s${k}`, null, k, { x: "x", y: "y" }));
  return { name: "big", version: 1, args: [arg("x"), arg("y")], nodes, body: nodes.map((n) => n.id), layout: {} };
}

describe("ELK input of a large graph", () => {
  it("leaves the bindings out (each would cross every layer) but keeps program order", () => {
    const graph = chain(80);
    const root = elkGraph(graph, nodeSizes(graph, measure));
    expect(root.edges!.length).toBe(79);
    expect(root.edges!.every((e) => e.id.startsWith("order"))).toBe(true);
  });

  it("is laid out by ELK in program order, top to bottom", async () => {
    const graph = chain(120);
    const root = elkGraph(graph, nodeSizes(graph, measure));
    const at = elkPositions(await new ELK().layout(root));
    const ys = graph.nodes.map((n) => at.get(n.id)!.y);
    expect(ys.every((y, k) => k === 0 || y > ys[k - 1]!)).toBe(true);
  });
});
