/**
 * A few DOM helpers: element creation and listeners that are removed on dispose.
 */

type Attr = string | number | boolean | null | undefined;
type Child = Node | string | null | undefined | false;

/** Create an element: `h("button", { class: "gl-btn", title: "Undo" }, "Undo")`. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, Attr> = {},
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    el.setAttribute(name, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

export function append(el: Element, children: (Child | Child[])[]): void {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
}

/** Replace every child of `el`. */
export function replaceChildren(el: Element, ...children: (Child | Child[])[]): void {
  el.replaceChildren();
  append(el, children);
}

/** Listeners registered through one `Listeners` are all removed by its `dispose`. */
export class Listeners {
  private removers: (() => void)[] = [];

  on<K extends keyof HTMLElementEventMap>(
    target: HTMLElement,
    type: K,
    handler: (event: HTMLElementEventMap[K]) => void,
    options?: AddEventListenerOptions,
  ): void;
  on(target: EventTarget, type: string, handler: (event: Event) => void, options?: AddEventListenerOptions): void;
  on(target: EventTarget, type: string, handler: (event: never) => void, options?: AddEventListenerOptions): void {
    const listener = handler as unknown as EventListener;
    target.addEventListener(type, listener, options);
    this.removers.push(() => target.removeEventListener(type, listener, options));
  }

  /** A toolbar button whose click handler these listeners own. */
  button(text: string, title: string, onClick: () => void, disabled = false): HTMLButtonElement {
    const button = h("button", { type: "button", class: "gl-btn", title, disabled }, text);
    this.on(button, "click", onClick);
    return button;
  }

  /** Run `fn` on dispose (a ResizeObserver's disconnect, a model listener's removal). */
  add(fn: () => void): void {
    this.removers.push(fn);
  }

  dispose(): void {
    for (const remove of this.removers.splice(0).reverse()) remove();
  }
}

/** Whether keyboard focus is in a text field, where keys belong to the field. */
export function isTextTarget(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable) return true;
  const tag = target.tagName;
  if (tag === "TEXTAREA" || tag === "SELECT") return true;
  if (tag !== "INPUT") return false;
  const type = (target as HTMLInputElement).type;
  return !["button", "checkbox", "radio", "submit", "reset"].includes(type);
}

/** The message of a failure, whatever was thrown. */
export function errorText(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
