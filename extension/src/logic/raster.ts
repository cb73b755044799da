/**
 * Pictures as pixels and coordinates, without a canvas: what `plot.ts` draws, kept pure so that
 * it is unit-tested.
 */

import { type ColorScale, colorOf, finiteRange } from "./colorScale";

/** RGBA pixels of a heat map of `h` x `w` values (row 0 at the top). */
export function heatmapPixels(
  values: ArrayLike<number>,
  h: number,
  w: number,
  scale: ColorScale,
): Uint8ClampedArray<ArrayBuffer> {
  const out = new Uint8ClampedArray(new ArrayBuffer(h * w * 4));
  for (let i = 0; i < h * w; i++) {
    const [r, g, b] = colorOf(scale, values[i]!);
    out[4 * i] = r;
    out[4 * i + 1] = g;
    out[4 * i + 2] = b;
    out[4 * i + 3] = 255;
  }
  return out;
}

/** How many values are NaN, +Inf and -Inf. */
export function countNonfinite(values: ArrayLike<number>): { nan: number; posInf: number; negInf: number } {
  let nan = 0;
  let posInf = 0;
  let negInf = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (Number.isNaN(v)) nan++;
    else if (v === Infinity) posInf++;
    else if (v === -Infinity) negInf++;
  }
  return { nan, posInf, negInf };
}

export interface Box {
  width: number;
  height: number;
  /** Blank margin on every side, in pixels. */
  pad: number;
}

/** One bucket of a line plot: a vertical bar from y0 to y1 at x, or a NaN/Inf mark. */
export interface LineBar {
  x: number;
  y0: number;
  y1: number;
  bad: boolean;
}

/**
 * Bars of a line plot of `(min, max)` buckets (the `[n, 2]` picture), across the box; the y range
 * is the finite range of all buckets, widened when constant. Buckets holding NaN or Inf are `bad`.
 */
export function lineBars(
  envelope: ArrayLike<number>,
  n: number,
  box: Box,
): { bars: LineBar[]; lo: number; hi: number } {
  const range = finiteRange(envelope) ?? { lo: 0, hi: 1 };
  let { lo, hi } = range;
  if (lo === hi) {
    lo -= 0.5;
    hi += 0.5;
  }
  const inner = { w: box.width - 2 * box.pad, h: box.height - 2 * box.pad };
  const y = (v: number): number => box.pad + inner.h * (1 - (v - lo) / (hi - lo));
  const bars: LineBar[] = [];
  for (let i = 0; i < n; i++) {
    const a = envelope[2 * i]!;
    const b = envelope[2 * i + 1]!;
    const x = box.pad + (n === 1 ? inner.w / 2 : (inner.w * i) / (n - 1));
    if (!Number.isFinite(a) || !Number.isFinite(b)) {
      bars.push({ x, y0: box.pad, y1: box.pad + inner.h, bad: true });
      continue;
    }
    bars.push({ x, y0: y(b), y1: y(a), bad: false });
  }
  return { bars, lo, hi };
}

/** Pixel positions of `(x, y)` points scaled into the box (y up), with their extent; NaN/Inf points are skipped. */
export function scatterPoints(
  points: ArrayLike<number>,
  n: number,
  box: Box,
): {
  xs: Float32Array;
  ys: Float32Array;
  count: number;
  skipped: number;
  extent: { x0: number; x1: number; y0: number; y1: number };
} {
  let x0 = Infinity;
  let x1 = -Infinity;
  let y0 = Infinity;
  let y1 = -Infinity;
  for (let i = 0; i < n; i++) {
    const x = points[2 * i]!;
    const y = points[2 * i + 1]!;
    if (!Number.isFinite(x) || !Number.isFinite(y)) continue;
    x0 = Math.min(x0, x);
    x1 = Math.max(x1, x);
    y0 = Math.min(y0, y);
    y1 = Math.max(y1, y);
  }
  if (x0 > x1) [x0, x1, y0, y1] = [0, 1, 0, 1];
  if (x0 === x1) [x0, x1] = [x0 - 0.5, x1 + 0.5];
  if (y0 === y1) [y0, y1] = [y0 - 0.5, y1 + 0.5];
  // one scale for both axes, so particles keep their aspect
  const inner = Math.min(box.width, box.height) - 2 * box.pad;
  const s = inner / Math.max(x1 - x0, y1 - y0);
  const xs = new Float32Array(n);
  const ys = new Float32Array(n);
  let count = 0;
  for (let i = 0; i < n; i++) {
    const x = points[2 * i]!;
    const y = points[2 * i + 1]!;
    if (!Number.isFinite(x) || !Number.isFinite(y)) continue;
    xs[count] = box.pad + (x - x0) * s;
    ys[count] = box.height - box.pad - (y - y0) * s;
    count++;
  }
  return { xs, ys, count, skipped: n - count, extent: { x0, x1, y0, y1 } };
}
