/**
 * The front-end's folders are its roles (wire, logic, canvas, panels), and its imports form no cycle:
 * a panel and the side panel holding it share `panels/section.ts` instead of importing each other.
 */
/// <reference types="vite/client" />
import { describe, expect, it } from "vitest";

/** Every source module's text, by its path under src/ without the extension (vite reads them at build). */
const TEXTS: Record<string, string> = import.meta.glob(["../src/**/*.ts", "../src/**/*.tsx", "!../src/**/*.d.ts"], {
  query: "?raw",
  import: "default",
  eager: true,
});

const ROLES = ["wire", "logic", "canvas", "panels"];
/** Which roles each role may import (wire is the bottom; the roots, index and app, take all). */
const MAY_IMPORT: Record<string, string[]> = {
  wire: ["wire"],
  logic: ["logic", "wire"],
  canvas: ["canvas", "logic", "wire"],
  panels: ["panels", "logic", "wire"],
};

/** `a/b/../c` -> `a/c`, `a/./b` -> `a/b`. */
function normalize(path: string): string {
  const out: string[] = [];
  for (const part of path.split("/")) {
    if (part === "..") out.pop();
    else if (part !== "." && part !== "") out.push(part);
  }
  return out.join("/");
}

function importsOf(module: string, text: string): string[] {
  const dir = module.split("/").slice(0, -1).join("/");
  const found = [...text.matchAll(/(?:from|import)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g)];
  return found.map((m) => normalize(`${dir}/${m[1] ?? ""}`));
}

const GRAPH = new Map(
  Object.entries(TEXTS).map(([path, text]) => {
    const module = path.replace(/^\.\.\/src\//, "").replace(/\.tsx?$/, "");
    return [module, importsOf(module, text)];
  }),
);

describe("the front-end's import graph", () => {
  it("reads every source module", () => {
    expect(GRAPH.size).toBeGreaterThan(30);
    expect(GRAPH.get("panels/sidePanel")).toContain("panels/section");
  });

  it("keeps every module in a role folder, besides the two roots", () => {
    const loose = [...GRAPH.keys()].filter(
      (m) => !ROLES.includes(m.split("/")[0] ?? "") && !["index", "app"].includes(m),
    );
    expect(loose).toEqual([]);
  });

  it("imports only from the same role or a role below it", () => {
    const upward: string[] = [];
    for (const [module, imports] of GRAPH) {
      const role = module.split("/")[0] ?? "";
      const allowed = MAY_IMPORT[role];
      if (!allowed) continue;
      for (const target of imports) {
        if (!allowed.includes(target.split("/")[0] ?? "")) upward.push(`${module} -> ${target}`);
      }
    }
    expect(upward).toEqual([]);
  });

  it("has no cycle", () => {
    const cycles: string[] = [];
    const state = new Map<string, "open" | "done">();
    const visit = (module: string, path: string[]): void => {
      if (state.get(module) === "done") return;
      if (state.get(module) === "open") {
        cycles.push([...path.slice(path.indexOf(module)), module].join(" -> "));
        return;
      }
      state.set(module, "open");
      for (const next of GRAPH.get(module) ?? []) if (GRAPH.has(next)) visit(next, [...path, module]);
      state.set(module, "done");
    };
    for (const module of GRAPH.keys()) visit(module, []);
    expect(cycles).toEqual([]);
  });
});
