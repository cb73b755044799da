/**
 * Room for the graph: buttons that hide the palette or the side panel and maximise the widget.
 * Each toggles a class on the widget's root (the CSS does the rest), so the canvas grows and its
 * ResizeObserver fits the drawing again. Where the host can (JupyterLab with graphlab's extension), one
 * more button opens the editor in its own main-area tab: a second live view of the same widget.
 */

import { Listeners, h } from "../logic/dom";
import { TAB_HOST_READY, hostCanOpenTab, requestOwnTab } from "../wire/ownTab";

const TOGGLES = [
  {
    cls: "gl-no-palette",
    text: "\u25e7",
    on: "Show the kernel palette",
    off: "Hide the kernel palette",
    name: "palette",
  },
  { cls: "gl-no-side", text: "\u25e8", on: "Show the side panel", off: "Hide the side panel", name: "side" },
  { cls: "gl-maximised", text: "\u2922", on: "Back to the normal size", off: "Maximise the widget", name: "maximise" },
] as const;

export type LayoutToggle = (typeof TOGGLES)[number]["name"];

/** Below this widget width the palette starts hidden: the canvas would be left a narrow strip. */
export const NARROW_WIDGET = 900;
/** The least height the widget takes when it follows its drawing (as widget.css's min-height). */
export const MIN_HEIGHT = 320;

export class LayoutToggles {
  readonly el: HTMLElement;
  private readonly listeners = new Listeners();
  private readonly buttons = new Map<LayoutToggle, HTMLButtonElement>();
  /** "Open in tab": hidden until a host says it can open this widget's output in a tab. */
  readonly tabButton: HTMLButtonElement;
  /** The height `followContent` set last ("" before it did). */
  private setHeight = "";
  /** The drawing height and window height `followContent` last sized the widget for. */
  private asked = "";

  constructor(
    private readonly root: () => HTMLElement,
    private readonly graphName: () => string = () => "",
  ) {
    this.el = h("span", { class: "gl-layout-toggles" });
    for (const toggle of TOGGLES) {
      const button = this.listeners.button(toggle.text, toggle.off, () => this.toggle(toggle.name));
      button.dataset.layout = toggle.name;
      button.setAttribute("aria-pressed", "false");
      this.buttons.set(toggle.name, button);
      this.el.append(button);
    }
    this.tabButton = this.listeners.button("\u29c9", "Open in its own JupyterLab tab (a second live view)", () =>
      requestOwnTab(this.root(), this.graphName()),
    );
    this.tabButton.dataset.layout = "tab";
    this.tabButton.hidden = true;
    this.el.append(this.tabButton);
  }

  /** Show "Open in tab" only if a host answers that it can open the output holding `root`. */
  offerTab(root: HTMLElement): void {
    this.tabButton.hidden = !hostCanOpenTab(root);
  }

  /** Flip one toggle (or set it with `on`). */
  toggle(name: LayoutToggle, on?: boolean): void {
    const toggle = TOGGLES.find((t) => t.name === name);
    const button = this.buttons.get(name);
    if (!toggle || !button) return;
    const pressed = this.root().classList.toggle(toggle.cls, on);
    button.setAttribute("aria-pressed", String(pressed));
    button.title = pressed ? toggle.on : toggle.off;
  }

  /**
   * Once the widget is first laid out (attached, so a host can place it): hide the palette if the widget
   * is narrow (a click shows it), and offer "Open in tab" if the host can.
   */
  watch(root: HTMLElement): void {
    const first = new ResizeObserver(() => {
      if (root.clientWidth === 0) return;
      first.disconnect();
      if (root.clientWidth < NARROW_WIDGET) this.toggle("palette", true);
      this.offerTab(root);
    });
    first.observe(root);
    this.listeners.add(() => first.disconnect());
    // a host whose extension starts after this widget was drawn announces itself: ask again
    this.listeners.on(window, TAB_HOST_READY, () => this.offerTab(root));
  }

  /**
   * Size the widget to its drawing (shown at full size, between `MIN_HEIGHT` and 85% of the window),
   * until the user drags its corner: a height set by hand is kept.
   */
  followContent(root: HTMLElement, canvas: HTMLElement, drawingHeight: number): void {
    if (drawingHeight <= 0) return;
    if (root.style.height !== "" && root.style.height !== this.setHeight) return; // sized by hand
    // the same drawing height in the same window: nothing to do, and no forced layout on every edit
    const asked = `${drawingHeight}x${window.innerHeight}`;
    if (root.style.height !== "" && asked === this.asked) return;
    if (canvas.clientHeight === 0) return;
    this.asked = asked;
    const chrome = root.offsetHeight - canvas.clientHeight;
    const wanted = Math.min(Math.max(drawingHeight + 2 * 16 + chrome, MIN_HEIGHT), window.innerHeight * 0.85);
    this.setHeight = `${Math.round(wanted)}px`;
    root.style.height = this.setHeight;
  }

  dispose(): void {
    this.listeners.dispose();
  }
}
