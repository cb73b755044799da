import { describe, expect, it } from "vitest";

import {
  IDENTITY,
  MAX_SCALE,
  MIN_READABLE_SCALE,
  MIN_SCALE,
  cssTransform,
  fitView,
  readableFit,
  showsAll,
  isClick,
  panBy,
  reveal,
  wheelFactor,
  zoomAt,
} from "../src/viewport";

const at = (v: { scale: number; x: number; y: number }, cx: number, cy: number) => [
  cx * v.scale + v.x,
  cy * v.scale + v.y,
];

describe("viewport", () => {
  it("zooms about the pointer, keeping the point under it in place", () => {
    const v0 = { scale: 1.5, x: 20, y: -10 };
    const v1 = zoomAt(v0, 2, 100, 50);
    expect(v1.scale).toBe(3);
    const drawing = [(100 - v0.x) / v0.scale, (50 - v0.y) / v0.scale] as const;
    const [sx, sy] = at(v1, drawing[0], drawing[1]);
    expect(sx).toBeCloseTo(100);
    expect(sy).toBeCloseTo(50);
  });

  it("clamps the zoom", () => {
    expect(zoomAt(IDENTITY, 1000, 0, 0).scale).toBe(MAX_SCALE);
    expect(zoomAt(IDENTITY, 1e-6, 0, 0).scale).toBe(MIN_SCALE);
  });

  it("pans by view pixels", () => {
    expect(panBy({ scale: 2, x: 1, y: 2 }, 10, -5)).toEqual({ scale: 2, x: 11, y: -3 });
  });

  it("zooms in on a wheel up and out on a wheel down, per pixel, line or page", () => {
    expect(wheelFactor(-100, 0)).toBeGreaterThan(1);
    expect(wheelFactor(100, 0)).toBeLessThan(1);
    expect(wheelFactor(-3, 1)).toBeGreaterThan(1);
    expect(wheelFactor(1, 2)).toBeLessThan(1);
    expect(wheelFactor(1e9, 0)).toBeGreaterThan(0.5);
  });

  it("fits a drawing into the view, centred and never enlarged", () => {
    const v = fitView(1000, 500, 500, 500, 0);
    expect(v.scale).toBe(0.5);
    expect(v.y).toBeCloseTo(125);
    expect(fitView(10, 10, 500, 500).scale).toBe(1);
    expect(fitView(0, 10, 500, 500)).toEqual(IDENTITY);
  });

  it("fits readable: never below the readable zoom, showing a big drawing from its top for panning", () => {
    expect(readableFit(1000, 500, 500, 500, 0.4, 0)).toEqual(fitView(1000, 500, 500, 500, 0));
    const tall = readableFit(300, 3000, 600, 500);
    expect(tall.scale).toBe(MIN_READABLE_SCALE);
    expect(tall.y).toBe(16);
    expect(tall.x).toBeCloseTo((600 - 300 * MIN_READABLE_SCALE) / 2);
    expect(showsAll(tall, 300, 3000, 600, 500)).toBe(false);
    const wide = readableFit(3000, 100, 600, 500);
    expect(wide.x).toBeCloseTo((600 - 3000 * MIN_READABLE_SCALE) / 2);
    expect([wide.y, wide.scale]).toEqual([(500 - 100 * MIN_READABLE_SCALE) / 2, MIN_READABLE_SCALE]);
    expect(showsAll(fitView(300, 3000, 600, 500), 300, 3000, 600, 500)).toBe(true);
  });

  it("pans the least needed to reveal a box", () => {
    const v = { scale: 1, x: 0, y: 0 };
    expect(reveal(v, { x0: 10, y0: 10, x1: 20, y1: 20 }, 100, 100, 0)).toEqual(v);
    expect(reveal(v, { x0: 150, y0: 10, x1: 160, y1: 20 }, 100, 100, 0)).toEqual({ scale: 1, x: -60, y: 0 });
    expect(reveal(v, { x0: -30, y0: 10, x1: -20, y1: 20 }, 100, 100, 0)).toEqual({ scale: 1, x: 30, y: 0 });
  });

  it("tells a click from a drag", () => {
    expect(isClick(1, 2)).toBe(true);
    expect(isClick(10, 0)).toBe(false);
  });

  it("writes the CSS transform", () => {
    expect(cssTransform({ scale: 2, x: 3, y: 4 })).toBe("translate(3px, 4px) scale(2)");
  });
});
