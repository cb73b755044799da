/**
 * The export tab: target, folder and options; the export's progress as `gl.export` reports it; then
 * the files written and `gl.verify`'s verdict. The form is front-end state; the `export` trait says
 * what Python is doing.
 */

import { formatNum } from "../logic/colorScale";
import { Listeners, h, replaceChildren } from "../logic/dom";
import type { ExportArch, ExportView, Verdict, VerifyView } from "../wire/protocol";
import type { Section } from "./section";
import { missingValueIn } from "./valuesPanel";
import { requestValue } from "../logic/giveValue";
import type { Actions, ViewState } from "../logic/state";

/** `n=256, G=128` -> `{n: 256, G: 128}`; a reason when the text does not parse. */
export function parseDims(text: string): { ok: true; dims: Record<string, number> } | { ok: false; reason: string } {
  const dims: Record<string, number> = {};
  for (const part of text.split(/[,;\s]+/).filter((p) => p !== "")) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=([0-9]+)$/.exec(part);
    if (!m || Number(m[2]) <= 0) {
      return { ok: false, reason: `dims: write name=size pairs such as n=256, G=128 (not ${JSON.stringify(part)})` };
    }
    dims[m[1]!] = Number(m[2]);
  }
  return { ok: true, dims };
}

/** The banner over the verification table: what a person needs to know, in a line. */
export function verdictBanner(verify: VerifyView): { text: string; pass: boolean } {
  const text: Record<Verdict, string> = {
    identical: "Verified: bit-identical",
    "within run-to-run noise":
      "Verified: within run-to-run noise (no larger than Python's own difference between two runs)",
    "depends on ti.random":
      "Not comparable: outputs depend on ti.random draws, which differ between the two runs (use graphlab.random)",
    "within rtol": "Verified within rtol: nothing in the graph explains the difference, but it is within the tolerance",
    differs: "Verification FAILED: the module differs from Python beyond run-to-run noise",
  };
  return { text: text[verify.verdict], pass: verify.verdict !== "differs" };
}

/** The progress bar's state: a failed export and an unverified module do not look like a finished one. */
export type BarState = "running" | "done" | "unverified" | "failed";

/**
 * What the export came to, in a line, and the bar's state. A module whose verification could not
 * run was still written, so it is told apart from an export that failed (which wrote nothing).
 */
export function exportOutcome(view: ExportView): { bar: BarState; text: string } {
  const took = `in ${view.seconds.toFixed(1)} s`;
  const percent = Math.round(100 * view.fraction);
  if (view.state === "running") return { bar: "running", text: `${view.stage}\u2026 ${percent}%` };
  if (view.state === "failed") return { bar: "failed", text: `export failed ${took}; nothing was written` };
  if (view.verify_error) return { bar: "unverified", text: `exported ${took}; verification could not run` };
  return { bar: "done", text: `done ${took}` };
}

/** The file list's heading: the count Python made (the same one its summary gives), not the list's length. */
export function filesSummary(view: ExportView): string {
  const shown = view.files.length < view.file_count ? ` (the first ${view.files.length} listed)` : "";
  return `${view.file_count} files written${shown}`;
}

/** A table cell's text: a number, or a dash where nothing was measured. */
export function noiseCell(noise: number | null): string {
  return noise === null ? "\u2013" : formatNum(noise, 3);
}

export class ExportSection implements Section {
  readonly el = h("section", { class: "gl-section gl-export", "data-panel": "export" });
  private readonly form: HTMLElement;
  private readonly status = h("div", { class: "gl-export-status", "aria-live": "polite" });
  private readonly listeners = new Listeners();
  private readonly arch: HTMLSelectElement;
  private readonly path: HTMLInputElement;
  private readonly overwrite: HTMLInputElement;
  private readonly verify: HTMLInputElement;
  private readonly threads: HTMLInputElement;
  private readonly dims: HTMLInputElement;
  private readonly go: HTMLButtonElement;
  private readonly message = h("div", { class: "gl-hint" });
  private filled = false;
  private key = "";
  private lastError = "";

  constructor(private readonly actions: Actions) {
    this.arch = h("select", { class: "gl-select", "aria-label": "target" });
    this.path = h("input", { type: "text", class: "gl-input", "aria-label": "output folder" });
    this.overwrite = h("input", { type: "checkbox", "aria-label": "overwrite" });
    this.verify = h("input", { type: "checkbox", checked: true, "aria-label": "verify" });
    this.threads = h("input", {
      type: "number",
      min: 1,
      step: 1,
      class: "gl-input",
      placeholder: "all cores",
      "aria-label": "CPU threads",
    });
    this.dims = h("input", {
      type: "text",
      class: "gl-input",
      placeholder: "from the values; or n=256, G=128",
      "aria-label": "dims",
    });
    this.go = h("button", { type: "button", class: "gl-btn gl-primary", "data-export": "run" }, "Export");
    this.listeners.on(this.go, "click", () => this.submit());
    this.listeners.on(this.path, "keydown", (e: KeyboardEvent) => {
      if (e.key === "Enter") this.submit();
    });
    this.form = h(
      "div",
      { class: "gl-export-form" },
      h("label", { class: "gl-field" }, h("span", {}, "target"), this.arch),
      h("label", { class: "gl-field" }, h("span", {}, "folder"), this.path),
      h("label", { class: "gl-field" }, h("span", {}, "dims"), this.dims),
      h("label", { class: "gl-field" }, h("span", {}, "CPU threads"), this.threads),
      h("label", { class: "gl-check" }, this.overwrite, " overwrite the folder"),
      h("label", { class: "gl-check" }, this.verify, " verify (run the C host and Python on the same inputs)"),
      this.message,
      h("div", { class: "gl-actions" }, this.go),
    );
    this.el.append(h("h3", {}, "Export an AOT module"), this.form, this.status);
    // a refusal for want of a dim's size or a value has a button that opens the Values tab there
    this.listeners.on(this.status, "click", (e: MouseEvent) => {
      const button = (e.target as Element | null)?.closest("[data-open=give-value]");
      if (button) requestValue(button, missingValueIn(this.lastError));
    });
  }

  update(state: ViewState): void {
    const view = state.traits.export;
    if (!this.filled && view.targets.length > 0) {
      this.filled = true;
      replaceChildren(
        this.arch,
        view.targets.map((t) => h("option", { value: t, selected: t === view.default_arch }, t)),
      );
      this.path.value = view.default_path;
    }
    this.go.disabled = view.state === "running" || state.busy.has("export");
    this.threads.disabled = this.arch.value !== "x64";
    const key = JSON.stringify(view);
    if (key === this.key) return;
    this.key = key;
    this.lastError = view.error ?? "";
    replaceChildren(this.status, renderStatus(view));
    this.status.dataset.state = view.state;
  }

  private submit(): void {
    const dims = parseDims(this.dims.value);
    if (!dims.ok) {
      this.message.textContent = dims.reason;
      return;
    }
    const path = this.path.value.trim();
    if (path === "") {
      this.message.textContent = "give an output folder";
      return;
    }
    const threads = this.threads.value.trim() === "" ? null : Number(this.threads.value);
    if (threads !== null && (!Number.isInteger(threads) || threads < 1)) {
      this.message.textContent = "CPU threads: a positive whole number, or empty for every core";
      return;
    }
    this.message.textContent = "";
    this.actions.exportGraph({
      arch: this.arch.value as ExportArch,
      path,
      overwrite: this.overwrite.checked,
      verify: this.verify.checked,
      cpu_threads: this.arch.value === "x64" ? threads : null,
      dims: dims.dims,
    });
  }

  /** Put the caret in the folder field (the toolbar's Export button). */
  focus(): void {
    this.path.focus();
  }

  dispose(): void {
    this.listeners.dispose();
    this.el.remove();
  }
}

function renderStatus(view: ExportView): (HTMLElement | null)[] {
  if (view.state === "idle") return [];
  const outcome = exportOutcome(view);
  const progress = h("progress", {
    class: `gl-progress gl-progress-${outcome.bar}`,
    "data-state": outcome.bar,
    max: 1,
    value: view.fraction,
  });
  const stage = h("div", { class: "gl-hint" }, outcome.text);
  const out: (HTMLElement | null)[] = [
    h("h4", {}, `Export ${view.run}: ${view.arch} \u2192 `, h("code", {}, view.path ?? "")),
    progress,
    stage,
  ];
  if (view.error) {
    const give = missingValueIn(view.error);
    const button = give
      ? h(
          "button",
          { type: "button", class: "gl-btn gl-give-value", "data-open": "give-value" },
          "arg" in give ? `Give ${give.arg} a value\u2026` : `Give dim ${give.dim} a size\u2026`,
        )
      : null;
    out.push(h("div", { class: "gl-diag gl-diag-error", role: "alert" }, view.error, button));
  }
  if (view.verify_error) {
    out.push(
      h("div", { class: "gl-diag gl-diag-warning", role: "status", "data-verify": "could not run" }, view.verify_error),
    );
  }
  if (view.result) out.push(h("div", { class: "gl-hint" }, view.result));
  if (view.files.length > 0) {
    out.push(
      h(
        "details",
        { class: "gl-files" },
        h("summary", {}, filesSummary(view)),
        h(
          "ul",
          {},
          view.files.map((f) => h("li", {}, h("code", {}, f))),
        ),
      ),
    );
  }
  const verify = view.verify;
  if (verify) {
    const banner = verdictBanner(verify);
    out.push(
      h(
        "div",
        {
          class: banner.pass ? "gl-verdict gl-pass" : "gl-verdict gl-fail",
          "data-verdict": banner.pass ? "passed" : "failed",
          "data-result": verify.verdict,
        },
        banner.text,
      ),
      h(
        "table",
        { class: "gl-table" },
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            ["output", "max abs", "max rel", "py vs py", "differ", "verdict"].map((c) => h("th", {}, c)),
          ),
        ),
        h(
          "tbody",
          {},
          verify.outputs.map((o) =>
            h(
              "tr",
              {},
              h("td", {}, h("code", {}, o.name)),
              h("td", { class: "gl-num" }, formatNum(o.max_abs, 3)),
              h("td", { class: "gl-num" }, formatNum(o.max_rel, 3)),
              h(
                "td",
                { class: "gl-num", title: "Python against a second run of itself (max abs)" },
                noiseCell(o.noise),
              ),
              h("td", { class: "gl-num" }, String(o.mismatched)),
              h("td", { class: o.passed ? "gl-ok" : "gl-bad" }, o.verdict),
            ),
          ),
        ),
      ),
      verify.notes.length > 0
        ? h(
            "ul",
            { class: "gl-hint" },
            verify.notes.map((n) => h("li", {}, n)),
          )
        : null,
    );
  }
  return out;
}
