import { describe, expect, it } from "vitest";

import { type LoopFields, countArgs, flagArgs, freeName, structureOp } from "../src/panels/loopForm";
import type { ArgView, GraphView } from "../src/wire/protocol";

function arg(
  name: string,
  kind: ArgView["kind"],
  dtype: string,
  ndim: number,
  shape: (number | string)[] | null,
): ArgView {
  return {
    name,
    kind,
    dtype,
    ndim,
    element_shape: [],
    fmt: null,
    role: "state",
    shape,
    inferred_shape: null,
    label: "",
  };
}

const ARGS = [
  arg("flag", "ndarray", "i32", 1, [1]),
  arg("big", "ndarray", "i32", 1, [8]),
  arg("x", "ndarray", "f32", 1, null),
  arg("n", "scalar", "i32", 0, null),
  arg("dt", "scalar", "f32", 0, null),
];

function fields(over: Partial<LoopFields>): LoopFields {
  return { kind: "while", nodes: ["a", "b"], body: "body", flag: "flag", count: "", maxIter: "100", checkEvery: "4",
    guarded: false, withElse: false, into: null, index: null, ...over }; // prettier-ignore
}

describe("what the form offers", () => {
  it("offers one-element i32 ndarrays as flags and integer scalars as counts", () => {
    expect(flagArgs(ARGS)).toEqual(["flag"]);
    expect(countArgs(ARGS)).toEqual(["n"]);
  });
  it("suggests a body name no sequence has", () => {
    const graph: GraphView = {
      name: "g", version: 1, args: [], body: ["s"], layout: {},
      nodes: [{ id: "s", name: "s", parent: null, index: 0, kind: "sequence", sequence: "body", repeat: 1, children: [] }],
    }; // prettier-ignore
    expect(freeName(graph, "body")).toBe("body_2");
    expect(freeName(graph, "other")).toBe("other");
  });
});

describe("the edit the form sends", () => {
  it("is a while loop with max_iter and check_every", () => {
    expect(structureOp(fields({}))).toEqual({
      ok: true,
      op: { op: "make_loop", nodes: ["a", "b"], body: "body", into: null, index: null, mode: "while", flag: "flag",
        max_iter: 100, check_every: 4, guarded: false, name: "loop" }, // prettier-ignore
    });
  });
  it("is a counted loop with its count and no flag", () => {
    const op = structureOp(fields({ kind: "count", count: "n" }));
    expect(op.ok && op.op).toMatchObject({ op: "make_loop", mode: "count", count: "n" });
    expect(op.ok && "flag" in op.op).toBe(false);
  });
  it("is a conditional, with an else branch named after the body", () => {
    const op = structureOp(fields({ kind: "cond", withElse: true }));
    expect(op.ok && op.op).toMatchObject({ op: "make_cond", flag: "flag", body: "body", else_body: "body_else" });
  });
  it("names the field that is not ready", () => {
    const reason = (f: Partial<LoopFields>): string => {
      const r = structureOp(fields(f));
      return r.ok ? "" : r.reason;
    };
    expect(reason({ flag: "" })).toMatch(/^flag:/);
    expect(reason({ maxIter: "0" })).toMatch(/^max_iter:/);
    expect(reason({ checkEvery: "1.5" })).toMatch(/^check_every:/);
    expect(reason({ guarded: true, checkEvery: "1" })).toMatch(/^guarded:/);
    expect(reason({ kind: "count", count: "" })).toMatch(/^count:/);
    expect(reason({ body: "2x" })).toMatch(/^body:/);
  });
});
