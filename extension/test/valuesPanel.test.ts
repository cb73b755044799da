import { describe, expect, it } from "vitest";

import type { ValueEntryView } from "../src/wire/protocol";
import { missingArgIn, parseScalar, parseShape, shapeHint } from "../src/panels/valuesPanel";

function entry(shape: (number | string)[] | null): ValueEntryView {
  return {
    arg: "x",
    kind: "ndarray",
    dtype: "f32",
    role: "state",
    shape,
    ndim: 1,
    needed: true,
    given: false,
    summary: "",
  };
}

describe("the missing-value error", () => {
  it("names the arg in the widget's wording and in run()'s", () => {
    expect(missingArgIn("Debug needs a value for 'x_2' (graph 'g'): give it in the Values panel")).toBe("x_2");
    expect(missingArgIn("Debug needs values for 'a', 'b' (graph 'g'): give them")).toBe("a");
    expect(missingArgIn("run() of graph 'g' is missing 'y'; pass y=...")).toBe("y");
    expect(missingArgIn("binding refused: no such arg")).toBeNull();
  });
});

describe("a shape typed in", () => {
  it("takes sizes separated by commas, spaces or x, in parentheses or not", () => {
    expect(parseShape("64", 1)).toEqual({ ok: true, shape: [64] });
    expect(parseShape("(64, 3)", 2)).toEqual({ ok: true, shape: [64, 3] });
    expect(parseShape("8x8", 2)).toEqual({ ok: true, shape: [8, 8] });
  });
  it("refuses a wrong count of sizes, zero and fractions, saying why", () => {
    const few = parseShape("64", 2);
    expect(few.ok).toBe(false);
    expect(!few.ok && few.reason).toContain("2 dim(s)");
    expect(parseShape("0", 1).ok).toBe(false);
    expect(parseShape("2.5", 1).ok).toBe(false);
    expect(parseShape("", 1).ok).toBe(false);
  });
  it("is prefilled only from sizes the arg declares", () => {
    expect(shapeHint(entry([1]))).toBe("1");
    expect(shapeHint(entry(["n"]))).toBe("");
    expect(shapeHint(entry(null))).toBe("");
  });
});

describe("a scalar typed in", () => {
  it("is a finite number, whole for integer dtypes", () => {
    expect(parseScalar(" 2.5 ", "f32")).toEqual({ ok: true, value: 2.5 });
    expect(parseScalar("3", "i32")).toEqual({ ok: true, value: 3 });
    expect(parseScalar("3.5", "i32").ok).toBe(false);
    expect(parseScalar("", "f32").ok).toBe(false);
    expect(parseScalar("inf", "f32").ok).toBe(false);
  });
});
