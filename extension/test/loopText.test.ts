import { describe, expect, it } from "vitest";

import { loopReads } from "../src/logic/loopText";

describe("loopReads", () => {
  it("says nothing for a loop that reads every iteration", () => {
    expect(loopReads({ check_every: 1, guarded: false })).toBe("");
  });
  it("names k, and the guarded form", () => {
    expect(loopReads({ check_every: 8, guarded: false })).toBe("; flag read every 8");
    expect(loopReads({ check_every: 4, guarded: true })).toBe(
      "; flag read every 4, guarded: stops where every read would",
    );
  });
});
