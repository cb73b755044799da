/**
 * The Debug start's "check bounds first" option and what the panel says of it, apart from the DOM so
 * its rules are tested alone.
 *
 * With the option on, the start message carries `bounds: "check"`: Python runs the graph once in a
 * child process under Taichi's bounds checks before the session opens (seconds), and opens none when a
 * dispatch indexes an ndarray out of bounds. The `debugger` trait's `bounds` says how the last checked
 * start went; while a checked start is out, the panel says so even before that trait arrives.
 */

import { formatSeconds } from "../logic/colorScale";
import { type Listeners, h } from "../logic/dom";
import type { Bounds, DebugView } from "../wire/protocol";

/** Shown while the checked run goes on. */
export const CHECKING = "Checking bounds\u2026 (runs once in a child process)";

/** The option's tooltip. */
export const CHECK_BOUNDS_TITLE =
  "Before the session starts, run the graph once in a child process under Taichi's bounds checks; " +
  'an index out of bounds is reported and no session starts (bounds="check")';

/** The start message's `bounds` for the option's state. */
export function boundsOption(check: boolean): Bounds {
  return check ? "check" : "trust";
}

/** What the panel says of the bounds check: checking, the failure, a pass, or nothing (unchecked). */
export interface BoundsStatus {
  kind: "checking" | "failed" | "passed";
  text: string;
}

/**
 * The status to show: `starting` is a start request out with the option on (its reply not in yet).
 * A failure is shown only while no session runs (a session started since has its own stop to show).
 */
export function boundsStatus(debug: DebugView, starting: boolean): BoundsStatus | null {
  const check = debug.bounds;
  if (starting || check.state === "checking") return { kind: "checking", text: CHECKING };
  if (check.state === "failed" && !debug.active) {
    return {
      kind: "failed",
      text: `Bounds check failed; no session started: ${check.error ?? "the checked run failed"}`,
    };
  }
  if (check.state === "passed" && debug.active) {
    return {
      kind: "passed",
      text: `Bounds checked before the start: no index out of bounds (${formatSeconds(check.seconds)}).`,
    };
  }
  return null;
}

/** The status as an element of the debug panel (null: nothing to say). */
export function boundsStatusElement(status: BoundsStatus | null): HTMLElement | null {
  if (status === null) return null;
  if (status.kind === "failed") {
    return h("div", { class: "gl-fault-box gl-bounds-error", role: "alert" }, status.text);
  }
  const cls = status.kind === "checking" ? "gl-debug-starting gl-bounds-checking" : "gl-hint gl-bounds-passed";
  return h("p", { class: cls, role: "status" }, status.text);
}

/** The "check bounds first" checkbox, with its label; `onChange` gets the new state. */
export function checkBoundsToggle(
  listeners: Listeners,
  onChange: (check: boolean) => void,
): { label: HTMLLabelElement; input: HTMLInputElement } {
  const input = h("input", { type: "checkbox", class: "gl-check-bounds-input", "aria-label": "check bounds first" });
  listeners.on(input, "change", () => onChange(input.checked));
  const label = h("label", { class: "gl-check-bounds", title: CHECK_BOUNDS_TITLE }, input, " check bounds first");
  return { label, input };
}
