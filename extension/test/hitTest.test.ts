import { Graphviz } from "@hpcc-js/wasm-graphviz";
import { beforeAll, describe, expect, it } from "vitest";

import { type ElementLike, candidateIds, hitTest, indexGroups, nodeIdOfGroup } from "../src/hitTest";
import { type XmlElement, parseXml, walk } from "./fixtures";

/** A hand-made element tree: el(tag, attrs, ...children), text children as strings. */
function el(tagName: string, attrs: Record<string, string> = {}, ...children: (ElementLike | string)[]): ElementLike {
  const kids: ElementLike[] = [];
  const texts: string[] = [];
  const node: ElementLike & { parentElement: ElementLike | null } = {
    tagName,
    parentElement: null,
    children: kids,
    get textContent() {
      return texts.join("") + kids.map((k) => k.textContent).join("");
    },
    getAttribute: (name) => attrs[name] ?? null,
  };
  for (const child of children) {
    if (typeof child === "string") texts.push(child);
    else {
      (child as { parentElement: ElementLike | null }).parentElement = node;
      kids.push(child);
    }
  }
  return node;
}

const known = (ids: string[]) => (id: string) => ids.includes(id);

describe("hitTest on hand-made trees", () => {
  const shape = el("polygon");
  const label = el("text", {}, "p2g");
  const node = el("g", { id: "substep/p2g", class: "node" }, el("title", {}, "substep/p2g"), shape, label);
  const edgePath = el("path");
  const edge = el("g", { id: "edge1", class: "edge" }, el("title", {}, "a->b"), edgePath);
  const clusterShape = el("polygon");
  const cluster = el("g", { id: "clust1", class: "cluster" }, el("title", {}, "cluster_substep"), clusterShape);
  const background = el("polygon", { class: "bg" });
  const svg = el("svg", {}, el("g", { id: "graph0", class: "graph" }, background, cluster, node, edge));

  it("names the node whose shape or label was clicked", () => {
    const isKnown = known(["substep/p2g", "substep"]);
    expect(hitTest(shape, isKnown, svg)).toMatchObject({ kind: "node", id: "substep/p2g" });
    expect(hitTest(label, isKnown, svg)?.element).toBe(node);
  });

  it("names a cluster by its title without the cluster_ prefix", () => {
    expect(hitTest(clusterShape, known(["substep"]), svg)).toMatchObject({ kind: "cluster", id: "substep" });
  });

  it("gives nothing for the background, an edge, or an unknown node", () => {
    const isKnown = known(["substep/p2g", "substep"]);
    expect(hitTest(background, isKnown, svg)).toBeNull();
    expect(hitTest(edgePath, isKnown, svg)).toBeNull();
    expect(hitTest(shape, known([]), svg)).toBeNull();
    expect(hitTest(null, isKnown, svg)).toBeNull();
  });

  it("falls back to the title when the id is Graphviz's own", () => {
    const g = el("g", { id: "node3", class: "node" }, el("title", {}, "init"));
    expect(candidateIds(g)).toEqual(["node3", "init"]);
    expect(nodeIdOfGroup(g, known(["init"]))).toBe("init");
  });

  it("does not walk past the stop element", () => {
    const inner = el("rect");
    const outer = el("g", { id: "x", class: "node" }, el("svg", {}, inner));
    const stop = inner.parentElement;
    expect(hitTest(inner, known(["x"]), stop)).toBeNull();
    expect(hitTest(inner, known(["x"]), null)).toMatchObject({ id: "x", element: outer });
  });
});

describe("hitTest on Graphviz's real SVG", () => {
  // The DOT style graphlab/widget/view.py writes: node id as the DOT name and as `id`,
  // a sequence as a cluster whose `id` is the sequence use's node id.
  const dot = `digraph "g" {
    node [shape=box];
    "init" [id="init", label="init"];
    subgraph "cluster_substep" {
      id="substep"; label="substep ×3";
      "substep/p2g" [id="substep/p2g", label="p2g"];
      "substep/g2p" [id="substep/g2p", label="g2p"];
    }
    "init" -> "substep/p2g";
    "substep/p2g" -> "substep/g2p";
  }`;
  let svg: XmlElement;
  beforeAll(async () => {
    const gv = await Graphviz.load();
    svg = parseXml(gv.layout(dot, "svg", "dot"));
  });

  const groups = (): XmlElement[] =>
    [...walk(svg)].filter((e) => e.tagName === "g" && /\b(node|cluster)\b/.test(e.getAttribute("class") ?? ""));

  it("indexes every node and cluster by its graphlab id", () => {
    const isKnown = known(["init", "substep", "substep/p2g", "substep/g2p"]);
    const index = indexGroups(groups(), isKnown);
    expect([...index.keys()].sort()).toEqual(["init", "substep", "substep/g2p", "substep/p2g"]);
    expect(index.get("substep")!.getAttribute("class")).toBe("cluster");
  });

  it("maps a click on a node's shape or text to its id", () => {
    const isKnown = known(["init", "substep", "substep/p2g", "substep/g2p"]);
    const p2g = groups().find((g) => g.getAttribute("id") === "substep/p2g")!;
    const text = p2g.children.find((c) => c.tagName === "text")!;
    const shape = p2g.children.find((c) => c.tagName === "polygon")!;
    expect(hitTest(text, isKnown, svg)).toMatchObject({ kind: "node", id: "substep/p2g" });
    expect(hitTest(shape, isKnown, svg)).toMatchObject({ kind: "node", id: "substep/p2g" });
  });

  it("maps a click on an edge to nothing", () => {
    const isKnown = known(["init", "substep", "substep/p2g", "substep/g2p"]);
    const edge = [...walk(svg)].find((e) => e.getAttribute("class") === "edge")!;
    expect(hitTest(edge.children.at(-1)!, isKnown, svg)).toBeNull();
  });
});

describe("hitTest on graphlab.analysis.render's drawing", () => {
  // What graphlab/analysis/render.py writes: tooltips make Graphviz wrap each node's shapes in <g><a>;
  // args are nodes too (`arg:x`) but not graph nodes.
  const dot = `digraph g {
    graph [label=g labelloc=t rankdir=TB tooltip=g]
    init [label="init\n(fill)" id=init shape=box style=rounded tooltip="init\n(fill)"]
    subgraph cluster_step {
      id=step label="step ×3" style="rounded,dashed" tooltip="step ×3"
      "step/axpy" [label=axpy id="step/axpy" shape=box style=rounded tooltip="GL001: parameter 'y' is unbound"]
    }
    init -> "step/axpy" [style=invis weight=10]
    "arg.x" [label="x" id="arg:x" shape=cylinder tooltip="x"]
    init -> "arg.x" [label="W x"]
    "arg.x" -> "step/axpy" [label="R x"]
  }`;
  const isKnown = known(["init", "step", "step/axpy"]);
  let svg: XmlElement;
  beforeAll(async () => {
    const gv = await Graphviz.load();
    svg = parseXml(gv.layout(dot, "svg", "dot"));
  });

  const byId = (id: string): XmlElement => [...walk(svg)].find((e) => e.getAttribute("id") === id)!;

  it("maps a click on a shape inside the tooltip anchor to the node", () => {
    const shape = [...walk(byId("step/axpy"))].find((e) => e.tagName === "path" || e.tagName === "polygon")!;
    expect(shape.parentElement!.tagName).toBe("a");
    expect(hitTest(shape, isKnown, svg)).toMatchObject({ kind: "node", id: "step/axpy" });
  });

  it("maps a click on the cluster's frame to the sequence", () => {
    const frame = [...walk(byId("step"))].find((e) => e.tagName === "path" || e.tagName === "polygon")!;
    expect(hitTest(frame, isKnown, svg)).toMatchObject({ kind: "cluster", id: "step" });
  });

  it("does not select an arg node", () => {
    const text = [...walk(byId("arg:x"))].find((e) => e.tagName === "text")!;
    expect(hitTest(text, isKnown, svg)).toBeNull();
  });
});
