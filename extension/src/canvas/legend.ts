/**
 * The drawing's legend: what the edge colours and arrows mean (edges carry no text, which cluttered
 * the drawing; the kernel parameter is in each edge's tooltip), what the node marks mean, and how to
 * read a buffer's short label (its full declaration is in the node's tooltip).
 */

import { h } from "../logic/dom";

const EDGES: readonly (readonly [string, string])[] = [
  ["gl-legend-read", "reads (buffer \u2192 dispatch)"],
  ["gl-legend-write", "writes (dispatch \u2192 buffer)"],
  ["gl-legend-rw", "reads and writes"],
];

const MARKS: readonly (readonly [string, string])[] = [
  ["gl-legend-number", "1. 2. 3.: program order"],
  ["gl-legend-current", "runs next (debugging)"],
  ["gl-legend-bp", "breakpoint"],
  ["gl-legend-nonfinite", "first wrote NaN/Inf"],
  ["gl-legend-diag", "has diagnostics (badge: how many)"],
];

const LABELS =
  "x  f32[n,2]: buffer x, its dtype and dims (an element's own dims last); " +
  "hover a node for its full declaration or its bindings, an edge for its parameter.";

/** A collapsed `<details>` in the canvas's corner. */
export function legend(): HTMLElement {
  const item = ([cls, text]: readonly [string, string]): HTMLElement =>
    h("li", {}, h("span", { class: `gl-legend-swatch ${cls}`, "aria-hidden": "true" }), text);
  return h(
    "details",
    { class: "gl-legend" },
    h("summary", {}, "Legend"),
    h("ul", { "aria-label": "edges" }, EDGES.map(item)),
    h("ul", { "aria-label": "node marks" }, MARKS.map(item)),
    h("p", { class: "gl-legend-labels" }, LABELS),
  );
}
