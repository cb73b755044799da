import { describe, expect, it } from "vitest";

import { parseServerMessage } from "../src/wire/protocol";

describe("parseServerMessage", () => {
  it("reads a reply", () => {
    expect(parseServerMessage({ kind: "reply", request: 3, ok: false, error: "no node 'x'" })).toEqual({
      kind: "reply",
      request: 3,
      ok: false,
      error: "no node 'x'",
    });
  });

  it("fills a missing request or error with null", () => {
    expect(parseServerMessage({ kind: "reply", ok: true })).toEqual({
      kind: "reply",
      request: null,
      ok: true,
      error: null,
    });
  });

  it("ignores anything else", () => {
    expect(parseServerMessage(null)).toBeNull();
    expect(parseServerMessage("reply")).toBeNull();
    expect(parseServerMessage({ kind: "other", ok: true })).toBeNull();
    expect(parseServerMessage({ kind: "reply", ok: "yes" })).toBeNull();
  });
});
