/**
 * The interactive canvas: a React root in the app's graph area (not `@anywidget/react`: the rest of
 * the app is plain DOM, and one root mounted here keeps the composition in `app.ts`) drawing
 * `FlowView`, with the state the app does not hold: where each node is (the model's `layout`, else
 * ELK's answer, else a free spot: nothing placed ever moves by itself), the canvas's own multiple
 * selection, the clipboard, the context menu and in-place renaming.
 */

import { type ReactFlowInstance, ReactFlowProvider } from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import type { JSX } from "react";
import { flushSync } from "react-dom";
import { type Root, createRoot } from "react-dom/client";

import type { Badge } from "../logic/diagnostics";
import { h } from "../logic/dom";
import { type DebugMarks, NO_MARKS } from "./graphView";
import { legend } from "./legend";
import type { EditOp, GraphView } from "../wire/protocol";
import { type Detail, detailNote, nextDetail } from "./detail";
import { LARGE_GRAPH } from "./elkGraph";
import { elkLayout } from "./elkWorker";
import { type CanvasEvents, type CanvasModel, FlowView, sameModel } from "./FlowView";
import {
  type Box,
  type Corner,
  GAP,
  GROUP_TITLE,
  type Insets,
  type Measure,
  NO_INSETS,
  type Point,
  type Size,
  boundsOf,
  fitViewport,
  freeSpot,
  groupBoxes,
  minimapCorner,
  nodeSizes,
  panIntoView,
  pasteOffset,
  placeAll,
  uncovered,
} from "./geometry";

/** What the canvas asks of the app. */
export interface CanvasHost {
  select(id: string | null, extend: boolean): void;
  edit(op: EditOp): number;
  /** A refusal or failure to show in the banner (null: clear it). */
  problem(message: string | null): void;
  toggleBreakpoint(id: string): void;
  group(ids: readonly string[]): void;
  /** The widget's root element (custom events are dispatched on it). */
  root(): HTMLElement;
  /** The drawing changed size (the widget's height follows it). */
  contentChanged(): void;
}

const MINIMAP: Size = { width: 160, height: 110 };
/** The least zoom the canvas picks by itself: the port labels (11 px) stay at least 9 px on screen. */
const READABLE_ZOOM = 9.2 / 11;

interface MenuItem {
  label: string;
  action: string;
  run: () => void;
}

export class FlowCanvas {
  readonly el: HTMLDivElement;
  private readonly host: HTMLDivElement;
  private readonly empty: HTMLDivElement;
  private readonly pendingStatus: HTMLDivElement;
  private readonly menu: HTMLDivElement;
  private readonly tools: HTMLDivElement;
  /** Says what a zoomed-out drawing leaves out (`detail.ts`). */
  private readonly detailStatus: HTMLSpanElement;
  private detail: Detail = "full";
  /** The bindings are taken out of the drawing in the far overview, when a move ends there. */
  private bindingsDrawn = true;
  private readonly root: Root;
  private instance: ReactFlowInstance | null = null;
  private graph: GraphView | null = null;
  private sizes = new Map<string, Size>();
  /** Positions ELK or a free spot gave nodes the model has no position for (not saved until Tidy or a drag). */
  private known = new Map<string, Point>();
  private positions = new Map<string, Point>();
  private groups = new Map<string, Box>();
  private anchor: string | null = null;
  private range: readonly string[] = [];
  private many: string[] = [];
  private badges: ReadonlyMap<string, Badge> = new Map();
  private marks: DebugMarks = NO_MARKS;
  private pending: { at: Point; text: string } | null = null;
  private note: string | null = null;
  private renaming: string | null = null;
  /** The Map button: the overview is shown when wanted and some node is out of view. */
  private minimapShown = true;
  private someOutside = false;
  private corner: Corner = "bottom-right";
  private clipboard: string[] = [];
  private laidOut = false;
  private fitted = false;
  /** Fit again when the canvas changes size, until the user pans or zooms (Fit turns it back on). */
  private following = true;
  /** Whether the user asked for the whole graph (Fit): automatic refits then show it whole too. */
  private whole = false;
  private disposed = false;
  private contentQueued = false;
  /** Inside `drawNow`: the drawing to hand React at its end (null: none yet); undefined outside it. */
  private held: JSX.Element | null | undefined = undefined;
  /** The model last handed to React (a render of an equal one is skipped). */
  private drawnModel: CanvasModel | null = null;
  private elkMs: number | null = null;
  /** Label widths by font and text, for the font family they were measured in. */
  private readonly widths = new Map<string, number>();
  private widthsFamily = "";
  /** The canvas's font family, and the JupyterLab theme it was read under. */
  private fontFamily = "";
  private fontTheme = "";
  private measureContext: CanvasRenderingContext2D | null | undefined;
  private readonly events: CanvasEvents;
  private readonly resize: ResizeObserver;
  /** The canvas's size as its resize observer last saw it (null before the first observation). */
  private size: { width: number; height: number } | null = null;
  /** What the drawers floating over the canvas cover (Fit, the minimap and the selection keep clear). */
  private insets: Insets = NO_INSETS;

  constructor(private readonly app: CanvasHost) {
    this.el = h("div", { class: "gl-canvas gl-flow-canvas", tabindex: 0, "aria-label": "graph canvas" });
    this.host = h("div", { class: "gl-flow-host" });
    this.empty = h("div", { class: "gl-canvas-empty" }, "The graph is empty: add a kernel from the palette.");
    this.pendingStatus = h("div", { class: "gl-pending", role: "status" });
    this.pendingStatus.hidden = true;
    this.menu = h("div", { class: "gl-menu", role: "menu" });
    this.menu.hidden = true;
    const button = (label: string, title: string, data: string, run: () => void): HTMLButtonElement => {
      const b = h("button", { type: "button", class: "gl-btn gl-canvas-tool", title, "data-canvas": data }, label);
      b.addEventListener("click", run);
      return b;
    };
    this.tools = h(
      "div",
      { class: "gl-canvas-tools" },
      button("Tidy", "Lay the graph out again (ELK) and keep the positions", "tidy", () => void this.tidy()),
      button("Fit", "Show the whole graph", "fit", () => this.fit()),
      button("Map", "Show or hide the overview", "minimap", () => this.toggleMinimap()),
    );
    this.detailStatus = h("span", { class: "gl-detail-note", role: "status" });
    this.detailStatus.hidden = true;
    this.tools.append(this.detailStatus);
    this.el.dataset.detail = this.detail;
    const key = legend();
    this.el.append(this.host, this.empty, this.pendingStatus, this.tools, key, this.menu);
    this.events = this.makeEvents();
    this.root = createRoot(this.host);
    this.el.addEventListener("contextmenu", (e) => {
      // the canvas's menu, never JupyterLab's cell menu
      e.preventDefault();
      e.stopPropagation();
    });
    document.addEventListener("pointerdown", this.closeMenuOutside, true);
    // keys go to the canvas while it has focus: a press anywhere on it (but in a field) gives it focus
    this.el.addEventListener("pointerdown", (e) => {
      if (!(e.target instanceof HTMLInputElement || e.target instanceof HTMLButtonElement)) {
        this.el.focus({ preventScroll: true });
      }
    });
    this.el.addEventListener("keydown", (e) => this.key(e));
    this.resize = new ResizeObserver((entries) => {
      const box = entries[entries.length - 1]?.contentRect;
      if (box) this.size = { width: box.width, height: box.height };
      // after React Flow has seen the new size too (its own observer runs in the same round)
      if ((this.following || !this.fitted) && this.positions.size > 0) setTimeout(() => this.fitView(!this.whole), 40);
    });
    this.resize.observe(this.el);
  }

  // --- what the app tells the canvas -----------------------------------------------------------

  /** Draw a new `graph` trait: stored positions first, then the laid-out ones, then free spots. */
  setGraph(graph: GraphView): void {
    this.graph = graph;
    this.sizes = nodeSizes(graph, this.measure());
    this.empty.hidden = graph.nodes.length > 0 || graph.args.length > 0;
    const unplaced = [...this.sizes.keys()].filter((id) => !(id in graph.layout) && !this.known.has(id));
    if (!this.laidOut && unplaced.length > 0 && Object.keys(graph.layout).length === 0) {
      // first drawing of a graph nobody placed: ELK lays it all out (in the worker); free spots meanwhile
      this.laidOut = true;
      const sizes = this.sizes;
      elkLayout(graph, sizes)
        .then(({ positions, ms, startMs }) => {
          if (this.disposed) return;
          this.elkMs = ms;
          this.el.dataset.elkMs = ms.toFixed(1);
          this.el.dataset.elkStartMs = startMs.toFixed(1);
          for (const [id, p] of positions) if (!(id in (this.graph?.layout ?? {}))) this.known.set(id, p);
          this.fitted = false;
          this.relayout();
        })
        .catch((err: unknown) => this.app.problem(`could not lay the graph out: ${String(err)}`));
    }
    this.laidOut = true;
    this.relayout();
  }

  private relayout(): void {
    const graph = this.graph;
    if (!graph) return;
    this.positions = placeAll(graph, this.sizes, graph.layout, this.known);
    for (const [id, p] of this.positions) if (!(id in graph.layout)) this.known.set(id, p);
    this.groups = groupBoxes(graph, this.positions, this.sizes);
    const ids = new Set([...this.sizes.keys(), ...this.groups.keys()]);
    this.many = this.many.filter((id) => ids.has(id));
    this.render();
    this.contentChangedAfterPaint();
    if (!this.fitted || this.following) setTimeout(() => this.fitView(!this.whole), 30);
  }

  /**
   * Tell the app the drawing changed size once the edit is on screen: the widget's height follows
   * it a frame later instead of forcing a layout of the page before the edit is drawn.
   */
  private contentChangedAfterPaint(): void {
    if (this.contentQueued) return;
    this.contentQueued = true;
    requestAnimationFrame(() =>
      setTimeout(() => {
        this.contentQueued = false;
        if (!this.disposed) this.app.contentChanged();
      }, 0),
    );
  }

  decorate(anchor: string | null, range: readonly string[], badges: ReadonlyMap<string, Badge>): void {
    if (anchor !== this.anchor && anchor !== null && !this.many.includes(anchor)) this.many = [];
    const moved = anchor !== this.anchor;
    this.anchor = anchor;
    if (moved && anchor !== null) this.keepInView(anchor);
    this.range = range;
    this.badges = badges;
    this.placeMinimap();
    this.render();
  }

  decorateDebug(marks: DebugMarks): void {
    this.marks = marks;
    this.render();
  }

  /** Say an edit is in flight (null: none); `at`: a dispatch being added lands there (a dashed box). */
  setPending(text: string | null, at?: Point): void {
    this.pendingStatus.hidden = text === null;
    this.pendingStatus.textContent = text ?? "";
    this.el.classList.toggle("gl-edit-pending", text !== null);
    this.pending = text !== null && at ? { at, text } : null;
    if (this.pending) this.placeMinimap(this.boxOnScreen({ ...this.pending.at, width: 150, height: 40 }));
    this.render();
  }

  /** Where a dispatch added after `after` (or at the end of `into`) will be drawn: nothing else moves. */
  spotFor(after: string | null, into: string | null, size: Size = { width: 160, height: 46 }): Point {
    const taken = [...this.positions].map(([id, p]) => ({ ...p, ...(this.sizes.get(id) ?? size) }));
    let near: Point;
    const a = after !== null ? this.positions.get(after) : undefined;
    const group = into !== null ? this.groups.get(into) : undefined;
    if (a && after !== null) near = { x: a.x, y: a.y + (this.sizes.get(after)?.height ?? 40) + GAP };
    else if (group) near = { x: group.x + 14, y: group.y + group.height };
    else {
      const all = boundsOf(taken);
      near = { x: all.x, y: all.y + all.height + GAP };
    }
    return freeSpot(near, size, taken);
  }

  /** Ids the canvas has selected (a box or Ctrl+A), else the app's range, else its anchor. */
  selectedIds(): string[] {
    if (this.many.length > 0) return [...this.many];
    if (this.range.length > 0) return [...this.range];
    return this.anchor !== null ? [this.anchor] : [];
  }

  /** The drawers now cover `insets` of the canvas: fit again (if following) or keep the selection clear. */
  setInsets(insets: Insets): void {
    if (insets.left === this.insets.left && insets.right === this.insets.right) return;
    this.insets = insets;
    if ((this.following || !this.fitted) && this.positions.size > 0) this.fitView(!this.whole);
    else if (this.anchor !== null) this.keepInView(this.anchor);
    this.placeMinimap();
  }

  /** Pan (no zoom) so the node `id` is out from under the drawers and inside the canvas. */
  private keepInView(id: string): void {
    const p = this.positions.get(id);
    const s = this.sizes.get(id);
    const g = this.groups.get(id);
    // a group is marked by the start of its title strip (the group itself may be wider than the view)
    const box = p && s ? { ...p, ...s } : g ? { ...g, width: Math.min(g.width, 240), height: GROUP_TITLE } : null;
    const screen = box && this.instance ? this.boxOnScreen(box) : null;
    const canvas = this.size ?? { width: this.el.clientWidth, height: this.el.clientHeight };
    if (!screen || !this.instance || canvas.width === 0) return;
    const by = panIntoView(screen, uncovered(canvas, this.insets));
    if (by.x === 0 && by.y === 0) return;
    const { x, y, zoom } = this.instance.getViewport();
    void this.instance.setViewport({ x: x + by.x, y: y + by.y, zoom }, { duration: 0 });
    setTimeout(() => this.placeMinimap(), 20);
  }

  /** Show the whole graph, however small that makes it (the Fit button, F); refits keep doing so. */
  fit(): void {
    this.whole = true;
    this.fitView(false);
  }

  /**
   * Fit the view to the drawing. `readable` (the view the canvas picks by itself, as the widget opens
   * or resizes): never below the zoom where the smallest label is 9 px on screen, showing the start
   * of the program (top left) when the whole does not fit at that zoom.
   */
  private fitView(readable: boolean): void {
    if (!this.instance || this.positions.size === 0) return;
    this.fitted = true;
    this.following = true;
    const all = boundsOf(
      [...this.positions].map(([id, p]) => ({ ...p, ...(this.sizes.get(id) ?? { width: 0, height: 0 }) })),
    );
    const box = boundsOf([all, ...this.groups.values()]);
    // the size the resize observer saw (reading clientWidth would force a layout of the page)
    const { width, height } = this.size ?? { width: this.el.clientWidth, height: this.el.clientHeight };
    if (width === 0 || height === 0) return;
    // into the part of the canvas the drawers leave uncovered
    const view = uncovered({ width, height }, this.insets);
    const viewport = fitViewport(box, view, { minZoom: readable ? READABLE_ZOOM : 0 });
    void this.instance.setViewport(viewport, { duration: 0 });
    setTimeout(() => this.placeMinimap(), 20);
  }

  zoomBy(factor: number): void {
    if (!this.instance) return;
    this.following = this.whole = false; // the user's zoom: a drawer opening does not refit it away
    void this.instance.zoomTo(this.instance.getZoom() * factor);
  }

  reveal(id: string): void {
    const p = this.positions.get(id);
    const s = this.sizes.get(id);
    if (!this.instance || !p || !s) return;
    // centred in the part of the canvas the drawers leave uncovered
    const zoom = this.instance.getZoom();
    const view = uncovered(this.size ?? { width: this.el.clientWidth, height: this.el.clientHeight }, this.insets);
    const x = view.x + view.width / 2 - (p.x + s.width / 2) * zoom;
    const y = view.y + view.height / 2 - (p.y + s.height / 2) * zoom;
    void this.instance.setViewport({ x, y, zoom }, { duration: 0 });
    setTimeout(() => this.placeMinimap(), 20);
  }

  get drawingSize(): { width: number; height: number } {
    const all = boundsOf(
      [...this.positions].map(([id, p]) => ({ ...p, ...(this.sizes.get(id) ?? { width: 0, height: 0 }) })),
    );
    return { width: all.width, height: all.height };
  }

  /** How long the last ELK layout took in the worker (ms), or null before one ran. */
  get layoutMs(): number | null {
    return this.elkMs;
  }

  /** Lay everything out again with ELK and store the positions (one undo step). */
  async tidy(): Promise<void> {
    const graph = this.graph;
    if (!graph) return;
    const { positions, ms } = await elkLayout(graph, this.sizes);
    this.elkMs = ms;
    this.el.dataset.elkMs = ms.toFixed(1);
    const out: Record<string, [number, number]> = {};
    for (const [id, p] of positions) if (this.sizes.has(id)) out[id] = [p.x, p.y];
    this.known = new Map(positions);
    this.fitted = false;
    this.app.edit({ op: "place", positions: out });
  }

  toggleMinimap(): void {
    this.minimapShown = !this.minimapShown;
    this.el.dataset.minimap = this.minimapShown ? "shown" : "hidden";
    this.render();
  }

  dispose(): void {
    this.disposed = true;
    this.resize.disconnect();
    document.removeEventListener("pointerdown", this.closeMenuOutside, true);
    this.root.unmount();
    this.el.remove();
  }

  // --- drawing ---------------------------------------------------------------------------------

  private model(): CanvasModel | null {
    if (!this.graph) return null;
    const selection = new Set(this.selectedIds());
    return {
      graph: this.graph,
      positions: this.positions,
      sizes: this.sizes,
      groups: this.groups,
      selection,
      badges: this.badges,
      marks: this.marks,
      pending: this.pending,
      minimap: {
        // a large graph's overview stays mounted (hidden while all is in view): mounting it costs a frame
        wanted: this.minimapShown && (this.someOutside || this.graph.nodes.length > LARGE_GRAPH),
        shown: this.minimapShown && this.someOutside,
        corner: this.corner,
      },
      note: this.note,
      renaming: this.renaming,
      bindings: this.bindingsDrawn,
    };
  }

  private render(): void {
    const model = this.model();
    if (!model || this.disposed) return;
    // a pan or zoom ends with a call here: redrawing 500 unchanged nodes cost ~100 ms and dropped frames
    if (this.drawnModel !== null && sameModel(this.drawnModel, model)) return;
    this.drawnModel = model;
    const drawing = (
      <ReactFlowProvider>
        <FlowView model={model} events={this.events} />
      </ReactFlowProvider>
    );
    if (this.held !== undefined) this.held = drawing;
    else this.root.render(drawing);
  }

  /**
   * Draw what `change` does to the canvas in one React pass, now: an edit that arrives from the kernel
   * is then in the frame its message arrived in. Left to React's scheduler, the pass ran a task later,
   * and the browser painted the panels' update first: the new node came a frame (~12 ms) late.
   */
  drawNow(change: () => void): void {
    this.held = null;
    try {
      change();
    } finally {
      const drawing = this.held;
      this.held = undefined;
      if (drawing !== null && !this.disposed) flushSync(() => this.root.render(drawing));
    }
  }

  /**
   * Labels measured in the font the browser draws them in; a label measured before in the same font
   * is not measured again (an edit changes a few labels of a graph).
   */
  private measure(): Measure {
    // the font only changes with JupyterLab's theme: reading the computed style on every edit forced
    // a style recalculation of the page before the edit was drawn
    const theme = document.body.dataset.jpThemeName ?? "";
    let family = this.fontFamily;
    if (theme !== this.fontTheme || family === "") {
      family = getComputedStyle(this.el).fontFamily || "sans-serif";
      // kept once the canvas is in the page (a detached element has no style to inherit)
      [this.fontTheme, this.fontFamily] = this.el.isConnected ? [theme, family] : ["", ""];
    }
    if (family !== this.widthsFamily) {
      this.widths.clear();
      this.widthsFamily = family;
    }
    this.measureContext ??= document.createElement("canvas").getContext("2d");
    const context = this.measureContext;
    return (text, font) => {
      if (!context) return text.length * (font === "title" ? 8 : 7);
      const key = `${font}\u0000${text}`;
      let width = this.widths.get(key);
      if (width === undefined) {
        context.font = font === "title" ? `600 13px ${family}` : `11px ${family}`;
        width = Math.ceil(context.measureText(text).width) + 2; // sub-pixel rounding of the DOM's text
        this.widths.set(key, width);
      }
      return width;
    };
  }

  /** A drawing box on screen, relative to the canvas (null when the view is not ready). */
  private boxOnScreen(box: Box): Box | null {
    if (!this.instance) return null;
    const { x, y, zoom } = this.instance.getViewport();
    return { x: box.x * zoom + x, y: box.y * zoom + y, width: box.width * zoom, height: box.height * zoom };
  }

  /** Move the overview to a corner where it covers neither the selected node nor a node being added. */
  private placeMinimap(focus?: Box | null): void {
    let box = focus ?? null;
    if (box === undefined || box === null) {
      const id = this.anchor ?? this.many[0] ?? null;
      const p = id !== null ? this.positions.get(id) : undefined;
      const s = id !== null ? this.sizes.get(id) : undefined;
      const g = id !== null ? this.groups.get(id) : undefined;
      if (p && s) box = this.boxOnScreen({ ...p, width: s.width, height: s.height });
      else if (g) {
        box = this.boxOnScreen({ ...g, height: GROUP_TITLE });
      } // a group is marked by its title
      else box = null;
    }
    // the size the resize observer saw: reading clientWidth here would force a layout on every edit
    const canvas = this.size ?? { width: this.el.clientWidth, height: this.el.clientHeight };
    // the overview is for a drawing larger than the view: with everything in view it only covers nodes
    const view = uncovered(canvas, this.insets); // a node under a drawer is out of view too
    const outside = [...this.positions].some(([id, p]) => {
      const s = this.sizes.get(id);
      const b = s ? this.boxOnScreen({ ...p, ...s }) : null;
      return (
        b !== null &&
        (b.x < view.x - 0.5 || b.y < 0 || b.x + b.width > view.x + view.width + 0.5 || b.y + b.height > canvas.height)
      );
    });
    if (outside !== this.someOutside) {
      this.someOutside = outside;
      this.render();
    }
    const corner = minimapCorner(canvas, MINIMAP, box, 10, this.insets);
    if (corner !== this.corner) {
      this.corner = corner;
      this.el.dataset.minimapCorner = corner;
    }
  }

  // --- what the user does -------------------------------------------------------------------------

  private makeEvents(): CanvasEvents {
    return {
      select: (id, extend) => {
        this.closeMenu();
        if (!extend) this.many = [];
        this.app.select(id, extend);
      },
      selectMany: (ids) => {
        this.many = ids;
        this.render();
      },
      place: (positions, group) => {
        this.following = false; // the user placed something: the view stays where it is
        for (const [id, [x, y]] of Object.entries(positions)) this.known.set(id, { x, y });
        this.app.edit(group === undefined ? { op: "place", positions } : { op: "place", positions, group });
      },
      bind: (node, param, arg) => {
        this.setNote(null);
        this.app.edit({ op: "rebind", node, param, arg });
      },
      acceptGuess: (node, param) => this.app.edit({ op: "accept_guess", node, param }),
      refuse: (reason) => this.setNote(reason),
      contextMenu: (target, at) => this.openMenu(target, at),
      startRename: (id) => {
        this.renaming = id;
        this.render();
      },
      rename: (id, name) => this.finishRename(id, name),
      toggleBreakpoint: (id) => this.app.toggleBreakpoint(id),
      ready: (instance) => {
        this.instance = instance;
        this.fitView(true);
      },
      centerAt: (at) => {
        if (!this.instance) return;
        this.following = false;
        void this.instance.setCenter(at.x, at.y, { zoom: this.instance.getZoom() });
      },
      zoomed: (zoom) => this.setDetail(nextDetail(this.detail, zoom, true)),
      viewportMoved: (byUser) => {
        if (this.instance) this.setDetail(nextDetail(this.detail, this.instance.getZoom(), false));
        // hidden edges still cost React Flow a selector each per frame: out of the far overview at rest
        this.bindingsDrawn = this.detail !== "overview";
        if (byUser) this.following = this.whole = false;
        this.placeMinimap();
        this.render();
      },
    };
  }

  /**
   * Zoomed out, the drawing leaves labels (and, further out, bindings) to CSS rules on `data-detail`:
   * one attribute on the canvas, no React render, so crossing a level costs one style pass.
   */
  private setDetail(detail: Detail): void {
    if (detail === this.detail) return;
    this.detail = detail;
    this.el.dataset.detail = detail;
    const note = detailNote(detail);
    this.detailStatus.textContent = note ?? "";
    this.detailStatus.hidden = note === null;
  }

  private setNote(note: string | null): void {
    this.note = note;
    this.app.problem(note);
    this.render();
  }

  private finishRename(id: string, name: string | null): void {
    if (this.renaming !== id) return;
    this.renaming = null;
    this.render();
    this.el.focus({ preventScroll: true });
    const old = id.startsWith("arg:") ? id.slice(4) : (id.split("/").pop() ?? id);
    if (name === null || name.trim() === "" || name.trim() === old) return;
    if (id.startsWith("arg:")) this.app.edit({ op: "rename_arg", arg: old, name: name.trim() });
    else this.app.edit({ op: "rename", node: id, name: name.trim() });
  }

  /** The canvas's keys; a key handled here goes no further (not to JupyterLab, not to the app). */
  private key(e: KeyboardEvent): void {
    if (e.target instanceof HTMLInputElement) return;
    const mod = e.ctrlKey || e.metaKey;
    const k = e.key.length === 1 ? e.key.toLowerCase() : e.key;
    let handled = true;
    if (k === "Escape") {
      if (!this.menu.hidden) this.closeMenu();
      else if (this.note !== null) this.setNote(null);
      else if (this.many.length > 0) {
        this.many = [];
        this.render();
      } else handled = false; // the app clears its selection
    } else if (mod && k === "a") this.selectAll();
    else if (mod && k === "c") this.copy();
    else if (mod && k === "v") this.paste();
    else if (mod && k === "d") this.duplicate();
    else if ((k === "Delete" || k === "Backspace") && this.many.length > 0) this.removeSelected();
    else if (k === "F2" && this.selectedIds().length === 1) this.events.startRename(this.selectedIds()[0]!);
    else handled = false;
    if (handled) {
      e.preventDefault();
      e.stopPropagation();
    }
  }

  /** Every node of the model: dispatches and the groups around them (a branch goes with its conditional). */
  selectAll(): void {
    if (!this.graph) return;
    this.many = this.graph.nodes.filter((n) => n.kind !== "branch").map((n) => n.id);
    this.render();
  }

  /** Copies the selected nodes of the model, groups (sequences, loops, conditionals) with their bodies. */
  private copy(): void {
    this.clipboard = this.selectedIds().filter((id) => this.graph?.nodes.some((n) => n.id === id));
  }

  private paste(): void {
    const graph = this.graph;
    if (!graph || this.clipboard.length === 0) return;
    const first = graph.nodes.find((n) => n.id === this.clipboard[0]);
    const into = first?.parent ?? null;
    const last = graph.nodes.find((n) => n.id === this.clipboard.at(-1));
    const { dx, dy } = pasteOffset(this.clipboard, this.boxes());
    this.app.edit({ op: "paste", nodes: [...this.clipboard], into, index: last ? last.index + 1 : null, dx, dy });
  }

  /** Every box drawn: leaf nodes (dispatches, args) and groups, by id. */
  private boxes(): Map<string, Box> {
    const boxes = new Map<string, Box>(this.groups);
    for (const [id, p] of this.positions) {
      const s = this.sizes.get(id);
      if (s) boxes.set(id, { ...p, ...s });
    }
    return boxes;
  }

  private duplicate(): void {
    this.copy();
    this.paste();
  }

  private removeSelected(): void {
    // args are not nodes of the model: a box around dispatches often catches their buffers too
    const ids = this.selectedIds().filter((id) => this.graph?.nodes.some((n) => n.id === id));
    if (ids.length === 0) return;
    this.many = [];
    this.app.edit({ op: "remove_nodes", nodes: ids });
  }

  // --- the context menu -----------------------------------------------------------------------------

  private openMenu(target: { kind: "node" | "group" | "canvas"; id: string | null }, at: Point): void {
    const items = this.menuItems(target);
    if (items.length === 0) return;
    this.menu.replaceChildren(
      ...items.map((item) => {
        const b = h(
          "button",
          { type: "button", role: "menuitem", class: "gl-menu-item", "data-action": item.action },
          item.label,
        );
        b.addEventListener("click", () => {
          this.closeMenu();
          item.run();
        });
        return b;
      }),
    );
    const r = this.el.getBoundingClientRect();
    this.menu.style.left = `${at.x - r.left}px`;
    this.menu.style.top = `${at.y - r.top}px`;
    this.menu.dataset.target = target.id ?? "";
    this.menu.hidden = false;
    (this.menu.firstElementChild as HTMLElement | null)?.focus();
  }

  private closeMenu(): void {
    this.menu.hidden = true;
  }

  private readonly closeMenuOutside = (e: Event): void => {
    if (!this.menu.hidden && !(e.target instanceof Node && this.menu.contains(e.target))) this.closeMenu();
  };

  private menuItems(target: { kind: "node" | "group" | "canvas"; id: string | null }): MenuItem[] {
    const graph = this.graph;
    if (!graph) return [];
    if (target.kind === "canvas" || target.id === null) {
      const items: MenuItem[] = [
        { label: "Select all", action: "select-all", run: () => this.selectAll() },
        { label: "Tidy layout", action: "tidy", run: () => void this.tidy() },
        { label: "Fit", action: "fit", run: () => this.fit() },
        {
          label: "Add a kernel\u2026",
          action: "add",
          // the app opens the palette's drawer (it may be closed) and puts the caret in its search
          run: () => this.app.root().dispatchEvent(new CustomEvent("graphlab:add-kernel", { bubbles: true })),
        },
      ];
      if (this.clipboard.length > 0) items.push({ label: "Paste", action: "paste", run: () => this.paste() });
      return items;
    }
    const id = target.id;
    const chosen = this.selectedIds().includes(id) ? this.selectedIds() : [id];
    if (id.startsWith("arg:")) {
      const name = id.slice(4);
      return [
        { label: "Rename\u2026", action: "rename", run: () => this.events.startRename(id) },
        { label: "Inspect", action: "inspect", run: () => this.app.select(id, false) },
        {
          label: "Give value\u2026",
          action: "give-value",
          run: () =>
            this.app
              .root()
              .dispatchEvent(new CustomEvent("graphlab:give-value", { bubbles: true, detail: { arg: name } })),
        },
        { label: "Delete arg", action: "delete", run: () => this.app.edit({ op: "remove_arg", arg: name }) },
      ];
    }
    const node = graph.nodes.find((n) => n.id === id);
    const items: MenuItem[] = [
      {
        label: chosen.length > 1 ? `Delete ${chosen.length} nodes` : "Delete",
        action: "delete",
        run: () => {
          this.many = [];
          this.app.edit(chosen.length > 1 ? { op: "remove_nodes", nodes: chosen } : { op: "remove", node: id });
        },
      },
      ...(chosen.length === 1
        ? [{ label: "Rename\u2026", action: "rename", run: () => this.events.startRename(id) }]
        : []),
      { label: "Group\u2026", action: "group", run: () => this.app.group(chosen) },
      {
        label: "Make loop\u2026",
        action: "make-loop",
        run: () =>
          this.app
            .root()
            .dispatchEvent(new CustomEvent("graphlab:make-loop", { bubbles: true, detail: { nodes: chosen } })),
      },
      { label: "Toggle breakpoint", action: "breakpoint", run: () => this.app.toggleBreakpoint(id) },
    ];
    if (node) {
      items.push(
        { label: "Copy", action: "copy", run: () => ((this.clipboard = chosen), undefined) },
        {
          label: "Duplicate",
          action: "duplicate",
          run: () => {
            this.clipboard = chosen;
            this.paste();
          },
        },
      );
    }
    if (node?.kind === "dispatch") {
      if ((node.guessed ?? []).length > 0) {
        items.push({
          label: "Accept guessed bindings",
          action: "accept-guess",
          run: () => this.app.edit({ op: "accept_guess", node: id, param: null }),
        });
      }
    }
    return items;
  }
}
