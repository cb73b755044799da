/**
 * Keyboard shortcuts of the editor, as a pure map from a key event to an action.
 *
 * Keys are handled only while focus is inside the widget; in a text field only Escape is taken
 * (the field keeps its own Ctrl+Z). The root carries `data-lm-suppress-shortcuts` so JupyterLab's
 * notebook shortcuts (`D D`, `Z`, arrows) do not fire while the widget has focus.
 */

export type Action =
  | "undo"
  | "redo"
  | "delete"
  | "rename"
  | "moveUp"
  | "moveDown"
  | "group"
  | "repeat"
  | "search"
  | "selectPrev"
  | "selectNext"
  | "extendPrev"
  | "extendNext"
  | "clearSelection"
  | "fit"
  | "zoomIn"
  | "zoomOut"
  | "debugStart"
  | "debugStep"
  | "debugOver"
  | "debugContinue"
  | "debugBack"
  | "debugRestart"
  | "debugNonfinite"
  | "toggleBreakpoint";

export interface KeyLike {
  key: string;
  ctrlKey: boolean;
  metaKey: boolean;
  shiftKey: boolean;
  altKey: boolean;
}

export interface Shortcut {
  action: Action;
  keys: string;
  label: string;
}

/** Shown in tooltips and the help line; the order is the order of the help. */
export const SHORTCUTS: readonly Shortcut[] = [
  { action: "undo", keys: "Ctrl+Z", label: "Undo" },
  { action: "redo", keys: "Ctrl+Shift+Z", label: "Redo" },
  { action: "delete", keys: "Delete", label: "Delete the selected node" },
  { action: "rename", keys: "F2", label: "Rename the selected node" },
  { action: "moveUp", keys: "Alt+↑", label: "Move up" },
  { action: "moveDown", keys: "Alt+↓", label: "Move down" },
  { action: "group", keys: "Ctrl+G", label: "Group into a sequence" },
  { action: "repeat", keys: "R", label: "Set the repeat count" },
  { action: "search", keys: "/", label: "Search kernels" },
  { action: "selectPrev", keys: "↑", label: "Select the previous node" },
  { action: "selectNext", keys: "↓", label: "Select the next node" },
  { action: "extendPrev", keys: "Shift+↑", label: "Extend the selection up" },
  { action: "extendNext", keys: "Shift+↓", label: "Extend the selection down" },
  { action: "clearSelection", keys: "Esc", label: "Clear the selection" },
  { action: "fit", keys: "F", label: "Fit the graph to the view" },
  { action: "zoomIn", keys: "+", label: "Zoom in" },
  { action: "zoomOut", keys: "-", label: "Zoom out" },
  { action: "debugStart", keys: "Shift+D", label: "Start (or stop) a debug session" },
  { action: "debugStep", keys: "S", label: "Step one dispatch" },
  { action: "debugOver", keys: "O", label: "Step over the rest of the repetition" },
  { action: "debugContinue", keys: "C", label: "Continue to a breakpoint or the end" },
  { action: "debugBack", keys: "B", label: "Step back one dispatch" },
  { action: "debugRestart", keys: "Shift+R", label: "Restart from the initial state" },
  { action: "debugNonfinite", keys: "N", label: "Run to the first NaN/Inf" },
  { action: "toggleBreakpoint", keys: "F9", label: "Toggle a breakpoint on the selected node" },
];

/** The shortcut text for an action (`Ctrl+Z`), for tooltips. */
export function keysFor(action: Action): string {
  return SHORTCUTS.find((s) => s.action === action)?.keys ?? "";
}

/** The action a key press asks for, or null. `inText`: focus is in a text field or select. */
export function actionFor(e: KeyLike, inText: boolean): Action | null {
  const mod = e.ctrlKey || e.metaKey;
  const key = e.key.length === 1 ? e.key.toLowerCase() : e.key;
  if (key === "Escape") return "clearSelection";
  if (inText) return null;
  if (mod && !e.altKey) {
    if (key === "z") return e.shiftKey ? "redo" : "undo";
    if (key === "y" && !e.shiftKey) return "redo";
    if (key === "g" && !e.shiftKey) return "group";
    return null;
  }
  if (e.altKey) {
    if (key === "ArrowUp") return "moveUp";
    if (key === "ArrowDown") return "moveDown";
    return null;
  }
  switch (key) {
    case "Delete":
    case "Backspace":
      return e.shiftKey ? null : "delete";
    case "F2":
      return "rename";
    case "F9":
      return "toggleBreakpoint";
    case "ArrowUp":
      return e.shiftKey ? "extendPrev" : "selectPrev";
    case "ArrowDown":
      return e.shiftKey ? "extendNext" : "selectNext";
    case "/":
      return "search";
    case "r":
      return e.shiftKey ? "debugRestart" : "repeat";
    case "d":
      return e.shiftKey ? "debugStart" : null;
    case "s":
      return e.shiftKey ? null : "debugStep";
    case "o":
      return e.shiftKey ? null : "debugOver";
    case "c":
      return e.shiftKey ? null : "debugContinue";
    case "b":
      return e.shiftKey ? null : "debugBack";
    case "n":
      return e.shiftKey ? null : "debugNonfinite";
    case "f":
      return e.shiftKey ? null : "fit";
    case "+":
    case "=":
      return "zoomIn";
    case "-":
      return "zoomOut";
    default:
      return null;
  }
}
