import { describe, expect, it } from "vitest";

import { NAN_RGB, POS_INF_RGB } from "../src/logic/colorScale";
import { countNonfinite, heatmapPixels, lineBars, scatterPoints } from "../src/logic/raster";

describe("heatmapPixels", () => {
  it("colours every value, opaque, NaN and Inf in their own colours", () => {
    const px = heatmapPixels([0, 1, NaN, Infinity], 2, 2, { kind: "sequential", lo: 0, hi: 1 });
    expect(px.length).toBe(16);
    expect([...px.slice(0, 4)]).toEqual([68, 1, 84, 255]);
    expect([...px.slice(4, 8)]).toEqual([253, 231, 37, 255]);
    expect([...px.slice(8, 11)]).toEqual([...NAN_RGB]);
    expect([...px.slice(12, 15)]).toEqual([...POS_INF_RGB]);
  });

  it("counts what is not finite", () => {
    expect(countNonfinite([1, NaN, NaN, Infinity, -Infinity, 0])).toEqual({ nan: 2, posInf: 1, negInf: 1 });
  });
});

describe("lineBars", () => {
  const box = { width: 110, height: 60, pad: 5 };

  it("spreads buckets across the box, y up, over the finite range", () => {
    const { bars, lo, hi } = lineBars([0, 0, 1, 2, 2, 2], 3, box);
    expect([lo, hi]).toEqual([0, 2]);
    expect(bars.map((b) => b.x)).toEqual([5, 55, 105]);
    expect(bars[0]).toMatchObject({ y0: 55, y1: 55, bad: false });
    expect(bars[1]).toMatchObject({ y0: 5, y1: 30 }); // min 1 at mid-height, max 2 at the top
  });

  it("marks buckets holding NaN or Inf over the full height", () => {
    const { bars } = lineBars([0, 1, NaN, NaN, 1, Infinity], 3, box);
    expect(bars.map((b) => b.bad)).toEqual([false, true, true]);
    expect(bars[1]).toMatchObject({ y0: 5, y1: 55 });
  });
});

describe("scatterPoints", () => {
  it("keeps the aspect ratio and skips NaN/Inf points", () => {
    const pts = scatterPoints([0, 0, 1, 0.5, NaN, 2, 0.5, Infinity], 4, { width: 100, height: 100, pad: 0 });
    expect(pts.count).toBe(2);
    expect(pts.skipped).toBe(2);
    expect(pts.extent).toEqual({ x0: 0, x1: 1, y0: 0, y1: 0.5 });
    expect([...pts.xs.slice(0, 2)]).toEqual([0, 100]);
    expect([...pts.ys.slice(0, 2)]).toEqual([100, 50]); // y up; 0.5 of the x span is half the box
  });

  it("gives a unit extent when no point is finite", () => {
    expect(scatterPoints([NaN, NaN], 1, { width: 10, height: 10, pad: 1 }).extent).toEqual({
      x0: 0,
      x1: 1,
      y0: 0,
      y1: 1,
    });
  });
});
