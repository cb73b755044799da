import { describe, expect, it } from "vitest";

import { exportOutcome, filesSummary, noiseCell, verdictBanner } from "../src/panels/exportPanel";
import type { ExportView, Verdict, VerifyView } from "../src/wire/protocol";

function view(verdict: Verdict): VerifyView {
  return {
    passed: verdict !== "differs",
    identical: verdict === "identical",
    verdict,
    text: "",
    outputs: [],
    notes: [],
  };
}

describe("the verification banner", () => {
  it("names each of the three verdicts; only 'differs' fails", () => {
    expect(verdictBanner(view("identical"))).toEqual({ text: "Verified: bit-identical", pass: true });
    const noise = verdictBanner(view("within run-to-run noise"));
    expect(noise.pass).toBe(true);
    expect(noise.text).toContain("within run-to-run noise");
    const differs = verdictBanner(view("differs"));
    expect(differs.pass).toBe(false);
    expect(differs.text).toContain("FAILED");
  });

  it("shows the Python-vs-Python column as a number, or a dash when not measured", () => {
    expect(noiseCell(null)).toBe("\u2013");
    expect(noiseCell(0)).toBe("0");
    expect(noiseCell(0.000977)).toMatch(/^9\.77e-4$|^0\.000977$/);
  });
});

function exported(over: Partial<ExportView>): ExportView {
  return {
    run: 1,
    state: "done",
    targets: ["x64", "vulkan", "cuda"],
    default_arch: "x64",
    default_path: "out/g",
    arch: "x64",
    path: "out/g",
    stage: "done",
    fraction: 1,
    files: [],
    file_count: 0,
    result: "",
    verify: null,
    verify_error: null,
    error: null,
    seconds: 2,
    ...over,
  };
}

describe("the export's outcome", () => {
  it("tells a module whose verification could not run from a failed export", () => {
    const why = "ToolMissingError: no C compiler found (tried cc); install one with `apt-get install gcc`";
    const unverified = exportOutcome(exported({ verify_error: why }));
    expect(unverified.bar).toBe("unverified");
    expect(unverified.text).toContain("exported");
    expect(unverified.text).toContain("verification could not run");
    const failed = exportOutcome(exported({ state: "failed", error: "OutputPathError: taken", fraction: 0.3 }));
    expect(failed.bar).toBe("failed");
    expect(failed.text).toContain("export failed");
    expect(failed.text).toContain("nothing was written");
    expect(exportOutcome(exported({})).bar).toBe("done");
    expect(exportOutcome(exported({ state: "running", stage: "check", fraction: 0.25 }))).toEqual({
      bar: "running",
      text: "check\u2026 25%",
    });
  });

  it("counts the files Python counted, and says when the list is cut short", () => {
    const files = ["manifest.json", "host/main.c", "module/a.spv"];
    expect(filesSummary(exported({ files, file_count: 3 }))).toBe("3 files written");
    expect(filesSummary(exported({ files, file_count: 250 }))).toBe("250 files written (the first 3 listed)");
  });
});
