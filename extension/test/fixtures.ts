import type { ArgView, GraphView, NodeView, ParamView } from "../src/protocol";

export function param(name: string, fields: Partial<ParamView> = {}): ParamView {
  return { name, kind: "ndarray", dtype: "f32", ndim: 1, element_shape: [], fmt: null, label: "", ...fields };
}

export function arg(name: string, fields: Partial<ArgView> = {}): ArgView {
  return {
    name,
    kind: "ndarray",
    dtype: "f32",
    ndim: 1,
    element_shape: [],
    fmt: null,
    role: "state",
    shape: null,
    inferred_shape: null,
    label: "",
    ...fields,
  };
}

/** init; substep (x3) { p2g; g2p }; render */
export function sampleGraph(): GraphView {
  const nodes: NodeView[] = [
    {
      id: "init",
      kind: "dispatch",
      name: "init",
      parent: null,
      index: 0,
      kernel: "m:init",
      kernel_name: "init",
      params: [],
      bindings: {},
    },
    {
      id: "substep",
      kind: "sequence",
      name: "substep",
      parent: null,
      index: 1,
      sequence: "substep",
      repeat: 3,
      children: ["substep/p2g", "substep/g2p"],
    },
    {
      id: "substep/p2g",
      kind: "dispatch",
      name: "p2g",
      parent: "substep",
      index: 0,
      kernel: "m:p2g",
      kernel_name: "p2g",
      params: [],
      bindings: {},
    },
    {
      id: "substep/g2p",
      kind: "dispatch",
      name: "g2p",
      parent: "substep",
      index: 1,
      kernel: "m:g2p",
      kernel_name: "g2p",
      params: [],
      bindings: {},
    },
    {
      id: "render",
      kind: "dispatch",
      name: "render",
      parent: null,
      index: 2,
      kernel: "m:render",
      kernel_name: "render",
      params: [],
      bindings: {},
    },
  ];
  return { name: "g", version: 1, args: [], nodes, body: ["init", "substep", "render"], layout: {} };
}

/** A minimal XML reader giving `ElementLike` trees, enough for Graphviz's SVG output. */
export interface XmlElement {
  tagName: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  parentElement: XmlElement | null;
  text: string[];
  readonly textContent: string;
  getAttribute(name: string): string | null;
}

function decode(text: string): string {
  return text
    .replace(/&#(\d+);/g, (_, d: string) => String.fromCharCode(Number(d)))
    .replace(/&#x([0-9a-f]+);/gi, (_, x: string) => String.fromCharCode(parseInt(x, 16)))
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, "&");
}

function element(tagName: string, attributes: Record<string, string>, parent: XmlElement | null): XmlElement {
  const el: XmlElement = {
    tagName,
    attributes,
    children: [],
    parentElement: parent,
    text: [],
    get textContent(): string {
      return el.text.join("") + el.children.map((c) => c.textContent).join("");
    },
    getAttribute: (name) => (name in attributes ? attributes[name]! : null),
  };
  return el;
}

export function parseXml(source: string): XmlElement {
  const body = source.replace(/<\?[\s\S]*?\?>|<!--[\s\S]*?-->|<!DOCTYPE[^>]*>/g, "");
  const root = element("#document", {}, null);
  let current = root;
  const token = /<\/([\w:-]+)\s*>|<([\w:-]+)((?:\s+[\w:-]+\s*=\s*"[^"]*")*)\s*(\/?)>|([^<]+)/g;
  for (let m = token.exec(body); m !== null; m = token.exec(body)) {
    if (m[1]) {
      current = current.parentElement ?? root;
    } else if (m[2]) {
      const attributes: Record<string, string> = {};
      for (const a of m[3]!.matchAll(/([\w:-]+)\s*=\s*"([^"]*)"/g)) attributes[a[1]!] = decode(a[2]!);
      const el = element(m[2], attributes, current);
      current.children.push(el);
      if (!m[4]) current = el;
    } else if (m[5]) {
      current.text.push(decode(m[5]));
    }
  }
  return root.children[0]!;
}

export function* walk(el: XmlElement): Generator<XmlElement> {
  yield el;
  for (const child of el.children) yield* walk(child);
}
