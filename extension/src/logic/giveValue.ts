/**
 * The `graphlab:give-value` event: how any part of the widget (the canvas's context menu on an arg, the
 * Export panel's refusal) asks the Values tab to open at the arg or dim a run lacks, without importing the
 * app. The app listens on its root and opens the tab where {@link giveValueTarget} says.
 */

/** The event's name; it bubbles up to the widget's root. */
export const GIVE_VALUE_EVENT = "graphlab:give-value";

/** Where the Values tab opens: at an arg's row, at a dim's row in the Dims list, or at its top (null). */
export type ValuesTarget = { arg: string } | { dim: string } | null;

/**
 * The row a give-value event asks for, from its detail as any component may send it: `{arg}` or `{dim}`
 * with a name (an arg first, if both); anything else opens the tab at its top rather than failing.
 */
export function giveValueTarget(detail: unknown): ValuesTarget {
  if (typeof detail !== "object" || detail === null) return null;
  const { arg, dim } = detail as { arg?: unknown; dim?: unknown };
  if (typeof arg === "string" && arg !== "") return { arg };
  if (typeof dim === "string" && dim !== "") return { dim };
  return null;
}

/** Ask the Values tab, from inside the widget, to open at `target`. */
export function requestValue(from: EventTarget, target: ValuesTarget): void {
  from.dispatchEvent(new CustomEvent(GIVE_VALUE_EVENT, { bubbles: true, detail: target ?? {} }));
}
