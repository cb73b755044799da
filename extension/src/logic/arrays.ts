/**
 * Arrays that arrive as bytes (the `inspect_*` traits: a DataView over little-endian floats) and
 * the index arithmetic of the value table.
 */

export type WireDtype = "f32" | "f64";

/**
 * The floats in `view`, as many as `shape` says. Copies into a fresh typed array when the bytes are
 * not aligned for a direct view or the machine is big-endian; throws when the bytes are too few.
 */
export function decodeFloats(
  view: DataView | null | undefined,
  dtype: WireDtype,
  shape: readonly number[],
): Float32Array | Float64Array {
  const count = shape.reduce((a, b) => a * b, 1);
  const size = dtype === "f64" ? 8 : 4;
  const bytes = view?.byteLength ?? 0;
  if (count === 0 || shape.length === 0) return dtype === "f64" ? new Float64Array(0) : new Float32Array(0);
  if (!view || bytes < count * size) {
    throw new RangeError(
      `expected ${count} ${dtype} values (${count * size} bytes) for shape [${shape.join(", ")}], got ${bytes} bytes`,
    );
  }
  const aligned = view.byteOffset % size === 0;
  if (aligned && LITTLE_ENDIAN) {
    return dtype === "f64"
      ? new Float64Array(view.buffer, view.byteOffset, count)
      : new Float32Array(view.buffer, view.byteOffset, count);
  }
  const out = dtype === "f64" ? new Float64Array(count) : new Float32Array(count);
  for (let i = 0; i < count; i++) {
    out[i] = dtype === "f64" ? view.getFloat64(i * 8, true) : view.getFloat32(i * 4, true);
  }
  return out;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** The C-order index of flat element `flat` in `shape` (`[]` for a 0-d shape). */
export function unravel(flat: number, shape: readonly number[]): number[] {
  const out = new Array<number>(shape.length).fill(0);
  let rest = flat;
  for (let axis = shape.length - 1; axis >= 0; axis--) {
    const n = shape[axis]!;
    out[axis] = n > 0 ? rest % n : 0;
    rest = n > 0 ? Math.floor(rest / n) : 0;
  }
  return out;
}

/** The flat C-order position of an index (extra trailing entries, such as a component, are ignored). */
export function ravel(index: readonly number[], shape: readonly number[]): number {
  let flat = 0;
  for (let axis = 0; axis < shape.length; axis++) flat = flat * shape[axis]! + (index[axis] ?? 0);
  return flat;
}

/** The page that holds flat element `flat`, with `size` elements a page. */
export function pageOf(flat: number, size: number): number {
  return size > 0 ? Math.floor(Math.max(0, flat) / size) : 0;
}

/** Clamp a page number to 0..pages-1. */
export function clampPage(page: number, pages: number): number {
  return Math.min(Math.max(0, pages - 1), Math.max(0, Math.trunc(page)));
}

/** `(3, 17)`, the way numpy prints an index. */
export function indexText(index: readonly number[]): string {
  return index.length === 1 ? `(${index[0]},)` : `(${index.join(", ")})`;
}

/**
 * The source index of a picture's cell (the first element of its block when downsampled): the
 * slice's fixed leading indexes, then each shown axis times its step. The inverse of `pictureCell`.
 */
export function sourceIndex(cell: readonly number[], origin: readonly number[], step: readonly number[]): number[] {
  return [...origin, ...cell.map((v, axis) => v * (step[axis] || 1))];
}

/** The heat map cell under a point of a canvas drawn `width` x `height` for `rows` x `cols` cells (null: outside). */
export function cellAt(
  x: number,
  y: number,
  width: number,
  height: number,
  rows: number,
  cols: number,
): [number, number] | null {
  if (!(x >= 0 && y >= 0 && x < width && y < height) || rows < 1 || cols < 1) return null;
  return [Math.min(rows - 1, Math.floor((y / height) * rows)), Math.min(cols - 1, Math.floor((x / width) * cols))];
}

/**
 * Where a source index lands in a downsampled picture: divide each shown axis by its step
 * (`origin` fixed leading axes are dropped first). Null when the index lies in another slice.
 */
export function pictureCell(
  index: readonly number[],
  origin: readonly number[],
  step: readonly number[],
): number[] | null {
  for (let i = 0; i < origin.length; i++) if (index[i] !== origin[i]) return null;
  const shown = index.slice(origin.length, origin.length + step.length);
  return shown.map((v, axis) => Math.floor(v / (step[axis] || 1)));
}
