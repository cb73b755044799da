import { describe, expect, it } from "vitest";

import {
  ARG_ROLES,
  argNameProblem,
  argUses,
  parseShapeEdit,
  parseShapeText,
  redeclareSpec,
  sameArgShape,
  shapeFieldText,
  takesShape,
} from "../src/panels/argEditor";
import type { DispatchView } from "../src/wire/protocol";
import { arg, sampleGraph } from "./fixtures";

const args = [arg("x"), arg("grid_v", { ndim: 2 }), arg("dt", { kind: "scalar", ndim: 0 })];

describe("the arg name check", () => {
  it("accepts a free identifier and the arg's own name", () => {
    expect(argNameProblem("pos", "x", args)).toBeNull();
    expect(argNameProblem("_tmp2", "x", args)).toBeNull();
    expect(argNameProblem("x", "x", args)).toBeNull();
  });

  it("refuses a name another arg has, saying so", () => {
    expect(argNameProblem("grid_v", "x", args)).toBe('"grid_v" is already declared: pick another name');
  });

  it("refuses what is not a name, a keyword, a blank or an overlong name", () => {
    expect(argNameProblem("bad name", "x", args)).toContain("is not a name");
    expect(argNameProblem("2x", "x", args)).toContain("not starting with a digit");
    expect(argNameProblem("p\u00e9", "x", args)).toContain("is not a name");
    expect(argNameProblem("lambda", "x", args)).toContain("Python keyword");
    expect(argNameProblem("", "x", args)).toBe("give a name");
    expect(argNameProblem("a".repeat(129), "x", args)).toContain("at most 128");
    expect(argNameProblem("a".repeat(128), "x", args)).toBeNull();
  });
});

describe("the shape field", () => {
  it("is offered for ndarrays with dimensions only", () => {
    expect(takesShape(arg("x"))).toBe(true);
    expect(takesShape(arg("dt", { kind: "scalar", ndim: 0 }))).toBe(false);
    expect(takesShape(arg("t", { kind: "texture", ndim: 2, dtype: null }))).toBe(false);
  });

  it("shows the declared shape, blank for any", () => {
    expect(shapeFieldText(arg("x"))).toBe("");
    expect(shapeFieldText(arg("g", { ndim: 2, shape: ["G", 64] }))).toBe("G, 64");
  });

  it("parses sizes and dim names, one per dimension; blank is any shape", () => {
    const grid = arg("g", { ndim: 2 });
    expect(parseShapeEdit("G, G", grid)).toEqual({ ok: true, shape: ["G", "G"] });
    expect(parseShapeEdit("(64, n)", grid)).toEqual({ ok: true, shape: [64, "n"] });
    expect(parseShapeEdit("  ", grid)).toEqual({ ok: true, shape: null });
  });

  it("says what to type when the dims do not fit the arg's ndim", () => {
    const grid = arg("g", { ndim: 2 });
    for (const bad of ["n", "n, m, k", "n-1, 4"]) {
      expect(parseShapeEdit(bad, grid)).toEqual({
        ok: false,
        reason:
          "shape: give 2 sizes or dim names, one per dimension (for example n, 64), or leave it blank for any shape",
      });
    }
  });

  it("asks a 1-d arg for one size, in the singular", () => {
    expect(parseShapeEdit("n, m", arg("v", { ndim: 1 }))).toEqual({
      ok: false,
      reason: "shape: give 1 size or dim name, one per dimension (for example n), or leave it blank for any shape",
    });
  });

  it("names a number that is no size (negative, zero, a fraction) instead of asking for the count", () => {
    for (const [typed, bad] of [
      ["-3, 4", "-3"],
      ["(4, 0)", "0"],
      ["2.5", "2.5"],
      ["-4", "-4"],
    ] as const) {
      expect(parseShapeText(typed, typed.includes(",") ? 2 : 1)).toEqual({
        ok: false,
        reason: `shape: ${bad} is not a size; sizes are whole numbers from 1 (or dim names such as n)`,
      });
    }
  });

  it("tells a changed shape from the same one", () => {
    expect(sameArgShape(null, null)).toBe(true);
    expect(sameArgShape(["n"], ["n"])).toBe(true);
    expect(sameArgShape(["n"], null)).toBe(false);
    expect(sameArgShape([64], ["64"])).toBe(false);
    expect(sameArgShape(["n", 2], ["n"])).toBe(false);
  });
});

describe("the redeclare spec", () => {
  it("keeps everything but the shape", () => {
    const v = arg("v", { ndim: 1, element_shape: [2], role: "output", label: "ndarray vec2 f32, ndim=1" });
    expect(redeclareSpec(v, ["n"])).toEqual({
      name: "v",
      kind: "ndarray",
      dtype: "f32",
      ndim: 1,
      element_shape: [2],
      fmt: null,
      role: "output",
      shape: ["n"],
    });
    expect(redeclareSpec(v, null).shape).toBeNull();
  });
});

describe("where an arg is bound", () => {
  it("lists every dispatch parameter bound to it, in program order", () => {
    const graph = sampleGraph();
    const byId = new Map(graph.nodes.map((n) => [n.id, n]));
    (byId.get("substep/p2g") as DispatchView).bindings = { x: "x", v: "v" };
    (byId.get("render") as DispatchView).bindings = { img: null, pos: "x" };
    expect(argUses(graph, "x")).toEqual([
      ["substep/p2g", "x"],
      ["render", "pos"],
    ]);
    expect(argUses(graph, "v")).toEqual([["substep/p2g", "v"]]);
    expect(argUses(graph, "nowhere")).toEqual([]);
  });
});

describe("the roles offered", () => {
  it("are the model's roles", () => {
    expect([...ARG_ROLES].sort()).toEqual(["input", "output", "state", "temp"]);
  });
});
