import { describe, expect, it } from "vitest";

import { CHECKING, boundsOption, boundsStatus } from "../src/panels/boundsCheck";
import { EMPTY_DEBUG, type BoundsCheckView, type DebugView } from "../src/wire/protocol";

function view(bounds: Partial<BoundsCheckView>, active = false): DebugView {
  return { ...EMPTY_DEBUG, active, session: active ? 1 : 0, bounds: { ...EMPTY_DEBUG.bounds, ...bounds } };
}

const FAILURE =
  "OutOfBoundsError: bounds='check' of graph 'g': dispatch 'shift' (kernel shift) indexes arg 'y' (param 'y') at [8]";

describe("the start's bounds option", () => {
  it("is sent as the start message's bounds", () => {
    expect(boundsOption(true)).toBe("check");
    expect(boundsOption(false)).toBe("trust");
  });
});

describe("boundsStatus", () => {
  it("says nothing for an unchecked start", () => {
    expect(boundsStatus(EMPTY_DEBUG, false)).toBeNull();
    expect(boundsStatus(view({}, true), false)).toBeNull();
  });

  it("says the check runs while a checked start is out, before Python says so too", () => {
    expect(boundsStatus(EMPTY_DEBUG, true)).toEqual({ kind: "checking", text: CHECKING });
    expect(boundsStatus(view({ state: "checking" }), false)).toEqual({ kind: "checking", text: CHECKING });
    expect(CHECKING).toBe("Checking bounds\u2026 (runs once in a child process)");
  });

  it("shows the out-of-bounds error while no session runs", () => {
    const status = boundsStatus(view({ state: "failed", error: FAILURE, seconds: 2 }), false);
    expect(status).toEqual({ kind: "failed", text: `Bounds check failed; no session started: ${FAILURE}` });
  });

  it("drops an old failure once a session runs, and says a passed check there", () => {
    expect(boundsStatus(view({ state: "failed", error: FAILURE }, true), false)).toBeNull();
    const passed = boundsStatus(view({ state: "passed", seconds: 1.5 }, true), false);
    expect(passed?.kind).toBe("passed");
    expect(passed?.text).toMatch(/^Bounds checked before the start: no index out of bounds \(1\.5\s*s\)\.$/);
  });
});
