import { describe, expect, it } from "vitest";

import {
  NAN_RGB,
  NEG_INF_RGB,
  POS_INF_RGB,
  colorAt,
  colorOf,
  finiteRange,
  formatG,
  formatNum,
  formatSeconds,
  position,
  scaleFor,
  ticks,
  toNumber,
} from "../src/logic/colorScale";

describe("scaleFor", () => {
  it("spans the finite values, ignoring NaN and Inf", () => {
    expect(scaleFor([3, NaN, -1, Infinity, 2, -Infinity])).toEqual({ kind: "sequential", lo: -1, hi: 3 });
    expect(finiteRange([NaN, Infinity])).toBeNull();
  });

  it("widens a constant so it still has a colour", () => {
    expect(scaleFor([5, 5])).toEqual({ kind: "sequential", lo: 2.5, hi: 7.5 });
    expect(scaleFor([0, 0])).toEqual({ kind: "sequential", lo: -1, hi: 1 });
    expect(scaleFor([NaN])).toEqual({ kind: "sequential", lo: -1, hi: 1 });
  });

  it("centres a diverging scale on zero", () => {
    expect(scaleFor([-1, 4], "diverging")).toEqual({ kind: "diverging", lo: -4, hi: 4 });
    expect(scaleFor([0, 0], "diverging")).toEqual({ kind: "diverging", lo: -1, hi: 1 });
  });
});

describe("colorOf", () => {
  const scale = { kind: "sequential" as const, lo: 0, hi: 1 };

  it("runs from viridis' dark purple to its yellow", () => {
    expect(colorOf(scale, 0)).toEqual([68, 1, 84]);
    expect(colorOf(scale, 1)).toEqual([253, 231, 37]);
    expect(colorOf(scale, 0.5)).toEqual([38, 130, 142]);
  });

  it("clamps values outside the range", () => {
    expect(colorOf(scale, -5)).toEqual(colorOf(scale, 0));
    expect(colorOf(scale, 9)).toEqual(colorOf(scale, 1));
  });

  it("gives NaN and infinities their own colours on either scale", () => {
    for (const kind of ["sequential", "diverging"] as const) {
      const s = { kind, lo: -1, hi: 1 };
      expect(colorOf(s, NaN)).toEqual(NAN_RGB);
      expect(colorOf(s, Infinity)).toEqual(POS_INF_RGB);
      expect(colorOf(s, -Infinity)).toEqual(NEG_INF_RGB);
      for (let t = 0; t <= 1; t += 0.05) {
        expect(colorAt(kind, t)).not.toEqual(NAN_RGB);
        expect(colorAt(kind, t)).not.toEqual(POS_INF_RGB);
        expect(colorAt(kind, t)).not.toEqual(NEG_INF_RGB);
      }
    }
  });

  it("puts zero at the grey centre of a diverging scale", () => {
    expect(colorOf({ kind: "diverging", lo: -2, hi: 2 }, 0)).toEqual([221, 221, 221]);
    expect(position({ kind: "diverging", lo: -2, hi: 2 }, 1)).toBe(0.75);
    expect(position(scale, NaN)).toBeNaN();
  });
});

describe("ticks", () => {
  it("picks round steps of 1, 2 or 5 times a power of ten", () => {
    expect(ticks(0, 1, 5)).toEqual([0, 0.2, 0.4, 0.6, 0.8, 1]);
    expect(ticks(-3, 7, 4)).toEqual([-2, 0, 2, 4, 6]);
    expect(ticks(0.00012, 0.00018, 3)).toEqual([0.00012, 0.00014, 0.00016, 0.00018]);
  });

  it("copes with an empty or broken range", () => {
    expect(ticks(1, 1)).toEqual([1]);
    expect(ticks(NaN, 1)).toEqual([]);
  });
});

describe("formatG", () => {
  it("writes numbers as Python's format(x, '.6g') does", () => {
    const cases: [number, string][] = [
      [0.599938690662384, "0.599939"],
      [0.000108724, "0.000108724"],
      [1e-5, "1e-05"],
      [123456789, "1.23457e+08"],
      [999999.5, "1e+06"],
      [100000, "100000"],
      [-2.5, "-2.5"],
      [3.0, "3"],
      [0, "0"],
      [NaN, "nan"],
      [-Infinity, "-inf"],
    ];
    for (const [x, text] of cases) expect(formatG(x)).toBe(text);
    expect(formatG(0.123456, 3)).toBe("0.123");
  });

  it("reads the panels' JSON numbers, where NaN and Inf are strings", () => {
    expect(formatNum(null)).toBe("\u2014");
    expect(formatNum("nan")).toBe("nan");
    expect(formatNum(12)).toBe("12");
    expect(formatNum(true)).toBe("True");
    expect(toNumber("inf")).toBe(Infinity);
    expect(toNumber("-inf")).toBe(-Infinity);
    expect(toNumber("nan")).toBeNaN();
    expect(toNumber(null)).toBeNull();
  });

  it("writes durations with a unit", () => {
    expect(formatSeconds(0.000412)).toBe("412 us");
    expect(formatSeconds(0.00307)).toBe("3.07 ms");
    expect(formatSeconds(1.25)).toBe("1.25 s");
  });
});
