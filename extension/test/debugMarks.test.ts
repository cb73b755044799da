import { describe, expect, it } from "vitest";

import { positionLabel } from "../src/panels/debugPanel";
import { debugMarks, drawnIdOf } from "../src/canvas/debugMarks";
import { parseDims } from "../src/panels/exportPanel";
import { EMPTY_DEBUG, type DebugView } from "../src/wire/protocol";

const drawn = new Set(["init", "substep", "substep/p2g", "substep/g2p"]);
const isDrawn = (id: string): boolean => drawn.has(id);

function session(fields: Partial<DebugView>): DebugView {
  return { ...EMPTY_DEBUG, session: 1, active: true, ...fields };
}

describe("drawnIdOf", () => {
  it("maps steps and repetitions to the nodes drawn for them", () => {
    expect(drawnIdOf("substep[3]/p2g", isDrawn)).toBe("substep/p2g");
    expect(drawnIdOf("substep[3]", isDrawn)).toBe("substep");
    expect(drawnIdOf("init", isDrawn)).toBe("init");
    const loop = (id: string): boolean => ["solve", "solve/jacobi"].includes(id);
    expect(drawnIdOf("solve/iter[7]/jacobi", loop)).toBe("solve/jacobi");
    expect(drawnIdOf("solve/iter[7]", loop)).toBe("solve");
  });

  it("falls back to the nearest drawn ancestor of a folded node", () => {
    expect(drawnIdOf("substep/hidden", isDrawn)).toBe("substep");
    expect(drawnIdOf("elsewhere", isDrawn)).toBeNull();
  });
});

describe("debugMarks", () => {
  it("draws nothing without a session", () => {
    expect(debugMarks(EMPTY_DEBUG, isDrawn).active).toBe(false);
  });

  it("marks the current node, location breakpoints, faults and times", () => {
    const marks = debugMarks(
      session({
        position: {
          index: 3,
          total: 9,
          step_id: "substep[1]/p2g",
          node_id: "substep/p2g",
          last_step_id: "substep[0]/g2p",
          total_known: true,
        },
        breakpoints: [
          { id: 1, kind: "node", target: "substep/g2p", every: null, enabled: true, hits: 0 },
          { id: 2, kind: "step", target: "substep[2]/p2g", every: null, enabled: true, hits: 0 },
          { id: 3, kind: "condition", target: "x.max() > 1", every: "repetition", enabled: true, hits: 0 },
          { id: 4, kind: "node", target: "init", every: null, enabled: false, hits: 0 },
        ],
        faults: [
          { index: 5, step_id: "substep[2]/g2p", node_id: "substep/g2p", kernel: "g2p", error: "AssertionError: x" },
        ],
        timing: [{ node_id: "substep/p2g", kernel: "p2g", calls: 2, total_s: 0.004, mean_s: 0.002, share: 0.5 }],
      }),
      isDrawn,
    );
    expect(marks.current).toBe("substep/p2g");
    expect([...marks.breakpoints].sort()).toEqual(["substep/g2p", "substep/p2g"]);
    expect(marks.faults.get("substep/g2p")).toBe("substep[2]/g2p failed: AssertionError: x");
    expect(marks.times.get("substep/p2g")?.[0]).toBe("2 ms \u00d72");
  });
});

describe("debugMarks of a comparison", () => {
  const found = {
    kind: "buffer" as const,
    archs: ["x64", "vulkan"],
    index: 4,
    step_id: "substep[1]/g2p",
    node_id: "substep/g2p",
    buffer: "v",
    first_index: [3],
    values: [0.5, 0.25],
    count: 1,
    size: 8,
    max_abs: 0.25,
    max_rel: 0.5,
    control_node: null,
    decisions: null,
    random: null,
    text: "x64 and vulkan diverge at step 4 substep[1]/g2p",
    picture: null,
  };

  it("marks the node where the runs first disagree, with the sentence", () => {
    const view = session({ compare: { ...EMPTY_DEBUG.compare, run: 1, state: "done", divergence: found } });
    expect(debugMarks(view, isDrawn).diverged).toEqual(["substep/g2p", found.text]);
  });

  it("marks nothing when the runs agree or the divergence is at the end of the run", () => {
    const agree = session({ compare: { ...EMPTY_DEBUG.compare, run: 1, state: "done" } });
    expect(debugMarks(agree, isDrawn).diverged).toBeNull();
    const atEnd = { ...found, step_id: null, node_id: null };
    const end = session({ compare: { ...EMPTY_DEBUG.compare, run: 1, state: "done", divergence: atEnd } });
    expect(debugMarks(end, isDrawn).diverged).toBeNull();
  });
});

describe("parseDims", () => {
  it("reads name=size pairs", () => {
    expect(parseDims("n=256, G=128")).toEqual({ ok: true, dims: { n: 256, G: 128 } });
    expect(parseDims("  ")).toEqual({ ok: true, dims: {} });
  });

  it("says what is wrong with anything else", () => {
    const bad = parseDims("n=256, G");
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.reason).toMatch(/"G"/);
    expect(parseDims("n=0").ok).toBe(false);
  });
});

describe("positionLabel", () => {
  const at = (index: number, total: number, step_id: string | null, total_known = true): DebugView =>
    session({ position: { index, total, step_id, node_id: null, last_step_id: null, total_known } });

  it("names the next step, and the end", () => {
    expect(positionLabel(at(5, 16, "substep[1]/p2g"))).toBe("step 5/16 \u00b7 next substep[1]/p2g");
    expect(positionLabel(at(16, 16, null))).toBe("end (16/16)");
  });

  it("marks a total that is still being recorded", () => {
    expect(positionLabel(at(2, 3, "solve/iter[0]/jacobi", false))).toBe("step 2/3+ \u00b7 next solve/iter[0]/jacobi");
  });
});
