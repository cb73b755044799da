/**
 * The debug panel: the controls in the toolbar (with their shortcuts), the timeline under it, and
 * the debug tab of the side panel (the stop, breakpoints, conditions, watches, per-node time).
 *
 * Every control is a message to Python's debug session; nothing here runs or remembers anything
 * of the session but what the `debugger` trait says.
 */

import { CHECKING, boundsStatus, boundsStatusElement, checkBoundsToggle } from "./boundsCheck";
import { formatNum, formatSeconds } from "../logic/colorScale";
import { isArch, parseTimeout, parseTolerance } from "./comparePanel";
import { Listeners, h, replaceChildren } from "../logic/dom";
import { type Action, keysFor } from "../logic/keymap";
import type { DebugAction, DebugView, Every } from "../wire/protocol";
import type { Section } from "./section";
import type { Actions, ViewState } from "../logic/state";
import { fractionOf } from "../logic/timeline";

interface Control {
  action: DebugAction;
  text: string;
  title: string;
  key: Action;
}

export const CONTROLS: readonly Control[] = [
  { action: "step", text: "Step", title: "Run the next dispatch", key: "debugStep" },
  { action: "step_over", text: "Over", title: "Run the rest of this repetition", key: "debugOver" },
  {
    action: "continue",
    text: "Continue",
    title: "Run to a breakpoint, a condition, a fault or the end",
    key: "debugContinue",
  },
  { action: "back", text: "Back", title: "Go back one dispatch", key: "debugBack" },
  { action: "restart", text: "Restart", title: "Back to the initial state", key: "debugRestart" },
  {
    action: "find_nonfinite",
    text: "Find NaN/Inf",
    title: "Run to the first dispatch that writes NaN or Inf",
    key: "debugNonfinite",
  },
];

/** Shown while a debug session starts: the first start after `ti.init` or an edit compiles the graph's kernels. */
const STARTING = "Starting the debugger\u2026 compiling the graph's kernels (the first start takes a few seconds)";

/** The toolbar's debugger buttons: Debug (start/stop), its "check bounds first" option, then the controls. */
export class DebugBar {
  readonly el: HTMLElement;
  private readonly start: HTMLButtonElement;
  private readonly checkBounds: HTMLInputElement;
  private readonly buttons: HTMLButtonElement[];
  private readonly listeners = new Listeners();

  constructor(actions: Actions) {
    this.start = this.actionButton("\u25b6 Debug", "", "start", () =>
      actions.debug(this.start.dataset.running ? "stop" : "start"),
    );
    const toggle = checkBoundsToggle(this.listeners, (check) => actions.setCheckBounds(check));
    this.checkBounds = toggle.input;
    this.buttons = CONTROLS.map((c) =>
      this.actionButton(c.text, `${c.title} (${keysFor(c.key)})`, c.action, () => actions.debug(c.action)),
    );
    this.el = h(
      "span",
      { class: "gl-debug-bar", role: "group", "aria-label": "Debugger" },
      this.start,
      toggle.label,
      this.buttons,
    );
  }

  update(state: ViewState): void {
    const debug = state.traits.debugger;
    const busy = state.busy.has("debug");
    // the option applies to the next start: fixed while a session runs or a start is out
    this.checkBounds.checked = state.checkBounds;
    this.checkBounds.disabled = debug.active || busy;
    if (debug.active) {
      this.start.textContent = "\u25a0 Stop";
      this.start.dataset.running = "1";
      this.start.title = `End debug session ${debug.session} (${keysFor("debugStart")})`;
    } else if (state.checkingStart) {
      this.start.textContent = "Checking bounds\u2026";
      delete this.start.dataset.running;
      this.start.title = CHECKING;
    } else if (busy) {
      // a start in flight (the only debug request sent with no session): it compiles, so say so
      replaceChildren(this.start, spinner(), "Starting\u2026");
      delete this.start.dataset.running;
      this.start.title = STARTING;
    } else {
      this.start.textContent = "\u25b6 Debug";
      delete this.start.dataset.running;
      this.start.title = `Start a debug session with the values given to the editor (${keysFor("debugStart")})`;
    }
    // Controls stay enabled while a request is out: clicks queue in the kernel, in order, as a
    // debugger's key repeat would; the bar only shows that it is working.
    this.el.classList.toggle("gl-busy", busy);
    this.start.disabled = busy && !debug.active;
    const at = debug.position;
    for (const [i, button] of this.buttons.entries()) {
      const action = CONTROLS[i]!.action;
      const forward =
        action === "step" || action === "step_over" || action === "continue" || action === "find_nonfinite";
      const blocked = at === null || (forward && at.index >= at.total) || (!forward && at.index === 0);
      button.disabled = !debug.active || blocked;
    }
  }

  private actionButton(text: string, title: string, action: string, onClick: () => void): HTMLButtonElement {
    const button = h("button", { type: "button", class: "gl-btn gl-debug-btn", title, "data-debug": action }, text);
    this.listeners.on(button, "click", onClick);
    return button;
  }

  dispose(): void {
    this.listeners.dispose();
    this.el.remove();
  }
}

/** The timeline under the toolbar: a slider over the positions 0..total, with breakpoint and fault marks. */
export class TimelineBar {
  readonly el: HTMLElement;
  private readonly slider: HTMLInputElement;
  private readonly label: HTMLSpanElement;
  private readonly marks: HTMLDivElement;
  private readonly listeners = new Listeners();
  private state: ViewState | null = null;
  private dragging = false;
  private marksKey = "";

  constructor(private readonly actions: Actions) {
    this.slider = h("input", {
      type: "range",
      min: 0,
      max: 0,
      step: 1,
      value: 0,
      class: "gl-timeline-slider",
      "aria-label": "Timeline: position of the debug session",
    });
    this.label = h("span", { class: "gl-timeline-label", "aria-live": "polite" });
    this.marks = h("div", { class: "gl-timeline-marks", "aria-hidden": "true" });
    this.el = h(
      "div",
      { class: "gl-timeline", hidden: true },
      h("div", { class: "gl-timeline-track" }, this.slider, this.marks),
      this.label,
    );
    this.listeners.on(this.slider, "input", () => {
      this.dragging = true;
      if (this.state) this.label.textContent = `go to ${targetLabel(this.state, Number(this.slider.value))}`;
    });
    this.listeners.on(this.slider, "change", () => {
      this.dragging = false;
      const target = Number(this.slider.value);
      if (this.state?.traits.debugger.position?.index !== target) this.actions.goto(target);
    });
  }

  update(state: ViewState): void {
    this.state = state;
    const debug = state.traits.debugger;
    this.el.hidden = !debug.active || debug.position === null;
    if (!debug.active || debug.position === null) return;
    const { index, total } = debug.position;
    this.slider.max = String(total);
    const here = positionLabel(debug);
    if (!this.dragging) {
      this.slider.value = String(index);
      this.label.textContent = here;
    }
    this.slider.setAttribute("aria-valuetext", here);
    this.drawMarks(state, debug, total);
  }

  private drawMarks(state: ViewState, debug: DebugView, total: number): void {
    const key = JSON.stringify([
      total,
      debug.breakpoints.map((b) => [b.target, b.kind]),
      debug.faults.map((f) => f.index),
      state.traits.graph.version,
    ]);
    if (key === this.marksKey) return;
    this.marksKey = key;
    const marks: HTMLElement[] = [];
    for (const bp of debug.breakpoints) {
      if (bp.kind === "condition") continue;
      const at =
        bp.kind === "step" || bp.kind === "repetition"
          ? [state.timeline.indexOf(bp.target)]
          : state.timeline.positionsOf(bp.target);
      for (const i of at) {
        if (i === null) continue;
        marks.push(
          h("span", {
            class: "gl-mark gl-mark-bp",
            style: `left: ${(100 * fractionOf(i, total)).toFixed(3)}%`,
            title: `breakpoint ${bp.target}`,
          }),
        );
      }
    }
    for (const f of debug.faults) {
      marks.push(
        h("span", {
          class: "gl-mark gl-mark-fault",
          style: `left: ${(100 * fractionOf(f.index, total)).toFixed(3)}%`,
          title: `${f.step_id}: ${f.error}`,
        }),
      );
    }
    replaceChildren(this.marks, marks);
  }

  dispose(): void {
    this.listeners.dispose();
    this.el.remove();
  }
}

/** `step 5/16 · next substep[1]/p2g` for where the session stands (`16+`: more may be recorded). */
export function positionLabel(debug: DebugView): string {
  const at = debug.position;
  if (at === null) return "";
  const total = `${at.total}${at.total_known ? "" : "+"}`;
  if (at.step_id === null) return `end (${at.index}/${total})`;
  return `step ${at.index}/${total} \u00b7 next ${at.step_id}`;
}

/** The label of a position the slider is dragged to: from the graph's structure, when it has fixed steps. */
function targetLabel(state: ViewState, index: number): string {
  const debug = state.traits.debugger;
  if (state.timeline.total === debug.position?.total) return state.timeline.label(index);
  return `step ${index}`; // loops and conditionals: the recorded steps are known to Python only
}

/** The debug tab of the side panel. */
export class DebugSection implements Section {
  readonly el = h("section", { class: "gl-section gl-debug", "data-panel": "debug" });
  private listeners = new Listeners();
  private key = "";
  /** What the compare form holds, kept across redraws. */
  private against = "vulkan";
  private rtol = "0";
  private atol = "0";
  private timeout = "600";
  /** `session:arch` of the processes started ahead (`prepareCompare`), so each starts once. */
  private readonly prepared = new Set<string>();

  constructor(private readonly actions: Actions) {}

  update(state: ViewState): void {
    const debug = state.traits.debugger;
    const key = JSON.stringify([debug, state.anchor, state.busy.has("debug"), state.checkBounds, state.checkingStart]);
    if (key === this.key) return;
    this.key = key;
    this.listeners.dispose();
    this.listeners = new Listeners();
    if (!debug.active) {
      replaceChildren(this.el, this.renderIdle(state, debug));
      return;
    }
    replaceChildren(
      this.el,
      boundsStatusElement(boundsStatus(debug, state.checkingStart)),
      this.renderStop(debug),
      this.renderCompare(debug),
      this.renderDecisions(debug),
      this.renderBreakpoints(state, debug),
      this.renderWatches(debug),
      this.renderTiming(debug),
    );
  }

  private renderIdle(state: ViewState, debug: DebugView): HTMLElement {
    const start = this.listeners.button("\u25b6 Start debugging", `Start a session (${keysFor("debugStart")})`, () =>
      this.actions.debug("start"),
    );
    const starting = state.busy.has("debug"); // with no session, the request out is a start
    start.disabled = starting;
    if (starting) start.textContent = state.checkingStart ? "Checking bounds\u2026" : "Starting\u2026";
    const toggle = checkBoundsToggle(this.listeners, (check) => this.actions.setCheckBounds(check));
    toggle.input.checked = state.checkBounds;
    toggle.input.disabled = starting;
    const bounds = boundsStatus(debug, state.checkingStart);
    return h(
      "div",
      {},
      h("h3", {}, "Debugger"),
      boundsStatusElement(bounds),
      starting && bounds?.kind !== "checking"
        ? h("p", { class: "gl-debug-starting", role: "status" }, spinner(), STARTING)
        : null,
      debug.ended
        ? h("p", { class: "gl-hint gl-debug-ended" }, `Session ${debug.session} ended: ${debug.ended}`)
        : null,
      h(
        "p",
        { class: "gl-hint" },
        "Steps the graph dispatch by dispatch with the values given to ",
        h("code", {}, "gl.editor(g, values=...)"),
        " (or start one from Python: ",
        h("code", {}, "editor.debug(values)"),
        ").",
      ),
      h("div", { class: "gl-actions" }, start, toggle.label),
    );
  }

  private renderStop(debug: DebugView): HTMLElement {
    const parts: (HTMLElement | null)[] = [
      h(
        "div",
        { class: `gl-stop gl-stop-${debug.reason ?? "none"}`, "data-reason": debug.reason ?? "" },
        debug.message,
      ),
    ];
    if (debug.fault) {
      parts.push(
        h(
          "div",
          { class: "gl-fault-box", role: "alert" },
          h("b", {}, `${debug.fault.step_id} failed: `),
          debug.fault.error,
          h(
            "div",
            { class: "gl-hint" },
            "The session stayed before it, with its buffers restored: step back, fix a value, or restart.",
          ),
        ),
      );
    }
    if (debug.nonfinite) {
      const n = debug.nonfinite;
      const who = n.step_id ? `${n.step_id} wrote` : "already held";
      const first = n.first_index ? ` first at (${n.first_index.join(", ")})` : "";
      parts.push(
        h(
          "div",
          { class: "gl-nonfinite-box" },
          `${who} ${n.nan} NaN and ${n.inf} Inf in `,
          h("code", {}, n.buffer),
          `${first}.`,
        ),
      );
    }
    if (debug.note) parts.push(h("div", { class: "gl-hint" }, debug.note));
    return h("div", {}, h("h3", {}, `Session ${debug.session}`), parts);
  }

  /** "Compare with...": the other arch or an exported module's folder, tolerances, progress, the divergence. */
  private renderCompare(debug: DebugView): HTMLElement {
    const run = debug.compare;
    const running = run.state === "running";
    const listId = `gl-compare-archs-${debug.session}`;
    const against = h("input", {
      type: "text",
      class: "gl-input gl-compare-against",
      value: this.against,
      list: listId,
      placeholder: "vulkan, or an exported module's folder",
      "aria-label": "compare against",
    });
    const archs = h(
      "datalist",
      { id: listId },
      run.archs.map((a) => h("option", { value: a })),
    );
    const tolerance = (label: string, value: string): HTMLInputElement =>
      h("input", {
        type: "text",
        inputmode: "decimal",
        class: "gl-input gl-compare-tol",
        value,
        "aria-label": label,
        title: `${label} as in numpy.isclose (0 and 0: bit for bit)`,
      });
    const rtol = tolerance("rtol", this.rtol);
    const atol = tolerance("atol", this.atol);
    const timeout = h("input", {
      type: "text",
      inputmode: "decimal",
      class: "gl-input gl-compare-timeout",
      value: this.timeout,
      "aria-label": "timeout",
      title: "Seconds the other arch's process may take over one step (start, a span, a dispatch)",
    });
    const timeoutError = h("div", { class: "gl-hint gl-compare-timeout-error", role: "alert" });
    const checkTimeout = (): number | null => {
      const field = parseTimeout(timeout.value);
      timeoutError.textContent = field.ok ? "" : field.error;
      timeout.setAttribute("aria-invalid", field.ok ? "false" : "true");
      return field.ok ? field.seconds : null;
    };
    const toleranceError = h("div", { class: "gl-hint gl-compare-tol-error", role: "alert" });
    const checkTolerances = (): { rtol: number; atol: number } | null => {
      const r = parseTolerance("rtol", rtol.value);
      const a = parseTolerance("atol", atol.value);
      rtol.setAttribute("aria-invalid", r.ok ? "false" : "true");
      atol.setAttribute("aria-invalid", a.ok ? "false" : "true");
      toleranceError.textContent = [r, a]
        .map((f) => (f.ok ? "" : f.error))
        .filter((e) => e !== "")
        .join("; ");
      return r.ok && a.ok ? { rtol: r.value, atol: a.value } : null;
    };
    // picking an arch starts its process now, so the click on Compare pays only the search
    const prepare = (): void => {
      const target = against.value.trim();
      const key = `${debug.session}:${target}`;
      if (!isArch(target, run.archs) || this.prepared.has(key)) return;
      this.prepared.add(key);
      this.actions.prepareCompare(target);
    };
    this.listeners.on(against, "input", () => {
      this.against = against.value;
      prepare();
    });
    this.listeners.on(against, "change", prepare);
    this.listeners.on(rtol, "input", () => {
      this.rtol = rtol.value;
      checkTolerances();
    });
    this.listeners.on(atol, "input", () => {
      this.atol = atol.value;
      checkTolerances();
    });
    this.listeners.on(timeout, "input", () => {
      this.timeout = timeout.value;
      checkTimeout();
    });
    const go = this.listeners.button(
      "Compare with\u2026",
      "Run the graph from the start values here and on the other arch (or exported module); stop before the first dispatch where they disagree",
      () => {
        const target = against.value.trim();
        const seconds = checkTimeout();
        const tolerances = checkTolerances();
        if (target && seconds !== null && tolerances !== null) {
          this.actions.compare(target, tolerances.rtol, tolerances.atol, seconds);
        }
      },
    );
    go.classList.add("gl-compare-go");
    for (const el of [against, rtol, atol, timeout, go]) el.disabled = running;
    checkTimeout();
    checkTolerances();
    const parts: (HTMLElement | null)[] = [
      h("h4", {}, "Compare"),
      h("div", { class: "gl-field gl-compare-form" }, against, archs),
      h("div", { class: "gl-field" }, h("span", {}, "rtol"), rtol, h("span", {}, "atol"), atol),
      toleranceError,
      h("div", { class: "gl-field" }, h("span", {}, "timeout (s)"), timeout),
      timeoutError,
      h("div", { class: "gl-actions" }, go),
    ];
    if (running) {
      parts.push(
        h(
          "div",
          { class: "gl-compare-progress", role: "status" },
          h("progress", { max: 1, value: run.fraction }),
          ` ${run.stage}`,
        ),
      );
    } else if (run.state === "failed") {
      parts.push(h("div", { class: "gl-fault-box gl-compare-error", role: "alert" }, run.error ?? "failed"));
    } else if (run.state === "done") {
      const found = run.divergence;
      const seconds = ` (${formatSeconds(run.seconds)})`;
      parts.push(
        found === null
          ? h("div", { class: "gl-compare-result", "data-agree": "1" }, `${run.against} agrees to the end${seconds}.`)
          : h(
              "div",
              { class: "gl-compare-result gl-diverged-box", "data-node": found.node_id ?? "" },
              found.text,
              h(
                "div",
                { class: "gl-hint" },
                `The session stands before the diverging step${seconds}; the Inspect tab shows both sides.`,
              ),
            ),
      );
    }
    return h("div", { class: "gl-compare", "data-state": run.state }, parts);
  }

  private renderDecisions(debug: DebugView): HTMLElement | null {
    if (debug.decisions.length === 0) return null;
    return h(
      "div",
      { class: "gl-decisions" },
      h("h4", {}, "Decisions"),
      h(
        "ul",
        { class: "gl-hint" },
        debug.decisions.map((d) =>
          h(
            "li",
            { "data-scope": d.scope },
            h("code", {}, d.scope),
            ` at step ${d.index}: flag ${d.value} \u2192 ${d.outcome}`,
          ),
        ),
      ),
    );
  }

  private renderBreakpoints(state: ViewState, debug: DebugView): HTMLElement {
    const rows = debug.breakpoints.map((bp) => {
      const remove = this.listeners.button("\u00d7", `Remove breakpoint #${bp.id}`, () =>
        this.actions.removeBreakpoint(bp.id),
      );
      remove.classList.add("gl-icon-btn");
      const what =
        bp.kind === "condition" ? `when ${bp.target}${bp.every === "dispatch" ? " (every dispatch)" : ""}` : bp.target;
      return h(
        "li",
        { "data-breakpoint": bp.target },
        h("span", { class: "gl-bp-dot-inline" }),
        " ",
        h("code", {}, what),
        ` \u00b7 ${bp.hits} hit${bp.hits === 1 ? "" : "s"}`,
        " ",
        remove,
      );
    });
    const sample = debug.buffers[0] ?? "x";
    const expr = h("input", {
      type: "text",
      class: "gl-input",
      placeholder: `${sample}.max() > 1e3`,
      "aria-label": "condition",
    });
    const every = h(
      "select",
      { class: "gl-select gl-every", "aria-label": "check every" },
      h("option", { value: "repetition" }, "each repetition"),
      h("option", { value: "dispatch" }, "each dispatch"),
    );
    const add = (): void => {
      const text = expr.value.trim();
      if (text) this.actions.addCondition(text, every.value as Every);
    };
    this.listeners.on(expr, "keydown", (e: KeyboardEvent) => {
      if (e.key === "Enter") add();
    });
    const toggle =
      state.anchor !== null
        ? this.listeners.button(
            `Toggle on ${state.anchor}`,
            `Set or remove a breakpoint on the selected node (${keysFor("toggleBreakpoint")})`,
            () => this.actions.toggleBreakpoint(state.anchor!),
          )
        : null;
    return h(
      "div",
      { class: "gl-breakpoints" },
      h("h4", {}, `Breakpoints (${debug.breakpoints.length})`),
      rows.length > 0
        ? h("ul", { class: "gl-bp-list" }, rows)
        : h(
            "p",
            { class: "gl-hint" },
            "Click the dot left of a node (or select it and press F9) to stop before it runs.",
          ),
      toggle ? h("div", { class: "gl-actions" }, toggle) : null,
      h(
        "div",
        { class: "gl-field gl-condition" },
        expr,
        every,
        this.listeners.button("Add", "Stop after the dispatch where this turns true", add),
      ),
    );
  }

  private renderWatches(debug: DebugView): HTMLElement {
    const rows = debug.watches.map((w) => {
      const remove = this.listeners.button("\u00d7", `Stop watching ${w.text}`, () => this.actions.unwatch(w.text));
      remove.classList.add("gl-icon-btn");
      return h(
        "tr",
        { "data-watch": w.text },
        h("td", {}, h("code", {}, w.text)),
        h("td", { class: "gl-num", "data-value": String(w.value) }, formatNum(w.value)),
        h("td", {}, remove),
      );
    });
    const input = h("input", {
      type: "text",
      class: "gl-input",
      placeholder: `${debug.buffers[0] ?? "x"}.max()`,
      "aria-label": "watch expression",
    });
    const add = (): void => {
      const text = input.value.trim();
      if (text) this.actions.watch(text);
    };
    this.listeners.on(input, "keydown", (e: KeyboardEvent) => {
      if (e.key === "Enter") add();
    });
    return h(
      "div",
      { class: "gl-watches" },
      h("h4", {}, `Watches (${debug.watches.length})`),
      rows.length > 0 ? h("table", { class: "gl-table" }, h("tbody", {}, rows)) : null,
      h(
        "div",
        { class: "gl-field" },
        input,
        this.listeners.button("Watch", "Evaluate at every stop (on the device)", add),
      ),
    );
  }

  private renderTiming(debug: DebugView): HTMLElement {
    if (debug.timing.length === 0) {
      return h(
        "div",
        {},
        h("h4", {}, "Time per node"),
        h(
          "p",
          { class: "gl-hint" },
          "Step dispatches to time them (spans run as compiled segments are not split per node).",
        ),
      );
    }
    return h(
      "div",
      { class: "gl-timing" },
      h("h4", {}, "Time per node (stepped)"),
      h(
        "table",
        { class: "gl-table" },
        h(
          "thead",
          {},
          h("tr", {}, h("th", {}, "node"), h("th", {}, "calls"), h("th", {}, "mean"), h("th", {}, "share")),
        ),
        h(
          "tbody",
          {},
          debug.timing.map((t) =>
            h(
              "tr",
              { "data-node": t.node_id },
              h("td", {}, h("code", {}, t.node_id)),
              h("td", { class: "gl-num" }, String(t.calls)),
              h("td", { class: "gl-num" }, formatSeconds(t.mean_s)),
              h("td", { class: "gl-num" }, `${(100 * t.share).toFixed(1)}%`),
            ),
          ),
        ),
      ),
    );
  }

  dispose(): void {
    this.listeners.dispose();
    this.el.remove();
  }
}

/** A small turning circle: something runs that takes more than a moment (compiling, a large read). */
export function spinner(): HTMLElement {
  return h("span", { class: "gl-spinner", "aria-hidden": "true", "data-spinner": "" });
}
