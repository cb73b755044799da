import { describe, expect, it } from "vitest";

import { OVERVIEW_MAX, centreOn, clipRect, needsOverview, overviewScale, visibleRect } from "../src/minimap";
import { readableFit } from "../src/viewport";

describe("overview geometry", () => {
  it("scales the whole drawing into the overview's box, keeping its aspect", () => {
    const k = overviewScale(400, 2000);
    expect(k).toBeCloseTo(OVERVIEW_MAX.height / 2000);
    expect(400 * k).toBeLessThanOrEqual(OVERVIEW_MAX.width);
    expect(overviewScale(1800, 100)).toBeCloseTo(OVERVIEW_MAX.width / 1800);
    expect(overviewScale(0, 100)).toBe(0);
  });

  it("frames the part of the drawing the view shows", () => {
    // drawing point (100, 50) at the view's origin, zoom 2: a 400 x 300 view shows 200 x 150 units
    const v = { scale: 2, x: -200, y: -100 };
    expect(visibleRect(v, 400, 300)).toEqual({ x: 100, y: 50, width: 200, height: 150 });
    expect(clipRect({ x: -10, y: 1900, width: 100, height: 300 }, 400, 2000)).toEqual({
      x: 0,
      y: 1900,
      width: 90,
      height: 100,
    });
  });

  it("centres the view on the drawing point under an overview click, at the same zoom", () => {
    const k = overviewScale(400, 2000);
    const v0 = { scale: 0.82, x: 10, y: 16 };
    const v = centreOn(v0, 40 * k * 5, 1500 * k, k, 600, 500);
    expect(v.scale).toBe(0.82);
    // the drawing point (200, 1500) now shows at the view's centre
    expect(200 * v.scale + v.x).toBeCloseTo(300);
    expect(1500 * v.scale + v.y).toBeCloseTo(250);
    // and the frame drawn for it is centred on that point
    const r = visibleRect(v, 600, 500);
    expect(r.x + r.width / 2).toBeCloseTo(200);
    expect(r.y + r.height / 2).toBeCloseTo(1500);
  });

  it("maps the view to its frame and back: a click on the frame's centre leaves the view as it is", () => {
    const k = overviewScale(700, 2600);
    for (const v of [
      { scale: 0.82, x: 16, y: -900 },
      { scale: 1.5, x: -300, y: -2000 },
      { scale: 2, x: 40, y: 12 },
    ]) {
      const r = visibleRect(v, 640, 480);
      const back = centreOn(v, (r.x + r.width / 2) * k, (r.y + r.height / 2) * k, k, 640, 480);
      expect(back.scale).toBe(v.scale);
      expect(back.x).toBeCloseTo(v.x);
      expect(back.y).toBeCloseTo(v.y);
    }
  });

  it("is shown only when the readable zoom leaves part of the drawing out", () => {
    const tall = readableFit(400, 2000, 600, 500);
    expect(needsOverview(tall, 400, 2000, 600, 500)).toBe(true);
    const small = readableFit(300, 200, 600, 500);
    expect(needsOverview(small, 300, 200, 600, 500)).toBe(false);
    expect(needsOverview(small, 0, 0, 600, 500)).toBe(false);
    // panned off by the user: part is hidden again
    expect(needsOverview({ ...small, x: -200 }, 300, 200, 600, 500)).toBe(true);
  });
});
