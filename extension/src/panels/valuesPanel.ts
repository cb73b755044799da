/**
 * The Values tab: the run values the graph needs (the `values` trait), what is given and what is
 * missing, and forms to give them without code: a scalar typed in; an ndarray allocated at a shape
 * (zeros, or random numbers from a seed); a notebook variable by name. Python checks each value as
 * `run()` would and keeps it as the editor's, so Debug, Export and Compare use it. A "missing value"
 * error elsewhere opens this tab at the arg or dim (`focusArg`, asked with a `graphlab:give-value` event). Symbolic dims (`m` of a temp's shape) get a
 * size by name (`m=64`, as `run(m=64)` takes it) in the Dims list, for temps that no given value sizes.
 */

import { Listeners, h, replaceChildren } from "../logic/dom";
import {
  type DimEntryView,
  EMPTY_VALUES,
  type ValueEntryView,
  type ValueFill,
  type ValuesOp,
  type ValuesView,
} from "../wire/protocol";
import type { Section } from "./section";
import type { ValuesTarget } from "../logic/giveValue";
import type { ViewState } from "../logic/state";

/** The first arg a missing-value error names (the widget's wording or run()'s), or null. */
export function missingArgIn(text: string): string | null {
  const match = /needs (?:a value|values) for '([^']+)'/.exec(text) ?? /is missing '([^']+)'/.exec(text);
  return match ? match[1]! : null;
}

/**
 * What a refusal asks the Values tab for: the dim Debug or Export lacks a size for ("needs a size for dim
 * 'm'"), else the first arg it lacks a value for; null when it asks for neither (no "Give value..." button).
 */
export function missingValueIn(text: string): ValuesTarget {
  const dim = /needs a size for dim '([^']+)'/.exec(text);
  if (dim) return { dim: dim[1]! };
  const arg = missingArgIn(text);
  return arg === null ? null : { arg };
}

/** Parse a shape typed as `64`, `64, 3` or `(64, 3)`: `ndim` sizes >= 1, or why not. */
export function parseShape(text: string, ndim: number): { ok: true; shape: number[] } | { ok: false; reason: string } {
  const body = text.trim().replace(/^\(|\)$/g, "");
  const parts = body === "" ? [] : body.split(/[\s,x\u00d7]+/).filter((p) => p !== "");
  const sizes = parts.map((p) => Number(p));
  if (sizes.some((n) => !Number.isInteger(n) || n < 1)) {
    return { ok: false, reason: `the shape takes whole sizes >= 1, separated by commas (got "${text.trim()}")` };
  }
  if (sizes.length !== ndim) {
    return {
      ok: false,
      reason: `this arg has ${ndim} dim(s): give ${ndim} size(s), e.g. ${Array(ndim).fill(64).join(", ")}`,
    };
  }
  return { ok: true, shape: sizes };
}

/** A shape to prefill: the declared sizes, with dims named elsewhere left for the user. */
export function shapeHint(entry: ValueEntryView): string {
  if (!entry.shape) return "";
  return entry.shape.every((d) => typeof d === "number") ? entry.shape.join(", ") : "";
}

/** Parse a scalar typed in: a finite number; a whole one for an integer dtype. */
export function parseScalar(
  text: string,
  dtype: string | null,
): { ok: true; value: number } | { ok: false; reason: string } {
  const value = Number(text.trim());
  if (text.trim() === "" || !Number.isFinite(value)) return { ok: false, reason: "type a number" };
  if (dtype !== null && /^[iu]/.test(dtype) && !Number.isInteger(value)) {
    return { ok: false, reason: `${dtype} takes a whole number` };
  }
  return { ok: true, value };
}

/** Parse a dim's size typed in: a whole number >= 1, or why not (naming the dim). */
export function parseDimSize(dim: string, text: string): { ok: true; size: number } | { ok: false; reason: string } {
  const size = Number(text.trim());
  if (text.trim() === "" || !Number.isInteger(size) || size < 1) {
    return { ok: false, reason: `dim ${dim} takes a size, a whole number >= 1 (e.g. ${dim}=64)` };
  }
  return { ok: true, size };
}

/** A dim's state: given by name, set by a given value's shape, missing (Debug needs it), or not known yet. */
export function dimState(d: DimEntryView): "given" | "set" | "missing" | "unknown" {
  if (d.given) return "given";
  if (d.set_by !== null) return "set";
  return d.needed ? "missing" : "unknown";
}

/** What a dim's row says about it. */
export function dimStatus(d: DimEntryView): string {
  switch (dimState(d)) {
    case "given":
      return `\u2713 ${d.dim} = ${d.size}`;
    case "set":
      return `${d.dim} = ${d.size}, from ${d.set_by}'s value`;
    case "missing":
      return `missing: no value sizes it; give ${d.dim} a size`;
    default:
      return "set by the values given";
  }
}

/** The panel's summary line: what Debug still needs, args and dims. */
export function valuesSummary(view: ValuesView): string {
  const parts = [
    ...view.missing,
    ...(view.missing_dims ?? []).map((d) => `dim ${d}`), // a trait from an older kernel may lack it
  ];
  return parts.length === 0
    ? "Every value Debug needs is given."
    : `Missing: ${parts.join(", ")} \u2014 Debug needs these.`;
}

/** One dim of the Dims list: its size and where it comes from, and a form to give it by name. */
class DimRow {
  readonly el: HTMLElement;
  private readonly status = h("span", { class: "gl-value-status" });
  private readonly message = h("div", { class: "gl-hint gl-value-error", role: "alert" });
  private readonly input: HTMLInputElement;

  constructor(
    entry: DimEntryView,
    private readonly send: (op: ValuesOp) => void,
    listeners: Listeners,
  ) {
    const dim = entry.dim;
    this.input = h("input", {
      type: "text",
      class: "gl-input",
      "aria-label": `size of dim ${dim}`,
      placeholder: "a size: 64",
    });
    const set = listeners.button("Set", `Give dim ${dim} this size (as run(${dim}=...))`, () => {
      const parsed = parseDimSize(dim, this.input.value);
      if (!parsed.ok) return this.fail(parsed.reason);
      this.send({ op: "dim", dim, size: parsed.size });
    });
    set.dataset.value = "dim-set";
    listeners.on(this.input, "keydown", (e: KeyboardEvent) => e.key === "Enter" && set.click());
    const clear = listeners.button("Clear", `Forget the size given to dim ${dim}`, () =>
      this.send({ op: "dim", dim, size: null }),
    );
    clear.dataset.value = "dim-clear";
    const head = h(
      "div",
      { class: "gl-value-head" },
      h("strong", {}, dim),
      " ",
      h("span", { class: "gl-hint" }, `dim of ${entry.args.join(", ")}`),
      " ",
      this.status,
    );
    this.el = h(
      "div",
      { class: "gl-value-row gl-dim-row", "data-value-dim": dim },
      head,
      h("div", { class: "gl-value-form" }, this.input, set, clear),
      this.message,
    );
    this.update(entry);
  }

  update(entry: DimEntryView): void {
    this.status.textContent = dimStatus(entry);
    this.el.dataset.state = dimState(entry);
  }

  fail(reason: string): void {
    this.message.textContent = reason;
  }

  focus(): void {
    this.el.scrollIntoView({ block: "nearest" });
    this.el.classList.add("gl-value-focus");
    this.input.focus();
  }
}

/** One row of the panel: an arg, its state, and the form that gives it a value. */
class ValueRow {
  readonly el: HTMLElement;
  private readonly status = h("span", { class: "gl-value-status" });
  private readonly message = h("div", { class: "gl-hint gl-value-error", role: "alert" });
  private readonly first: HTMLInputElement;
  private readonly variable: HTMLInputElement;
  private readonly useVariable: HTMLButtonElement;
  private entry: ValueEntryView;

  constructor(
    entry: ValueEntryView,
    private readonly send: (op: ValuesOp) => void,
    listeners: Listeners,
  ) {
    this.entry = entry;
    const what = [
      entry.kind,
      entry.dtype,
      entry.shape ? `(${entry.shape.join(", ")})` : entry.kind === "ndarray" ? `ndim ${entry.ndim}` : "",
    ];
    const head = h(
      "div",
      { class: "gl-value-head" },
      h("strong", {}, entry.arg),
      " ",
      h("span", { class: "gl-hint" }, what.filter(Boolean).join(" ")),
      " ",
      this.status,
    );
    const forms: HTMLElement[] = [];
    if (entry.kind === "scalar") {
      const input = h("input", {
        type: "text",
        class: "gl-input",
        "aria-label": `value of ${entry.arg}`,
        placeholder: "a number",
      });
      const set = listeners.button("Set", `Give ${entry.arg} this value`, () => {
        const parsed = parseScalar(input.value, entry.dtype);
        if (!parsed.ok) return this.fail(parsed.reason);
        this.send({ op: "scalar", arg: entry.arg, value: parsed.value });
      });
      set.dataset.value = "set";
      listeners.on(input, "keydown", (e: KeyboardEvent) => e.key === "Enter" && set.click());
      forms.push(h("div", { class: "gl-value-form" }, input, set));
      this.first = input;
    } else {
      const shape = h("input", {
        type: "text",
        class: "gl-input",
        "aria-label": `shape of ${entry.arg}`,
        placeholder: `${entry.ndim} size(s): 64, 3`,
        value: shapeHint(entry),
      });
      const fill = h(
        "select",
        { class: "gl-select", "aria-label": `fill of ${entry.arg}` },
        h("option", { value: "zeros" }, "zeros"),
        h("option", { value: "random" }, "random"),
      );
      const seed = h("input", {
        type: "number",
        class: "gl-input gl-value-seed",
        min: 0,
        step: 1,
        value: 0,
        "aria-label": `seed of ${entry.arg}`,
        title: "seed of the random numbers",
      });
      const allocate = listeners.button(
        "Allocate",
        `Allocate a new ${entry.dtype ?? ""} array for ${entry.arg}`,
        () => {
          const parsed = parseShape(shape.value, entry.ndim);
          if (!parsed.ok) return this.fail(parsed.reason);
          const seedValue = Number(seed.value || "0");
          if (!Number.isInteger(seedValue) || seedValue < 0) return this.fail("the seed is a whole number >= 0");
          this.send({
            op: "allocate",
            arg: entry.arg,
            shape: parsed.shape,
            fill: fill.value as ValueFill,
            seed: seedValue,
          });
        },
      );
      allocate.dataset.value = "allocate";
      forms.push(h("div", { class: "gl-value-form" }, shape, fill, seed, allocate));
      this.first = shape;
    }
    this.variable = h("input", {
      type: "text",
      class: "gl-input",
      "aria-label": `notebook variable for ${entry.arg}`,
      placeholder: "notebook variable",
    });
    this.useVariable = listeners.button("Use", `Use a notebook variable as ${entry.arg}`, () => {
      const name = this.variable.value.trim();
      if (!/^[A-Za-z_]\w*$/.test(name)) return this.fail("type a variable's name, as in a cell");
      this.send({ op: "variable", arg: entry.arg, variable: name });
    });
    this.useVariable.dataset.value = "variable";
    const clear = listeners.button("Clear", `Forget ${entry.arg}'s value`, () =>
      this.send({ op: "clear", arg: entry.arg }),
    );
    clear.dataset.value = "clear";
    forms.push(h("div", { class: "gl-value-form" }, this.variable, this.useVariable, clear));
    this.el = h("div", { class: "gl-value-row", "data-value-arg": entry.arg }, head, forms, this.message);
    this.update(entry, false);
  }

  update(entry: ValueEntryView, inNotebook: boolean): void {
    this.entry = entry;
    const state = !entry.needed ? "not needed" : entry.given ? "given" : "missing";
    this.status.textContent = entry.given ? `\u2713 ${entry.summary}` : state;
    this.el.dataset.state = state.replace(" ", "-");
    this.variable.disabled = this.useVariable.disabled = !inNotebook;
    this.useVariable.title = inNotebook ? `Use a notebook variable as ${entry.arg}` : "only inside Jupyter or IPython";
  }

  fail(reason: string): void {
    this.message.textContent = reason;
  }

  focus(): void {
    this.el.scrollIntoView({ block: "nearest" });
    this.el.classList.add("gl-value-focus");
    this.first.focus();
  }
}

export class ValuesSection implements Section {
  readonly el = h("section", { class: "gl-section gl-values", "data-panel": "values" });
  private readonly summary = h("div", { class: "gl-values-summary", "aria-live": "polite" });
  private readonly list = h("div", { class: "gl-values-list" });
  private readonly listeners = new Listeners();
  private readonly dimsHead = h("h4", {}, "Dims");
  private readonly dimsList = h("div", { class: "gl-values-list gl-dims-list" });
  private rows = new Map<string, ValueRow>();
  private dimRows = new Map<string, DimRow>();
  private shape = "";
  private dimNames = "";
  private lastArg: string | null = null;

  constructor(private readonly send: (op: ValuesOp) => void) {
    this.el.append(h("h3", {}, "Run values"), this.summary, this.list, this.dimsHead, this.dimsList);
  }

  update(state: ViewState): void {
    const view = state.traits.values ?? EMPTY_VALUES;
    const shape = JSON.stringify(view.entries.map((e) => [e.arg, e.kind, e.dtype, e.ndim, e.shape]));
    if (shape !== this.shape) {
      this.shape = shape;
      this.rows = new Map(view.entries.map((e) => [e.arg, new ValueRow(e, (op) => this.sendFrom(op), this.listeners)]));
      replaceChildren(
        this.list,
        [...this.rows.values()].map((r) => r.el),
      );
    }
    for (const entry of view.entries) this.rows.get(entry.arg)?.update(entry, view.in_notebook);
    const dims = view.dims ?? [];
    const names = dims.map((d) => d.dim).join(",");
    if (names !== this.dimNames) {
      this.dimNames = names;
      this.dimRows = new Map(dims.map((d) => [d.dim, new DimRow(d, (op) => this.sendFrom(op), this.listeners)]));
      replaceChildren(
        this.dimsList,
        [...this.dimRows.values()].map((r) => r.el),
      );
    }
    for (const d of dims) this.dimRows.get(d.dim)?.update(d);
    this.dimsHead.hidden = this.dimsList.hidden = dims.length === 0;
    this.summary.textContent = valuesSummary(view);
    this.summary.dataset.missing = String(view.missing.length + (view.missing_dims ?? []).length);
  }

  /** Python refused a value or a dim's size: say why in its row. */
  refused(op: ValuesOp, reason: string): void {
    if (op.op === "dim") this.dimRows.get(op.dim)?.fail(reason);
    else this.rows.get(op.arg)?.fail(reason);
  }

  /** Scroll to an arg's or a dim's row and put the caret in its first field (the "Give value..." button). */
  focusArg(target: ValuesTarget): void {
    for (const row of [...this.rows.values(), ...this.dimRows.values()]) row.el.classList.remove("gl-value-focus");
    if (target === null) return;
    if ("arg" in target) this.rows.get(target.arg)?.focus();
    else this.dimRows.get(target.dim)?.focus();
  }

  private sendFrom(op: ValuesOp): void {
    if (op.op === "dim") {
      this.dimRows.get(op.dim)?.fail("");
    } else {
      this.lastArg = op.arg;
      this.rows.get(op.arg)?.fail("");
    }
    this.send(op);
  }

  /** The arg of the last value sent (its row shows Python's refusal). */
  get pendingArg(): string | null {
    return this.lastArg;
  }

  dispose(): void {
    this.listeners.dispose();
    this.el.remove();
  }
}
