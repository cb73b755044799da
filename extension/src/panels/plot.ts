/**
 * Draw the inspect panel's pictures into a `<canvas>`: heat maps, line plots of (min, max) buckets,
 * particle scatter plots, each with its legend (a colour bar with ticks, or the axis ranges) and
 * NaN/Inf marked. The pixels and coordinates come from `raster.ts`.
 */

import { cellAt, indexText, pictureCell, sourceIndex } from "../logic/arrays";
import {
  type ColorScale,
  type ScaleKind,
  NAN_RGB,
  NEG_INF_RGB,
  POS_INF_RGB,
  colorAt,
  formatG,
  scaleFor,
  ticks,
} from "../logic/colorScale";
import { h } from "../logic/dom";
import type { PictureView } from "../wire/protocol";
import { countNonfinite, heatmapPixels, lineBars, scatterPoints } from "../logic/raster";

export const PLOT_WIDTH = 300;
const PAD = 6;

export interface Drawn {
  /** The canvas and its legend. */
  el: HTMLElement;
  /** The colour scale of a heat map (null for other pictures). */
  scale: ColorScale | null;
}

/**
 * A figure for a picture's values: `mark` is a source index to ring (the first NaN/Inf the device
 * found), `kind` the colour scale of heat maps (diverging for diffs).
 */
export function drawPicture(
  view: PictureView,
  values: Float32Array | Float64Array,
  options: { kind?: ScaleKind; mark?: readonly number[] | null; name?: string } = {},
): Drawn {
  const canvas = h("canvas", {
    class: "gl-plot",
    "data-kind": view.kind,
    role: "img",
    "aria-label": `${view.kind} of ${view.label}`,
  });
  const axes =
    view.kind === "heatmap" ? ` \u00b7 rows: axis ${view.origin.length}, columns: axis ${view.origin.length + 1}` : "";
  const caption = h(
    "figcaption",
    { class: "gl-hint" },
    view.label,
    axes,
    view.note ? ` \u00b7 ${view.note}` : "",
    samplingText(view),
  );
  let legend: HTMLElement | null = null;
  let scale: ColorScale | null = null;
  const ctx = canvas.getContext("2d");
  if (view.kind === "heatmap" && view.shape.length === 2) {
    const [rows, cols] = view.shape as [number, number];
    scale = scaleFor(values, options.kind ?? "sequential");
    const fit = Math.min(PLOT_WIDTH / cols, PLOT_WIDTH / rows);
    canvas.width = Math.max(16, Math.round(cols * fit));
    canvas.height = Math.max(16, Math.round(rows * fit));
    const sx = canvas.width / cols;
    const sy = canvas.height / rows;
    if (ctx) {
      const image = new ImageData(heatmapPixels(values, rows, cols, scale), cols, rows);
      const source = document.createElement("canvas");
      source.width = cols;
      source.height = rows;
      source.getContext("2d")?.putImageData(image, 0, 0);
      ctx.imageSmoothingEnabled = false;
      ctx.drawImage(source, 0, 0, canvas.width, canvas.height);
      const cell = options.mark ? pictureCell(options.mark, view.origin, view.step) : null;
      if (cell && cell.length === 2) ring(ctx, (cell[1]! + 0.5) * sx, (cell[0]! + 0.5) * sy);
    }
    legend = colorBar(scale, values);
    const readout = h("div", { class: "gl-plot-readout", "aria-live": "polite" }, "\u00a0");
    const show = (event: MouseEvent): void => {
      const box = canvas.getBoundingClientRect();
      const at = cellAt(event.clientX - box.left, event.clientY - box.top, box.width, box.height, rows, cols);
      if (at === null) {
        readout.textContent = "\u00a0";
        return;
      }
      const index = sourceIndex(at, view.origin, view.step);
      const blocked = view.step.some((s) => s > 1) ? ` (block of ${view.step.join("\u00d7")} from there)` : "";
      readout.textContent = `${options.name ?? view.label}${indexText(index)} = ${formatG(values[at[0] * cols + at[1]]!)}${blocked}`;
      readout.dataset.index = index.join(",");
    };
    canvas.addEventListener("mousemove", show);
    canvas.addEventListener("mouseleave", () => (readout.textContent = "\u00a0"));
    legend = h("div", {}, legend, readout);
  } else if (view.kind === "line" && view.shape.length === 2) {
    const n = view.shape[0]!;
    canvas.width = PLOT_WIDTH;
    canvas.height = 140;
    const { bars, lo, hi } = lineBars(values, n, { width: canvas.width, height: canvas.height, pad: PAD });
    if (ctx) {
      ctx.fillStyle = "rgba(127,127,127,0.08)";
      ctx.fillRect(0, 0, canvas.width, canvas.height);
      ctx.strokeStyle = "#1976d2";
      ctx.lineWidth = 1;
      ctx.beginPath();
      let open = false;
      for (const bar of bars) {
        if (bar.bad) {
          open = false;
          continue;
        }
        const mid = (bar.y0 + bar.y1) / 2;
        if (open) ctx.lineTo(bar.x, mid);
        else ctx.moveTo(bar.x, mid);
        open = true;
        if (bar.y1 - bar.y0 > 1) {
          ctx.moveTo(bar.x, bar.y0);
          ctx.lineTo(bar.x, bar.y1);
          ctx.moveTo(bar.x, mid);
        }
      }
      ctx.stroke();
      ctx.fillStyle = rgb(NAN_RGB, 0.55);
      for (const bar of bars) if (bar.bad) ctx.fillRect(bar.x - 1, bar.y0, 2, bar.y1 - bar.y0);
      const cell = options.mark ? pictureCell(options.mark, view.origin, view.step) : null;
      const at = cell ? bars[cell[0]!] : undefined;
      if (at) ring(ctx, at.x, canvas.height / 2);
    }
    const bad = bars.filter((b) => b.bad).length;
    legend = h(
      "div",
      { class: "gl-plot-legend" },
      h("span", {}, `y ${formatG(lo)} \u2026 ${formatG(hi)}`),
      bad
        ? h(
            "span",
            { class: "gl-chip" },
            h("i", { style: `background:${rgb(NAN_RGB)}` }),
            `${bad} bucket(s) with NaN/Inf`,
          )
        : null,
    );
  } else if (view.kind === "scatter" && view.shape.length === 2) {
    const n = view.shape[0]!;
    canvas.width = PLOT_WIDTH;
    canvas.height = PLOT_WIDTH;
    const pts = scatterPoints(values, n, { width: canvas.width, height: canvas.height, pad: PAD });
    if (ctx) {
      ctx.fillStyle = "rgba(127,127,127,0.08)";
      ctx.fillRect(0, 0, canvas.width, canvas.height);
      ctx.fillStyle = "#1976d2";
      for (let i = 0; i < pts.count; i++) ctx.fillRect(pts.xs[i]! - 0.75, pts.ys[i]! - 0.75, 1.5, 1.5);
    }
    const { x0, x1, y0, y1 } = pts.extent;
    legend = h(
      "div",
      { class: "gl-plot-legend" },
      h("span", {}, `x ${formatG(x0)} \u2026 ${formatG(x1)}, y ${formatG(y0)} \u2026 ${formatG(y1)}`),
      pts.skipped
        ? h(
            "span",
            { class: "gl-chip" },
            h("i", { style: `background:${rgb(NAN_RGB)}` }),
            `${pts.skipped} point(s) with NaN/Inf not drawn`,
          )
        : null,
    );
  } else {
    return { el: h("p", { class: "gl-hint" }, "No picture for this layout; see the values below."), scale: null };
  }
  return { el: h("figure", { class: "gl-figure" }, canvas, legend, caption), scale };
}

function samplingText(view: PictureView): string {
  const step = view.step.filter((s) => s > 1);
  if (step.length === 0) return "";
  return ` \u00b7 downsampled \u00d7${view.step.join("\u00d7")}`;
}

/** A colour bar with round ticks, and chips for the NaN/Inf colours that occur. */
export function colorBar(scale: ColorScale, values: ArrayLike<number>): HTMLElement {
  const bar = h("canvas", { class: "gl-colorbar", width: 200, height: 10, "aria-hidden": "true" });
  const ctx = bar.getContext("2d");
  if (ctx) {
    for (let x = 0; x < 200; x++) {
      ctx.fillStyle = rgb(colorAt(scale.kind, x / 199));
      ctx.fillRect(x, 0, 1, 10);
    }
  }
  const span = scale.hi - scale.lo;
  const marks = ticks(scale.lo, scale.hi, 4).map((t) =>
    h("span", { class: "gl-tick", style: `left: ${(100 * (t - scale.lo)) / (span || 1)}%` }, formatG(t, 3)),
  );
  const bad = countNonfinite(values);
  const chips = [
    bad.nan ? chip(NAN_RGB, `NaN ${bad.nan}`) : null,
    bad.posInf ? chip(POS_INF_RGB, `+Inf ${bad.posInf}`) : null,
    bad.negInf ? chip(NEG_INF_RGB, `\u2212Inf ${bad.negInf}`) : null,
  ];
  return h(
    "div",
    { class: "gl-plot-legend", "data-lo": String(scale.lo), "data-hi": String(scale.hi) },
    h("div", { class: "gl-colorbar-wrap" }, bar, h("div", { class: "gl-ticks" }, marks)),
    h("div", { class: "gl-chips" }, chips),
  );
}

function chip(color: readonly [number, number, number], text: string): HTMLElement {
  return h("span", { class: "gl-chip" }, h("i", { style: `background:${rgb(color)}` }), text);
}

function ring(ctx: CanvasRenderingContext2D, x: number, y: number): void {
  ctx.strokeStyle = rgb(NAN_RGB);
  ctx.lineWidth = 2;
  ctx.beginPath();
  ctx.arc(x, y, 7, 0, 2 * Math.PI);
  ctx.stroke();
}

function rgb(c: readonly [number, number, number], alpha = 1): string {
  return alpha === 1 ? `rgb(${c[0]},${c[1]},${c[2]})` : `rgba(${c[0]},${c[1]},${c[2]},${alpha})`;
}
