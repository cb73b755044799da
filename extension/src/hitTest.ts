/**
 * Map a click in Graphviz's SVG to a graph node id, and node ids to their SVG groups.
 *
 * Graphviz draws each node as `<g class="node" id=...><title>NAME</title>...</g>` and each cluster
 * as `<g class="cluster" id=...>`; the `id` is the DOT `id` attribute when the DOT gives one (else
 * `node3`, `clust1`) and the title is the DOT node or subgraph name. The DOT graphlab makes sets
 * `id` to the node id (`substep/p2g`); the title, and the title without a `cluster_` prefix, are
 * the fallbacks for DOT written otherwise. Only ids the graph knows count, so Graphviz's own
 * `node3` never selects anything.
 *
 * Works on a structural element type, so it runs on the browser's DOM and in tests alike.
 */

export interface ElementLike {
  readonly tagName: string;
  readonly parentElement: ElementLike | null;
  readonly children: ArrayLike<ElementLike>;
  readonly textContent: string | null;
  getAttribute(name: string): string | null;
}

export type HitKind = "node" | "cluster";

export interface Hit {
  kind: HitKind;
  id: string;
  /** The `<g>` that was hit. */
  element: ElementLike;
}

/** Whether `el` is a Graphviz node or cluster group, and which. */
export function groupKind(el: ElementLike): HitKind | null {
  if (el.tagName.toLowerCase() !== "g") return null;
  const classes = (el.getAttribute("class") ?? "").split(/\s+/);
  if (classes.includes("node")) return "node";
  if (classes.includes("cluster")) return "cluster";
  return null;
}

/** The text of a group's own `<title>` child, if any. */
export function groupTitle(el: ElementLike): string | null {
  for (let i = 0; i < el.children.length; i++) {
    const child = el.children[i]!;
    if (child.tagName.toLowerCase() === "title") return (child.textContent ?? "").trim();
  }
  return null;
}

/** The names a group may stand for, most specific first. */
export function candidateIds(el: ElementLike): string[] {
  const out: string[] = [];
  const id = el.getAttribute("id");
  if (id) out.push(id);
  const title = groupTitle(el);
  if (title) {
    out.push(title);
    if (title.startsWith("cluster_")) out.push(title.slice("cluster_".length));
    if (title.startsWith("cluster")) out.push(title.slice("cluster".length));
  }
  return out;
}

/** The graph node id a Graphviz group stands for, or null. */
export function nodeIdOfGroup(el: ElementLike, isKnown: (id: string) => boolean): string | null {
  if (groupKind(el) === null) return null;
  return candidateIds(el).find(isKnown) ?? null;
}

/**
 * The node or cluster under a click: walk up from the event target to the first Graphviz node or
 * cluster group (stopping at `stop`, the SVG root) and name it; null for the background, an edge,
 * or a group the graph does not know.
 */
export function hitTest(
  target: ElementLike | null,
  isKnown: (id: string) => boolean,
  stop: ElementLike | null = null,
): Hit | null {
  for (let el = target; el !== null && el !== stop; el = el.parentElement) {
    const kind = groupKind(el);
    if (kind === null) {
      const classes = (el.getAttribute("class") ?? "").split(/\s+/);
      if (el.tagName.toLowerCase() === "g" && classes.includes("edge")) return null;
      continue;
    }
    const id = nodeIdOfGroup(el, isKnown);
    return id === null ? null : { kind, id, element: el };
  }
  return null;
}

/** Index the node and cluster groups of a rendered SVG by the graph node id they stand for. */
export function indexGroups<E extends ElementLike>(
  groups: Iterable<E>,
  isKnown: (id: string) => boolean,
): Map<string, E> {
  const index = new Map<string, E>();
  for (const el of groups) {
    const id = nodeIdOfGroup(el, isKnown);
    if (id !== null && !index.has(id)) index.set(id, el);
  }
  return index;
}
