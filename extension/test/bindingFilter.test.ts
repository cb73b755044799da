import { describe, expect, it } from "vitest";

import {
  bindingOptions,
  bindingProblem,
  freeArgName,
  openFields,
  parseArgShape,
  parseElementShape,
  specFromParam,
  suggestBinding,
} from "../src/logic/bindingFilter";
import { arg, param } from "./fixtures";

describe("bindingProblem", () => {
  it("accepts an arg equal in kind, dtype, ndim and element shape", () => {
    expect(bindingProblem(param("x", { element_shape: [2] }), arg("x", { element_shape: [2] }))).toBeNull();
  });

  it("refuses another kind", () => {
    expect(bindingProblem(param("x"), arg("s", { kind: "scalar", ndim: 0 }))).toBe(
      "a scalar arg cannot be passed to an ndarray parameter",
    );
  });

  it("refuses another dtype", () => {
    expect(bindingProblem(param("x"), arg("x", { dtype: "i32" }))).toBe("dtype i32 does not fit dtype f32");
  });

  it("refuses another ndim", () => {
    expect(bindingProblem(param("x", { ndim: 1 }), arg("x", { ndim: 2 }))).toBe("ndim 2 does not fit ndim 1");
  });

  it("refuses another element shape, naming both", () => {
    expect(bindingProblem(param("x", { element_shape: [2] }), arg("x", { element_shape: [3] }))).toBe(
      "element shape [3] does not fit element shape [2]",
    );
    expect(bindingProblem(param("x", { element_shape: [2, 2] }), arg("x", { element_shape: [2] }))).not.toBeNull();
  });

  it("lets a field the annotation leaves open (null) accept anything", () => {
    const open = param("x", { dtype: null, ndim: null, element_shape: null });
    expect(bindingProblem(open, arg("x", { dtype: "u8", ndim: 3, element_shape: [4, 4] }))).toBeNull();
  });

  it("still checks the kind when everything else is open", () => {
    const open = param("x", { dtype: null, ndim: null, element_shape: null });
    expect(bindingProblem(open, arg("m", { kind: "matrix", ndim: 0, element_shape: [2] }))).not.toBeNull();
  });

  it("checks the format of read-write textures", () => {
    const p = param("t", { kind: "rw_texture", dtype: null, ndim: 2, element_shape: null, fmt: "r32f" });
    const ok = arg("t", { kind: "rw_texture", dtype: null, ndim: 2, fmt: "r32f" });
    expect(bindingProblem(p, ok)).toBeNull();
    expect(bindingProblem(p, { ...ok, fmt: "rgba8" })).toBe("format rgba8 does not fit format r32f");
  });

  it("lets an arg without a dtype (a texture) fit a parameter's dtype", () => {
    const p = param("t", { kind: "texture", dtype: "f32", ndim: 2, element_shape: null });
    expect(bindingProblem(p, arg("t", { kind: "texture", dtype: null, ndim: 2 }))).toBeNull();
  });
});

describe("bindingOptions", () => {
  it("lists the args that fit first, each with the reason the others do not", () => {
    const args = [arg("a", { dtype: "i32" }), arg("b"), arg("c", { ndim: 2 }), arg("d")];
    const options = bindingOptions(param("x"), args);
    expect(options.map((o) => [o.arg.name, o.fits])).toEqual([
      ["b", true],
      ["d", true],
      ["a", false],
      ["c", false],
    ]);
    expect(options[2]!.reason).toBe("dtype i32 does not fit dtype f32");
    expect(options[0]!.reason).toBeNull();
  });
});

describe("suggestBinding", () => {
  it("prefers the fitting arg with the parameter's name", () => {
    expect(suggestBinding(param("v"), [arg("x"), arg("v")])).toBe("v");
  });

  it("ignores a same-named arg that does not fit", () => {
    expect(suggestBinding(param("v"), [arg("v", { dtype: "i32" }), arg("w")])).toBe("w");
  });

  it("takes the only fitting arg", () => {
    expect(suggestBinding(param("v"), [arg("a", { ndim: 2 }), arg("b")])).toBe("b");
  });

  it("leaves the parameter unbound when the choice is not clear", () => {
    expect(suggestBinding(param("v"), [arg("a"), arg("b")])).toBeNull();
    expect(suggestBinding(param("v"), [])).toBeNull();
  });
});

describe("specFromParam", () => {
  it("copies a fully annotated parameter", () => {
    const result = specFromParam(param("x", { element_shape: [2] }), "x");
    expect(result).toEqual({
      ok: true,
      spec: { name: "x", kind: "ndarray", dtype: "f32", ndim: 1, element_shape: [2], fmt: null, role: "state" },
    });
  });

  it("names the fields the annotation leaves open", () => {
    const open = param("x", { dtype: null, ndim: null, element_shape: null });
    expect(openFields(open)).toEqual(["dtype", "ndim", "element_shape"]);
    const result = specFromParam(open, "x");
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.missing).toEqual(["dtype", "ndim", "element_shape"]);
  });

  it("fills open fields from the user's values, never overriding the annotation", () => {
    const open = param("x", { dtype: null, ndim: 2, element_shape: null });
    const result = specFromParam(open, "x", { dtype: "i32", ndim: 5, element_shape: [3], role: "input" });
    expect(result.ok && result.spec).toMatchObject({ dtype: "i32", ndim: 2, element_shape: [3], role: "input" });
  });

  it("makes scalars and textures with the right empty fields", () => {
    const s = specFromParam(param("dt", { kind: "scalar", ndim: 0 }), "dt");
    expect(s.ok && s.spec).toMatchObject({ kind: "scalar", dtype: "f32", ndim: 0, element_shape: [] });
    const t = specFromParam(param("t", { kind: "texture", dtype: null, ndim: 2, element_shape: null }), "t");
    expect(t.ok && t.spec).toMatchObject({ kind: "texture", dtype: null, ndim: 2, element_shape: [], fmt: null });
  });

  it("refuses a matrix without a vector or matrix element shape", () => {
    const m = param("m", { kind: "matrix", ndim: 0, element_shape: null });
    expect(specFromParam(m, "m", { element_shape: [] }).ok).toBe(false);
    expect(specFromParam(m, "m", { element_shape: [2, 2] }).ok).toBe(true);
  });

  it("refuses parameters a graph cannot pass", () => {
    const result = specFromParam(param("t", { kind: "template" }), "t");
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toContain("template");
  });
});

describe("helpers", () => {
  it("finds a free arg name", () => {
    expect(freeArgName("x", [arg("y")])).toBe("x");
    expect(freeArgName("x", [arg("x"), arg("x_2")])).toBe("x_3");
  });

  it("parses element shapes", () => {
    expect(parseElementShape("")).toEqual([]);
    expect(parseElementShape("()")).toEqual([]);
    expect(parseElementShape("3")).toEqual([3]);
    expect(parseElementShape("(2, 2)")).toEqual([2, 2]);
    expect(parseElementShape("2x3")).toEqual([2, 3]);
    expect(parseElementShape("0")).toBeNull();
    expect(parseElementShape("1,2,3")).toBeNull();
    expect(parseElementShape("a")).toBeNull();
  });
});

describe("parseArgShape", () => {
  it("reads sizes and dim names, one per dimension; blank is any shape", () => {
    expect(parseArgShape("", 2)).toBeNull();
    expect(parseArgShape("n", 1)).toEqual(["n"]);
    expect(parseArgShape("(64, G)", 2)).toEqual([64, "G"]);
    expect(parseArgShape("64 64", 2)).toEqual([64, 64]);
  });

  it("refuses a wrong count, zero sizes and names that are not identifiers", () => {
    expect(parseArgShape("n", 2)).toBeUndefined();
    expect(parseArgShape("0", 1)).toBeUndefined();
    expect(parseArgShape("2n", 1)).toBeUndefined();
  });
});
