import { describe, expect, it } from "vitest";

import { BOXES_BELOW, OVERVIEW_BELOW, detailAt, detailNote, nextDetail } from "../src/canvas/detail";

describe("detailAt (what a zoomed-out canvas leaves out)", () => {
  it("draws everything at a readable zoom, boxes below it, and no bindings in a far overview", () => {
    expect(detailAt(1)).toBe("full");
    expect(detailAt(BOXES_BELOW)).toBe("full");
    expect(detailAt(BOXES_BELOW - 0.01)).toBe("boxes");
    expect(detailAt(OVERVIEW_BELOW)).toBe("boxes");
    expect(detailAt(OVERVIEW_BELOW - 0.01)).toBe("overview");
    expect(detailAt(0.02)).toBe("overview");
  });

  it("draws every label at the zoom the canvas picks by itself (port labels at least 9 px)", () => {
    expect(detailAt(9.2 / 11)).toBe("full");
  });

  it("says what is left out, and says nothing at full detail", () => {
    expect(detailNote("full")).toBeNull();
    expect(detailNote("boxes")).toMatch(/labels/);
    expect(detailNote("overview")).toMatch(/bindings/);
  });
});

describe("nextDetail (less detail at once, more when the view stops)", () => {
  it("drops detail while zooming out, in the middle of the move", () => {
    expect(nextDetail("full", 0.2, true)).toBe("boxes");
    expect(nextDetail("boxes", 0.05, true)).toBe("overview");
    expect(nextDetail("full", 0.05, true)).toBe("overview");
  });

  it("keeps the lesser detail while zooming in, and draws more once the move ends", () => {
    expect(nextDetail("overview", 0.5, true)).toBe("overview");
    expect(nextDetail("boxes", 0.5, true)).toBe("boxes");
    expect(nextDetail("overview", 0.5, false)).toBe("full");
    expect(nextDetail("overview", 0.2, false)).toBe("boxes");
    expect(nextDetail("full", 0.5, false)).toBe("full");
  });
});
