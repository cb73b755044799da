/**
 * The "Compare with..." form's rules, apart from the DOM so they are tested alone: the timeout
 * field (checked here, so a bad value gets its reason next to the field and nothing is sent) and
 * which values of the "against" field are archs whose process can be started ahead.
 */

/** Seconds the other arch's process may take over one command, as `DebugSession.compare` defaults. */
export const DEFAULT_TIMEOUT_S = 600;
/** The longest timeout Python accepts (`graphlab.widget.messages.MAX_COMPARE_TIMEOUT`, a day). */
export const MAX_TIMEOUT_S = 86400;

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

/** Whether `against` names an arch of the list (its process can start now), not a module folder. */
export function isArch(against: string, archs: readonly string[]): boolean {
  return archs.includes(against.trim());
}
