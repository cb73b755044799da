import { describe, expect, it } from "vitest";

import { searchKernels, signature } from "../src/paletteSearch";
import type { KernelView } from "../src/protocol";
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
});
