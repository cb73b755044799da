/**
 * The loop form: make a while loop, a counted loop or a conditional without code. It wraps the
 * picked nodes (consecutive siblings; none: an empty body after the selection) and asks only what
 * the kind needs: the flag (a one-element i32 ndarray) for while and conditional, the count (an
 * integer scalar) for a counted loop, `max_iter`, `check_every` and guarded for a while loop.
 * Opened from the toolbar's "Loop..." button and by a `graphlab:make-loop` event on the widget's
 * root (`detail: {nodes: [ids]}`, the canvas's context menu). It stays open until Python answers,
 * so a refusal (naming the field) shows in the form.
 */

import { Listeners, h, replaceChildren } from "../logic/dom";
import type { ArgView, EditOp, GraphView } from "../wire/protocol";

export type StructureKind = "while" | "count" | "cond";

/** What the form holds, as typed. */
export interface LoopFields {
  kind: StructureKind;
  nodes: readonly string[];
  body: string;
  flag: string;
  count: string;
  maxIter: string;
  checkEvery: string;
  guarded: boolean;
  withElse: boolean;
  into: string | null;
  index: number | null;
}

/** Args that can be a flag: one-element i32 ndarrays (as the model's GL020 says). */
export function flagArgs(args: readonly ArgView[]): string[] {
  return args
    .filter(
      (a) =>
        a.kind === "ndarray" &&
        a.dtype === "i32" &&
        a.element_shape.length === 0 &&
        a.ndim <= 1 &&
        (a.shape === null || a.shape.every((d) => typeof d !== "number" || d === 1)),
    )
    .map((a) => a.name);
}

/** Args that can be a loop count: integer scalars. */
export function countArgs(args: readonly ArgView[]): string[] {
  return args.filter((a) => a.kind === "scalar" && ["i32", "i64", "u32"].includes(a.dtype ?? "")).map((a) => a.name);
}

/** A sequence name not yet taken (`body`, `body_2`, ...). */
export function freeName(graph: GraphView, base: string, also: readonly string[] = []): string {
  const taken = new Set<string>(also);
  for (const n of graph.nodes) if ("sequence" in n) taken.add(n.sequence);
  if (!taken.has(base)) return base;
  for (let i = 2; ; i++) if (!taken.has(`${base}_${i}`)) return `${base}_${i}`;
}

function positive(text: string, field: string): number | string {
  const n = Number(text.trim());
  return text.trim() !== "" && Number.isInteger(n) && n >= 1 ? n : `${field}: a whole number >= 1`;
}

/** The edit the form asks for, or why it cannot be sent yet (the field named). */
export function structureOp(f: LoopFields): { ok: true; op: EditOp } | { ok: false; reason: string } {
  if (!/^[A-Za-z_]\w*$/.test(f.body)) return { ok: false, reason: "body: a sequence name (letters, digits, _)" };
  const place = { nodes: [...f.nodes], body: f.body, into: f.into, index: f.index };
  if (f.kind === "cond") {
    if (f.flag === "") return { ok: false, reason: "flag: pick a one-element i32 ndarray arg" };
    const elseBody = f.withElse ? `${f.body}_else` : null;
    return { ok: true, op: { op: "make_cond", ...place, flag: f.flag, else_body: elseBody, name: "cond" } };
  }
  if (f.kind === "count") {
    if (f.count === "") return { ok: false, reason: "count: pick an integer scalar arg" };
    return { ok: true, op: { op: "make_loop", ...place, mode: "count", count: f.count, name: "loop" } };
  }
  if (f.flag === "") return { ok: false, reason: "flag: pick a one-element i32 ndarray arg" };
  const maxIter = positive(f.maxIter, "max_iter");
  if (typeof maxIter === "string") return { ok: false, reason: maxIter };
  const checkEvery = positive(f.checkEvery, "check_every");
  if (typeof checkEvery === "string") return { ok: false, reason: checkEvery };
  if (f.guarded && checkEvery === 1) return { ok: false, reason: "guarded: needs check_every > 1" };
  const op: EditOp = {
    op: "make_loop",
    ...place,
    mode: "while",
    flag: f.flag,
    max_iter: maxIter,
    check_every: checkEvery,
    guarded: f.guarded,
    name: "loop",
  };
  return { ok: true, op };
}

export class LoopForm {
  readonly el: HTMLFormElement;
  private readonly title = h("div", { class: "gl-group-title" });
  private readonly kind: HTMLSelectElement;
  private readonly body: HTMLInputElement;
  private readonly flag: HTMLSelectElement;
  private readonly count: HTMLSelectElement;
  private readonly maxIter: HTMLInputElement;
  private readonly checkEvery: HTMLInputElement;
  private readonly guarded: HTMLInputElement;
  private readonly withElse: HTMLInputElement;
  private readonly ok: HTMLButtonElement;
  private readonly message = h("div", { class: "gl-hint gl-loop-error", role: "alert" });
  private readonly rows: Record<string, HTMLElement>;
  private readonly listeners = new Listeners();
  private nodes: readonly string[] = [];
  private place: { into: string | null; index: number | null } = { into: null, index: null };
  private waiting = false;

  /** `confirm`: send the edit (the app later calls `settle` with Python's answer). */
  constructor(private readonly confirm: (op: EditOp) => void) {
    this.kind = h(
      "select",
      { class: "gl-select", "aria-label": "kind", "data-loop": "kind" },
      h("option", { value: "while" }, "while loop (a flag)"),
      h("option", { value: "count" }, "counted loop"),
      h("option", { value: "cond" }, "conditional (if)"),
    );
    this.body = h("input", { type: "text", class: "gl-input", "aria-label": "body name", spellcheck: "false" });
    this.flag = h("select", { class: "gl-select", "aria-label": "flag", "data-loop": "flag" });
    this.count = h("select", { class: "gl-select", "aria-label": "count", "data-loop": "count" });
    this.maxIter = h("input", {
      type: "number",
      class: "gl-input",
      min: 1,
      step: 1,
      value: 1000,
      "aria-label": "max_iter",
    });
    this.checkEvery = h("input", {
      type: "number",
      class: "gl-input",
      min: 1,
      step: 1,
      value: 1,
      "aria-label": "check_every",
    });
    this.guarded = h("input", { type: "checkbox", "aria-label": "guarded" });
    this.withElse = h("input", { type: "checkbox", "aria-label": "else branch" });
    this.ok = h("button", { type: "submit", class: "gl-btn gl-primary", "data-loop": "make" }, "Make");
    const cancel = h("button", { type: "button", class: "gl-btn" }, "Cancel");
    const field = (label: string, input: HTMLElement, title = ""): HTMLElement =>
      h("label", { class: "gl-field", title }, h("span", {}, label), input);
    this.rows = {
      flag: field("flag", this.flag, "a one-element i32 ndarray: non-zero means again / then"),
      count: field("count", this.count, "an integer scalar arg: how many times the body runs"),
      maxIter: field("max_iter", this.maxIter, "the most iterations (a flag that never clears cannot hang the run)"),
      checkEvery: field("check_every", this.checkEvery, "read the flag after every k-th iteration only"),
      guarded: h("label", { class: "gl-check" }, this.guarded, " guarded (stop exactly where check_every=1 would)"),
      withElse: h("label", { class: "gl-check" }, this.withElse, " with an else branch"),
    };
    this.el = h(
      "form",
      { class: "gl-section gl-loop-form", "aria-label": "Make a loop or a conditional", "data-panel": "loop" },
      this.title,
      field("kind", this.kind),
      field("body", this.body, "the new sequence holding the picked nodes"),
      Object.values(this.rows),
      this.message,
      h("div", { class: "gl-actions" }, this.ok, cancel),
    );
    this.el.hidden = true;
    this.listeners.on(this.el, "submit", (e: Event) => {
      e.preventDefault();
      this.submit();
    });
    this.listeners.on(this.el, "keydown", (e: KeyboardEvent) => {
      if (e.key === "Escape") {
        e.preventDefault();
        e.stopPropagation();
        this.close();
      }
    });
    this.listeners.on(cancel, "click", () => this.close());
    this.listeners.on(this.kind, "change", () => this.showRows());
  }

  get isOpen(): boolean {
    return !this.el.hidden;
  }

  /** Open on `nodes` (none: an empty body at `place`), with the graph's flags and counts to pick from. */
  open(nodes: readonly string[], graph: GraphView, place: { into: string | null; index: number | null }): void {
    this.nodes = [...nodes];
    this.place = place;
    this.waiting = false;
    this.title.textContent =
      nodes.length === 0
        ? "Make an empty loop or conditional"
        : `Wrap ${nodes.length === 1 ? nodes[0] : `${nodes.length} nodes`} in`;
    const flags = flagArgs(graph.args);
    const counts = countArgs(graph.args);
    replaceChildren(
      this.flag,
      h("option", { value: "" }, flags.length ? "pick a flag" : "no one-element i32 arg"),
      flags.map((n) => h("option", { value: n }, n)),
    );
    replaceChildren(
      this.count,
      h("option", { value: "" }, counts.length ? "pick a count" : "no integer scalar arg"),
      counts.map((n) => h("option", { value: n }, n)),
    );
    if (flags.length === 1) this.flag.value = flags[0]!;
    if (counts.length === 1) this.count.value = counts[0]!;
    this.body.value = freeName(graph, "body");
    this.body.disabled = false;
    this.message.textContent = "";
    this.el.hidden = false;
    this.showRows();
    this.kind.focus();
  }

  /** Python answered: close on success, else show why (the field is named) and let the user fix it. */
  settle(error: string | null): void {
    if (!this.waiting) return;
    this.waiting = false;
    this.ok.disabled = false;
    if (error === null) this.close();
    else this.message.textContent = error;
  }

  close(): void {
    this.el.hidden = true;
    this.waiting = false;
  }

  private showRows(): void {
    const kind = this.kind.value as StructureKind;
    this.rows.flag!.hidden = kind === "count";
    this.rows.count!.hidden = kind !== "count";
    for (const key of ["maxIter", "checkEvery", "guarded"]) this.rows[key]!.hidden = kind !== "while";
    this.rows.withElse!.hidden = kind !== "cond";
  }

  private submit(): void {
    if (this.waiting) return;
    const result = structureOp({
      kind: this.kind.value as StructureKind,
      nodes: this.nodes,
      body: this.body.value.trim(),
      flag: this.flag.value,
      count: this.count.value,
      maxIter: this.maxIter.value,
      checkEvery: this.checkEvery.value,
      guarded: this.guarded.checked,
      withElse: this.withElse.checked,
      into: this.nodes.length ? null : this.place.into,
      index: this.nodes.length ? null : this.place.index,
    });
    if (!result.ok) {
      this.message.textContent = result.reason;
      return;
    }
    this.message.textContent = "";
    this.waiting = true;
    this.ok.disabled = true;
    this.confirm(result.op);
  }

  dispose(): void {
    this.listeners.dispose();
    this.el.remove();
  }
}
