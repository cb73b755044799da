import { describe, expect, it } from "vitest";

import { MAX_NAME_LENGTH, nameProblem, sequenceNameError, sequenceNames } from "../src/logic/names";
import { sampleGraph } from "./fixtures";

describe("nameProblem (graphlab.core.names.name_problem)", () => {
  it("accepts identifiers", () => {
    expect(nameProblem("substep_2")).toBeNull();
    expect(nameProblem("_x")).toBeNull();
    expect(nameProblem("match")).toBeNull(); // a soft keyword is not in keyword.kwlist
  });

  it("says why a name is refused, as Python does", () => {
    expect(nameProblem("")).toBe("it is empty");
    expect(nameProblem("2x")).toBe("it starts with a digit");
    expect(nameProblem("my seq")).toBe("character ' ' at index 2 is not an ASCII letter, digit or '_'");
    expect(nameProblem("caf\u00e9")).toBe("character '\u00e9' at index 3 is not an ASCII letter, digit or '_'");
    expect(nameProblem("a\nb")).toBe("character \"\\n\" at index 1 is not an ASCII letter, digit or '_'");
    expect(nameProblem("while")).toBe("it is a Python keyword");
    expect(nameProblem("a".repeat(MAX_NAME_LENGTH))).toBeNull();
    expect(nameProblem("a".repeat(MAX_NAME_LENGTH + 1))).toBe(`it has 129 characters, over the limit of 128`);
  });
});

describe("sequenceNameError", () => {
  const g = sampleGraph();

  it("refuses a sequence the graph already has", () => {
    expect(sequenceNames(g)).toEqual(new Set(["substep"]));
    expect(sequenceNameError("substep", g)).toContain("already a sequence");
  });

  it("accepts a new identifier, even one naming a node (the node is renamed apart)", () => {
    expect(sequenceNameError("render", g)).toBeNull();
    expect(sequenceNameError("group", g)).toBeNull();
  });

  it("names the field and the fix in the words of graphlab.core.names.check_name", () => {
    const fix = "use 1 to 128 ASCII letters, digits and '_', not starting with a digit";
    expect(sequenceNameError("1st", g)).toBe(
      `sequence name '1st' is not a valid identifier (it starts with a digit); ${fix}`,
    );
    expect(sequenceNameError("a".repeat(129), g)).toBe(
      `sequence name '${"a".repeat(60)}'... (129 characters) is not a valid identifier ` +
        `(it has 129 characters, over the limit of 128); ${fix}`,
    );
  });
});
