import { describe, expect, it } from "vitest";

import { UndoStack } from "../src/logic/undoStack";

describe("UndoStack", () => {
  it("starts with nothing to undo or redo", () => {
    const stack = new UndoStack();
    expect(stack.canUndo).toBe(false);
    expect(stack.canRedo).toBe(false);
    expect(stack.request("undo", 1)).toBe(false);
    expect(stack.pending).toBe(0);
  });

  it("shows Python's history, the next step last", () => {
    const stack = new UndoStack();
    stack.sync({ undo: ["add a", "rename a"], redo: ["remove b"] });
    expect(stack.undoLabel).toBe("rename a");
    expect(stack.redoLabel).toBe("remove b");
  });

  it("shows an undo in flight as done", () => {
    const stack = new UndoStack();
    stack.sync({ undo: ["add a", "rename a"], redo: [] });
    expect(stack.request("undo", 7)).toBe(true);
    expect(stack.view).toEqual({ undo: ["add a"], redo: ["rename a"] });
    expect(stack.pending).toBe(1);
  });

  it("never asks for more undos than exist", () => {
    const stack = new UndoStack();
    stack.sync({ undo: ["add a"], redo: [] });
    expect(stack.request("undo", 1)).toBe(true);
    expect(stack.request("undo", 2)).toBe(false);
    expect(stack.request("redo", 3)).toBe(true);
    expect(stack.view).toEqual({ undo: ["add a"], redo: [] });
  });

  it("takes a sync from Python as the truth and drops what was in flight", () => {
    const stack = new UndoStack();
    stack.sync({ undo: ["a", "b"], redo: [] });
    stack.request("undo", 1);
    stack.request("undo", 2);
    stack.sync({ undo: ["a"], redo: ["b"] });
    expect(stack.pending).toBe(0);
    expect(stack.view).toEqual({ undo: ["a"], redo: ["b"] });
  });

  it("drops a request once answered, even when the history did not change", () => {
    const stack = new UndoStack();
    stack.sync({ undo: ["a"], redo: [] });
    stack.request("undo", 4);
    stack.settle(4);
    expect(stack.view).toEqual({ undo: ["a"], redo: [] });
    stack.settle(99);
    expect(stack.pending).toBe(0);
  });

  it("does not share arrays with the synced history", () => {
    const history = { undo: ["a"], redo: [] as string[] };
    const stack = new UndoStack();
    stack.sync(history);
    stack.request("undo", 1);
    void stack.view;
    expect(history).toEqual({ undo: ["a"], redo: [] });
  });
});
