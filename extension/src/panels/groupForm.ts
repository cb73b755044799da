/**
 * The small form that asks for a new sequence's name when nodes are grouped: prefilled with a free
 * name, checked as it is typed (names.ts), Enter confirms, Escape cancels. It stays open until
 * Python answers, so a name the model refuses is shown where it was typed and can be corrected.
 */

import { Listeners, h } from "../logic/dom";

export class GroupForm {
  readonly el: HTMLFormElement;
  private readonly title: HTMLSpanElement;
  private readonly input: HTMLInputElement;
  private readonly ok: HTMLButtonElement;
  private readonly message: HTMLDivElement;
  private readonly listeners = new Listeners();
  private ids: readonly string[] = [];
  private check: (name: string) => string | null = () => null;
  private waiting = false;

  /** `confirm`: group `ids` under `name` (the app sends the edit and later calls `settle`). */
  constructor(private readonly confirm: (ids: readonly string[], name: string) => void) {
    this.title = h("span", { class: "gl-group-title" });
    this.input = h("input", {
      type: "text",
      class: "gl-input",
      "aria-label": "sequence name",
      spellcheck: "false",
      autocomplete: "off",
    });
    this.ok = h("button", { type: "submit", class: "gl-btn" }, "Group");
    const cancel = h("button", { type: "button", class: "gl-btn" }, "Cancel");
    this.message = h("div", { class: "gl-hint gl-group-error", role: "alert" });
    this.el = h(
      "form",
      { class: "gl-group-form", "aria-label": "Group into a sequence" },
      this.title,
      h("div", { class: "gl-group-row" }, this.input, this.ok, cancel),
      this.message,
    );
    this.el.hidden = true;
    this.listeners.on(this.el, "pointerdown", (e: Event) => e.stopPropagation()); // not a press on the drawing
    this.listeners.on(this.el, "submit", (e: Event) => {
      e.preventDefault();
      this.submit();
    });
    this.listeners.on(cancel, "click", () => this.close());
    this.listeners.on(this.input, "input", () => this.validate());
    this.listeners.on(this.input, "keydown", (e: KeyboardEvent) => {
      // handled here, not by the form's implicit submission, which a host's own Enter handling can block
      if (e.key === "Enter") {
        e.preventDefault();
        this.submit();
      } else if (e.key === "Escape") {
        e.preventDefault();
        e.stopPropagation(); // the editor's Escape would clear the selection being grouped
        this.close();
      }
    });
  }

  get isOpen(): boolean {
    return !this.el.hidden;
  }

  /** Ask for the name of a sequence holding `ids`; `check` says why a name will not do (null: it will). */
  open(ids: readonly string[], suggested: string, check: (name: string) => string | null): void {
    this.ids = [...ids];
    this.check = check;
    this.waiting = false;
    this.title.textContent =
      ids.length === 1
        ? `Group ${ids[0]} into a new sequence named`
        : `Group ${ids.length} nodes into a new sequence named`;
    this.input.value = suggested;
    this.input.disabled = false;
    this.el.hidden = false;
    this.validate();
    this.input.focus();
    this.input.select();
  }

  /** Python answered the group edit: close on success, else show its error and let the user fix the name. */
  settle(error: string | null): void {
    if (!this.waiting) return;
    this.waiting = false;
    this.input.disabled = false;
    if (error === null) {
      this.close();
      return;
    }
    this.showError(error);
    this.input.focus();
  }

  close(): void {
    this.el.hidden = true;
    this.waiting = false;
    this.message.textContent = "";
  }

  private validate(): boolean {
    const error = this.check(this.input.value);
    this.showError(error);
    return error === null;
  }

  private showError(error: string | null): void {
    this.message.textContent = error ?? "";
    this.input.setAttribute("aria-invalid", String(error !== null));
    this.ok.disabled = error !== null;
  }

  private submit(): void {
    if (this.waiting || !this.validate()) return;
    this.waiting = true;
    this.input.disabled = true;
    this.ok.disabled = true;
    this.confirm(this.ids, this.input.value);
  }

  dispose(): void {
    this.listeners.dispose();
    this.el.remove();
  }
}
