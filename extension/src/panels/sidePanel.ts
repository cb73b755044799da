/**
 * The side panel, in tabs: Node (the editor of the selected node: name, bindings, repeat,
 * actions; the args when nothing is selected; the list of problems), Debug, Inspect and Export.
 * Each tab holds `Section`s: an element plus `update(state)` and `dispose()`.
 */

import { ArgEditorSection, argNameProblem, parseShapeText } from "./argEditor";
import {
  type BindingOption,
  type OpenField,
  bindingOptions,
  freeArgName,
  openFields,
  parseElementShape,
  specFromParam,
} from "../logic/bindingFilter";
import { DebugSection } from "./debugPanel";
import { argNodeId, diagnosticLine } from "../logic/diagnostics";
import { Listeners, h, replaceChildren } from "../logic/dom";
import { ExportSection } from "./exportPanel";
import { InspectSection } from "./inspectPanel";
import { keysFor } from "../logic/keymap";
import { LoopForm } from "./loopForm";
import { loopReads } from "../logic/loopText";
import type {
  ArgView,
  BranchView,
  CondView,
  DispatchView,
  LoopView,
  NodeView,
  ParamView,
  Role,
  SequenceView,
} from "../wire/protocol";
import type { Actions, PanelTab, ViewState } from "../logic/state";
import { ValuesSection } from "./valuesPanel";
import type { Section } from "./section";

const NEW_ARG = "\u0000new";
const UNBOUND = "\u0000unbound";
const DTYPES = ["f32", "f64", "f16", "i32", "i64", "i16", "i8", "u32", "u64", "u16", "u8"];
const ROLES: Role[] = ["state", "input", "output", "temp"];

const TABS: { tab: PanelTab; label: string }[] = [
  { tab: "node", label: "Node" },
  { tab: "debug", label: "Debug" },
  { tab: "inspect", label: "Inspect" },
  { tab: "export", label: "Export" },
  { tab: "values", label: "Values" },
];

export class SidePanel {
  readonly el: HTMLElement;
  readonly sections: Section[];
  private readonly node: NodeSection;
  private readonly exporter: ExportSection;
  private readonly argEditor: ArgEditorSection;
  /** The Values tab (run values given without code). */
  readonly values: ValuesSection;
  /** The loop form, over the Node tab while open. */
  readonly loop: LoopForm;
  private readonly pages = new Map<PanelTab, HTMLElement>();
  private readonly tabButtons = new Map<PanelTab, HTMLButtonElement>();
  private readonly listeners = new Listeners();

  constructor(actions: Actions) {
    this.node = new NodeSection(actions);
    this.exporter = new ExportSection(actions);
    this.argEditor = new ArgEditorSection(actions);
    this.values = new ValuesSection((op) => actions.giveValue(op));
    this.loop = new LoopForm((op) => actions.makeStructure(op));
    const byTab: Record<PanelTab, Section[]> = {
      node: [this.argEditor, this.node, new ProblemsSection(actions)],
      debug: [new DebugSection(actions)],
      inspect: [new InspectSection(actions)],
      export: [this.exporter],
      values: [this.values],
    };
    this.sections = Object.values(byTab).flat();
    const bar = h("div", { class: "gl-tabs", role: "tablist" });
    for (const { tab, label } of TABS) {
      const button = h("button", { type: "button", class: "gl-tab", role: "tab", "data-tab": tab }, label);
      this.listeners.on(button, "click", () => actions.showTab(tab));
      this.tabButtons.set(tab, button);
      bar.append(button);
      const page = h(
        "div",
        { class: "gl-tab-page", role: "tabpanel", "data-tab": tab },
        byTab[tab].map((s) => s.el),
      );
      this.pages.set(tab, page);
    }
    this.pages.get("node")!.prepend(this.loop.el);
    this.el = h("aside", { class: "gl-side", "aria-label": "Side panel" }, bar, [...this.pages.values()]);
  }

  update(state: ViewState): void {
    for (const [tab, page] of this.pages) page.hidden = tab !== state.tab;
    for (const [tab, button] of this.tabButtons) {
      button.setAttribute("aria-selected", String(tab === state.tab));
      button.classList.toggle("gl-tab-active", tab === state.tab);
    }
    const debugging = state.traits.debugger.active;
    this.tabButtons.get("debug")!.classList.toggle("gl-tab-live", debugging);
    // The arg editor sits over the inspected buffer in the Inspect tab, else in the Node tab.
    const argHome = this.pages.get(state.tab === "inspect" ? "inspect" : "node")!;
    if (this.argEditor.el.parentElement !== argHome) argHome.prepend(this.argEditor.el);
    for (const section of this.sections) section.update(state);
  }

  /** Put the caret in the export folder field. */
  focusExport(): void {
    this.exporter.focus();
  }

  /** Put the caret in the name field of the selected node (F2). */
  focusName(): void {
    this.node.focusField("name");
  }

  /** Put the caret in the repeat field of the selected sequence (R). */
  focusRepeat(): boolean {
    return this.node.focusField("repeat");
  }

  dispose(): void {
    this.listeners.dispose();
    this.loop.dispose();
    for (const section of this.sections) section.dispose();
    this.el.remove();
  }
}

/** The editor of the selected node. Rebuilt only when what it shows changed. */
class NodeSection implements Section {
  readonly el = h("section", { class: "gl-section gl-node-editor" });
  private listeners = new Listeners();
  private key = "";
  private fields = new Map<string, HTMLInputElement>();

  constructor(private readonly actions: Actions) {}

  update(state: ViewState): void {
    this.el.inert = state.busy.has("edit"); // an edit in flight: nothing here may land on the old node
    const node = state.anchor === null ? undefined : state.index.get(state.anchor);
    const key = JSON.stringify([
      state.traits.graph.version,
      state.anchor,
      state.range,
      node ? state.traits.diagnostics.filter((d) => d.node === node.id) : null,
      node ? null : state.traits.graph.args,
      node ? null : state.arg?.name,
    ]);
    if (key === this.key) return;
    this.key = key;
    this.listeners.dispose();
    this.listeners = new Listeners();
    this.fields.clear();
    // a clicked arg (no node selected) leaves this section empty: the arg editor shows it
    if (state.range.length > 1) replaceChildren(this.el, this.renderRange(state));
    else if (node?.kind === "dispatch") replaceChildren(this.el, this.renderDispatch(state, node));
    else if (node?.kind === "sequence") replaceChildren(this.el, this.renderSequence(state, node));
    else if (node !== undefined) replaceChildren(this.el, this.renderControl(state, node));
    else if (state.arg !== null) replaceChildren(this.el);
    else replaceChildren(this.el, this.renderNothing(state));
  }

  focusField(name: string): boolean {
    const field = this.fields.get(name);
    if (!field) return false;
    field.focus();
    field.select();
    return true;
  }

  private renderNothing(state: ViewState): HTMLElement {
    const args = state.traits.graph.args;
    return h(
      "div",
      {},
      h("h3", {}, "Nothing selected"),
      h("p", { class: "gl-hint" }, "Click a node to edit it (a buffer: its arg), or add a kernel from the palette."),
      h("h4", {}, `Args (${args.length})`),
      args.length === 0
        ? h("p", { class: "gl-hint" }, "No args yet: a parameter's \u201cnew arg from annotation\u201d declares one.")
        : h(
            "ul",
            { class: "gl-args" },
            args.map((a) => {
              const link = h("a", { href: "#", class: "gl-link" }, h("code", {}, a.name));
              this.listeners.on(link, "click", (e: MouseEvent) => {
                e.preventDefault();
                this.actions.select(argNodeId(a.name));
              });
              return h("li", { title: argTitle(a) }, link, " ", a.label, ` \u00b7 ${a.role}`);
            }),
          ),
    );
  }

  private renderRange(state: ViewState): HTMLElement {
    const group = this.listeners.button("Group into a sequence", `Group (${keysFor("group")})`, () =>
      this.actions.group(state.range),
    );
    const loop = this.listeners.button("Loop\u2026", "Make a loop or a conditional of these nodes", () =>
      this.actions.makeLoop(state.range),
    );
    loop.dataset.open = "loop";
    const clear = this.listeners.button("Clear", "Clear the selection (Esc)", () => this.actions.select(null));
    return h(
      "div",
      {},
      h("h3", {}, `${state.range.length} nodes selected`),
      h(
        "ul",
        { class: "gl-range" },
        state.range.map((id) => h("li", {}, h("code", {}, id))),
      ),
      h("div", { class: "gl-actions" }, group, loop, clear),
    );
  }

  private renderDispatch(state: ViewState, node: DispatchView): HTMLElement {
    const rows = node.params.map((param) => this.bindingRow(state, node, param));
    return h(
      "div",
      { "data-node": node.id },
      h("h3", {}, h("span", { class: "gl-kind" }, "dispatch"), " ", h("code", {}, node.id)),
      this.nameField(node),
      h("div", { class: "gl-kernel" }, "kernel ", h("code", { title: node.kernel }, node.kernel_name)),
      ...(node.random === undefined
        ? []
        : [
            h(
              "div",
              { class: "gl-random", title: "use graphlab.random (counter-based, reproducible)" },
              `draws random numbers: ${node.random}; runs and replays do not repeat`,
            ),
          ]),
      h(
        "table",
        { class: "gl-bindings" },
        h("thead", {}, h("tr", {}, h("th", {}, "parameter"), h("th", {}, "arg"))),
        h("tbody", {}, rows.flat()),
      ),
      this.nodeActions(state, node),
    );
  }

  private renderSequence(state: ViewState, node: SequenceView): HTMLElement {
    const repeat = h("input", {
      type: "number",
      min: 1,
      step: 1,
      value: node.repeat,
      class: "gl-input gl-repeat",
      "aria-label": "repeat",
    });
    this.fields.set("repeat", repeat);
    let sent = node.repeat;
    const commit = (): void => {
      const value = Number(repeat.value);
      if (value === sent) return; // Enter, then the change event: ask once
      if (Number.isInteger(value) && repeat.value.trim() !== "") {
        sent = value;
        this.actions.edit({ op: "set_repeat", node: node.id, repeat: value });
      } else repeat.value = String(sent);
    };
    this.listeners.on(repeat, "keydown", (e: KeyboardEvent) => {
      if (e.key === "Enter") commit();
      if (e.key === "Escape") repeat.value = String(node.repeat);
    });
    this.listeners.on(repeat, "change", commit);
    const definition =
      node.sequence !== node.name
        ? h("div", { class: "gl-hint" }, "uses sequence ", h("code", {}, node.sequence))
        : null;
    return h(
      "div",
      { "data-node": node.id },
      h("h3", {}, h("span", { class: "gl-kind" }, "sequence"), " ", h("code", {}, node.id)),
      this.nameField(node),
      definition,
      h("label", { class: "gl-field" }, h("span", {}, `repeat (${keysFor("repeat")})`), repeat),
      h("div", { class: "gl-hint" }, `${node.children.length} node(s) inside, run ${node.repeat} time(s) in a row`),
      this.nodeActions(state, node),
    );
  }

  /** A loop, a conditional or one of its branches: what decides it, and what it holds. */
  private renderControl(state: ViewState, node: LoopView | CondView | BranchView): HTMLElement {
    const what =
      node.kind === "loop"
        ? node.while !== null
          ? [
              "repeats ",
              h("code", {}, node.sequence),
              " while ",
              h("code", {}, node.while),
              ` \u2260 0 (at most ${node.max_iter ?? "?"} times${loopReads(node)})`,
            ]
          : ["repeats ", h("code", {}, node.sequence), " ", h("code", {}, node.count ?? "?"), " times"]
        : node.kind === "cond"
          ? ["runs its then branch when ", h("code", {}, node.flag), " \u2260 0, else its else branch"]
          : ["runs sequence ", h("code", {}, node.sequence)];
    return h(
      "div",
      { "data-node": node.id },
      h("h3", {}, h("span", { class: "gl-kind" }, node.kind), " ", h("code", {}, node.id)),
      h(
        "p",
        { class: "gl-hint" },
        what,
        `; the host decides between compiled segments. ${node.children.length} node(s) inside.`,
      ),
      node.kind === "branch" ? null : this.nodeActions(state, node),
    );
  }

  private nameField(node: NodeView): HTMLElement {
    const input = h("input", { type: "text", value: node.name, class: "gl-input", "aria-label": "name" });
    this.fields.set("name", input);
    let sent = node.name;
    const commit = (): void => {
      const name = input.value.trim();
      if (name === sent) return; // Enter, then the change event: ask once
      if (name === "") {
        input.value = sent;
        return;
      }
      sent = name;
      this.actions.edit({ op: "rename", node: node.id, name });
    };
    this.listeners.on(input, "keydown", (e: KeyboardEvent) => {
      if (e.key === "Enter") commit();
      if (e.key === "Escape") input.value = node.name;
    });
    this.listeners.on(input, "change", commit);
    return h("label", { class: "gl-field" }, h("span", {}, `name (${keysFor("rename")})`), input);
  }

  private nodeActions(state: ViewState, node: NodeView): HTMLElement {
    const siblings = state.index.siblings(node.id);
    const up = this.listeners.button("\u2191 Move up", `Move up (${keysFor("moveUp")})`, () =>
      this.actions.move(node.id, -1),
    );
    const down = this.listeners.button("\u2193 Move down", `Move down (${keysFor("moveDown")})`, () =>
      this.actions.move(node.id, 1),
    );
    up.disabled = node.index <= 0;
    down.disabled = node.index >= siblings.length - 1;
    const group = this.listeners.button("Group\u2026", `Group into a new sequence (${keysFor("group")})`, () =>
      this.actions.group([node.id]),
    );
    const loop = this.listeners.button("Loop\u2026", "Make a loop or a conditional of this node", () =>
      this.actions.makeLoop([node.id]),
    );
    loop.dataset.open = "loop";
    const remove = this.listeners.button("Delete", `Delete (${keysFor("delete")})`, () => this.actions.remove(node.id));
    remove.classList.add("gl-danger");
    return h("div", { class: "gl-actions" }, up, down, group, loop, remove);
  }

  private bindingRow(state: ViewState, node: DispatchView, param: ParamView): HTMLElement[] {
    const args = state.traits.graph.args;
    const bound = node.bindings[param.name] ?? null;
    const options = bindingOptions(param, args);
    const select = h("select", { class: "gl-select", "aria-label": `arg for ${param.name}` });
    select.append(h("option", { value: UNBOUND, selected: bound === null }, "\u2014 unbound \u2014"));
    const fitting = options.filter((o) => o.fits);
    const other = options.filter((o) => !o.fits);
    if (fitting.length > 0) {
      select.append(
        h(
          "optgroup",
          { label: "fits" },
          fitting.map((o) => optionFor(o, bound)),
        ),
      );
    }
    if (other.length > 0) {
      select.append(
        h(
          "optgroup",
          { label: "does not fit" },
          other.map((o) => optionFor(o, bound)),
        ),
      );
    }
    select.append(h("option", { value: NEW_ARG }, "\uff0b new arg from annotation\u2026"));
    const problems = state.traits.diagnostics.filter((d) => d.node === node.id && d.arg === param.name);
    const formRow = h("tr", { class: "gl-new-arg-row", hidden: true });
    this.listeners.on(select, "change", () => {
      if (select.value === NEW_ARG) {
        formRow.hidden = false;
        replaceChildren(
          formRow,
          h(
            "td",
            { colspan: 2 },
            this.newArgForm(state, node, param, () => {
              formRow.hidden = true;
              select.value = bound ?? UNBOUND;
            }),
          ),
        );
        formRow.querySelector("input")?.focus();
        return;
      }
      const arg = select.value === UNBOUND ? null : select.value;
      if (arg !== bound) this.actions.edit({ op: "rebind", node: node.id, param: param.name, arg });
    });
    const rows = [
      h(
        "tr",
        { class: problems.length > 0 ? "gl-row-problem" : null, "data-param": param.name },
        h("th", { title: param.label }, h("code", {}, param.name), h("div", { class: "gl-annot" }, param.label)),
        h("td", {}, select),
      ),
    ];
    for (const d of problems) {
      rows.push(h("tr", { class: `gl-diag gl-diag-${d.severity}` }, h("td", { colspan: 2 }, diagnosticLine(d))));
    }
    rows.push(formRow);
    return rows;
  }

  /** The inline form of "new arg from annotation": a name, and values for what the annotation leaves open. */
  private newArgForm(state: ViewState, node: DispatchView, param: ParamView, close: () => void): HTMLElement {
    const name = h("input", {
      type: "text",
      class: "gl-input",
      value: freeArgName(param.name, state.traits.graph.args),
      "aria-label": "new arg name",
    });
    const open = openFields(param);
    const dtype = h(
      "select",
      { class: "gl-select", "aria-label": "dtype" },
      DTYPES.map((d) => h("option", { value: d }, d)),
    );
    const ndim = h("input", { type: "number", min: 0, max: 8, value: 1, class: "gl-input", "aria-label": "ndim" });
    const shape = h("input", {
      type: "text",
      class: "gl-input",
      placeholder: "() scalar, 2 vec2, 2,2 mat2",
      "aria-label": "element shape",
    });
    const fmt = h("input", { type: "text", class: "gl-input", value: "r32f", "aria-label": "format" });
    const dims = h("input", {
      type: "text",
      class: "gl-input",
      placeholder: "n, or 64,64, or G,G (blank: any)",
      "aria-label": "shape",
    });
    const role = h(
      "select",
      { class: "gl-select", "aria-label": "role" },
      ROLES.map((r) => h("option", { value: r }, r)),
    );
    const message = h("div", { class: "gl-hint" }, `declares ${param.label}`);
    const fieldFor: Record<OpenField, HTMLElement> = { dtype, ndim, element_shape: shape, fmt };
    const create = (): void => {
      const elementShape = open.includes("element_shape") ? parseElementShape(shape.value) : null;
      if (open.includes("element_shape") && elementShape === null) {
        message.textContent = "element shape: give (), n or n,m (for example 2 or 2,2)";
        return;
      }
      const nameProblem = argNameProblem(name.value.trim(), "", state.traits.graph.args);
      if (nameProblem !== null) {
        message.textContent = `name: ${nameProblem}`;
        name.focus();
        return;
      }
      const result = specFromParam(param, name.value.trim(), {
        dtype: dtype.value,
        ndim: Number(ndim.value),
        element_shape: elementShape,
        fmt: fmt.value.trim() || null,
        role: role.value as Role,
      });
      if (!result.ok) {
        message.textContent = result.reason;
        return;
      }
      const ndimOf = result.spec.ndim ?? 0;
      const argShape = ndimOf > 0 && result.spec.kind !== "scalar" ? parseShapeText(dims.value, ndimOf) : null;
      if (argShape !== null && !argShape.ok) {
        message.textContent = argShape.reason;
        return;
      }
      const arg =
        argShape === null || argShape.shape === null ? result.spec : { ...result.spec, shape: argShape.shape };
      this.actions.edit({ op: "new_arg", arg, bind: { node: node.id, param: param.name } });
    };
    const ok = this.listeners.button("Create", "Declare the arg and bind it", create);
    const cancel = this.listeners.button("Cancel", "Esc", close);
    this.listeners.on(name, "keydown", (e: KeyboardEvent) => {
      if (e.key === "Enter") create();
      if (e.key === "Escape") close();
    });
    return h(
      "div",
      { class: "gl-new-arg" },
      h("label", { class: "gl-field" }, h("span", {}, "name"), name),
      open.map((field) => h("label", { class: "gl-field" }, h("span", {}, field.replace("_", " ")), fieldFor[field])),
      param.kind === "scalar" ? null : h("label", { class: "gl-field" }, h("span", {}, "shape"), dims),
      h("label", { class: "gl-field" }, h("span", {}, "role"), role),
      message,
      h("div", { class: "gl-actions" }, ok, cancel),
    );
  }

  dispose(): void {
    this.listeners.dispose();
    this.el.remove();
  }
}

/** Every diagnostic, errors first; a click selects the node it is about. */
class ProblemsSection implements Section {
  readonly el = h("section", { class: "gl-section gl-problems" });
  private listeners = new Listeners();
  private key = "";

  constructor(private readonly actions: Actions) {}

  update(state: ViewState): void {
    const diagnostics = state.traits.diagnostics;
    const key = JSON.stringify(diagnostics);
    if (key === this.key) return;
    this.key = key;
    this.listeners.dispose();
    this.listeners = new Listeners();
    if (diagnostics.length === 0) {
      replaceChildren(this.el, h("h4", {}, "Problems"), h("p", { class: "gl-hint" }, "No problems found."));
      return;
    }
    const items = diagnostics.map((d) => {
      const item = h(
        "li",
        { class: `gl-diag gl-diag-${d.severity}`, title: d.hint ?? "" },
        h("code", {}, d.code),
        " ",
        d.node ? h("a", { href: "#", class: "gl-link" }, d.node) : d.arg ? `arg ${d.arg}` : "graph",
        d.node && d.arg ? ` [${d.arg}]` : "",
        `: ${d.message}`,
      );
      const link = item.querySelector("a");
      if (link && d.node) {
        const target = d.node;
        this.listeners.on(link, "click", (e: MouseEvent) => {
          e.preventDefault();
          this.actions.select(state.index.has(target) ? target : target.replace(/\[[0-9]+\]/g, ""));
        });
      }
      return item;
    });
    replaceChildren(this.el, h("h4", {}, `Problems (${diagnostics.length})`), h("ul", { class: "gl-diags" }, items));
  }

  dispose(): void {
    this.listeners.dispose();
    this.el.remove();
  }
}

function optionFor(option: BindingOption, bound: string | null): HTMLOptionElement {
  const { arg, fits, reason } = option;
  const text = fits ? `${arg.name} \u2014 ${arg.label}` : `${arg.name} \u2014 ${reason}`;
  return h(
    "option",
    {
      value: arg.name,
      disabled: !fits && arg.name !== bound,
      selected: arg.name === bound,
      title: reason ?? arg.label,
    },
    text,
  );
}

function argTitle(arg: ArgView): string {
  const inferred = arg.inferred_shape === null ? "any shape" : `inferred shape ${arg.inferred_shape}`;
  const shape = arg.shape === null ? inferred : `shape (${arg.shape.join(", ")})`;
  return `${arg.label}, ${shape}, role ${arg.role}`;
}
