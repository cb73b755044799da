import { describe, expect, it } from "vitest";

import type { DimEntryView, ValueEntryView } from "../src/wire/protocol";
import {
  dimState,
  dimStatus,
  missingArgIn,
  parseDimSize,
  parseScalar,
  parseShape,
  shapeHint,
  valuesSummary,
} from "../src/panels/valuesPanel";

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

function dimEntry(fields: Partial<DimEntryView>): DimEntryView {
  return { dim: "m", size: null, given: false, set_by: null, args: ["grid"], needed: true, ...fields };
}

describe("a dim's size typed in", () => {
  it("takes a whole number >= 1", () => {
    expect(parseDimSize("m", " 64 ")).toEqual({ ok: true, size: 64 });
  });
  it("refuses anything else, naming the dim and showing the form", () => {
    for (const text of ["", "0", "-2", "2.5", "m"]) {
      const parsed = parseDimSize("m", text);
      expect(parsed.ok).toBe(false);
      expect(!parsed.ok && parsed.reason).toBe("dim m takes a size, a whole number >= 1 (e.g. m=64)");
    }
  });
});

describe("the Dims list", () => {
  it("says where a dim's size comes from, or that Debug needs one", () => {
    expect(dimState(dimEntry({}))).toBe("missing");
    expect(dimStatus(dimEntry({}))).toBe("missing: no value sizes it; give m a size");
    const given = dimEntry({ size: 64, given: true, needed: false });
    expect([dimState(given), dimStatus(given)]).toEqual(["given", "\u2713 m = 64"]);
    const set = dimEntry({ dim: "n", size: 8, set_by: "x", needed: false, args: ["x", "t"] });
    expect([dimState(set), dimStatus(set)]).toEqual(["set", "n = 8, from x's value"]);
    expect(dimState(dimEntry({ needed: false }))).toBe("unknown");
  });
  it("puts missing dims in the summary beside missing args", () => {
    const view = { entries: [], missing: ["x"], dims: [dimEntry({})], missing_dims: ["m"], in_notebook: true };
    expect(valuesSummary(view)).toBe("Missing: x, dim m \u2014 Debug needs these.");
    expect(valuesSummary({ ...view, missing: [], missing_dims: [] })).toBe("Every value Debug needs is given.");
  });
});
