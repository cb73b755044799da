import { describe, expect, it } from "vitest";

import { GIVE_VALUE_EVENT, type ValuesTarget, giveValueTarget, requestValue } from "../src/logic/giveValue";
import type { DimEntryView, ValueEntryView } from "../src/wire/protocol";
import {
  dimState,
  dimStatus,
  missingArgIn,
  missingValueIn,
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

describe("what a refusal asks the Values tab for", () => {
  it("is the dim Debug or Export lacks a size for, before any arg", () => {
    const exportSays =
      "Export needs a size for dim 'm' (the shape of temp 'grid' names it, and no value given sizes it): give it " +
      "in the Values panel, under Dims (m=64), or in the dims field here (in Python: gl.export(g, folder, dims={'m': 64}))";
    expect(missingValueIn(exportSays)).toEqual({ dim: "m" });
    expect(missingValueIn("Verification needs a size for dim 'n' (it draws values for 'x', 'y', ...)")).toEqual({
      dim: "n",
    });
    expect(missingValueIn("Debug needs a size for dim 'G2' (the shape of 'grid' names it)")).toEqual({ dim: "G2" });
  });
  it("is else the first missing arg, and nothing for other errors", () => {
    expect(missingValueIn("Debug needs values for 'a', 'b' (graph 'g'): give them")).toEqual({ arg: "a" });
    expect(missingValueIn("export failed: OutputPathError: tick \u201coverwrite the folder\u201d")).toBeNull();
  });
});

describe("the graphlab:give-value event", () => {
  it("opens the tab at the arg or dim its detail names", () => {
    expect(giveValueTarget({ arg: "x_2" })).toEqual({ arg: "x_2" });
    expect(giveValueTarget({ dim: "m" })).toEqual({ dim: "m" });
    expect(giveValueTarget({ arg: "x", dim: "m" })).toEqual({ arg: "x" });
  });
  it("opens the tab at its top for a detail it cannot read, rather than failing", () => {
    for (const detail of [null, undefined, {}, "x", 3, { arg: 3 }, { arg: "" }, { dim: null }]) {
      expect(giveValueTarget(detail)).toBeNull();
    }
  });
  it("carries what a component asks for up to the listener, bubbling", () => {
    const root = new EventTarget();
    const heard: ValuesTarget[] = [];
    root.addEventListener(GIVE_VALUE_EVENT, (e) => {
      expect(e.bubbles).toBe(true);
      heard.push(giveValueTarget((e as CustomEvent<unknown>).detail));
    });
    requestValue(root, { dim: "m" });
    requestValue(root, { arg: "x_2" });
    requestValue(root, null);
    expect(heard).toEqual([{ dim: "m" }, { arg: "x_2" }, null]);
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
