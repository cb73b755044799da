/**
 * Pan and zoom of the graph view, as pure arithmetic.
 *
 * A point of the drawing at `(cx, cy)` shows at `(cx * scale + x, cy * scale + y)` in the view.
 */

export interface Viewport {
  scale: number;
  x: number;
  y: number;
}

export const MIN_SCALE = 0.05;
export const MAX_SCALE = 8;

export const IDENTITY: Viewport = { scale: 1, x: 0, y: 0 };

function clamp(value: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, value));
}

/** Zoom by `factor`, keeping the view point `(px, py)` over the same point of the drawing. */
export function zoomAt(v: Viewport, factor: number, px: number, py: number): Viewport {
  const scale = clamp(v.scale * factor, MIN_SCALE, MAX_SCALE);
  const k = scale / v.scale;
  return { scale, x: px - (px - v.x) * k, y: py - (py - v.y) * k };
}

/** Move the drawing by `(dx, dy)` view pixels. */
export function panBy(v: Viewport, dx: number, dy: number): Viewport {
  return { scale: v.scale, x: v.x + dx, y: v.y + dy };
}

/**
 * The zoom factor for a wheel event: smooth for trackpads (pixel deltas), a fixed step per line
 * or page for mouse wheels. `deltaMode` is the DOM's: 0 pixels, 1 lines, 2 pages.
 */
export function wheelFactor(deltaY: number, deltaMode: number): number {
  const pixels = deltaMode === 1 ? deltaY * 16 : deltaMode === 2 ? deltaY * 400 : deltaY;
  return Math.exp(-clamp(pixels, -200, 200) * 0.002);
}

/** The viewport showing all of a `width` x `height` drawing in the view, centred, never enlarged. */
export function fitView(width: number, height: number, viewWidth: number, viewHeight: number, margin = 16): Viewport {
  if (width <= 0 || height <= 0 || viewWidth <= 0 || viewHeight <= 0) return IDENTITY;
  const scale = clamp(
    Math.min((viewWidth - 2 * margin) / width, (viewHeight - 2 * margin) / height, 1),
    MIN_SCALE,
    MAX_SCALE,
  );
  return { scale, x: (viewWidth - width * scale) / 2, y: (viewHeight - height * scale) / 2 };
}

/**
 * The zoom below which an 11 px node label would be under 9 px on screen: a fit never goes below
 * it (the user pans instead), since a whole graph shrunk to unreadable text shows nothing.
 */
export const MIN_READABLE_SCALE = 0.82;

/**
 * `fitView`, but never below `minScale`: a drawing too big to show whole at that zoom is shown
 * readable from its start (its top; centred across, where the program's column of dispatches is),
 * for the user to pan.
 */
export function readableFit(
  width: number,
  height: number,
  viewWidth: number,
  viewHeight: number,
  minScale = MIN_READABLE_SCALE,
  margin = 16,
): Viewport {
  const fit = fitView(width, height, viewWidth, viewHeight, margin);
  if (fit.scale >= minScale || width <= 0 || height <= 0) return fit;
  const scale = minScale;
  const y = height * scale + 2 * margin <= viewHeight ? (viewHeight - height * scale) / 2 : margin;
  return { scale, x: (viewWidth - width * scale) / 2, y };
}

/** Whether the viewport shows all of a `width` x `height` drawing. */
export function showsAll(v: Viewport, width: number, height: number, viewWidth: number, viewHeight: number): boolean {
  return (
    v.x >= -0.5 && v.y >= -0.5 && v.x + width * v.scale <= viewWidth + 0.5 && v.y + height * v.scale <= viewHeight + 0.5
  );
}

/** The smallest pan that brings the drawing's box `[x0, x1] x [y0, y1]` into the view. */
export function reveal(
  v: Viewport,
  box: { x0: number; y0: number; x1: number; y1: number },
  viewWidth: number,
  viewHeight: number,
  margin = 24,
): Viewport {
  const shift = (lo: number, hi: number, size: number): number => {
    if (hi - lo > size - 2 * margin) return size / 2 - (lo + hi) / 2;
    if (lo < margin) return margin - lo;
    if (hi > size - margin) return size - margin - hi;
    return 0;
  };
  const dx = shift(box.x0 * v.scale + v.x, box.x1 * v.scale + v.x, viewWidth);
  const dy = shift(box.y0 * v.scale + v.y, box.y1 * v.scale + v.y, viewHeight);
  return panBy(v, dx, dy);
}

/** Whether a pointer that moved `(dx, dy)` between press and release was a click, not a drag. */
export function isClick(dx: number, dy: number, threshold = 4): boolean {
  return dx * dx + dy * dy <= threshold * threshold;
}

/** The CSS transform for a viewport (with `transform-origin: 0 0`). */
export function cssTransform(v: Viewport): string {
  return `translate(${v.x}px, ${v.y}px) scale(${v.scale})`;
}
