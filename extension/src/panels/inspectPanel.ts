/**
 * The inspect tab: one buffer of the debug session at its current position. Statistics come from
 * the device (the `inspect` trait); the picture, the diff since the previous position and a page
 * of values come as bytes (`inspect_picture`, `inspect_diff`, `inspect_page`) and are drawn here.
 */

import { clampPage, decodeFloats, indexText, pageOf, ravel, unravel } from "../logic/arrays";
import { formatNum } from "../logic/colorScale";
import { Listeners, h, replaceChildren } from "../logic/dom";
import { errorText } from "../logic/dom";
import { spinner } from "./debugPanel";
import { drawPicture } from "./plot";
import type { InspectView, PageView, StatsView } from "../wire/protocol";
import type { Section } from "./section";
import type { Actions, ViewState } from "../logic/state";

const STATS: (keyof StatsView)[] = ["min", "max", "mean", "std", "nan", "inf", "zeros"];

export class InspectSection implements Section {
  readonly el = h("section", { class: "gl-section gl-inspect", "data-panel": "inspect" });
  private listeners = new Listeners();
  private seen: unknown[] = [];

  constructor(private readonly actions: Actions) {}

  update(state: ViewState): void {
    const t = state.traits;
    const seen = [
      t.inspect,
      t.inspect_picture,
      t.inspect_diff,
      t.inspect_page,
      t.debugger.active,
      t.debugger.buffers,
      t.debugger.compare.divergence,
      state.busy.has("inspect"),
    ];
    if (seen.length === this.seen.length && seen.every((v, i) => v === this.seen[i])) return;
    this.seen = seen;
    this.listeners.dispose();
    this.listeners = new Listeners();
    const view = t.inspect;
    if (!t.debugger.active || view.session !== t.debugger.session) {
      replaceChildren(
        this.el,
        h("h3", {}, "Inspect"),
        h("p", { class: "gl-hint" }, "Start a debug session to look into its buffers."),
      );
      return;
    }
    if (view.buffer === null || view.stats === undefined) {
      replaceChildren(
        this.el,
        h("h3", {}, "Inspect"),
        this.chooser(state, view),
        h("p", { class: "gl-hint" }, view.problem ?? "Choose a buffer."),
      );
      return;
    }
    // a large buffer takes seconds to read: the old figures stay, greyed, under a spinner until the new ones come
    const busy = state.busy.has("inspect");
    this.el.classList.toggle("gl-stale", busy);
    const parts: (HTMLElement | null)[] = [
      h(
        "h3",
        {},
        "Inspect",
        busy ? h("span", { class: "gl-inspect-busy", role: "status" }, " ", spinner(), "reading\u2026") : null,
      ),
      this.chooser(state, view),
      this.where(view),
      this.compared(state, view),
      this.statsTable(view),
    ];
    parts.push(this.slices(view), this.picture(state, view));
    parts.push(this.diff(state, view));
    parts.push(this.values(state, view));
    replaceChildren(this.el, parts);
    this.el.dataset.buffer = view.buffer;
    this.el.dataset.position = String(view.position ?? "");
  }

  private chooser(state: ViewState, view: InspectView): HTMLElement {
    const buffers = state.traits.debugger.buffers;
    const buffer = h(
      "select",
      { class: "gl-select", "aria-label": "buffer" },
      buffers.map((b) => h("option", { value: b, selected: b === view.buffer }, b)),
    );
    const components = view.components ?? [];
    const component = h(
      "select",
      { class: "gl-select", "aria-label": "component", hidden: components.length === 0 },
      h("option", { value: "", selected: view.component === null }, "|norm|"),
      components.map((label, i) => h("option", { value: String(i), selected: view.component === i }, label)),
    );
    this.listeners.on(buffer, "change", () => this.actions.inspect(buffer.value, null, 0));
    this.listeners.on(component, "change", () => {
      if (view.buffer) {
        this.actions.inspect(
          view.buffer,
          component.value === "" ? null : Number(component.value),
          view.page?.page ?? 0,
          sliceOf(view),
        );
      }
    });
    return h("div", { class: "gl-field" }, h("span", {}, "buffer"), buffer, component);
  }

  private where(view: InspectView): HTMLElement {
    const shape = `${view.dtype}[${(view.shape ?? []).join(", ")}]${view.element_shape?.length ? ` of [${view.element_shape.join(", ")}]` : ""}`;
    const writer = view.last_writer ? `last written by ${view.last_writer}` : "not written since the start";
    return h("div", { class: "gl-hint" }, h("code", {}, shape), ` at step ${view.position} \u00b7 ${writer}`);
  }

  /** Both sides of the last "Compare with..." when it diverged in this buffer: their values where they first differ, and the difference drawn. */
  private compared(state: ViewState, view: InspectView): HTMLElement | null {
    const found = state.traits.debugger.compare.divergence;
    if (found === null || found.buffer !== view.buffer || found.values === null) return null;
    const [mine, theirs] = found.archs;
    const at = found.first_index && found.first_index.length > 0 ? `[${found.first_index.join(", ")}]` : "";
    const side = (arch: string | undefined, value: number | string | boolean | null | undefined): HTMLElement =>
      h(
        "tr",
        { "data-arch": arch ?? "" },
        h("th", {}, arch ?? ""),
        h("td", { class: "gl-num" }, typeof value === "number" ? String(value) : formatNum(value)), // every digit: they may differ in the last bit
      );
    return h(
      "div",
      { class: "gl-compare-sides", "data-buffer": found.buffer },
      h("h4", {}, `${mine} vs ${theirs} after ${found.step_id ?? "the run"}`),
      h(
        "table",
        { class: "gl-table" },
        h(
          "tbody",
          {},
          h("tr", {}, h("th", {}, "at"), h("td", { class: "gl-num" }, h("code", {}, `${found.buffer}${at}`))),
          side(mine, found.values[0]),
          side(theirs, found.values[1]),
          h("tr", {}, h("th", {}, "differ"), h("td", { class: "gl-num" }, `${found.count} of ${found.size}`)),
          h("tr", {}, h("th", {}, "max abs"), h("td", { class: "gl-num" }, formatNum(found.max_abs))),
          h("tr", {}, h("th", {}, "max rel"), h("td", { class: "gl-num" }, formatNum(found.max_rel))),
        ),
      ),
      found.picture
        ? h("img", {
            class: "gl-compare-picture",
            src: found.picture,
            alt: `|${mine} - ${theirs}| of ${found.buffer}`,
          })
        : null,
    );
  }

  /** Statistics as rows (min, max, ...) by columns (the whole buffer, then each component). */
  private statsTable(view: InspectView): HTMLElement {
    const columns = [view.stats!, ...(view.component_stats ?? [])];
    return h(
      "table",
      { class: "gl-table gl-stats", "data-buffer": view.buffer ?? "" },
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          h("th", {}, ""),
          columns.map((c) => h("th", { class: "gl-num" }, c.label)),
        ),
      ),
      h(
        "tbody",
        {},
        STATS.map((s) =>
          h(
            "tr",
            { "data-row": s },
            h("th", {}, s),
            columns.map((c) => {
              const value = c[s] as number | string | null;
              const bad = (s === "nan" || s === "inf") && typeof value === "number" && value > 0;
              return h(
                "td",
                {
                  class: bad ? "gl-num gl-bad" : "gl-num",
                  "data-stat": s,
                  "data-of": c.label,
                  "data-value": String(value),
                },
                formatNum(value),
              );
            }),
          ),
        ),
      ),
    );
  }

  private picture(state: ViewState, view: InspectView): HTMLElement | null {
    const pic = view.picture;
    if (!pic || pic.kind === "none") return null;
    try {
      const values = decodeFloats(state.traits.inspect_picture, pic.dtype, pic.shape);
      const figure = drawPicture(pic, values, {
        mark: view.stats?.first_nonfinite ?? null,
        name: view.buffer ?? "",
      }).el;
      return figure;
    } catch (err) {
      return h("p", { class: "gl-diag gl-diag-error" }, `cannot draw the picture: ${errorText(err)}`);
    }
  }

  /** One slider per leading axis of a 3-D or higher buffer: the heat map's slice (Python sends its picture). */
  private slices(view: InspectView): HTMLElement | null {
    const origin = view.picture?.origin ?? [];
    const shape = view.shape ?? [];
    if (origin.length === 0 || !view.buffer) return null;
    const buffer = view.buffer;
    const current = [...origin];
    const sliders = origin.map((at, axis) => {
      const size = shape[axis] ?? 1;
      const label = h("span", { class: "gl-slice-label" }, `axis ${axis}: ${at} of 0\u2026${size - 1}`);
      const input = h("input", {
        type: "range",
        min: 0,
        max: size - 1,
        step: 1,
        value: at,
        "aria-label": `slice of axis ${axis}`,
        "data-slice-axis": axis,
      });
      this.listeners.on(input, "input", () => {
        label.textContent = `axis ${axis}: ${input.value} of 0\u2026${size - 1}`;
      });
      this.listeners.on(input, "change", () => {
        current[axis] = Number(input.value);
        this.actions.inspect(buffer, view.component ?? null, view.page?.page ?? 0, [...current]);
      });
      return h("label", { class: "gl-slice" }, input, " ", label);
    });
    return h("div", { class: "gl-slices", "data-slices": origin.join(",") }, sliders);
  }

  private diff(state: ViewState, view: InspectView): HTMLElement {
    const d = view.diff;
    if (!d) {
      return h(
        "div",
        { class: "gl-diff" },
        h("h4", {}, "Diff"),
        h("p", { class: "gl-hint" }, "Step, and what changed since the previous position shows here."),
      );
    }
    const head = `step ${d.from} \u2192 ${d.to}: ${d.changed} of ${d.count} values changed`;
    const detail = `max |\u0394| ${formatNum(d.max_abs)}, max rel ${formatNum(d.max_rel, 3)}${d.nonfinite_mismatch ? `, ${d.nonfinite_mismatch} NaN/Inf appeared or went` : ""}${d.first_changed ? `, first at ${indexText(d.first_changed)}` : ""}`;
    let picture: HTMLElement | null = null;
    if (d.changed > 0 && d.picture.kind !== "none") {
      try {
        picture = drawPicture(d.picture, decodeFloats(state.traits.inspect_diff, d.picture.dtype, d.picture.shape), {
          kind: "diverging",
        }).el;
      } catch (err) {
        picture = h("p", { class: "gl-diag gl-diag-error" }, `cannot draw the diff: ${errorText(err)}`);
      }
    }
    return h(
      "div",
      { class: "gl-diff", "data-changed": String(d.changed) },
      h("h4", {}, "Diff"),
      h("div", {}, head),
      h("div", { class: "gl-hint" }, detail),
      picture,
    );
  }

  private values(state: ViewState, view: InspectView): HTMLElement | null {
    const page = view.page;
    if (!page || !view.buffer) return null;
    const buffer = view.buffer;
    let values: Float64Array | Float32Array;
    try {
      values = decodeFloats(state.traits.inspect_page, "f64", page.count > 0 ? [page.count, page.columns.length] : []);
    } catch (err) {
      return h("p", { class: "gl-diag gl-diag-error" }, `cannot read the values: ${errorText(err)}`);
    }
    const shape = view.shape ?? [];
    const go = (p: number): void =>
      this.actions.inspect(buffer, view.component ?? null, clampPage(p, page.pages), sliceOf(view));
    const prev = this.listeners.button("\u2039", "Previous page", () => go(page.page - 1), page.page <= 0);
    const next = this.listeners.button("\u203a", "Next page", () => go(page.page + 1), page.page >= page.pages - 1);
    const first = view.stats?.first_nonfinite;
    const jump = first
      ? this.listeners.button(
          "first NaN/Inf",
          `Go to ${indexText(first)}`,
          () => go(pageOf(ravel(first, shape), page.size)),
          false,
        )
      : null;
    const rows: HTMLElement[] = [];
    for (let r = 0; r < page.count; r++) {
      const index = unravel(page.offset + r, shape);
      const cells = page.columns.map((_, c) => {
        const v = values[r * page.columns.length + c]!;
        return h("td", { class: Number.isFinite(v) ? "gl-num" : "gl-num gl-bad" }, formatNum(v));
      });
      rows.push(h("tr", {}, h("th", {}, indexText(index)), cells));
    }
    return h(
      "div",
      { class: "gl-values" },
      h("h4", {}, "Values"),
      h("div", { class: "gl-pager" }, prev, h("span", { class: "gl-page-label" }, pageLabel(page)), next, jump),
      h(
        "table",
        { class: "gl-table gl-value-table" },
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            h("th", {}, "index"),
            page.columns.map((c) => h("th", {}, c)),
          ),
        ),
        h("tbody", {}, rows),
      ),
    );
  }

  dispose(): void {
    this.listeners.dispose();
    this.el.remove();
  }
}

/** The slice the heat map shows (kept when the page or component changes), or null for a field of 2 dims or fewer. */
function sliceOf(view: InspectView): number[] | null {
  const origin = view.picture?.origin ?? [];
  return origin.length > 0 ? [...origin] : null;
}

function pageLabel(page: PageView): string {
  if (page.count === 0) return "no values";
  return `${page.offset}\u2013${page.offset + page.count - 1} of ${page.total} (page ${page.page + 1}/${page.pages})`;
}
