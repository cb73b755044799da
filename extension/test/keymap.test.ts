import { describe, expect, it } from "vitest";

import { SHORTCUTS, actionFor, keysFor } from "../src/logic/keymap";

const key = (k: string, mods: Partial<{ ctrl: boolean; meta: boolean; shift: boolean; alt: boolean }> = {}) => ({
  key: k,
  ctrlKey: mods.ctrl ?? false,
  metaKey: mods.meta ?? false,
  shiftKey: mods.shift ?? false,
  altKey: mods.alt ?? false,
});

describe("actionFor", () => {
  it("maps Ctrl+Z and Ctrl+Shift+Z (and Cmd on a Mac) to undo and redo", () => {
    expect(actionFor(key("z", { ctrl: true }), false)).toBe("undo");
    expect(actionFor(key("Z", { ctrl: true, shift: true }), false)).toBe("redo");
    expect(actionFor(key("z", { meta: true }), false)).toBe("undo");
    expect(actionFor(key("y", { ctrl: true }), false)).toBe("redo");
  });

  it("maps the frequent edits", () => {
    expect(actionFor(key("Delete"), false)).toBe("delete");
    expect(actionFor(key("Backspace"), false)).toBe("delete");
    expect(actionFor(key("F2"), false)).toBe("rename");
    expect(actionFor(key("ArrowUp", { alt: true }), false)).toBe("moveUp");
    expect(actionFor(key("ArrowDown", { alt: true }), false)).toBe("moveDown");
    expect(actionFor(key("g", { ctrl: true }), false)).toBe("group");
    expect(actionFor(key("r"), false)).toBe("repeat");
  });

  it("maps navigation and view keys", () => {
    expect(actionFor(key("ArrowDown"), false)).toBe("selectNext");
    expect(actionFor(key("ArrowUp", { shift: true }), false)).toBe("extendPrev");
    expect(actionFor(key("/"), false)).toBe("search");
    expect(actionFor(key("f"), false)).toBe("fit");
    expect(actionFor(key("+"), false)).toBe("zoomIn");
    expect(actionFor(key("Escape"), false)).toBe("clearSelection");
  });

  it("leaves keys typed in a text field to the field, except Escape", () => {
    expect(actionFor(key("z", { ctrl: true }), true)).toBeNull();
    expect(actionFor(key("Delete"), true)).toBeNull();
    expect(actionFor(key("r"), true)).toBeNull();
    expect(actionFor(key("Escape"), true)).toBe("clearSelection");
  });

  it("ignores other keys and browser shortcuts", () => {
    expect(actionFor(key("a"), false)).toBeNull();
    expect(actionFor(key("c", { ctrl: true }), false)).toBeNull();
    expect(actionFor(key("r", { ctrl: true }), false)).toBeNull();
  });

  it("documents every action once", () => {
    const actions = SHORTCUTS.map((s) => s.action);
    expect(new Set(actions).size).toBe(actions.length);
    expect(keysFor("undo")).toBe("Ctrl+Z");
  });
});

describe("debugger keys", () => {
  it("maps letters to the controls and F9 to a breakpoint", () => {
    expect(actionFor(key("s"), false)).toBe("debugStep");
    expect(actionFor(key("o"), false)).toBe("debugOver");
    expect(actionFor(key("c"), false)).toBe("debugContinue");
    expect(actionFor(key("b"), false)).toBe("debugBack");
    expect(actionFor(key("n"), false)).toBe("debugNonfinite");
    expect(actionFor(key("R", { shift: true }), false)).toBe("debugRestart");
    expect(actionFor(key("D", { shift: true }), false)).toBe("debugStart");
    expect(actionFor(key("F9"), false)).toBe("toggleBreakpoint");
  });

  it("leaves them to text fields and to Ctrl combinations", () => {
    expect(actionFor(key("s"), true)).toBeNull();
    expect(actionFor(key("c", { ctrl: true }), false)).toBeNull();
    expect(actionFor(key("d"), false)).toBeNull();
  });

  it("lists each one once in the help", () => {
    const actions = SHORTCUTS.map((s) => s.action);
    expect(new Set(actions).size).toBe(actions.length);
    expect(keysFor("debugStep")).toBe("S");
  });
});
