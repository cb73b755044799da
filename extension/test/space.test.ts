import { describe, expect, it } from "vitest";

import {
  type Box,
  NO_INSETS,
  fitViewport,
  minimapBox,
  minimapCorner,
  overlaps,
  panIntoView,
  uncovered,
} from "../src/canvas/geometry";

/** A drawing box as it lands on screen under a viewport. */
function onScreen(box: Box, v: { x: number; y: number; zoom: number }): Box {
  return { x: box.x * v.zoom + v.x, y: box.y * v.zoom + v.y, width: box.width * v.zoom, height: box.height * v.zoom };
}

function within(inner: Box, outer: Box, slack = 1e-6): boolean {
  return (
    inner.x >= outer.x - slack &&
    inner.y >= outer.y - slack &&
    inner.x + inner.width <= outer.x + outer.width + slack &&
    inner.y + inner.height <= outer.y + outer.height + slack
  );
}

describe("the part of the canvas the drawers leave uncovered", () => {
  it("is the canvas less the drawers on its edges", () => {
    expect(uncovered({ width: 846, height: 500 }, { left: 0, right: 321 })).toEqual({
      x: 0,
      y: 0,
      width: 525,
      height: 500,
    });
    expect(uncovered({ width: 846, height: 500 }, { left: 200, right: 321 })).toEqual({
      x: 200,
      y: 0,
      width: 325,
      height: 500,
    });
    expect(uncovered({ width: 846, height: 500 }, NO_INSETS)).toEqual({ x: 0, y: 0, width: 846, height: 500 });
  });

  it("keeps a strip to pan in when the drawers cover nearly all of it", () => {
    const view = uncovered({ width: 400, height: 300 }, { left: 200, right: 180 });
    expect(view.width).toBe(80);
    expect(view.x).toBeGreaterThanOrEqual(0);
    expect(view.x + view.width).toBeLessThanOrEqual(400);
  });
});

describe("Fit with a drawer open", () => {
  const graph: Box = { x: -40, y: 10, width: 900, height: 700 };

  it("puts the whole drawing in the uncovered part, centred there", () => {
    const view = uncovered({ width: 846, height: 520 }, { left: 0, right: 321 });
    const v = fitViewport(graph, view, { pad: 16 });
    const drawn = onScreen(graph, v);
    expect(within(drawn, view)).toBe(true);
    // the limiting side fills the view less its padding; the other is centred in the view, not the canvas
    expect(drawn.width).toBeCloseTo(view.width - 32, 6);
    expect(drawn.x - view.x).toBeCloseTo(16, 6);
    expect(drawn.y - view.y).toBeCloseTo(view.y + view.height - (drawn.y + drawn.height), 6);
  });

  it("centres a small drawing at no more than the largest zoom", () => {
    const small: Box = { x: 0, y: 0, width: 100, height: 50 };
    const view = { x: 200, y: 0, width: 400, height: 300 };
    const v = fitViewport(small, view, { maxZoom: 1.5 });
    expect(v.zoom).toBe(1.5);
    const drawn = onScreen(small, v);
    expect(drawn.x + drawn.width / 2).toBeCloseTo(400, 6);
    expect(drawn.y + drawn.height / 2).toBeCloseTo(150, 6);
  });

  it("at a least zoom shows the start of a drawing too big for it, inside the uncovered part", () => {
    const view = { x: 200, y: 0, width: 300, height: 300 };
    const v = fitViewport(graph, view, { pad: 16, minZoom: 0.8 });
    expect(v.zoom).toBe(0.8);
    const drawn = onScreen(graph, v);
    expect(drawn.x).toBeCloseTo(216, 6); // right of the left drawer, not under it
    expect(drawn.y).toBeCloseTo(16, 6);
  });
});

describe("a selected node under a drawer", () => {
  const view: Box = { x: 0, y: 0, width: 525, height: 500 };

  it("is panned out from under it by the least amount", () => {
    const node: Box = { x: 480, y: 100, width: 150, height: 46 };
    const by = panIntoView(node, view, 12);
    expect(by).toEqual({ x: 525 - 12 - 630, y: 0 });
    expect(within({ ...node, x: node.x + by.x, y: node.y + by.y }, view)).toBe(true);
  });

  it("stays where it is when it is already clear", () => {
    expect(panIntoView({ x: 100, y: 100, width: 150, height: 46 }, view)).toEqual({ x: 0, y: 0 });
  });

  it("shows its top left when it is larger than the view", () => {
    const by = panIntoView({ x: -300, y: 40, width: 2000, height: 30 }, view, 12);
    expect(by.x).toBe(312);
    expect(by.y).toBe(0);
  });

  it("is panned clear of a left drawer too", () => {
    const left: Box = { x: 216, y: 0, width: 309, height: 500 };
    const by = panIntoView({ x: 100, y: 480, width: 80, height: 46 }, left, 12);
    expect(by).toEqual({ x: 128, y: 500 - 12 - 526 });
  });
});

describe("the minimap with a drawer open", () => {
  const canvas = { width: 846, height: 520 };
  const map = { width: 160, height: 110 };
  const insets = { left: 0, right: 321 };

  it("sits in the uncovered part, never under the drawer", () => {
    const view = uncovered(canvas, insets);
    for (const corner of ["bottom-right", "top-right", "bottom-left", "top-left"] as const) {
      expect(within(minimapBox(canvas, map, corner, 10, insets), view)).toBe(true);
    }
    expect(minimapBox(canvas, map, "bottom-right", 10, insets).x).toBe(846 - 321 - 160 - 10);
  });

  it("moves away from a selected node that its corner beside the drawer would cover", () => {
    // a node at the bottom right of the uncovered part: under the map's default corner there
    const focus: Box = { x: 400, y: 430, width: 100, height: 46 };
    expect(overlaps(minimapBox(canvas, map, "bottom-right", 10, insets), focus, 4)).toBe(true);
    const corner = minimapCorner(canvas, map, focus, 10, insets);
    expect(corner).toBe("top-right");
    expect(overlaps(minimapBox(canvas, map, corner, 10, insets), focus, 4)).toBe(false);
    // without the drawer the same node is clear of the bottom-right corner (at the canvas's edge)
    expect(minimapCorner(canvas, map, focus)).toBe("bottom-right");
  });
});
