import { describe, expect, it } from "vitest";

import { cellAt, pictureCell, sourceIndex } from "../src/logic/arrays";

describe("the heat map value under the pointer", () => {
  it("finds the cell under a point of the drawn canvas", () => {
    expect(cellAt(0, 0, 300, 200, 20, 30)).toEqual([0, 0]);
    expect(cellAt(299.9, 199.9, 300, 200, 20, 30)).toEqual([19, 29]);
    expect(cellAt(95, 75, 300, 200, 20, 30)).toEqual([7, 9]);
    expect(cellAt(-1, 5, 300, 200, 20, 30)).toBeNull();
    expect(cellAt(300, 5, 300, 200, 20, 30)).toBeNull();
  });
  it("names the source index: the slice's leading indexes, then each axis times its step", () => {
    expect(sourceIndex([7, 9], [], [1, 1])).toEqual([7, 9]);
    expect(sourceIndex([7, 9], [2], [1, 1])).toEqual([2, 7, 9]);
    expect(sourceIndex([3, 4], [], [4, 8])).toEqual([12, 32]);
  });
  it("is the inverse of where a source index is drawn", () => {
    const origin = [1];
    const step = [4, 8];
    const cell = pictureCell([1, 13, 35], origin, step)!;
    expect(cell).toEqual([3, 4]);
    expect(pictureCell(sourceIndex(cell, origin, step), origin, step)).toEqual(cell);
  });
});
