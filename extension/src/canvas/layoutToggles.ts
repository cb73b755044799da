/**
 * Room for the graph. The palette and the side panel are drawers floating over the canvas (it keeps
 * the widget's whole width): each has a handle on its edge, a toolbar toggle, and Esc closes it while
 * it has focus. Each drawer toggles a class on the widget's root (the CSS slides it); what the open
 * drawers cover is reported as `Insets`, so Fit, the minimap and the selection keep to the uncovered
 * part. The widget's height follows the window, its drawing and its chrome (toolbar, timeline, error
 * banner: watched with a ResizeObserver). Where the host can (JupyterLab with graphlab's extension),
 * one more button opens the editor in its own main-area tab: a second live view of the same widget.
 */

import { Listeners, h, isTextTarget } from "../logic/dom";
import { TAB_HOST_READY, hostCanOpenTab, requestOwnTab } from "../wire/ownTab";
import type { Insets } from "./geometry";

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
export type DrawerName = "palette" | "side";

/** A drawer: its wrapper (panel and handle), which edge it floats on, and its handle. */
interface Drawer {
  el: HTMLElement;
  edge: "left" | "right";
  handle: HTMLButtonElement;
  label: string;
}

/** Below this widget width the palette starts hidden: the canvas would be left a narrow strip. */
export const NARROW_WIDGET = 900;
/** The least height the widget takes when it follows its drawing (as widget.css's min-height). */
export const MIN_HEIGHT = 320;
/** The most of the window's height the widget takes by itself (the rest is JupyterLab's chrome). */
export const MAX_SHARE = 0.85;

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
  private readonly drawers = new Map<DrawerName, Drawer>();
  /** Drawers the user closed by hand: a new selection does not open them again. */
  private readonly closedByUser = new Set<DrawerName>();
  private lastInsets = "";

  /** `roomChanged`: a drawer opened, closed or changed width (the canvas refits to the uncovered part). */
  constructor(
    private readonly root: () => HTMLElement,
    private readonly graphName: () => string = () => "",
    private readonly roomChanged: (insets: Insets) => void = () => {},
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

  /**
   * Flip one toggle (or set it with `on`: pressed hides a drawer). `byUser`: the user's own choice, kept
   * (a drawer closed by hand stays closed when the selection changes).
   */
  toggle(name: LayoutToggle, on?: boolean, byUser = true): void {
    const toggle = TOGGLES.find((t) => t.name === name);
    const button = this.buttons.get(name);
    if (!toggle || !button) return;
    const pressed = this.root().classList.toggle(toggle.cls, on);
    button.setAttribute("aria-pressed", String(pressed));
    button.title = pressed ? toggle.on : toggle.off;
    if (name === "maximise") return;
    if (byUser) {
      if (pressed) this.closedByUser.add(name);
      else this.closedByUser.delete(name);
    }
    const drawer = this.drawers.get(name);
    if (drawer) {
      drawer.handle.setAttribute("aria-expanded", String(!pressed));
      drawer.handle.title = `${pressed ? "Show" : "Hide"} the ${drawer.label}${pressed ? "" : " (Esc)"}`;
      drawer.handle.textContent = (drawer.edge === "right") === pressed ? "\u2039" : "\u203a";
    }
    this.report();
  }

  /** Whether a drawer is open. */
  isOpen(name: DrawerName): boolean {
    return !this.root().classList.contains(name === "palette" ? "gl-no-palette" : "gl-no-side");
  }

  /**
   * Open a drawer because what the user did needs it (a node selected, a tab asked for). `force`:
   * the user asked for the panel itself (Export..., Values...), which overrides closing it by hand.
   */
  open(name: DrawerName, force = false): void {
    if (this.isOpen(name) || (!force && this.closedByUser.has(name))) return;
    this.toggle(name, false, force);
  }

  /**
   * Float `panel` over the canvas on the `edge` side, with a handle on its inner edge (a button:
   * Tab reaches it, Enter opens it and moves the focus in). Esc inside the drawer, but in a field,
   * closes it and leaves the focus on the handle.
   */
  drawer(name: DrawerName, panel: HTMLElement, edge: "left" | "right", label: string): HTMLElement {
    const handle = h("button", {
      type: "button",
      class: "gl-drawer-handle",
      "data-drawer-handle": name,
      "aria-expanded": "true",
      "aria-label": `the ${label}`,
      title: `Hide the ${label} (Esc)`,
    });
    handle.textContent = edge === "right" ? "\u203a" : "\u2039";
    const el = h("div", { class: `gl-drawer gl-drawer-${edge}`, "data-drawer": name }, panel, handle);
    this.drawers.set(name, { el, edge, handle, label });
    this.listeners.on(handle, "click", (e: MouseEvent) => {
      const opening = !this.isOpen(name);
      this.toggle(name, !opening);
      // a keyboard press (no pointer: detail 0) moves the focus into the opened drawer
      if (opening && e.detail === 0) {
        panel.querySelector<HTMLElement>("input, button:not([disabled]), select, [tabindex]")?.focus();
      }
    });
    this.listeners.on(el, "keydown", (e: KeyboardEvent) => {
      const taken = e.defaultPrevented || e.target === handle || isTextTarget(e.target); // a form's own Esc first
      if (e.key !== "Escape" || taken || !this.isOpen(name)) return;
      e.preventDefault();
      e.stopPropagation();
      this.toggle(name, true);
      handle.focus();
    });
    return el;
  }

  /** What the open drawers (with their handles) cover of the canvas's left and right edges (px). */
  insets(): Insets {
    const width = (name: DrawerName): number => {
      const drawer = this.drawers.get(name);
      return drawer && this.isOpen(name) ? drawer.el.offsetWidth + drawer.handle.offsetWidth : 0;
    };
    return { left: width("palette"), right: width("side") };
  }

  /** Tell the canvas what the drawers cover, when that changed. */
  private report(): void {
    const insets = this.insets();
    const key = `${insets.left},${insets.right}`;
    if (key === this.lastInsets) return;
    this.lastInsets = key;
    const root = this.root();
    root.style.setProperty("--gl-inset-left", `${insets.left}px`);
    root.style.setProperty("--gl-inset-right", `${insets.right}px`);
    this.roomChanged(insets);
  }

  /**
   * Once the widget is first laid out (attached, so a host can place it): hide the palette if the widget
   * is narrow (a click shows it), and offer "Open in tab" if the host can.
   */
  watch(root: HTMLElement): void {
    let first = true;
    const observer = new ResizeObserver(() => {
      if (root.clientWidth === 0) return;
      if (first) {
        first = false;
        // a narrow widget starts with the palette closed (not by the user's choice): a click opens it
        if (root.clientWidth < NARROW_WIDGET) this.toggle("palette", true, false);
        this.offerTab(root);
      }
      this.report(); // a drawer's width follows the widget's
    });
    observer.observe(root);
    this.listeners.add(() => observer.disconnect());
    // a host whose extension starts after this widget was drawn announces itself: ask again
    this.listeners.on(window, TAB_HOST_READY, () => this.offerTab(root));
  }

  /**
   * Size the widget again whenever one of `chrome` (toolbar, timeline, banner) changes height, not only
   * when the window does: an error banner appearing takes its room from the widget's height budget.
   */
  watchChrome(chrome: readonly HTMLElement[], follow: () => void): void {
    const observer = new ResizeObserver(() => {
      this.asked = "";
      follow();
    });
    for (const el of chrome) observer.observe(el);
    this.listeners.add(() => observer.disconnect());
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
    const wanted = Math.min(Math.max(drawingHeight + 2 * 16 + chrome, MIN_HEIGHT), window.innerHeight * MAX_SHARE);
    this.setHeight = `${Math.round(wanted)}px`;
    root.style.height = this.setHeight;
  }

  dispose(): void {
    this.listeners.dispose();
  }
}
