import { describe, expect, it } from "vitest";

import { heldOrder, searchKernels, signature, usedKernels } from "../src/logic/paletteSearch";
import type { GraphView, KernelView } from "../src/wire/protocol";
import { param } from "./fixtures";

const kernel = (name: string, params: string[] = []): KernelView => ({
  name,
  ref: `mpm:${name}`,
  params: params.map((p) => param(p)),
  returns: false,
  dispatchable: true,
  why_not: null,
});

describe("searchKernels", () => {
  const kernels = [kernel("substep_g2p", ["x"]), kernel("p2g", ["grid_v"]), kernel("init_p2g"), kernel("render")];

  it("returns everything for an empty query", () => {
    expect(searchKernels(kernels, "  ")).toHaveLength(4);
  });

  it("ranks exact, then prefix, then substring matches on the name", () => {
    expect(searchKernels(kernels, "p2g").map((k) => k.name)).toEqual(["p2g", "init_p2g"]);
  });

  it("matches parameter names and requires every word", () => {
    expect(searchKernels(kernels, "grid").map((k) => k.name)).toEqual(["p2g"]);
    expect(searchKernels(kernels, "g2p x").map((k) => k.name)).toEqual(["substep_g2p"]);
    expect(searchKernels(kernels, "g2p zzz")).toEqual([]);
  });

  it("is case-insensitive", () => {
    expect(searchKernels(kernels, "RENDER").map((k) => k.name)).toEqual(["render"]);
  });

  it("writes a signature", () => {
    expect(signature(kernel("p2g", ["x", "v"]))).toBe("p2g(x, v)");
  });

  it("lists the kernels the graph dispatches first, keeping the rest in order", () => {
    const used = new Set(["mpm:render", "mpm:init_p2g"]);
    expect(searchKernels(kernels, "", used).map((k) => k.name)).toEqual(["init_p2g", "render", "substep_g2p", "p2g"]);
    // a better match on the name still wins; among equal matches the graph's own come first
    expect(searchKernels(kernels, "p2g", used).map((k) => k.name)).toEqual(["p2g", "init_p2g"]);
    const both = [kernel("p2g_a"), kernel("p2g_b")];
    expect(searchKernels(both, "p2g", new Set(["mpm:p2g_b"])).map((k) => k.name)).toEqual(["p2g_b", "p2g_a"]);
  });

  it("reads the kernels the graph uses from its dispatches", () => {
    const graph = {
      nodes: [
        { kind: "dispatch", kernel: "mpm:p2g" },
        { kind: "sequence" },
        { kind: "dispatch", kernel: "mpm:p2g" },
        { kind: "dispatch", kernel: "mpm:render" },
      ],
    } as unknown as GraphView;
    expect([...usedKernels(graph)].sort()).toEqual(["mpm:p2g", "mpm:render"]);
  });
});

describe("heldOrder", () => {
  const [g2p, p2g, init, render] = [kernel("substep_g2p"), kernel("p2g"), kernel("init_p2g"), kernel("render")];

  it("keeps the rows where they were shown after an add re-sorted the kernels", () => {
    const shown = [g2p, p2g, init, render].map((k) => k.ref);
    // p2g was just added: the search puts the used kernel first, the pointer is still on the second row
    const resorted = searchKernels([g2p, p2g, init, render], "", new Set([p2g.ref]));
    expect(resorted.map((k) => k.name)).toEqual(["p2g", "substep_g2p", "init_p2g", "render"]);
    expect(heldOrder(shown, resorted).map((k) => k.name)).toEqual(["substep_g2p", "p2g", "init_p2g", "render"]);
  });

  it("puts kernels the list did not show after the shown ones, in their own order", () => {
    expect(heldOrder([p2g.ref], [render, g2p, p2g]).map((k) => k.name)).toEqual(["p2g", "render", "substep_g2p"]);
    expect(heldOrder([], [render, g2p]).map((k) => k.name)).toEqual(["render", "substep_g2p"]);
  });
});
