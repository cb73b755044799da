/**
 * Which args fit a kernel parameter, and why the others do not.
 *
 * The rules mirror `graphlab.analysis.check.rules_bindings.binding_problem`, so that what the side panel
 * offers is exactly what validation accepts: the kind must match; a parameter field (dtype, ndim,
 * element shape, format) left open by the annotation (null) accepts any value; otherwise the
 * values must be equal. Args without a dtype or format (textures) fit any dtype or format.
 */

import type { ArgKind, ArgSpec, ArgView, ParamView, Role } from "../wire/protocol";

/** `word` with its article, as messages name a kind: "a scalar", "an ndarray" (said "en-darray"). */
export function aOrAn(word: string): string {
  return `${/^[aeiou]/.test(word) || word.startsWith("nd") ? "an" : "a"} ${word}`;
}

/** Why `arg` cannot be bound to `param`, or null when it fits. */
export function bindingProblem(param: ParamView, arg: ArgView): string | null {
  if (param.kind !== arg.kind) {
    return `${aOrAn(arg.kind)} arg cannot be passed to ${aOrAn(param.kind)} parameter`;
  }
  if (param.dtype !== null && arg.dtype !== null && param.dtype !== arg.dtype) {
    return `dtype ${arg.dtype} does not fit dtype ${param.dtype}`;
  }
  if (param.ndim !== null && param.ndim !== arg.ndim) {
    return `ndim ${arg.ndim} does not fit ndim ${param.ndim}`;
  }
  if (param.element_shape !== null && !sameShape(param.element_shape, arg.element_shape)) {
    return `element shape ${shapeText(arg.element_shape)} does not fit element shape ${shapeText(param.element_shape)}`;
  }
  if (param.fmt !== null && arg.fmt !== null && param.fmt !== arg.fmt) {
    return `format ${arg.fmt} does not fit format ${param.fmt}`;
  }
  return null;
}

export interface BindingOption {
  arg: ArgView;
  fits: boolean;
  /** Why it does not fit (null when it fits). */
  reason: string | null;
}

/** Every declared arg for `param`: those that fit first, each group in declaration order. */
export function bindingOptions(param: ParamView, args: readonly ArgView[]): BindingOption[] {
  const options = args.map((arg) => {
    const reason = bindingProblem(param, arg);
    return { arg, fits: reason === null, reason };
  });
  return [...options.filter((o) => o.fits), ...options.filter((o) => !o.fits)];
}

/**
 * The arg to pre-select for a new dispatch: the fitting arg with the parameter's name, else the
 * only fitting arg, else none (the parameter stays unbound and validation says so).
 */
export function suggestBinding(param: ParamView, args: readonly ArgView[]): string | null {
  const fitting = args.filter((arg) => bindingProblem(param, arg) === null);
  const same = fitting.find((arg) => arg.name === param.name);
  if (same) return same.name;
  return fitting.length === 1 ? fitting[0]!.name : null;
}

/** Suggested bindings for every parameter of a kernel. */
export function suggestBindings(params: readonly ParamView[], args: readonly ArgView[]): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const param of params) out[param.name] = suggestBinding(param, args);
  return out;
}

/**
 * Guessed bindings for a new dispatch, and which parameters were guessed (all that got an arg: the
 * canvas draws them dashed until accepted). An arg is guessed for at most one parameter, so a guess
 * never makes two parameters of one dispatch share a buffer (an aliasing error nobody asked for).
 */
export function guessBindings(
  params: readonly ParamView[],
  args: readonly ArgView[],
): { bindings: Record<string, string | null>; guessed: string[] } {
  const bindings: Record<string, string | null> = {};
  const used = new Set<string>();
  // parameters with a same-named fitting arg first: `x` keeps `x` even if an earlier parameter could take it
  const named = new Set(params.filter((p) => args.some((a) => a.name === p.name && bindingProblem(p, a) === null)));
  for (const param of params) if (named.has(param)) used.add(param.name);
  for (const param of params) {
    if (named.has(param)) {
      bindings[param.name] = param.name;
      continue;
    }
    const fitting = args.filter((arg) => bindingProblem(param, arg) === null);
    const pick = fitting.length === 1 && !used.has(fitting[0]!.name) ? fitting[0]!.name : null;
    if (pick !== null) used.add(pick);
    bindings[param.name] = pick;
  }
  return { bindings, guessed: params.filter((p) => bindings[p.name] !== null).map((p) => p.name) };
}

/** Values for the fields a parameter's annotation leaves open, given by the user. */
export interface SpecOverrides {
  dtype?: string | null;
  ndim?: number | null;
  element_shape?: number[] | null;
  fmt?: string | null;
  role?: Role;
}

export type OpenField = "dtype" | "ndim" | "element_shape" | "fmt";

export type SpecResult = { ok: true; spec: ArgSpec } | { ok: false; reason: string; missing: OpenField[] };

const GRAPH_KINDS: readonly ArgKind[] = ["scalar", "ndarray", "matrix", "texture", "rw_texture"];

/** The fields of `param` that a new arg needs but the annotation leaves open. */
export function openFields(param: ParamView): OpenField[] {
  const open: OpenField[] = [];
  const needsDtype = param.kind === "scalar" || param.kind === "ndarray" || param.kind === "matrix";
  if (needsDtype && param.dtype === null) open.push("dtype");
  if ((param.kind === "ndarray" || param.kind === "texture" || param.kind === "rw_texture") && param.ndim === null) {
    open.push("ndim");
  }
  if ((param.kind === "ndarray" || param.kind === "matrix") && param.element_shape === null) {
    open.push("element_shape");
  }
  if (param.kind === "rw_texture" && param.fmt === null) open.push("fmt");
  return open;
}

/**
 * The spec of a new arg made from a parameter's annotation ("new arg from annotation"); open
 * fields take their value from `overrides`, and the result names those still missing.
 */
export function specFromParam(param: ParamView, name: string, overrides: SpecOverrides = {}): SpecResult {
  if (!(GRAPH_KINDS as readonly string[]).includes(param.kind)) {
    return {
      ok: false,
      reason: `parameter ${param.name} is a ${param.kind}; a ti.graph cannot pass it an arg`,
      missing: [],
    };
  }
  const kind = param.kind as ArgKind;
  const pick = <T>(field: OpenField, fromParam: T | null): T | null => {
    const given = overrides[field] as T | null | undefined;
    return fromParam !== null ? fromParam : (given ?? null);
  };
  const dtype = kind === "texture" || kind === "rw_texture" ? null : pick<string>("dtype", param.dtype);
  const ndim = kind === "scalar" || kind === "matrix" ? 0 : pick<number>("ndim", param.ndim);
  const elementShape =
    kind === "ndarray" || kind === "matrix" ? pick<number[]>("element_shape", param.element_shape) : [];
  const fmt = kind === "rw_texture" ? pick<string>("fmt", param.fmt) : null;
  const missing: OpenField[] = [];
  if (kind !== "texture" && kind !== "rw_texture" && dtype === null) missing.push("dtype");
  if (ndim === null) missing.push("ndim");
  if (elementShape === null) missing.push("element_shape");
  if (kind === "rw_texture" && fmt === null) missing.push("fmt");
  if (kind === "matrix" && elementShape !== null && elementShape.length === 0) {
    return { ok: false, reason: "a matrix arg needs a vector or matrix element shape", missing: ["element_shape"] };
  }
  if (missing.length > 0) {
    return {
      ok: false,
      reason: `the annotation of ${param.name} leaves ${missing.join(", ")} open; choose a value`,
      missing,
    };
  }
  return {
    ok: true,
    spec: {
      name,
      kind,
      dtype,
      ndim: ndim as number,
      element_shape: elementShape as number[],
      fmt,
      role: overrides.role ?? "state",
    },
  };
}

/** A free arg name for a new arg made for `param`: its name, else `name_2`, `name_3`... */
export function freeArgName(base: string, args: readonly ArgView[]): string {
  const taken = new Set(args.map((a) => a.name));
  if (!taken.has(base)) return base;
  for (let k = 2; ; k++) {
    const candidate = `${base}_${k}`;
    if (!taken.has(candidate)) return candidate;
  }
}

/** Parse `2`, `2,2`, `(2, 2)`, `[3]` or `` (scalar element) into an element shape. */
export function parseElementShape(text: string): number[] | null {
  const inner = text
    .trim()
    .replace(/^[([]|[)\]]$/g, "")
    .trim();
  if (inner === "") return [];
  const parts = inner.split(/[\s,x×]+/).filter((p) => p !== "");
  const dims = parts.map((p) => (/^[1-9][0-9]*$/.test(p) ? Number(p) : NaN));
  if (dims.length > 2 || dims.some((d) => Number.isNaN(d))) return null;
  return dims;
}

/**
 * An arg's shape as typed in the new-arg form: `n`, `64, 64`, `G, G` (sizes and symbolic dim
 * names, one per dimension); blank accepts any shape (null). Undefined when it does not parse or
 * does not have `ndim` entries.
 */
export function parseArgShape(text: string, ndim: number): (number | string)[] | null | undefined {
  const inner = text
    .trim()
    .replace(/^[([]|[)\]]$/g, "")
    .trim();
  if (inner === "") return null;
  const parts = inner.split(/[\s,]+/).filter((p) => p !== "");
  const dims = parts.map((p) =>
    /^[1-9][0-9]*$/.test(p) ? Number(p) : /^[A-Za-z_][A-Za-z0-9_]*$/.test(p) ? p : undefined,
  );
  if (dims.length !== ndim || dims.some((d) => d === undefined)) return undefined;
  return dims as (number | string)[];
}

function sameShape(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

function shapeText(shape: readonly number[]): string {
  return `[${shape.join(", ")}]`;
}
