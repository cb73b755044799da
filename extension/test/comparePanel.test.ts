import { describe, expect, it } from "vitest";

import { DEFAULT_TIMEOUT_S, isArch, parseTimeout } from "../src/panels/comparePanel";

describe("the compare form's timeout field", () => {
  it("takes a positive number of seconds, and empty for the default", () => {
    expect(parseTimeout("30")).toEqual({ ok: true, seconds: 30 });
    expect(parseTimeout(" 2.5 ")).toEqual({ ok: true, seconds: 2.5 });
    expect(parseTimeout("")).toEqual({ ok: true, seconds: DEFAULT_TIMEOUT_S });
  });

  it("refuses zero and negative numbers, saying it wants more than 0", () => {
    for (const text of ["0", "-1", "-0.5"]) {
      const field = parseTimeout(text);
      expect(field.ok).toBe(false);
      if (!field.ok) expect(field.error).toContain("greater than 0");
    }
  });

  it("refuses text that is not a number, quoting it", () => {
    for (const text of ["ten", "1e", "Infinity", "NaN"]) {
      const field = parseTimeout(text);
      expect(field.ok).toBe(false);
      if (!field.ok) expect(field.error).toContain(`"${text}" is not a number`);
    }
  });

  it("refuses more than a day, as Python does", () => {
    const field = parseTimeout("86401");
    expect(field.ok).toBe(false);
    if (!field.ok) expect(field.error).toContain("at most 86400");
    expect(parseTimeout("86400")).toEqual({ ok: true, seconds: 86400 });
  });
});

describe("which picks start a process ahead", () => {
  it("an arch of the list does, a folder or a partial name does not", () => {
    const archs = ["vulkan", "x64"];
    expect(isArch("vulkan", archs)).toBe(true);
    expect(isArch(" x64 ", archs)).toBe(true);
    expect(isArch("vulk", archs)).toBe(false);
    expect(isArch("out/module", archs)).toBe(false);
  });
});
