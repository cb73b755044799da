/**
 * Colour scales for the inspect panel's pictures, and number formatting.
 *
 * Values map linearly onto a sequential scale (viridis, for buffers) or a diverging one centred
 * on zero (blue-grey-red, for diffs). NaN and infinities never take a colour of the scale: NaN is
 * magenta, +Inf white and -Inf black, so they stand out on either scale, and the legend says so.
 */

export type Rgb = readonly [number, number, number];
export type ScaleKind = "sequential" | "diverging";

export interface ColorScale {
  kind: ScaleKind;
  lo: number;
  hi: number;
}

export const NAN_RGB: Rgb = [255, 0, 255];
export const POS_INF_RGB: Rgb = [255, 255, 255];
export const NEG_INF_RGB: Rgb = [0, 0, 0];

/** Viridis (matplotlib's, public domain) at 9 evenly spaced stops; interpolated in between. */
const VIRIDIS: readonly Rgb[] = [
  [68, 1, 84],
  [72, 40, 120],
  [62, 73, 137],
  [49, 104, 142],
  [38, 130, 142],
  [31, 158, 137],
  [53, 183, 121],
  [110, 206, 88],
  [253, 231, 37],
];

/** A cool-warm diverging scale: blue, light grey at the centre, red. */
const DIVERGING: readonly Rgb[] = [
  [59, 76, 192],
  [141, 176, 254],
  [221, 221, 221],
  [244, 154, 123],
  [180, 4, 38],
];

function interpolate(stops: readonly Rgb[], t: number): Rgb {
  const x = Math.min(1, Math.max(0, t)) * (stops.length - 1);
  const i = Math.min(stops.length - 2, Math.floor(x));
  const f = x - i;
  const a = stops[i]!;
  const b = stops[i + 1]!;
  return [
    Math.round(a[0] + (b[0] - a[0]) * f),
    Math.round(a[1] + (b[1] - a[1]) * f),
    Math.round(a[2] + (b[2] - a[2]) * f),
  ];
}

/** The smallest and largest finite value (null when there is none). */
export function finiteRange(values: ArrayLike<number>): { lo: number; hi: number } | null {
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (!Number.isFinite(v)) continue;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  return lo <= hi ? { lo, hi } : null;
}

/**
 * The scale for some values: their finite range (sequential), or a range symmetric about zero
 * (diverging). A constant widens to a unit-wide range so it still gets a colour.
 */
export function scaleFor(values: ArrayLike<number>, kind: ScaleKind = "sequential"): ColorScale {
  const range = finiteRange(values) ?? { lo: 0, hi: 0 };
  if (kind === "diverging") {
    const m = Math.max(Math.abs(range.lo), Math.abs(range.hi));
    return { kind, lo: -(m || 1), hi: m || 1 };
  }
  if (range.lo === range.hi) {
    const pad = range.lo === 0 ? 1 : Math.abs(range.lo) * 0.5;
    return { kind, lo: range.lo - pad, hi: range.hi + pad };
  }
  return { kind, lo: range.lo, hi: range.hi };
}

/** Where a value falls on the scale, 0..1 (clamped); NaN for non-finite values. */
export function position(scale: ColorScale, v: number): number {
  if (!Number.isFinite(v)) return NaN;
  const span = scale.hi - scale.lo;
  return span > 0 ? Math.min(1, Math.max(0, (v - scale.lo) / span)) : 0.5;
}

/** The colour of a value. */
export function colorOf(scale: ColorScale, v: number): Rgb {
  if (Number.isNaN(v)) return NAN_RGB;
  if (v === Infinity) return POS_INF_RGB;
  if (v === -Infinity) return NEG_INF_RGB;
  const t = position(scale, v);
  return interpolate(scale.kind === "diverging" ? DIVERGING : VIRIDIS, t);
}

/** The colour at a point 0..1 of the scale itself (for the colour bar). */
export function colorAt(kind: ScaleKind, t: number): Rgb {
  return interpolate(kind === "diverging" ? DIVERGING : VIRIDIS, t);
}

/** About `count` round tick values covering lo..hi (1, 2 or 5 times a power of ten apart). */
export function ticks(lo: number, hi: number, count = 5): number[] {
  if (!Number.isFinite(lo) || !Number.isFinite(hi) || hi <= lo || count < 1) return Number.isFinite(lo) ? [lo] : [];
  const raw = (hi - lo) / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  // the round step nearest the raw one (on a log scale)
  let step = power;
  for (const m of [2, 5, 10]) {
    if (Math.abs(Math.log((m * power) / raw)) < Math.abs(Math.log(step / raw))) step = m * power;
  }
  const out: number[] = [];
  const first = Math.ceil(lo / step - 1e-9);
  for (let k = first; k * step <= hi + step * 1e-9; k++) {
    const v = k * step;
    out.push(Math.abs(v) < step * 1e-9 ? 0 : Number(v.toPrecision(12)));
  }
  return out;
}

/**
 * A number the way Python's `format(x, ".6g")` writes it (`0.000123457`, `1.5e+07`, `nan`), so the
 * panel and a `print` in the notebook agree digit for digit.
 */
export function formatG(x: number, digits = 6): string {
  if (Number.isNaN(x)) return "nan";
  if (x === Infinity) return "inf";
  if (x === -Infinity) return "-inf";
  if (x === 0) return Object.is(x, -0) ? "-0" : "0";
  const exp = Math.floor(Math.log10(Math.abs(Number(x.toPrecision(digits)))));
  if (exp < -4 || exp >= digits) {
    const [mantissa, e] = x.toExponential(digits - 1).split("e") as [string, string];
    const n = Number(e);
    return `${stripZeros(mantissa)}e${n < 0 ? "-" : "+"}${String(Math.abs(n)).padStart(2, "0")}`;
  }
  return stripZeros(x.toFixed(Math.max(0, digits - 1 - exp)));
}

function stripZeros(text: string): string {
  return text.includes(".") ? text.replace(/\.?0+$/, "") : text;
}

/** A JSON number of the panels (`"nan"`, `"inf"` travel as strings), as text. */
export function formatNum(value: number | string | boolean | null | undefined, digits = 6): string {
  if (value === null || value === undefined) return "\u2014";
  if (typeof value === "boolean") return value ? "True" : "False";
  if (typeof value === "string") return value;
  return Number.isInteger(value) && Math.abs(value) < 1e15 ? String(value) : formatG(value, digits);
}

/** A JSON number of the panels as a JS number (`"nan"` -> NaN); null when missing. */
export function toNumber(value: number | string | null | undefined): number | null {
  if (value === null || value === undefined) return null;
  if (typeof value === "number") return value;
  if (value === "nan") return NaN;
  if (value === "inf") return Infinity;
  if (value === "-inf") return -Infinity;
  return null;
}

/** A duration in seconds, short (`412 us`, `3.07 ms`, `1.25 s`), as graphlab's reports write it. */
export function formatSeconds(seconds: number): string {
  if (seconds < 1e-3) return `${Math.round(seconds * 1e6)} us`;
  if (seconds < 1) return `${formatG(seconds * 1e3, 3)} ms`;
  return `${formatG(seconds, 3)} s`;
}
