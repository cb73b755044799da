/**
 * The graph drawing: DOT laid out by WebAssembly Graphviz into SVG, with pan, zoom, click to
 * select, diagnostics drawn as badges on their nodes, and, while a debug session runs, the
 * debugger's marks: the current node, breakpoint dots (a click toggles one), faults and the time
 * per node.
 */

import { Graphviz } from "@hpcc-js/wasm-graphviz";

import type { Badge } from "./diagnostics";
import { Listeners } from "./dom";
import { legend } from "./legend";
import { hitTest, indexGroups, type ElementLike } from "./hitTest";
import { Minimap, type OverviewShape } from "./minimap";
import { type PendingAnchor, pendingBox } from "./pendingNode";
import {
  IDENTITY,
  type Viewport,
  cssTransform,
  isClick,
  panBy,
  readableFit,
  reveal,
  wheelFactor,
  zoomAt,
} from "./viewport";

const SVG_NS = "http://www.w3.org/2000/svg";
/** Room kept between a node's text and its outline, in drawing units (Graphviz's margin is 8). */
const LABEL_PADDING = 5;

let graphviz: Promise<Graphviz> | null = null;

/** Graphviz's WebAssembly, instantiated once per page and shared by every view. */
export function loadGraphviz(): Promise<Graphviz> {
  graphviz ??= Graphviz.load().catch((err: unknown) => {
    graphviz = null;
    throw err;
  });
  return graphviz;
}

export interface GraphCanvasEvents {
  /** A click on a node (null: on the background); `extend` when Shift was held. */
  select(id: string | null, extend: boolean): void;
  /** A layout failure to show, or null once a layout succeeds. */
  layoutError(message: string | null): void;
  /** Whether a plain wheel should zoom (the widget has focus); Ctrl+wheel always zooms. */
  wheelZooms(): boolean;
  /** A press on the drawing: give the widget keyboard focus. */
  pressed(): void;
  /** A click on a node's breakpoint dot. */
  toggleBreakpoint(id: string): void;
}

/** What the debugger draws on the graph (ids are drawn ids: nodes and sequence clusters). */
export interface DebugMarks {
  active: boolean;
  /** The node of the next dispatch. */
  current: string | null;
  /** Ids with a location breakpoint. */
  breakpoints: ReadonlySet<string>;
  /** Node id -> error text of its last fault. */
  faults: ReadonlyMap<string, string>;
  /** Node id -> [short time text, tooltip]. */
  times: ReadonlyMap<string, readonly [string, string]>;
  /** The node that first wrote NaN/Inf. */
  nonfinite: string | null;
  /** The node where a "Compare with..." found the two runs first disagree, and the sentence saying so. */
  diverged: readonly [string, string] | null;
}

export const NO_MARKS: DebugMarks = {
  active: false,
  current: null,
  breakpoints: new Set(),
  faults: new Map(),
  times: new Map(),
  nonfinite: null,
  diverged: null,
};

export class GraphCanvas {
  readonly el: HTMLDivElement;
  private readonly stage: HTMLDivElement;
  private readonly empty: HTMLDivElement;
  private readonly pending: HTMLDivElement;
  /** The dashed "Adding <kernel>..." box drawn where a dispatch being added will land. */
  private readonly pendingNode: HTMLDivElement;
  private readonly minimap: Minimap;
  /** Whether the overview has this drawing's shapes (they are measured once it is on screen). */
  private overviewDrawn = false;
  private readonly listeners = new Listeners();
  private svg: SVGSVGElement | null = null;
  private groups = new Map<string, SVGGElement>();
  /**
   * Each group's box as Graphviz drew it, measured once per drawing before any mark is added: the
   * layout does not change between steps, and measuring on every step forced a page layout each time.
   */
  private boxes = new Map<SVGGElement, DOMRect>();
  private viewport: Viewport = IDENTITY;
  private size = { width: 0, height: 0 };
  private fitted = false;
  private labelsFitted = false;
  /**
   * Whether the view follows the drawing: fitted again whenever the canvas or the drawing changes
   * size, until the user pans or zooms (Fit turns it back on).
   */
  private following = true;
  private token = 0;
  private disposed = false;
  private isKnown: (id: string) => boolean = () => false;
  private dot = "";

  constructor(private readonly events: GraphCanvasEvents) {
    this.el = document.createElement("div");
    this.el.className = "gl-canvas";
    this.stage = document.createElement("div");
    this.stage.className = "gl-stage";
    this.empty = document.createElement("div");
    this.empty.className = "gl-canvas-empty";
    this.empty.textContent = "The graph is empty: add a kernel from the palette.";
    this.pending = document.createElement("div");
    this.pending.className = "gl-pending";
    this.pending.setAttribute("role", "status");
    this.pending.hidden = true;
    this.pendingNode = document.createElement("div");
    this.pendingNode.className = "gl-pending-node";
    this.pendingNode.hidden = true;
    this.stage.append(this.pendingNode);
    this.minimap = new Minimap((v) => {
      this.following = false;
      this.setViewport(v);
    });
    const key = legend();
    this.el.append(this.stage, this.empty, this.pending, key, this.minimap.el);
    this.listeners.on(key, "pointerdown", (e: Event) => e.stopPropagation()); // not a press on the drawing
    this.bindPointer();
    const resize = new ResizeObserver(() => {
      if ((this.following || !this.fitted) && this.svg) this.fit();
      else this.minimap.update(this.viewport, this.el.clientWidth, this.el.clientHeight);
    });
    resize.observe(this.el);
    this.listeners.add(() => resize.disconnect());
  }

  /** Lay out new DOT; the viewport is kept, except on the first drawing, which is fitted. */
  async setDot(dot: string, isKnown: (id: string) => boolean, isEmpty: boolean): Promise<void> {
    this.isKnown = isKnown;
    this.empty.hidden = !isEmpty;
    if (dot === this.dot) {
      this.reindex();
      return;
    }
    this.dot = dot;
    const token = ++this.token;
    if (dot.trim() === "") {
      this.replaceSvg(null);
      return;
    }
    let svgText: string;
    try {
      const gv = await loadGraphviz();
      if (token !== this.token || this.disposed) return;
      svgText = gv.layout(dot, "svg", "dot");
    } catch (err) {
      if (token === this.token && !this.disposed) {
        this.events.layoutError(`Graphviz could not lay out the graph: ${errorText(err)}`);
      }
      return;
    }
    const doc = new DOMParser().parseFromString(svgText, "image/svg+xml");
    const root = doc.documentElement;
    if (root.nodeName !== "svg" || doc.getElementsByTagName("parsererror").length > 0) {
      this.events.layoutError("Graphviz returned SVG that does not parse");
      return;
    }
    this.events.layoutError(null);
    this.replaceSvg(document.importNode(root, true) as unknown as SVGSVGElement);
  }

  private replaceSvg(svg: SVGSVGElement | null): void {
    this.svg?.remove();
    this.svg = svg;
    this.groups.clear();
    this.boxes.clear();
    this.labelsFitted = false;
    this.overviewDrawn = false;
    this.pendingNode.hidden = true; // the new drawing has arrived (or the graph is gone)
    if (!svg) {
      this.minimap.setDrawing(0, 0, [], null);
      return;
    }
    const box = svg.viewBox.baseVal;
    this.size = { width: box?.width || 0, height: box?.height || 0 };
    svg.setAttribute("width", String(this.size.width));
    svg.setAttribute("height", String(this.size.height));
    svg.classList.add("gl-svg");
    this.stage.append(svg);
    this.reindex();
    if (!this.fitted || this.following) this.fit();
  }

  /**
   * Fit each node's text lines into its shape, measured in the browser: the fallback for a browser
   * without the font the drawing was laid out for. Graphviz sized the shapes with its metrics of
   * DejaVu Sans (graphlab.analysis.render.FONT_FAMILY, asked for first by widget.css), and a browser lacking
   * it draws another, maybe wider, font. A line that is too wide is squeezed to the room there is
   * (`textLength`), which keeps its height readable. Runs once per drawing, when it is on screen.
   */
  private fitLabels(): void {
    if (!this.svg || this.labelsFitted) return;
    let measured = false;
    for (const g of this.svg.querySelectorAll<SVGGElement>("g.node")) {
      const shape = g.querySelector<SVGGraphicsElement>("polygon, path, ellipse");
      const room = shape?.getBBox();
      if (!room || room.width === 0) continue; // not displayed yet
      measured = true;
      const free = room.width - 2 * LABEL_PADDING;
      for (const text of g.querySelectorAll<SVGTextElement>("text")) {
        if (text.getBBox().width <= free) continue;
        text.setAttribute("textLength", String(free));
        text.setAttribute("lengthAdjust", "spacingAndGlyphs");
      }
    }
    this.labelsFitted = measured;
  }

  private reindex(): void {
    if (!this.svg) return;
    const groups = this.svg.querySelectorAll<SVGGElement>("g.node, g.cluster");
    this.groups = indexGroups(groups as Iterable<SVGGElement & ElementLike>, this.isKnown);
  }

  /** Mark the selection and draw the badges (call after `setDot` and on every state change). */
  decorate(anchor: string | null, range: readonly string[], badges: ReadonlyMap<string, Badge>): void {
    if (!this.svg) return;
    for (const old of this.svg.querySelectorAll(".gl-badge, .gl-dbg")) old.remove();
    this.fitLabels();
    this.measure();
    this.drawOverview();
    const inRange = new Set(range);
    for (const [id, g] of this.groups) {
      g.classList.toggle("gl-selected", id === anchor);
      g.classList.toggle("gl-in-range", inRange.has(id) && id !== anchor);
      const badge = badges.get(id);
      for (const severity of ["error", "warning", "info"]) {
        g.classList.toggle(`gl-sev-${severity}`, badge?.severity === severity);
      }
      if (badge) this.drawBadge(g, badge);
    }
  }

  /** Measure the groups not measured yet (with no marks in them); a drawing not on screen measures later. */
  private measure(): void {
    for (const g of this.groups.values()) {
      if (this.boxes.has(g)) continue;
      let box: DOMRect;
      try {
        box = g.getBBox();
      } catch {
        continue; // not displayed
      }
      if (box.width > 0 || box.height > 0) this.boxes.set(g, box);
    }
  }

  /** Give the overview this drawing's node and cluster boxes, once they are measured. */
  private drawOverview(): void {
    if (!this.svg || this.overviewDrawn || this.boxes.size === 0) return;
    this.overviewDrawn = true;
    const shapes: OverviewShape[] = [];
    for (const g of this.groups.values()) {
      const box = this.boxes.get(g);
      if (!box) continue;
      const kind = g.classList.contains("cluster") ? "cluster" : "node";
      shapes.push({ kind, x: box.x, y: box.y, width: box.width, height: box.height });
    }
    shapes.sort((a, b) => (a.kind === b.kind ? 0 : a.kind === "cluster" ? -1 : 1)); // clusters under nodes
    const top = this.svg.querySelector("g.graph")?.getAttribute("transform") ?? null;
    this.minimap.setDrawing(this.size.width, this.size.height, shapes, top);
    this.minimap.update(this.viewport, this.el.clientWidth, this.el.clientHeight);
  }

  /** Draw the debugger's marks (call after `decorate`, which clears the old ones). */
  decorateDebug(marks: DebugMarks): void {
    if (!this.svg) return;
    for (const [id, g] of this.groups) {
      const isNode = g.classList.contains("node");
      g.classList.toggle("gl-current", marks.active && id === marks.current);
      g.classList.toggle("gl-fault", marks.active && marks.faults.has(id));
      g.classList.toggle("gl-nonfinite", marks.active && id === marks.nonfinite);
      g.classList.toggle("gl-has-bp", marks.active && marks.breakpoints.has(id));
      const diverged = marks.active && id === marks.diverged?.[0];
      g.classList.toggle("gl-diverged", diverged);
      if (!marks.active || id.startsWith("arg:")) continue;
      const box = this.boxes.get(g);
      if (!box) continue;
      const on = marks.breakpoints.has(id);
      if (isNode || on) {
        const cx = isNode ? box.x - 9 : box.x + 8;
        const cy = isNode ? box.y + box.height / 2 : box.y + 8;
        const dot = svgEl("circle", {
          class: `gl-dbg gl-bp-dot${on ? " gl-bp-on" : ""}`,
          cx,
          cy,
          r: 5.5,
          "data-bp-node": id,
        });
        dot.append(
          svgText("title", on ? `Breakpoint: stops before ${id} (click to remove)` : `Click to stop before ${id}`),
        );
        g.append(dot);
      }
      const fault = marks.faults.get(id);
      if (fault) {
        const mark = svgEl("text", { class: "gl-dbg gl-fault-mark", x: box.x + 2, y: box.y + 11 });
        mark.textContent = "✖";
        mark.append(svgText("title", fault));
        g.append(mark);
      }
      if (diverged) {
        const mark = svgEl("text", { class: "gl-dbg gl-diverged-mark", x: box.x + box.width - 12, y: box.y + 11 });
        mark.textContent = "\u2260";
        mark.append(svgText("title", marks.diverged![1]));
        g.append(mark);
      }
      const time = marks.times.get(id);
      if (time && isNode) {
        const label = svgEl("text", {
          class: "gl-dbg gl-time",
          x: box.x + box.width,
          y: box.y + box.height + 10,
          "text-anchor": "end",
        });
        label.textContent = time[0];
        label.append(svgText("title", time[1]));
        g.append(label);
      }
    }
  }

  private drawBadge(g: SVGGElement, badge: Badge): void {
    const box = this.boxes.get(g);
    if (!box) return; // not displayed: the node's colour still shows the severity
    const badgeG = document.createElementNS(SVG_NS, "g");
    badgeG.setAttribute("class", `gl-badge gl-badge-${badge.severity}`);
    const title = document.createElementNS(SVG_NS, "title");
    title.textContent = badge.text;
    const circle = document.createElementNS(SVG_NS, "circle");
    const cx = box.x + box.width - 2;
    const cy = box.y + 2;
    circle.setAttribute("cx", String(cx));
    circle.setAttribute("cy", String(cy));
    circle.setAttribute("r", "8");
    const text = document.createElementNS(SVG_NS, "text");
    text.setAttribute("x", String(cx));
    text.setAttribute("y", String(cy + 3.5));
    text.setAttribute("text-anchor", "middle");
    text.textContent = badge.count > 9 ? "9+" : String(badge.count);
    badgeG.append(title, circle, text);
    g.append(badgeG);
  }

  /**
   * Say that an edit is in flight (null: none is). With `at`, a dispatch is being added: a dashed
   * box saying so is drawn at once where it will land (and brought into view), until the new
   * drawing replaces the old one.
   */
  setPending(text: string | null, at?: PendingAnchor): void {
    this.pending.hidden = text === null;
    this.pending.textContent = text ?? "";
    this.el.classList.toggle("gl-edit-pending", text !== null);
    if (text === null) {
      this.pendingNode.hidden = true;
    } else if (at) {
      this.drawPendingNode(text, at);
    }
  }

  private drawPendingNode(text: string, at: PendingAnchor): void {
    const g = at.id === null ? undefined : this.groups.get(at.id);
    const anchor = g ? this.drawingBox(g.getBoundingClientRect()) : null;
    const v = this.viewport;
    const centre = { x: (this.el.clientWidth / 2 - v.x) / v.scale, y: (this.el.clientHeight / 2 - v.y) / v.scale };
    const box = pendingBox(anchor && anchor.width > 0 ? anchor : null, at.mode, centre);
    const style = this.pendingNode.style;
    style.left = `${box.x}px`;
    style.top = `${box.y}px`;
    style.width = `${box.width}px`;
    style.height = `${box.height}px`;
    this.pendingNode.textContent = text;
    this.pendingNode.dataset.after = at.id ?? "";
    this.pendingNode.hidden = false;
    const x1 = box.x + box.width;
    const y1 = box.y + box.height;
    this.setViewport(reveal(v, { x0: box.x, y0: box.y, x1, y1 }, this.el.clientWidth, this.el.clientHeight));
  }

  /** A screen rectangle in drawing units (the stage's coordinates). */
  private drawingBox(r: DOMRect): { x: number; y: number; width: number; height: number } {
    const view = this.el.getBoundingClientRect();
    const v = this.viewport;
    return {
      x: (r.left - view.left - v.x) / v.scale,
      y: (r.top - view.top - v.y) / v.scale,
      width: r.width / v.scale,
      height: r.height / v.scale,
    };
  }

  /** Show the whole drawing, or as much as fits at a readable zoom, and follow size changes again. */
  fit(): void {
    const { clientWidth, clientHeight } = this.el;
    this.following = true;
    if (!this.svg || clientWidth === 0 || clientHeight === 0) return;
    this.fitted = true;
    this.setViewport(readableFit(this.size.width, this.size.height, clientWidth, clientHeight));
  }

  /** The drawing's size in its own units (Graphviz points), for a host sizing itself to it. */
  get drawingSize(): { width: number; height: number } {
    return this.size;
  }

  /** Zoom about the centre of the view. */
  zoomBy(factor: number): void {
    this.following = false;
    this.setViewport(zoomAt(this.viewport, factor, this.el.clientWidth / 2, this.el.clientHeight / 2));
  }

  /** Pan so that a node is in view. */
  reveal(id: string): void {
    const g = this.groups.get(id);
    if (!g) return;
    const r = g.getBoundingClientRect();
    const view = this.el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) return;
    const v = this.viewport;
    const toDrawing = (sx: number, sy: number): [number, number] => [
      (sx - view.left - v.x) / v.scale,
      (sy - view.top - v.y) / v.scale,
    ];
    const [x0, y0] = toDrawing(r.left, r.top);
    const [x1, y1] = toDrawing(r.right, r.bottom);
    this.setViewport(reveal(v, { x0, y0, x1, y1 }, this.el.clientWidth, this.el.clientHeight));
  }

  get currentViewport(): Viewport {
    return this.viewport;
  }

  private setViewport(v: Viewport): void {
    this.viewport = v;
    this.stage.style.transform = cssTransform(v);
    this.minimap.update(v, this.el.clientWidth, this.el.clientHeight);
  }

  private bindPointer(): void {
    let press: { id: number; x: number; y: number; last: [number, number]; target: EventTarget | null } | null = null;
    let panning = false;
    this.listeners.on(this.el, "pointerdown", (e: PointerEvent) => {
      if (e.button !== 0) return;
      press = { id: e.pointerId, x: e.clientX, y: e.clientY, last: [e.clientX, e.clientY], target: e.target };
      this.events.pressed();
      panning = false;
      this.el.setPointerCapture?.(e.pointerId);
    });
    this.listeners.on(this.el, "pointermove", (e: PointerEvent) => {
      if (!press || e.pointerId !== press.id) return;
      if (!panning && isClick(e.clientX - press.x, e.clientY - press.y)) return;
      panning = true;
      this.following = false;
      this.el.classList.add("gl-panning");
      this.setViewport(panBy(this.viewport, e.clientX - press.last[0], e.clientY - press.last[1]));
      press.last = [e.clientX, e.clientY];
    });
    const release = (e: PointerEvent, cancelled: boolean): void => {
      if (!press || e.pointerId !== press.id) return;
      const { target } = press;
      press = null;
      this.el.classList.remove("gl-panning");
      this.el.releasePointerCapture?.(e.pointerId);
      if (panning || cancelled) return;
      const dot = target instanceof Element ? target.closest("[data-bp-node]") : null;
      const bpNode = dot?.getAttribute("data-bp-node");
      if (bpNode) {
        this.events.toggleBreakpoint(bpNode);
        return;
      }
      const svg = this.svg as (SVGSVGElement & ElementLike) | null;
      const hit = target instanceof Element ? hitTest(target as Element & ElementLike, this.isKnown, svg) : null;
      this.events.select(hit ? hit.id : null, e.shiftKey);
    };
    this.listeners.on(this.el, "pointerup", (e: PointerEvent) => release(e, false));
    this.listeners.on(this.el, "pointercancel", (e: PointerEvent) => release(e, true));
    this.listeners.on(
      this.el,
      "wheel",
      (e: WheelEvent) => {
        if (!(e.ctrlKey || e.metaKey || this.events.wheelZooms())) return;
        e.preventDefault();
        this.following = false;
        const rect = this.el.getBoundingClientRect();
        this.setViewport(
          zoomAt(this.viewport, wheelFactor(e.deltaY, e.deltaMode), e.clientX - rect.left, e.clientY - rect.top),
        );
      },
      { passive: false },
    );
  }

  dispose(): void {
    this.disposed = true;
    this.listeners.dispose();
    this.minimap.dispose();
    this.el.remove();
  }
}

function svgEl(tag: string, attrs: Record<string, string | number>): SVGElement {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, String(value));
  return el;
}

function svgText(tag: string, text: string): SVGElement {
  const el = document.createElementNS(SVG_NS, tag);
  el.textContent = text;
  return el;
}

export function errorText(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
