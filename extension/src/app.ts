/**
 * The editor app: reads the traits, lays out the components, turns user actions into messages
 * for Python, and cleans everything up on dispose.
 *
 * Layout: toolbar, error banner, then palette | graph | side panel. The debug, inspect and export
 * panels of later rounds go in `SidePanel.sections` and `Toolbar.slot`.
 */

import type { Cleanup, WidgetModel } from "./anywidget";
import { suggestBindings } from "./bindingFilter";
import { argNodeId, badgesByNode } from "./diagnostics";
import { Listeners, h, isTextTarget } from "./dom";
import { GraphCanvas, errorText } from "./graphView";
import { type Action, actionFor } from "./keymap";
import { Palette } from "./palette";
import {
  type ClientMessage,
  EMPTY_GRAPH,
  EMPTY_HISTORY,
  type EditOp,
  type KernelView,
  type Traits,
  parseServerMessage,
} from "./protocol";
import { NodeIndex, freeSequenceName, insertionPoint, siblingRange } from "./selection";
import { SidePanel } from "./sidePanel";
import type { Actions, ViewState } from "./state";
import { Banner, Toolbar } from "./toolbar";
import { UndoStack } from "./undoStack";

const TRAITS: (keyof Traits)[] = ["graph", "palette", "dot", "diagnostics", "error", "selected", "history"];

export class EditorApp implements Actions {
  private readonly root: HTMLDivElement;
  private readonly toolbar: Toolbar;
  private readonly banner: Banner;
  private readonly palette: Palette;
  private readonly canvas: GraphCanvas;
  private readonly side: SidePanel;
  private readonly listeners = new Listeners();
  private readonly undoStack = new UndoStack();
  private state: ViewState;
  private nextRequest = 1;
  /** Requests sent and not yet answered, by number: what was asked (for error messages). */
  private readonly pending = new Map<number, ClientMessage>();
  /** A selection sent to Python and not yet synced back (undefined: none). */
  private pendingSelect: string | null | undefined = undefined;
  /** The other end of a Shift range (the anchor is the `selected` trait). */
  private rangeEnd: string | null = null;
  /** A front-end failure (Graphviz, a refused undo), shown when the `error` trait is empty. */
  private localError = "";
  private lastDot: string | null = null;
  private refreshQueued = false;
  private disposed = false;

  constructor(
    private readonly model: WidgetModel<Traits>,
    el: HTMLElement,
  ) {
    this.toolbar = new Toolbar(this);
    this.banner = new Banner(() => this.dismissError());
    this.palette = new Palette(this);
    this.side = new SidePanel(this);
    this.canvas = new GraphCanvas({
      select: (id, extend) => this.select(id, extend),
      layoutError: (message) => {
        this.localError = message ?? "";
        this.showError();
      },
      wheelZooms: () => this.root.contains(document.activeElement),
      pressed: () => {
        if (!this.root.contains(document.activeElement)) this.root.focus({ preventScroll: true });
      },
    });
    this.root = h(
      "div",
      { class: "gl-editor", tabindex: 0, "data-lm-suppress-shortcuts": "true" },
      this.toolbar.el,
      this.banner.el,
      h("div", { class: "gl-main" }, this.palette.el, this.canvas.el, this.side.el),
    );
    el.append(this.root);
    this.undoStack.sync(this.read("history"));
    this.state = this.buildState();

    // One sync from Python changes several traits at once: redraw once, after the last of them.
    const onChange = (): void => this.scheduleRefresh();
    const onSelected = (): void => {
      this.pendingSelect = undefined;
      this.scheduleRefresh();
    };
    const onHistory = (): void => {
      this.undoStack.sync(this.read("history"));
      this.scheduleRefresh();
    };
    const onMessage = (content: unknown): void => this.onMessage(content);
    for (const trait of TRAITS) {
      if (trait === "selected" || trait === "history") continue;
      this.model.on(`change:${trait}`, onChange);
    }
    this.model.on("change:selected", onSelected);
    this.model.on("change:history", onHistory);
    this.model.on("msg:custom", onMessage);
    this.listeners.add(() => {
      for (const trait of TRAITS) {
        if (trait === "selected" || trait === "history") continue;
        this.model.off(`change:${trait}`, onChange);
      }
      this.model.off("change:selected", onSelected);
      this.model.off("change:history", onHistory);
      this.model.off("msg:custom", onMessage);
    });
    this.listeners.on(this.root, "keydown", (e: KeyboardEvent) => this.onKey(e));
    this.refresh();
  }

  // --- state ---------------------------------------------------------------------------------------

  private read<K extends keyof Traits>(name: K): Traits[K] {
    const value = this.model.get(name);
    if (value !== undefined && value !== null) return value;
    const defaults: Traits = {
      graph: EMPTY_GRAPH,
      palette: [],
      dot: "",
      diagnostics: [],
      error: "",
      selected: "",
      history: EMPTY_HISTORY,
    };
    return defaults[name];
  }

  private buildState(): ViewState {
    const traits = Object.fromEntries(TRAITS.map((t) => [t, this.read(t)])) as unknown as Traits;
    const index = new NodeIndex(traits.graph);
    const wanted = this.pendingSelect !== undefined ? this.pendingSelect : traits.selected || null;
    const anchor = wanted !== null && index.has(wanted) ? wanted : null;
    if (anchor === null || (this.rangeEnd !== null && !index.has(this.rangeEnd))) this.rangeEnd = null;
    const range = anchor === null ? [] : siblingRange(index, anchor, this.rangeEnd);
    const args = new Set(traits.graph.args.map((a) => argNodeId(a.name)));
    const isDrawn = (id: string): boolean => index.has(id) || args.has(id);
    const { badges, unplaced } = badgesByNode(traits.diagnostics, isDrawn);
    return { traits, index, anchor, range, history: this.undoStack.view, badges, unplaced, isDrawn };
  }

  private scheduleRefresh(): void {
    if (this.refreshQueued) return;
    this.refreshQueued = true;
    queueMicrotask(() => {
      this.refreshQueued = false;
      if (!this.disposed) this.refresh();
    });
  }

  private refresh(): void {
    const state = (this.state = this.buildState());
    this.toolbar.update(state);
    this.palette.update(state);
    this.side.update(state);
    this.showError();
    const dot = state.traits.dot;
    if (dot !== this.lastDot) {
      this.lastDot = dot;
      this.canvas
        .setDot(dot, state.isDrawn, state.traits.graph.nodes.length === 0)
        .then(() => this.canvas.decorate(this.state.anchor, this.state.range, this.state.badges))
        .catch((err: unknown) => {
          this.localError = `could not draw the graph: ${errorText(err)}`;
          this.showError();
        });
    } else {
      this.canvas.decorate(state.anchor, state.range, state.badges);
    }
  }

  private showError(): void {
    const error = this.read("error");
    this.banner.show(error !== "" ? error : this.localError);
  }

  // --- messages ----------------------------------------------------------------------------------

  private send(message: ClientMessage): void {
    if (message.request !== undefined) this.pending.set(message.request, message);
    this.model.send(message);
  }

  private onMessage(content: unknown): void {
    const reply = parseServerMessage(content);
    if (!reply || reply.request === null) return;
    const sent = this.pending.get(reply.request);
    this.pending.delete(reply.request);
    this.undoStack.settle(reply.request);
    if (sent?.kind === "select") this.pendingSelect = undefined;
    if (!reply.ok && reply.error && reply.error !== this.read("error")) this.localError = reply.error;
    if (reply.ok) this.localError = "";
    this.refresh();
  }

  edit(op: EditOp): void {
    this.send({ kind: "edit", request: this.nextRequest++, ...op } as ClientMessage);
  }

  select(id: string | null, extend = false): void {
    // An arg's node (`arg:x`) is not a graph node; the inspect panel of a later round will use it.
    if (id !== null && !this.state.index.has(id)) return;
    const anchor = this.state.anchor;
    if (extend && anchor !== null && id !== null) {
      this.rangeEnd = id;
      this.refresh();
      return;
    }
    this.rangeEnd = null;
    if (id === anchor) {
      this.refresh();
      return;
    }
    this.pendingSelect = id;
    this.send({ kind: "select", node: id, request: this.nextRequest++ });
    this.refresh();
  }

  undo(): void {
    const request = this.nextRequest++;
    if (this.undoStack.request("undo", request)) {
      this.send({ kind: "undo", request });
      this.refresh();
    }
  }

  redo(): void {
    const request = this.nextRequest++;
    if (this.undoStack.request("redo", request)) {
      this.send({ kind: "redo", request });
      this.refresh();
    }
  }

  addDispatch(kernel: KernelView): void {
    if (!kernel.dispatchable) {
      this.localError = kernel.why_not ?? `kernel ${kernel.name} cannot be dispatched`;
      this.showError();
      return;
    }
    const point = insertionPoint(this.state.index, this.state.anchor);
    const bindings = suggestBindings(kernel.params, this.state.traits.graph.args);
    this.edit({ op: "dispatch", kernel: kernel.ref, bindings, into: point.into, index: point.index, name: null });
  }

  group(ids: readonly string[]): void {
    if (ids.length === 0) return;
    this.rangeEnd = null;
    this.edit({ op: "group", nodes: [...ids], name: freeSequenceName(this.state.traits.graph), repeat: 1 });
  }

  move(id: string, by: -1 | 1): void {
    const node = this.state.index.get(id);
    if (!node) return;
    const target = node.index + by;
    if (target < 0 || target >= this.state.index.siblings(id).length) return;
    this.edit({ op: "move", node: id, index: target });
  }

  remove(id: string): void {
    this.rangeEnd = null;
    this.edit({ op: "remove", node: id });
  }

  fit(): void {
    this.canvas.fit();
  }

  zoom(factor: number): void {
    this.canvas.zoomBy(factor);
  }

  dismissError(): void {
    this.localError = "";
    if (this.read("error") !== "") {
      this.model.set("error", "");
      this.model.save_changes();
    }
    this.showError();
  }

  // --- keyboard ----------------------------------------------------------------------------------

  private onKey(e: KeyboardEvent): void {
    const inText = isTextTarget(e.target);
    const action = actionFor(e, inText);
    if (action === null) return;
    if (inText) {
      // Escape in a field gives the keys back to the editor; the field handles it first.
      (e.target as HTMLElement).blur();
      this.root.focus();
      e.stopPropagation();
      return;
    }
    if (this.run(action)) {
      e.preventDefault();
      e.stopPropagation();
    }
  }

  /** Do a keyboard action; false when it does not apply (the key then goes on as usual). */
  private run(action: Action): boolean {
    const { anchor, index, range } = this.state;
    switch (action) {
      case "undo":
        this.undo();
        return true;
      case "redo":
        this.redo();
        return true;
      case "search":
        this.palette.focusSearch();
        return true;
      case "fit":
        this.fit();
        return true;
      case "zoomIn":
        this.zoom(1.25);
        return true;
      case "zoomOut":
        this.zoom(1 / 1.25);
        return true;
      case "clearSelection":
        if (anchor === null) return false;
        this.select(null);
        return true;
      case "selectPrev":
      case "selectNext": {
        const next = index.step(anchor, action === "selectPrev" ? -1 : 1);
        if (next === null) return false;
        this.select(next);
        this.canvas.reveal(next);
        return true;
      }
      default:
        break;
    }
    if (anchor === null) return false;
    switch (action) {
      case "delete":
        this.remove(anchor);
        return true;
      case "rename":
        this.side.focusName();
        return true;
      case "repeat":
        return this.side.focusRepeat();
      case "moveUp":
        this.move(anchor, -1);
        return true;
      case "moveDown":
        this.move(anchor, 1);
        return true;
      case "group":
        this.group(range.length > 0 ? range : [anchor]);
        return true;
      case "extendPrev":
      case "extendNext": {
        const siblings = index.siblings(anchor);
        const end = this.rangeEnd ?? anchor;
        const at = siblings.indexOf(end) + (action === "extendPrev" ? -1 : 1);
        if (at < 0 || at >= siblings.length) return true;
        this.select(siblings[at]!, true);
        return true;
      }
      default:
        return false;
    }
  }

  dispose(): void {
    this.disposed = true;
    this.listeners.dispose();
    this.toolbar.dispose();
    this.banner.dispose();
    this.palette.dispose();
    this.side.dispose();
    this.canvas.dispose();
    this.root.remove();
  }
}

/** anywidget's `render`: build the editor in `el`; the returned function tears it down. */
export function mount(model: WidgetModel<Traits>, el: HTMLElement): Cleanup {
  const app = new EditorApp(model, el);
  return () => app.dispose();
}
