import { describe, expect, it } from "vitest";

import { clampPage, decodeFloats, indexText, pageOf, pictureCell, ravel, unravel } from "../src/logic/arrays";

function viewOf(values: number[], dtype: "f32" | "f64", offset = 0): DataView {
  const size = dtype === "f64" ? 8 : 4;
  const buffer = new ArrayBuffer(offset + values.length * size);
  const view = new DataView(buffer, offset);
  values.forEach((v, i) => (dtype === "f64" ? view.setFloat64(i * 8, v, true) : view.setFloat32(i * 4, v, true)));
  return view;
}

describe("decodeFloats", () => {
  it("reads little-endian f32 and f64 bytes, NaN and Inf included", () => {
    expect([...decodeFloats(viewOf([1.5, NaN, -Infinity], "f32"), "f32", [3])]).toEqual([1.5, NaN, -Infinity]);
    expect([...decodeFloats(viewOf([0.1, 2], "f64"), "f64", [1, 2])]).toEqual([0.1, 2]);
  });

  it("copies bytes that are not aligned for a typed array", () => {
    const out = decodeFloats(viewOf([1, 2, 3], "f64", 3), "f64", [3]);
    expect([...out]).toEqual([1, 2, 3]);
  });

  it("refuses too few bytes, and reads nothing for an empty shape", () => {
    expect(() => decodeFloats(viewOf([1], "f32"), "f32", [2, 2])).toThrow(/expected 4 f32 values/);
    expect(() => decodeFloats(null, "f32", [2])).toThrow(RangeError);
    expect(decodeFloats(null, "f64", []).length).toBe(0);
    expect(decodeFloats(null, "f32", [0, 2]).length).toBe(0);
  });
});

describe("index arithmetic", () => {
  it("unravels and ravels C-order indexes", () => {
    expect(unravel(0, [4, 5])).toEqual([0, 0]);
    expect(unravel(7, [4, 5])).toEqual([1, 2]);
    expect(unravel(19, [4, 5])).toEqual([3, 4]);
    expect(unravel(5, [8])).toEqual([5]);
    expect(ravel([1, 2], [4, 5])).toBe(7);
    expect(ravel([3, 4, 1], [4, 5])).toBe(19); // a trailing component index is ignored
    for (let i = 0; i < 24; i++) expect(ravel(unravel(i, [2, 3, 4]), [2, 3, 4])).toBe(i);
  });

  it("pages through the values", () => {
    expect(pageOf(0, 50)).toBe(0);
    expect(pageOf(49, 50)).toBe(0);
    expect(pageOf(50, 50)).toBe(1);
    expect(pageOf(-3, 50)).toBe(0);
    expect(clampPage(-1, 4)).toBe(0);
    expect(clampPage(9, 4)).toBe(3);
    expect(clampPage(2.7, 4)).toBe(2);
    expect(clampPage(0, 0)).toBe(0);
  });

  it("writes indexes as numpy does", () => {
    expect(indexText([3])).toBe("(3,)");
    expect(indexText([3, 17])).toBe("(3, 17)");
  });

  it("finds the picture cell of a source index after downsampling", () => {
    expect(pictureCell([10, 7], [], [4, 4])).toEqual([2, 1]);
    expect(pictureCell([0, 9, 3], [0], [2, 1])).toEqual([4, 3]);
    expect(pictureCell([1, 9, 3], [0], [2, 1])).toBeNull(); // another slice than the one shown
    expect(pictureCell([5, 1], [], [2])).toEqual([2]); // a component index past the field axes
  });
});
