/**
 * The model's name grammar (graphlab/core/names.py), mirrored so that a form can refuse a bad name as it
 * is typed instead of after a round trip; Python checks again and its word is final.
 * tests/widget/test_ts_name_rules.py keeps the keyword list and the length limit in step with Python's.
 */

import type { GraphView } from "../wire/protocol";

/** Longest name, as `graphlab.core.names.MAX_NAME_LENGTH`. */
export const MAX_NAME_LENGTH = 128;

/** Python's `keyword.kwlist`: args become keyword arguments of a `ti.graph` run, so none may be one. */
export const PYTHON_KEYWORDS: ReadonlySet<string> = new Set([
  "False",
  "None",
  "True",
  "and",
  "as",
  "assert",
  "async",
  "await",
  "break",
  "class",
  "continue",
  "def",
  "del",
  "elif",
  "else",
  "except",
  "finally",
  "for",
  "from",
  "global",
  "if",
  "import",
  "in",
  "is",
  "lambda",
  "nonlocal",
  "not",
  "or",
  "pass",
  "raise",
  "return",
  "try",
  "while",
  "with",
  "yield",
]);

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const ALLOWED = /[A-Za-z0-9_]/;
/** How much of a bad name a message shows, as `graphlab.core.names.SHOWN_CHARS`. */
const SHOWN_CHARS = 60;
const FIX = `use 1 to ${MAX_NAME_LENGTH} ASCII letters, digits and '_', not starting with a digit`;

/** Why `value` is not a name, or null when it is one (as `graphlab.core.names.name_problem`). */
export function nameProblem(value: string): string | null {
  const chars = [...value]; // code points, as Python counts them
  if (chars.length === 0) return "it is empty";
  if (chars.length > MAX_NAME_LENGTH) {
    return `it has ${chars.length.toLocaleString("en-US")} characters, over the limit of ${MAX_NAME_LENGTH}`;
  }
  if (NAME.test(value)) return PYTHON_KEYWORDS.has(value) ? "it is a Python keyword" : null;
  if (/^[0-9]/.test(value)) return "it starts with a digit";
  const at = chars.findIndex((c) => !ALLOWED.test(c));
  return `character ${pyRepr(chars[at]!)} at index ${at} is not an ASCII letter, digit or '_'`;
}

/** Python's `repr` of a plain string (quoted as JSON when it holds a quote, backslash or control character). */
function pyRepr(value: string): string {
  return /['\\\p{Cc}]/u.test(value) ? JSON.stringify(value) : `'${value}'`;
}

/** A bad name as `graphlab.core.names.shown` writes it in a message: quoted, cut when long. */
export function shownName(value: string): string {
  const chars = [...value];
  if (chars.length <= SHOWN_CHARS) return pyRepr(value);
  return `${pyRepr(chars.slice(0, SHOWN_CHARS).join(""))}... (${chars.length.toLocaleString("en-US")} characters)`;
}

/** The sequence names the graph already defines (a group's name must be new). */
export function sequenceNames(graph: GraphView): Set<string> {
  const names = new Set<string>();
  for (const node of graph.nodes) {
    if (node.kind === "sequence" || node.kind === "loop" || node.kind === "branch") names.add(node.sequence);
  }
  return names;
}

/** Why `name` cannot name a new sequence of `graph`, with the fix; null when it can. */
export function sequenceNameError(name: string, graph: GraphView): string | null {
  const problem = nameProblem(name);
  if (problem !== null) return `sequence name ${shownName(name)} is not a valid identifier (${problem}); ${FIX}`;
  if (sequenceNames(graph).has(name)) {
    return `sequence name ${shownName(name)} is already a sequence of this graph; choose a new name`;
  }
  return null;
}
