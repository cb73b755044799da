/**
 * The editor app: reads the traits, lays out the components, turns user actions into messages
 * for Python, and cleans everything up on dispose.
 *
 * Layout: toolbar (with the debugger's controls), the debugger's timeline, error banner, then the
 * graph, which keeps the whole width: the palette (left) and the side panel (right; tabs: Node,
 * Debug, Inspect, Export, Values) are drawers floating over it (`LayoutToggles.drawer`).
 *
 * Over 500 lines on purpose: this is the one composition root that wires every component to the
 * traits and messages; the components themselves live in their own modules.
 */

import type { Cleanup, WidgetModel } from "./wire/anywidget";
import { guessBindings } from "./logic/bindingFilter";
import { boundsOption } from "./panels/boundsCheck";
import { DebugBar, TimelineBar } from "./panels/debugPanel";
import { debugMarks } from "./canvas/debugMarks";
import { argNodeId, badgesByNode } from "./logic/diagnostics";
import { Listeners, h, isTextTarget } from "./logic/dom";
import { FlowCanvas } from "./canvas/flowCanvas";
import { errorText } from "./logic/dom";
import { GroupForm } from "./panels/groupForm";
import { type Action, actionFor, keysFor } from "./logic/keymap";
import { LayoutToggles } from "./canvas/layoutToggles";
import { sequenceNameError } from "./logic/names";
import { Palette } from "./panels/palette";
import {
  type ClientMessage,
  type DebugAction,
  EMPTY_DEBUG,
  EMPTY_EXPORT,
  EMPTY_GRAPH,
  EMPTY_HISTORY,
  EMPTY_INSPECT,
  EMPTY_VALUES,
  type EditOp,
  type Every,
  type GraphView,
  type KernelView,
  type PanelMessage,
  type Traits,
  type ValuesOp,
  parseServerMessage,
} from "./wire/protocol";
import { NodeIndex, freeSequenceName, insertionPoint, siblingRange } from "./logic/selection";
import { SidePanel } from "./panels/sidePanel";
import type { Actions, ExportOptions, PanelTab, ViewState } from "./logic/state";
import { Timeline } from "./logic/timeline";
import { Banner, Toolbar } from "./panels/toolbar";
import { UndoStack } from "./logic/undoStack";
import { missingValueIn } from "./panels/valuesPanel";
import { GIVE_VALUE_EVENT, type ValuesTarget, giveValueTarget } from "./logic/giveValue";

const TRAITS: (keyof Traits)[] = [
  "graph",
  "palette",
  "dot",
  "diagnostics",
  "error",
  "selected",
  "history",
  "debugger",
  "inspect",
  "inspect_picture",
  "inspect_diff",
  "inspect_page",
  "export",
  "values",
];

/** The debugger's keyboard actions and the control each one sends. */
const DEBUG_KEYS: Partial<Record<Action, DebugAction>> = {
  debugStep: "step",
  debugOver: "step_over",
  debugContinue: "continue",
  debugBack: "back",
  debugRestart: "restart",
  debugNonfinite: "find_nonfinite",
};

export class EditorApp implements Actions {
  private readonly root: HTMLDivElement;
  private readonly toolbar: Toolbar;
  private readonly debugBar: DebugBar;
  private readonly timelineBar: TimelineBar;
  private readonly banner: Banner;
  private readonly palette: Palette;
  private readonly layoutToggles: LayoutToggles;
  private readonly canvas: FlowCanvas;
  private readonly side: SidePanel;
  private readonly groupForm: GroupForm;
  /** The group edit the name form waits on (its reply closes the form or shows Python's refusal). */
  private groupRequest: number | null = null;
  /** The loop form's edit in flight (its reply closes the form or shows the refusal there). */
  private loopRequest: number | null = null;
  /** The banner's "Give value..." button (shown when the error names a missing run value). */
  private readonly giveValueButton: HTMLButtonElement;
  /** The arg or dim the banner's error asks a value for (the button opens the Values tab there). */
  private giveTarget: ValuesTarget = null;
  /** The last drawing laid out (a new dispatch's pending box stays until the drawing with it is shown). */
  private drawn: Promise<void> = Promise.resolve();
  private readonly listeners = new Listeners();
  private readonly undoStack = new UndoStack();
  private state: ViewState;
  private nextRequest = 1;
  /** Requests sent and not yet answered, by number: what was asked (for error messages). */
  private readonly pending = new Map<number, ClientMessage>();
  /** A selection sent to Python and not yet synced back (undefined: none). */
  private pendingSelect: string | null | undefined = undefined;
  /** The arg whose buffer node was clicked: its editor is open while no node is selected. */
  private selectedArg: string | null = null;
  /** The other end of a Shift range (the anchor is the `selected` trait). */
  private rangeEnd: string | null = null;
  /** A front-end failure (Graphviz, a refused undo), shown when the `error` trait is empty. */
  private localError = "";
  private lastGraph: GraphView | null = null;
  private refreshQueued = false;
  private disposed = false;
  private tab: PanelTab = "node";
  /** Panel requests in flight, by number: their kind (a kind's buttons wait while one is out). */
  private readonly busy = new Map<number, string>();
  /** The Debug start's "check bounds first" option (kept across redraws, sent with each start). */
  private checkBounds = false;
  private timeline: { graph: GraphView; timeline: Timeline } | null = null;
  private lastSession = 0;
  /** What the drawing's marks were last made from (they are redrawn only when it changes). */
  private decorated = "";

  constructor(
    private readonly model: WidgetModel<Traits>,
    el: HTMLElement,
  ) {
    this.toolbar = new Toolbar(this);
    this.debugBar = new DebugBar(this);
    this.timelineBar = new TimelineBar(this);
    const exportButton = h(
      "button",
      { type: "button", class: "gl-btn", title: "Export an AOT module and verify it", "data-open": "export" },
      "Export\u2026",
    );
    this.listeners.on(exportButton, "click", () => {
      this.showTab("export");
      this.side.focusExport();
    });
    this.layoutToggles = new LayoutToggles(
      () => this.root,
      () => this.read("graph").name,
      (insets) => this.canvas.setInsets(insets),
    );
    const loopButton = h(
      "button",
      {
        type: "button",
        class: "gl-btn",
        title: "Make a loop or a conditional of the selected nodes",
        "data-open": "loop",
      },
      "Loop\u2026",
    );
    this.listeners.on(loopButton, "click", () => this.makeLoop([]));
    const valuesButton = h(
      "button",
      { type: "button", class: "gl-btn", title: "Give the run values Debug and Export use", "data-open": "values" },
      "Values\u2026",
    );
    this.listeners.on(valuesButton, "click", () => this.openValues(null));
    this.toolbar.slot.append(
      this.debugBar.el,
      h("span", { class: "gl-sep" }),
      loopButton,
      valuesButton,
      h("span", { class: "gl-sep" }),
      exportButton,
      h("span", { class: "gl-sep" }),
      this.layoutToggles.el,
    );
    this.banner = new Banner(() => this.dismissError());
    this.giveValueButton = h(
      "button",
      { type: "button", class: "gl-btn gl-give-value", hidden: true, "data-open": "give-value" },
      "Give value\u2026",
    );
    this.listeners.on(this.giveValueButton, "click", () => this.openValues(this.giveTarget));
    this.banner.el.insertBefore(this.giveValueButton, this.banner.el.lastElementChild);
    this.palette = new Palette(this);
    this.side = new SidePanel(this);
    this.canvas = new FlowCanvas({
      select: (id, extend) => this.select(id, extend),
      edit: (op) => this.edit(op),
      problem: (message) => {
        this.localError = message ?? "";
        this.showError();
      },
      toggleBreakpoint: (id) => this.toggleBreakpoint(id),
      group: (ids) => this.group(ids),
      root: () => this.root,
      contentChanged: () => {
        if (this.root) this.layoutToggles.followContent(this.root, this.canvas.el, this.canvas.drawingSize.height);
      },
    });
    this.groupForm = new GroupForm((ids, name) => this.confirmGroup(ids, name));
    this.canvas.el.append(this.groupForm.el);
    this.root = h(
      "div",
      { class: "gl-editor", tabindex: 0, "data-lm-suppress-shortcuts": "true" },
      this.toolbar.el,
      this.timelineBar.el,
      this.banner.el,
      h(
        "div",
        { class: "gl-main" },
        this.canvas.el,
        this.layoutToggles.drawer("palette", this.palette.el, "left", "kernel palette"),
        this.layoutToggles.drawer("side", this.side.el, "right", "side panel"),
      ),
    );
    el.append(this.root);
    this.layoutToggles.watch(this.root);
    // the widget's height follows the window too (a widget first drawn in a tall window shrinks with
    // it), and its chrome: a banner or a wrapped toolbar takes its room from the same budget
    const follow = (): void =>
      this.layoutToggles.followContent(this.root, this.canvas.el, this.canvas.drawingSize.height);
    this.listeners.on(window, "resize", follow);
    this.layoutToggles.watchChrome([this.toolbar.el, this.timelineBar.el, this.banner.el], follow);
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
    // Lumino tests the key's target against a shortcut's selector before it looks for the attribute
    // above it, and notebook keys (A, D D, M) select `:focus`: the focused canvas or node must carry the
    // attribute itself, or a click on the canvas and D D deletes the cell that holds the editor.
    this.listeners.on(this.root, "focusin", (e: FocusEvent) => {
      if (e.target instanceof HTMLElement) e.target.setAttribute("data-lm-suppress-shortcuts", "true");
    });
    // A focused element removed or hidden with what it showed (a box selection's rectangle, a deleted node,
    // the context menu after a pick) drops the focus to the page, and the next key (Ctrl+Z after Delete)
    // reaches nothing: give it to the canvas.
    this.listeners.on(this.root, "focusout", (e: FocusEvent) => {
      const lost = e.target;
      if (e.relatedTarget !== null || !(lost instanceof HTMLElement)) return;
      setTimeout(() => {
        const now = document.activeElement;
        const gone = !lost.isConnected || lost.getClientRects().length === 0;
        if (gone && (now === null || now === document.body) && this.root.isConnected) {
          this.canvas.el.focus({ preventScroll: true });
        }
      }, 0);
    });
    // other components (the canvas's context menu) ask with events on the widget's root
    this.listeners.on(this.root, "graphlab:make-loop", (e: Event) => {
      const nodes = (e as CustomEvent<{ nodes?: unknown }>).detail?.nodes;
      this.makeLoop(Array.isArray(nodes) ? nodes.filter((n): n is string => typeof n === "string") : []);
    });
    this.listeners.on(this.root, "graphlab:add-kernel", () => {
      this.layoutToggles.open("palette", true);
      this.palette.focusSearch();
    });
    this.listeners.on(this.root, GIVE_VALUE_EVENT, (e: Event) => {
      this.openValues(giveValueTarget((e as CustomEvent<unknown>).detail));
    });
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
      debugger: EMPTY_DEBUG,
      inspect: EMPTY_INSPECT,
      inspect_picture: null,
      inspect_diff: null,
      inspect_page: null,
      export: EMPTY_EXPORT,
      values: EMPTY_VALUES,
    };
    return defaults[name];
  }

  private timelineOf(graph: GraphView): Timeline {
    if (this.timeline?.graph !== graph) this.timeline = { graph, timeline: new Timeline(graph) };
    return this.timeline.timeline;
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
    const timeline = this.timelineOf(traits.graph);
    const busy = new Set(this.busy.values());
    const arg = anchor === null ? (traits.graph.args.find((a) => a.name === this.selectedArg) ?? null) : null;
    return {
      traits,
      index,
      anchor,
      arg,
      range,
      history: this.undoStack.view,
      badges,
      unplaced,
      isDrawn,
      timeline,
      tab: this.tab,
      busy,
      checkBounds: this.checkBounds,
      checkingStart: [...this.pending.values()].some(
        (m) => m.kind === "debug" && m.action === "start" && m.bounds === "check",
      ),
    };
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
    const session = this.read("debugger").session;
    if (session !== this.lastSession) {
      // a new session (from the Debug button or from Python): show it
      if (this.read("debugger").active && this.tab === "node") this.tab = "debug";
      this.lastSession = session;
    }
    const state = (this.state = this.buildState());
    this.toolbar.update(state);
    this.debugBar.update(state);
    this.timelineBar.update(state);
    this.palette.update(state);
    this.side.update(state);
    this.showError();
    const graph = state.traits.graph;
    if (graph !== this.lastGraph) {
      this.lastGraph = graph;
      try {
        // the edit, its selection and marks in one React pass now, not in a frame after the panels'
        this.canvas.drawNow(() => {
          this.canvas.setGraph(graph);
          this.decorate(state, true);
        });
      } catch (err: unknown) {
        this.localError = `could not draw the graph: ${errorText(err)}`;
        this.showError();
      }
    } else {
      this.decorate(state);
    }
  }

  /** Mark the selection, badges and debugger state on the drawing, when they changed since the last time. */
  private decorate(state: ViewState, force = false): void {
    const marks = debugMarks(state.traits.debugger, state.isDrawn);
    const selected = state.anchor ?? (state.arg ? argNodeId(state.arg.name) : null); // a clicked buffer is marked too
    const key = JSON.stringify([
      selected,
      state.range,
      [...state.badges],
      marks.active,
      marks.current,
      [...marks.breakpoints],
      [...marks.faults],
      [...marks.times],
      marks.nonfinite,
    ]);
    if (!force && key === this.decorated) return;
    this.decorated = key;
    this.canvas.decorate(selected, state.range, state.badges);
    this.canvas.decorateDebug(marks);
  }

  private showError(): void {
    const error = this.read("error");
    const text = error !== "" ? error : this.localError;
    this.banner.show(text);
    const missing = missingValueIn(text);
    this.giveValueButton.hidden = missing === null;
    this.giveTarget = missing;
  }

  // --- messages ----------------------------------------------------------------------------------

  private send(message: ClientMessage): void {
    if (message.request !== undefined) this.pending.set(message.request, message);
    this.model.send(message);
  }

  /** Send a panel message; its kind's buttons wait for the reply. */
  private sendPanel(message: PanelMessage): void {
    this.busy.set(message.request, message.kind);
    this.send(message);
    this.refresh();
  }

  private onMessage(content: unknown): void {
    const reply = parseServerMessage(content);
    if (!reply || reply.request === null) return;
    const sent = this.pending.get(reply.request);
    this.pending.delete(reply.request);
    this.busy.delete(reply.request);
    this.undoStack.settle(reply.request);
    if (sent?.kind === "select") this.pendingSelect = undefined;
    if (reply.ok && sent?.kind === "edit" && sent.op === "rename_arg" && sent.arg === this.selectedArg) {
      this.selectedArg = sent.name; // the arg editor follows its arg
    }
    if (reply.request === this.loopRequest) {
      this.loopRequest = null;
      this.side.loop.settle(reply.ok ? null : (reply.error ?? "the edit was refused"));
    }
    const forValues = sent?.kind === "values";
    if (forValues && !reply.ok) this.side.values.refused(sent, reply.error ?? "refused");
    const forForm = reply.request === this.groupRequest;
    if (forForm) {
      this.groupRequest = null;
      this.groupForm.settle(reply.ok ? null : (reply.error ?? "the group edit was refused"));
    }
    // a refused group is said in the form, where the name is typed (the banner shows Python's `error` trait too);
    // a failed bounds check in the debug panel, which shows the trait's error (sent before the reply)
    const checked = sent?.kind === "debug" && sent.action === "start" && sent.bounds === "check";
    const inPanel = forForm || forValues || (checked && this.read("debugger").bounds.state === "failed");
    if (!reply.ok && !inPanel && reply.error && reply.error !== this.read("error")) this.localError = reply.error;
    if (reply.ok) this.localError = "";
    this.refresh(); // starts laying out the drawing the edit made, if it is here
    if (sent?.kind === "edit" && !this.editing()) {
      // an added node's pending box stays until the drawing with the node is shown; a refusal drops it now
      const settle = (): void => {
        if (!this.editing()) this.canvas.setPending(null);
      };
      if (reply.ok) void this.drawn.then(settle, settle);
      else settle();
    }
  }

  private editing(): boolean {
    return [...this.busy.values()].includes("edit");
  }

  /**
   * Send an edit. Until its reply comes the node editor is inert and the canvas says what is
   * pending, so nothing chosen meanwhile lands on the node that was selected before it.
   */
  edit(op: EditOp): number {
    const request = this.nextRequest++;
    this.busy.set(request, "edit");
    const at = op.op === "dispatch" && op.position ? { x: op.position[0]!, y: op.position[1]! } : undefined;
    this.canvas.setPending(pendingText(op), at);
    this.send({ kind: "edit", request, ...op } as ClientMessage);
    this.refresh();
    return request;
  }

  select(id: string | null, extend = false): void {
    // An arg's node (`arg:x`) is not a graph node: while debugging, a click on a buffer inspects it.
    if (id !== null && id.startsWith("arg:") && !this.state.index.has(id)) {
      this.inspectArg(id.slice("arg:".length));
      return;
    }
    if (id !== null && !this.state.index.has(id)) return;
    if (id !== null) this.layoutToggles.open("side"); // the side panel follows the selection
    this.selectedArg = null;
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
    const { bindings, guessed } = guessBindings(kernel.params, this.state.traits.graph.args);
    const children = point.into === null ? this.state.traits.graph.body : this.childrenOf(point.into);
    const after = point.index === null ? (children.at(-1) ?? null) : (children[point.index - 1] ?? null);
    const at = this.canvas.spotFor(after, point.into);
    const position = [Math.round(at.x), Math.round(at.y)];
    this.edit({
      op: "dispatch",
      kernel: kernel.ref,
      bindings,
      guessed,
      position,
      into: point.into,
      index: point.index,
      name: null,
    });
  }

  private childrenOf(id: string): readonly string[] {
    const node = this.state.index.get(id);
    return node && node.kind !== "dispatch" ? node.children : [];
  }

  /** Ask for the new sequence's name (the form checks it as the model would), then group. */
  group(ids: readonly string[]): void {
    if (ids.length === 0) return;
    const graph = this.state.traits.graph;
    this.groupForm.open(ids, freeSequenceName(graph), (name) => sequenceNameError(name, this.state.traits.graph));
  }

  private confirmGroup(ids: readonly string[], name: string): void {
    this.rangeEnd = null;
    this.groupRequest = this.edit({ op: "group", nodes: [...ids], name, repeat: 1 });
    this.root.focus({ preventScroll: true });
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
    const chosen = this.canvas.selectedIds();
    if (chosen.length > 1 && chosen.includes(id)) this.edit({ op: "remove_nodes", nodes: chosen });
    else this.edit({ op: "remove", node: id });
  }

  fit(): void {
    this.canvas.fit();
  }

  zoom(factor: number): void {
    this.canvas.zoomBy(factor);
  }

  // --- panels --------------------------------------------------------------------------------------

  debug(action: DebugAction | "start"): void {
    const request = this.nextRequest++;
    if (action === "start") {
      this.tab = this.tab === "node" ? "debug" : this.tab;
      this.sendPanel({ kind: "debug", request, action: "start", bounds: boundsOption(this.checkBounds) });
      return;
    }
    const session = this.read("debugger");
    if (!session.active) return;
    this.sendPanel({ kind: "debug", request, action, session: session.session });
  }

  setCheckBounds(check: boolean): void {
    this.checkBounds = check;
    this.refresh();
  }

  goto(index: number): void {
    const session = this.read("debugger");
    if (!session.active) return;
    this.sendPanel({
      kind: "debug",
      request: this.nextRequest++,
      action: "goto",
      session: session.session,
      target: index,
    });
  }

  toggleBreakpoint(node: string): void {
    const session = this.read("debugger");
    if (!session.active) {
      this.localError = `start a debug session first (${keysFor("debugStart")}), then set breakpoints`;
      this.showError();
      return;
    }
    this.sendPanel({ kind: "breakpoint", request: this.nextRequest++, op: "toggle", session: session.session, node });
  }

  addCondition(expression: string, every: Every): void {
    const { session } = this.read("debugger");
    this.sendPanel({ kind: "breakpoint", request: this.nextRequest++, op: "condition", session, expression, every });
  }

  removeBreakpoint(id: number): void {
    const { session } = this.read("debugger");
    this.sendPanel({ kind: "breakpoint", request: this.nextRequest++, op: "remove", session, id });
  }

  watch(expression: string): void {
    const { session } = this.read("debugger");
    this.sendPanel({ kind: "watch", request: this.nextRequest++, op: "add", session, expression });
  }

  unwatch(expression: string): void {
    const { session } = this.read("debugger");
    this.sendPanel({ kind: "watch", request: this.nextRequest++, op: "remove", session, expression });
  }

  /** A click on an arg's node: select it (its editor opens); inspect it too when a session runs and it is a buffer. */
  private inspectArg(name: string): void {
    const arg = this.state.traits.graph.args.find((a) => a.name === name);
    if (!arg) return;
    this.selectedArg = name;
    this.rangeEnd = null;
    if (this.state.anchor !== null) {
      this.pendingSelect = null;
      this.send({ kind: "select", node: null, request: this.nextRequest++ });
    }
    if (this.read("debugger").active && arg.kind === "ndarray") {
      this.showTab("inspect", false);
      this.inspect(name, null, 0);
      return;
    }
    this.showTab("node", false);
  }

  inspect(buffer: string, component: number | null, page: number, slice: number[] | null = null): void {
    const { session } = this.read("debugger");
    this.sendPanel({ kind: "inspect", request: this.nextRequest++, session, buffer, component, page, slice });
  }

  compare(against: string, rtol: number, atol: number, timeout: number): void {
    const session = this.read("debugger");
    if (!session.active) return;
    const request = this.nextRequest++;
    const message = { session: session.session, against, rtol, atol, timeout };
    this.sendPanel({ kind: "debug", request, action: "compare", ...message });
  }

  prepareCompare(against: string): void {
    const session = this.read("debugger");
    if (!session.active) return;
    const request = this.nextRequest++;
    this.sendPanel({ kind: "debug", request, action: "prepare_compare", session: session.session, against });
  }

  exportGraph(options: ExportOptions): void {
    this.sendPanel({ kind: "export", request: this.nextRequest++, ...options });
  }

  giveValue(op: ValuesOp): void {
    this.sendPanel({ kind: "values", request: this.nextRequest++, ...op } as PanelMessage);
  }

  openValues(target: ValuesTarget): void {
    this.showTab("values");
    this.side.values.focusArg(target);
  }

  makeLoop(ids: readonly string[]): void {
    const { index, anchor, range } = this.state;
    const picked = ids.length > 0 ? ids : range.length > 0 ? range : anchor !== null ? [anchor] : [];
    const known = picked.filter((id) => index.has(id));
    const place = insertionPoint(index, anchor);
    this.showTab("node");
    this.side.loop.open(known, this.state.traits.graph, { into: place.into ?? null, index: place.index ?? null });
  }

  makeStructure(op: EditOp): void {
    this.rangeEnd = null;
    this.loopRequest = this.edit(op);
  }

  /** Show a tab of the side panel, opening it (`force`: even if the user closed it, who asks for it now). */
  showTab(tab: PanelTab, force = true): void {
    this.tab = tab;
    this.layoutToggles.open("side", force);
    this.refresh();
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
    if (e.key === "Escape" && this.toolbar.closeHelp()) {
      e.preventDefault();
      e.stopPropagation();
      return;
    }
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
    const control = DEBUG_KEYS[action];
    if (control !== undefined) {
      if (!this.read("debugger").active) return false;
      this.debug(control);
      return true;
    }
    switch (action) {
      case "debugStart":
        this.debug(this.read("debugger").active ? "stop" : "start");
        return true;
      case "undo":
        this.undo();
        return true;
      case "redo":
        this.redo();
        return true;
      case "search":
        this.layoutToggles.open("palette", true);
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
        if (anchor === null && this.selectedArg !== null) {
          this.selectedArg = null;
          this.refresh();
          return true;
        }
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
        this.layoutToggles.open("side", true);
        this.side.focusName();
        return true;
      case "toggleBreakpoint":
        this.toggleBreakpoint(anchor);
        return true;
      case "repeat":
        this.layoutToggles.open("side", true);
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
    this.debugBar.dispose();
    this.timelineBar.dispose();
    this.banner.dispose();
    this.palette.dispose();
    this.layoutToggles.dispose();
    this.side.dispose();
    this.groupForm.dispose();
    this.canvas.dispose();
    this.root.remove();
  }
}

/** anywidget's `render`: build the editor in `el`; the returned function tears it down. */
export function mount(model: WidgetModel<Traits>, el: HTMLElement): Cleanup {
  const app = new EditorApp(model, el);
  return () => app.dispose();
}

/** What the canvas shows while an edit is in flight (a new dispatch can take a second: its kernel is analysed). */
function pendingText(op: EditOp): string {
  if (op.op === "dispatch") return `Adding ${op.kernel.split(":").pop() ?? op.kernel}\u2026`;
  return "Applying the edit\u2026";
}
