/**
 * The kernel palette: a search field and the kernels that can be added; a click adds a dispatch
 * where the selection says (after the selected dispatch, inside the selected sequence, or at the
 * end), with each parameter bound to the arg that fits it by name (else left unbound).
 */

import { Listeners, h, replaceChildren } from "../logic/dom";
import { heldOrder, searchKernels, signature, usedKernels } from "../logic/paletteSearch";
import type { KernelView } from "../wire/protocol";
import { insertionPoint } from "../logic/selection";
import type { Actions, ViewState } from "../logic/state";

export class Palette {
  readonly el: HTMLElement;
  private readonly search: HTMLInputElement;
  private readonly list: HTMLUListElement;
  private readonly footer: HTMLDivElement;
  private readonly listeners = new Listeners();
  private itemListeners = new Listeners();
  private state: ViewState | null = null;
  private key = "";
  /** The rows shown when the pointer came onto the list (and the query then): kept until it leaves. */
  private held: { query: string; refs: string[] } | null = null;

  constructor(private readonly actions: Actions) {
    this.search = h("input", {
      type: "search",
      class: "gl-input gl-search",
      placeholder: "Search kernels  ( / )",
      "aria-label": "Search kernels",
    });
    this.list = h("ul", { class: "gl-kernels", role: "listbox", "aria-label": "Kernels" });
    this.footer = h("div", { class: "gl-hint gl-palette-where" });
    this.el = h("nav", { class: "gl-palette", "aria-label": "Kernel palette" }, this.search, this.list, this.footer);
    this.listeners.on(this.search, "input", () => this.renderList());
    // an add re-sorts the kernels (the graph's own first): not under the pointer, which would then rest
    // on another kernel than the one it just added
    this.listeners.on(this.list, "pointerenter", () => {
      const refs = [...this.list.querySelectorAll<HTMLElement>("[data-ref]")].map((b) => b.dataset.ref ?? "");
      this.held = { query: this.search.value, refs };
    });
    this.listeners.on(this.list, "pointerleave", () => {
      this.held = null;
      this.renderList();
    });
    this.listeners.on(this.search, "keydown", (e: KeyboardEvent) => {
      if (e.key === "Enter") {
        const first = this.list.querySelector<HTMLButtonElement>("button:not([disabled])");
        first?.click();
      } else if (e.key === "ArrowDown") {
        e.preventDefault();
        this.list.querySelector<HTMLButtonElement>("button")?.focus();
      } else if (e.key === "Escape") {
        this.search.value = "";
        this.renderList();
      }
    });
  }

  focusSearch(): void {
    this.search.focus();
    this.search.select();
  }

  update(state: ViewState): void {
    this.state = state;
    const where = insertionPoint(state.index, state.anchor).where;
    this.footer.textContent = `A click adds the kernel ${where}.`;
    const key = JSON.stringify([state.traits.palette, [...usedKernels(state.traits.graph)]]);
    if (key !== this.key) {
      this.key = key;
      this.renderList();
    }
  }

  private renderList(): void {
    const state = this.state;
    if (!state) return;
    this.itemListeners.dispose();
    this.itemListeners = new Listeners();
    const found = searchKernels(state.traits.palette, this.search.value, usedKernels(state.traits.graph));
    const held = this.held !== null && this.held.query === this.search.value ? this.held.refs : null;
    const kernels = held === null ? found : heldOrder(held, found);
    // a kernel added from the keyboard keeps the focus on its row, which the new list draws anew
    const focused = this.list.contains(document.activeElement)
      ? (document.activeElement as HTMLElement).dataset.ref
      : undefined;
    if (state.traits.palette.length === 0) {
      replaceChildren(
        this.list,
        h("li", { class: "gl-hint" }, "No kernels: pass them with gl.editor(g, kernels=module_or_dict)."),
      );
      return;
    }
    if (kernels.length === 0) {
      replaceChildren(this.list, h("li", { class: "gl-hint" }, "No kernel matches."));
      return;
    }
    replaceChildren(
      this.list,
      kernels.map((k) => this.item(k)),
    );
    if (focused !== undefined) {
      [...this.list.querySelectorAll<HTMLButtonElement>("button[data-ref]")]
        .find((b) => b.dataset.ref === focused)
        ?.focus();
    }
  }

  private item(kernel: KernelView): HTMLLIElement {
    const title = kernel.dispatchable
      ? `${kernel.ref}\n${kernel.params.map((p) => `${p.name}: ${p.label}`).join("\n")}`
      : (kernel.why_not ?? "cannot be dispatched in a ti.graph");
    const button = h(
      "button",
      { type: "button", class: "gl-kernel-item", title, disabled: !kernel.dispatchable, "data-ref": kernel.ref },
      h("span", { class: "gl-kernel-name" }, kernel.name),
      h("span", { class: "gl-kernel-sig" }, signature(kernel)),
      kernel.dispatchable ? null : h("span", { class: "gl-kernel-why" }, "not dispatchable"),
    );
    this.itemListeners.on(button, "click", () => this.actions.addDispatch(kernel));
    this.itemListeners.on(button, "keydown", (e: KeyboardEvent) => {
      const li = button.parentElement;
      if (e.key === "ArrowDown") {
        e.preventDefault();
        (li?.nextElementSibling?.querySelector("button") as HTMLButtonElement | null)?.focus();
      } else if (e.key === "ArrowUp") {
        e.preventDefault();
        const prev = li?.previousElementSibling?.querySelector("button") as HTMLButtonElement | null;
        (prev ?? this.search).focus();
      }
    });
    return h("li", { role: "option" }, button);
  }

  dispose(): void {
    this.itemListeners.dispose();
    this.listeners.dispose();
    this.el.remove();
  }
}
