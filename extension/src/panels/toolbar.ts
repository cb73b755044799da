/**
 * The toolbar: undo and redo, zoom, a summary of the graph, and the shortcuts help. Fit is the canvas's
 * own tools row's (one Fit button, not two); the toolbar stays one row, its summary cut short first.
 * `slot` is where later panels (debug, inspect, export) put their buttons.
 */

import { countBySeverity } from "../logic/diagnostics";
import { Listeners, h } from "../logic/dom";
import { SHORTCUTS, keysFor } from "../logic/keymap";
import type { Actions, ViewState } from "../logic/state";

export class Toolbar {
  readonly el: HTMLElement;
  /** Where later rounds add their buttons (debug, inspect, export). */
  readonly slot: HTMLElement;
  private readonly undo: HTMLButtonElement;
  private readonly redo: HTMLButtonElement;
  private readonly summary: HTMLSpanElement;
  private readonly help: HTMLElement;
  private readonly listeners = new Listeners();

  constructor(actions: Actions) {
    this.undo = this.listeners.button("\u21b6 Undo", "Undo", () => actions.undo());
    this.redo = this.listeners.button("\u21b7 Redo", "Redo", () => actions.redo());
    const zoomOut = this.listeners.button("\u2212", `Zoom out (${keysFor("zoomOut")})`, () => actions.zoom(1 / 1.25));
    const zoomIn = this.listeners.button("+", `Zoom in (${keysFor("zoomIn")})`, () => actions.zoom(1.25));
    this.summary = h("span", { class: "gl-summary", "aria-live": "polite" });
    this.slot = h("span", { class: "gl-toolbar-slot" });
    this.help = h(
      "div",
      { class: "gl-help", hidden: true, role: "note" },
      h(
        "dl",
        {},
        SHORTCUTS.flatMap((s) => [h("dt", {}, h("kbd", {}, s.keys)), h("dd", {}, s.label)]),
      ),
      h(
        "p",
        { class: "gl-hint" },
        "Drag the background to pan, a node to move it, a buffer's handle onto a port to bind it; Shift+drag " +
          "selects a box. Ctrl+A selects all, Ctrl+C/Ctrl+V copy and paste, Ctrl+D duplicates, right-click " +
          "opens a menu, Esc closes it (and this help).",
      ),
    );
    const helpButton = this.listeners.button("?", "Keyboard shortcuts", () => {
      this.help.hidden = !this.help.hidden;
    });
    this.el = h(
      "div",
      { class: "gl-toolbar", role: "toolbar", "aria-label": "Graph editor" },
      this.undo,
      this.redo,
      h("span", { class: "gl-sep" }),
      zoomOut,
      zoomIn,
      h("span", { class: "gl-sep" }),
      this.summary,
      h("span", { class: "gl-spacer" }),
      this.slot,
      helpButton,
      this.help,
    );
  }

  /** Close the shortcuts help if it is open (Esc); false when it was not. */
  closeHelp(): boolean {
    if (this.help.hidden) return false;
    this.help.hidden = true;
    return true;
  }

  update(state: ViewState): void {
    const { undo, redo } = state.history;
    const undoLabel = undo.at(-1);
    const redoLabel = redo.at(-1);
    this.undo.disabled = undoLabel === undefined;
    this.redo.disabled = redoLabel === undefined;
    this.undo.title = undoLabel ? `Undo ${undoLabel} (${keysFor("undo")})` : "Nothing to undo";
    this.redo.title = redoLabel ? `Redo ${redoLabel} (${keysFor("redo")})` : "Nothing to redo";
    const graph = state.traits.graph;
    const dispatches = graph.nodes.filter((n) => n.kind === "dispatch").length;
    const sequences = graph.nodes.filter((n) => n.kind === "sequence").length;
    const control = graph.nodes.filter((n) => n.kind === "loop" || n.kind === "cond").length;
    const counts = countBySeverity(state.traits.diagnostics);
    const parts = [
      graph.name || "graph",
      plural(graph.args.length, "arg"),
      plural(dispatches, "dispatch", "dispatches"),
      sequences ? plural(sequences, "sequence") : "",
      control ? plural(control, "decision") : "",
      counts.error ? plural(counts.error, "error") : "",
      counts.warning ? plural(counts.warning, "warning") : "",
      counts.error + counts.warning === 0 ? "no problems" : "",
    ];
    this.summary.textContent = parts.filter((p) => p !== "").join(" \u00b7 ");
    this.summary.classList.toggle("gl-has-errors", counts.error > 0);
  }

  dispose(): void {
    this.listeners.dispose();
    this.el.remove();
  }
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** The error banner: the `error` trait (an edit Python refused), or a front-end failure. */
export class Banner {
  readonly el: HTMLElement;
  private readonly text: HTMLSpanElement;
  private readonly listeners = new Listeners();

  constructor(onDismiss: () => void) {
    this.text = h("span", { class: "gl-banner-text" });
    const close = h(
      "button",
      { type: "button", class: "gl-btn gl-banner-close", title: "Dismiss", "aria-label": "Dismiss" },
      "\u00d7",
    );
    this.listeners.on(close, "click", onDismiss);
    this.el = h("div", { class: "gl-banner", role: "alert", hidden: true }, this.text, close);
  }

  show(message: string): void {
    this.text.textContent = message;
    this.el.hidden = message === "";
  }

  dispose(): void {
    this.listeners.dispose();
    this.el.remove();
  }
}
