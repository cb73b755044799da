/**
 * The "Compare with..." form's rules, apart from the DOM so they are tested alone: the timeout and
 * tolerance fields (checked here, so a bad value gets its reason next to the field and nothing is
 * sent) and which values of the "against" field are archs whose process can be started ahead.
 */

/** Seconds the other arch's process may take over one command, as `DebugSession.compare` defaults. */
export const DEFAULT_TIMEOUT_S = 600;
/** The longest timeout Python accepts (`graphlab.widget.messages.MAX_COMPARE_TIMEOUT`, a day). */
export const MAX_TIMEOUT_S = 86400;

/** The largest rtol/atol Python accepts (`graphlab.widget.messages.MAX_TOLERANCE`). */
export const MAX_TOLERANCE = 1e6;

export type TimeoutField = { ok: true; seconds: number } | { ok: false; error: string };

/** The timeout field's text as seconds, or why it is refused (empty: the default). */
export function parseTimeout(text: string): TimeoutField {
  const trimmed = text.trim();
  if (trimmed === "") return { ok: true, seconds: DEFAULT_TIMEOUT_S };
  const seconds = Number(trimmed);
  const shown = trimmed.length > 20 ? `${trimmed.slice(0, 20)}\u2026` : trimmed;
  if (!Number.isFinite(seconds)) {
    return { ok: false, error: `timeout "${shown}" is not a number: give the seconds one step may take, such as 600` };
  }
  if (seconds <= 0) {
    return { ok: false, error: `timeout ${shown}: give a number of seconds greater than 0, such as 600` };
  }
  if (seconds > MAX_TIMEOUT_S) {
    return { ok: false, error: `timeout ${shown}: give at most ${MAX_TIMEOUT_S} seconds (a day)` };
  }
  return { ok: true, seconds };
}

export type ToleranceField = { ok: true; value: number } | { ok: false; error: string };

/**
 * The rtol or atol field's text as a number, or why it is refused (empty: 0). A typo must not turn
 * into 0, which would silently compare bit for bit.
 */
export function parseTolerance(label: "rtol" | "atol", text: string): ToleranceField {
  const trimmed = text.trim();
  if (trimmed === "") return { ok: true, value: 0 };
  const value = Number(trimmed);
  const shown = trimmed.length > 20 ? `${trimmed.slice(0, 20)}\u2026` : trimmed;
  if (!Number.isFinite(value)) {
    return { ok: false, error: `${label} "${shown}" is not a number: give one such as 1e-5, or 0 for bit for bit` };
  }
  if (value < 0 || value > MAX_TOLERANCE) {
    return { ok: false, error: `${label} ${shown}: give a number from 0 to ${MAX_TOLERANCE.toExponential()}` };
  }
  return { ok: true, value };
}

/** Whether `against` names an arch of the list (its process can start now), not a module folder. */
export function isArch(against: string, archs: readonly string[]): boolean {
  return archs.includes(against.trim());
}
