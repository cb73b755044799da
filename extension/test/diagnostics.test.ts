import { describe, expect, it } from "vitest";

import { badgesByNode, countBySeverity, definitionId, diagnosticLine } from "../src/logic/diagnostics";
import type { DiagnosticView } from "../src/wire/protocol";

const diag = (fields: Partial<DiagnosticView>): DiagnosticView => ({
  code: "GL001",
  severity: "error",
  message: "m",
  node: null,
  arg: null,
  hint: null,
  ...fields,
});

describe("badgesByNode", () => {
  const drawn = (id: string) => ["init", "substep/p2g"].includes(id);

  it("groups diagnostics per node with the worst severity and every line in the tooltip", () => {
    const { badges } = badgesByNode(
      [diag({ node: "init", severity: "warning", message: "a" }), diag({ node: "init", message: "b", arg: "x" })],
      drawn,
    );
    expect(badges.get("init")).toEqual({
      severity: "error",
      count: 2,
      text: "GL001 warning: a\nGL001 error [x]: b",
    });
  });

  it("puts a step's diagnostic on its definition", () => {
    const { badges } = badgesByNode([diag({ node: "substep[3]/p2g" })], drawn);
    expect(badges.has("substep/p2g")).toBe(true);
  });

  it("puts a graph-level diagnostic about an arg on the arg's node", () => {
    const { badges, unplaced } = badgesByNode([diag({ arg: "y", severity: "warning" })], (id) => id === "arg:y");
    expect(badges.get("arg:y")?.severity).toBe("warning");
    expect(unplaced).toEqual([]);
  });

  it("keeps graph-level and undrawn diagnostics apart", () => {
    const { badges, unplaced } = badgesByNode([diag({}), diag({ node: "gone" }), diag({ arg: "z" })], drawn);
    expect(badges.size).toBe(0);
    expect(unplaced).toHaveLength(3);
  });
});

describe("helpers", () => {
  it("strips repetition indices", () => {
    expect(definitionId("a[0]/b[12]/c")).toBe("a/b/c");
  });

  it("writes one line with the fix", () => {
    expect(diagnosticLine(diag({ hint: "bind it" }))).toBe("GL001 error: m (fix: bind it)");
  });

  it("counts by severity", () => {
    expect(countBySeverity([diag({}), diag({ severity: "info" })])).toEqual({ error: 1, warning: 0, info: 1 });
  });
});
