import { describe, expect, it } from "vitest";

import { DEFAULT_TIMEOUT_S, isArch, parseTimeout, parseTolerance } from "../src/panels/comparePanel";

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

describe("the compare form's tolerance fields", () => {
  it("take a number from 0 up, and empty for 0", () => {
    expect(parseTolerance("rtol", "1e-5")).toEqual({ ok: true, value: 1e-5 });
    expect(parseTolerance("atol", " 0.25 ")).toEqual({ ok: true, value: 0.25 });
    expect(parseTolerance("rtol", "")).toEqual({ ok: true, value: 0 });
    expect(parseTolerance("rtol", "0")).toEqual({ ok: true, value: 0 });
  });

  it("refuse a typo instead of comparing bit for bit, naming the field", () => {
    for (const text of ["abc", "1e", "Infinity", "1,5"]) {
      const field = parseTolerance("rtol", text);
      expect(field.ok).toBe(false);
      if (!field.ok) expect(field.error).toContain(`rtol "${text}" is not a number`);
    }
  });

  it("refuse a negative or huge tolerance, as Python does", () => {
    for (const text of ["-1e-3", "2e6"]) {
      const field = parseTolerance("atol", text);
      expect(field.ok).toBe(false);
      if (!field.ok) expect(field.error).toContain(`atol ${text}: give a number from 0 to 1e+6`);
    }
    expect(parseTolerance("atol", "1e6")).toEqual({ ok: true, value: 1e6 });
  });
});
