/**
 * The arg editor: what a click on a buffer (arg) node opens in the side panel. It renames the
 * arg, sets its role, its shape (sizes or symbolic dims) and deletes it, each through an edit
 * message, so undo/redo and the in-flight lock work as for nodes. The form checks what it can
 * (a name's grammar, a taken name, a shape's dims) before asking; Python's refusal, when it
 * comes, is shown here in the panel as well as in the banner.
 */

import { parseArgShape } from "../logic/bindingFilter";
import { Listeners, h, replaceChildren } from "../logic/dom";
import type { Section } from "./section";
import type { ArgSpec, ArgView, EditOp, GraphView, Role } from "../wire/protocol";
import type { Actions, ViewState } from "../logic/state";

/** The roles the model has (`graphlab.core.spec.ROLES`). */
export const ARG_ROLES: readonly Role[] = ["state", "input", "output", "temp"];

/** graphlab's longest name (`graphlab.core.names.MAX_NAME_LENGTH`). */
const MAX_NAME_LENGTH = 128;

/** Python keywords: an arg becomes a keyword argument of a `ti.graph` run, so the model refuses them. */
const KEYWORDS = new Set(
  (
    "False None True and as assert async await break class continue def del elif else except finally for from " +
    "global if import in is lambda nonlocal not or pass raise return try while with yield"
  ).split(" "),
);

/** Why `name` cannot be the new name of arg `current` (null: it can); the model checks it again. */
export function argNameProblem(name: string, current: string, args: readonly ArgView[]): string | null {
  if (name === "") return "give a name";
  if (name.length > MAX_NAME_LENGTH) return `a name has at most ${MAX_NAME_LENGTH} characters`;
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
    return `${JSON.stringify(name)} is not a name: use ASCII letters, digits and '_', not starting with a digit`;
  }
  if (KEYWORDS.has(name)) return `${JSON.stringify(name)} is a Python keyword: args are keyword arguments of a run`;
  if (name !== current && args.some((a) => a.name === name)) {
    return `${JSON.stringify(name)} is already declared: pick another name`;
  }
  return null;
}

/** Whether an arg takes a declared shape (the model gives shapes to ndarrays only). */
export function takesShape(arg: ArgView): boolean {
  return arg.kind === "ndarray" && arg.ndim > 0;
}

/** An arg's declared shape as the shape field shows it (`n, 64`; blank: any shape). */
export function shapeFieldText(arg: ArgView): string {
  return arg.shape === null ? "" : arg.shape.join(", ");
}

export type ShapeEdit = { ok: true; shape: (number | string)[] | null } | { ok: false; reason: string };

/** The shape typed for `arg` (`n`, `64, 64`, `G, G`; blank: any), or why it does not fit its ndim. */
export function parseShapeEdit(text: string, arg: ArgView): ShapeEdit {
  return parseShapeText(text, arg.ndim);
}

/** The shape typed for an arg of `ndim` dims (the arg editor's and the new-arg form's field), or why not. */
export function parseShapeText(text: string, ndim: number): ShapeEdit {
  const shape = parseArgShape(text, ndim);
  if (shape === undefined) {
    const number = text.split(/[\s,()[\]]+/).find((p) => /^[-+]?[0-9.]+$/.test(p) && !/^[1-9][0-9]*$/.test(p));
    if (number !== undefined) {
      return {
        ok: false,
        reason: `shape: ${number} is not a size; sizes are whole numbers from 1 (or dim names such as n)`,
      };
    }
    const example = Array.from({ length: ndim }, (_, i) => (i === 0 ? "n" : "64")).join(", ");
    return {
      ok: false,
      reason: `shape: give ${ndim} ${ndim === 1 ? "size or dim name" : "sizes or dim names"}, one per dimension (for example ${example}), or leave it blank for any shape`,
    };
  }
  return { ok: true, shape };
}

/** Whether two shapes are the same (null: any shape). */
export function sameArgShape(a: readonly (number | string)[] | null, b: readonly (number | string)[] | null): boolean {
  if (a === null || b === null) return a === b;
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

/** The spec that redeclares `arg` with another shape (everything else as declared). */
export function redeclareSpec(arg: ArgView, shape: (number | string)[] | null): ArgSpec {
  return {
    name: arg.name,
    kind: arg.kind,
    dtype: arg.dtype,
    ndim: arg.ndim,
    element_shape: [...arg.element_shape],
    fmt: arg.fmt,
    role: arg.role,
    shape,
  };
}

/** Where an arg is bound: `[node id, parameter]` in program order (deleting it is refused while any remain). */
export function argUses(graph: GraphView, name: string): [string, string][] {
  const uses: [string, string][] = [];
  for (const node of graph.nodes) {
    if (node.kind !== "dispatch") continue;
    for (const [param, bound] of Object.entries(node.bindings)) if (bound === name) uses.push([node.id, param]);
  }
  return uses;
}

/** The arg editor section: shown while an arg is selected, in the Node tab (and in the Inspect tab over its buffer). */
export class ArgEditorSection implements Section {
  readonly el = h("section", { class: "gl-section gl-arg-editor", hidden: true });
  private listeners = new Listeners();
  private key = "";
  /** The arg the form was last drawn for (its message is cleared when another one is shown). */
  private shown: string | null = null;
  private readonly message = h("div", { class: "gl-arg-message", role: "alert" });
  /** An edit this editor sent and whose answer is not in yet: its refusal is then shown here. */
  private awaiting = false;
  private wasBusy = false;

  constructor(private readonly actions: Actions) {}

  update(state: ViewState): void {
    const arg = state.arg;
    const busy = state.busy.has("edit");
    if (this.awaiting && this.wasBusy && !busy) {
      this.awaiting = false; // edits are answered in order, and this panel waits while one is out: it is ours
      this.say(state.traits.error, true);
    }
    this.wasBusy = busy;
    const onInspect = state.tab === "inspect";
    this.el.hidden = arg === null || (onInspect && state.traits.inspect.buffer !== arg.name);
    this.el.inert = busy;
    if (arg === null) {
      this.key = "";
      this.shown = null;
      return;
    }
    const key = JSON.stringify([arg, state.traits.graph.version, state.traits.debugger.active]);
    if (key === this.key) return;
    const another = this.shown !== arg.name;
    this.key = key;
    this.shown = arg.name;
    this.listeners.dispose();
    this.listeners = new Listeners();
    if (another && !this.awaiting) this.say("", false);
    replaceChildren(this.el, this.render(state, arg));
  }

  private say(text: string, error: boolean): void {
    this.message.textContent = text;
    this.message.classList.toggle("gl-arg-error", error && text !== "");
  }

  private send(op: EditOp): void {
    this.say("", false);
    this.awaiting = true;
    this.actions.edit(op);
  }

  private render(state: ViewState, arg: ArgView): HTMLElement {
    const uses = argUses(state.traits.graph, arg.name);
    const remove = this.listeners.button("Delete arg", "Delete this arg (refused while a dispatch binds it)", () =>
      this.send({ op: "remove_arg", arg: arg.name }),
    );
    remove.classList.add("gl-danger");
    const useList =
      uses.length === 0
        ? h("p", { class: "gl-hint" }, "Not bound by any dispatch.")
        : h(
            "ul",
            { class: "gl-arg-uses" },
            uses.map(([node, param]) => {
              const link = h("a", { href: "#", class: "gl-link" }, `${node}.${param}`);
              this.listeners.on(link, "click", (e: MouseEvent) => {
                e.preventDefault();
                this.actions.select(node);
              });
              return h("li", {}, link);
            }),
          );
    const debugging = state.traits.debugger.active && arg.kind === "ndarray";
    return h(
      "div",
      { "data-arg": arg.name },
      h("h3", {}, h("span", { class: "gl-kind" }, "arg"), " ", h("code", {}, arg.name)),
      h("div", { class: "gl-hint" }, arg.label),
      this.nameField(state, arg),
      this.roleField(arg),
      takesShape(arg) ? this.shapeField(arg) : null,
      h("h4", {}, `Bound at (${uses.length})`),
      useList,
      this.message,
      debugging
        ? h("p", { class: "gl-hint" }, "A debug session runs: the Inspect tab shows this buffer's values.")
        : null,
      h("div", { class: "gl-actions" }, remove),
    );
  }

  private nameField(state: ViewState, arg: ArgView): HTMLElement {
    const input = h("input", { type: "text", value: arg.name, class: "gl-input", "aria-label": "arg name" });
    let sent = arg.name;
    const commit = (): void => {
      const name = input.value.trim();
      if (name === sent) return; // Enter, then the change event: ask once
      const problem = argNameProblem(name, arg.name, state.traits.graph.args);
      if (problem !== null) {
        this.say(`rename: ${problem}`, true);
        return;
      }
      sent = name;
      this.send({ op: "rename_arg", arg: arg.name, name });
    };
    this.listeners.on(input, "keydown", (e: KeyboardEvent) => {
      if (e.key === "Enter") commit();
      if (e.key === "Escape") input.value = arg.name;
    });
    this.listeners.on(input, "change", commit);
    return h("label", { class: "gl-field" }, h("span", {}, "name"), input);
  }

  private roleField(arg: ArgView): HTMLElement {
    const select = h(
      "select",
      { class: "gl-select", "aria-label": "arg role" },
      ARG_ROLES.map((r) => h("option", { value: r, selected: r === arg.role }, r)),
    );
    this.listeners.on(select, "change", () => {
      const role = select.value as Role;
      if (role !== arg.role) this.send({ op: "set_role", arg: arg.name, role });
    });
    return h("label", { class: "gl-field" }, h("span", {}, "role"), select);
  }

  private shapeField(arg: ArgView): HTMLElement {
    const input = h("input", {
      type: "text",
      value: shapeFieldText(arg),
      class: "gl-input",
      placeholder: arg.inferred_shape ?? "n, or 64,64, or G,G (blank: any)",
      "aria-label": "arg shape",
    });
    let sent = shapeFieldText(arg);
    const commit = (): void => {
      const text = input.value.trim();
      if (text === sent) return;
      const parsed = parseShapeEdit(text, arg);
      if (!parsed.ok) {
        this.say(parsed.reason, true);
        return;
      }
      sent = text;
      if (sameArgShape(parsed.shape, arg.shape)) return;
      this.send({ op: "redeclare", arg: redeclareSpec(arg, parsed.shape) });
    };
    this.listeners.on(input, "keydown", (e: KeyboardEvent) => {
      if (e.key === "Enter") commit();
      if (e.key === "Escape") input.value = shapeFieldText(arg);
    });
    this.listeners.on(input, "change", commit);
    const hint =
      arg.shape === null
        ? arg.inferred_shape === null
          ? "any shape"
          : `any shape; the kernels' loops need ${arg.inferred_shape}`
        : "checked before every run; a dim name takes one value everywhere";
    return h(
      "div",
      {},
      h("label", { class: "gl-field" }, h("span", {}, `shape (ndim ${arg.ndim})`), input),
      h("div", { class: "gl-hint" }, hint),
    );
  }

  dispose(): void {
    this.listeners.dispose();
    this.el.remove();
  }
}
