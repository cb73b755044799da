import { describe, expect, it } from "vitest";

import { noiseCell, verdictBanner } from "../src/exportPanel";
import type { Verdict, VerifyView } from "../src/protocol";

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
