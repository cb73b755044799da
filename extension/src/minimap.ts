/**
 * The overview (minimap): when the drawing does not fit the canvas at a readable zoom, a small copy
 * of its outline sits in the canvas's corner with the visible part framed, so the user sees where
 * they are and can jump by clicking or dragging on it. Hidden while the whole drawing shows.
 *
 * The copy is one rectangle per node and cluster (not a clone of the SVG: that would double every
 * element id of the page and cost as much as the drawing on big graphs).
 */

import { Listeners, h } from "./dom";
import { type Viewport, showsAll } from "./viewport";

const SVG_NS = "http://www.w3.org/2000/svg";

/** The overview's largest size in CSS pixels. */
export const OVERVIEW_MAX = { width: 180, height: 140 };

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** One shape of the overview, in drawing units. */
export interface OverviewShape extends Rect {
  kind: "node" | "cluster";
}

/** The factor that shows a `width` x `height` drawing whole inside `max` (overview px per drawing unit). */
export function overviewScale(width: number, height: number, max = OVERVIEW_MAX): number {
  if (width <= 0 || height <= 0) return 0;
  return Math.min(max.width / width, max.height / height);
}

/** The part of the drawing the view shows, in drawing units (may reach past the drawing's edges). */
export function visibleRect(v: Viewport, viewWidth: number, viewHeight: number): Rect {
  return { x: -v.x / v.scale, y: -v.y / v.scale, width: viewWidth / v.scale, height: viewHeight / v.scale };
}

/** `r` clipped to the drawing `[0, width] x [0, height]` (what the overview can frame). */
export function clipRect(r: Rect, width: number, height: number): Rect {
  const x0 = Math.max(0, r.x);
  const y0 = Math.max(0, r.y);
  const x1 = Math.min(width, r.x + r.width);
  const y1 = Math.min(height, r.y + r.height);
  return { x: x0, y: y0, width: Math.max(0, x1 - x0), height: Math.max(0, y1 - y0) };
}

/**
 * The viewport (same zoom) that centres the view on the drawing point under an overview point
 * `(ox, oy)` (overview px from its top left; `k` from `overviewScale`).
 */
export function centreOn(
  v: Viewport,
  ox: number,
  oy: number,
  k: number,
  viewWidth: number,
  viewHeight: number,
): Viewport {
  const cx = ox / k;
  const cy = oy / k;
  return { scale: v.scale, x: viewWidth / 2 - cx * v.scale, y: viewHeight / 2 - cy * v.scale };
}

/** Whether the overview is worth showing: the view does not show the whole drawing. */
export function needsOverview(
  v: Viewport,
  width: number,
  height: number,
  viewWidth: number,
  viewHeight: number,
): boolean {
  if (width <= 0 || height <= 0 || viewWidth <= 0 || viewHeight <= 0) return false;
  return !showsAll(v, width, height, viewWidth, viewHeight);
}

export class Minimap {
  readonly el: HTMLDivElement;
  private readonly svg: SVGSVGElement;
  private readonly shapes: SVGGElement;
  private readonly frame: SVGRectElement;
  private readonly listeners = new Listeners();
  private size = { width: 0, height: 0 };
  private k = 0;
  private view: { v: Viewport; width: number; height: number } | null = null;

  /** `pan`: show the main view at this viewport (a click or drag on the overview). */
  constructor(private readonly pan: (v: Viewport) => void) {
    this.svg = document.createElementNS(SVG_NS, "svg");
    this.svg.setAttribute("class", "gl-minimap-svg");
    this.shapes = document.createElementNS(SVG_NS, "g");
    this.frame = document.createElementNS(SVG_NS, "rect");
    this.frame.setAttribute("class", "gl-minimap-view");
    this.svg.append(this.shapes, this.frame);
    this.el = h("div", {
      class: "gl-minimap",
      role: "img",
      "aria-label": "Overview of the whole graph: click or drag to move the view",
      title: "Overview: click or drag to move the view",
    });
    this.el.append(this.svg);
    this.el.hidden = true;
    this.bindPointer();
  }

  /**
   * A new drawing: its size, and the boxes of its nodes and clusters in the coordinates of
   * Graphviz's top group, whose `transform` (from the drawing's units) comes with them.
   */
  setDrawing(width: number, height: number, shapes: readonly OverviewShape[], transform: string | null): void {
    this.size = { width, height };
    if (transform) this.shapes.setAttribute("transform", transform);
    else this.shapes.removeAttribute("transform");
    this.k = overviewScale(width, height);
    this.svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
    this.svg.setAttribute("width", String(width * this.k));
    this.svg.setAttribute("height", String(height * this.k));
    this.shapes.replaceChildren(
      ...shapes.map((s) => {
        const rect = document.createElementNS(SVG_NS, "rect");
        rect.setAttribute("class", `gl-minimap-${s.kind}`);
        for (const key of ["x", "y", "width", "height"] as const) rect.setAttribute(key, String(s[key]));
        return rect;
      }),
    );
    if (this.view) this.update(this.view.v, this.view.width, this.view.height);
  }

  /** The main view moved or changed size: frame what it shows, or hide when it shows everything. */
  update(v: Viewport, viewWidth: number, viewHeight: number): void {
    this.view = { v, width: viewWidth, height: viewHeight };
    const { width, height } = this.size;
    const shown = this.k > 0 && needsOverview(v, width, height, viewWidth, viewHeight);
    this.el.hidden = !shown;
    if (!shown) return;
    const r = clipRect(visibleRect(v, viewWidth, viewHeight), width, height);
    for (const key of ["x", "y", "width", "height"] as const) this.frame.setAttribute(key, String(r[key]));
  }

  private bindPointer(): void {
    let dragging: number | null = null;
    const jump = (e: PointerEvent): void => {
      if (!this.view || this.k <= 0) return;
      const box = this.svg.getBoundingClientRect();
      const v = centreOn(
        this.view.v,
        e.clientX - box.left,
        e.clientY - box.top,
        this.k,
        this.view.width,
        this.view.height,
      );
      this.pan(v);
    };
    this.listeners.on(this.el, "pointerdown", (e: PointerEvent) => {
      e.stopPropagation(); // not a press on the drawing (which would pan or select)
      if (e.button !== 0) return;
      dragging = e.pointerId;
      this.el.setPointerCapture?.(e.pointerId);
      jump(e);
    });
    this.listeners.on(this.el, "pointermove", (e: PointerEvent) => {
      if (dragging === e.pointerId) jump(e);
    });
    const end = (e: PointerEvent): void => {
      if (dragging !== e.pointerId) return;
      dragging = null;
      this.el.releasePointerCapture?.(e.pointerId);
    };
    this.listeners.on(this.el, "pointerup", (e: PointerEvent) => {
      e.stopPropagation();
      end(e);
    });
    this.listeners.on(this.el, "pointercancel", end);
  }

  dispose(): void {
    this.listeners.dispose();
    this.el.remove();
  }
}
