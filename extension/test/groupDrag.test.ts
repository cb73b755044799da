import { describe, expect, it } from "vitest";

import { groupDrag } from "../src/canvas/FlowView";
import type { Box, Point } from "../src/canvas/geometry";

const positions = new Map<string, Point>([
  ["loop/a", { x: 10, y: 20 }],
  ["loop/inner/b", { x: 10, y: 90 }],
  ["loopy", { x: 500, y: 0 }], // a sibling whose id starts like the group's: not a member
  ["arg:x", { x: 300, y: 0 }],
]);
const groups = new Map<string, Box>([
  ["loop", { x: 0, y: 0, width: 200, height: 160 }],
  ["loop/inner", { x: 4, y: 70, width: 120, height: 60 }],
]);

describe("groupDrag", () => {
  it("moves every member of the group, nested groups included, by the box's offset", () => {
    const moved = groupDrag({ positions, groups }, "loop", { x: 30, y: -5 });
    expect(Object.fromEntries(moved)).toEqual({
      "loop/a": { x: 40, y: 15 },
      "loop/inner/b": { x: 40, y: 85 },
      "loop/inner": { x: 34, y: 65 },
    });
  });

  it("moves nothing for a group the model does not draw", () => {
    expect(groupDrag({ positions, groups }, "gone", { x: 1, y: 1 }).size).toBe(0);
  });
});
