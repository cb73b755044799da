/**
 * The node editor drawn with React Flow: args (buffers, scalars) and dispatches as nodes, each
 * dispatch's parameters as typed ports, bindings as edges (dashed while guessed), sequences, loops,
 * conditionals and branches as groups around what they hold. Every node, port, edge and group
 * carries `data-node-id` / `data-port` / `data-edge` / `data-group` with the model's ids.
 *
 * It draws what `CanvasModel` says and reports what the user does through `CanvasEvents`; it keeps
 * no graph state of its own besides a drag in progress.
 */

import {
  Background,
  type Connection,
  type Edge,
  type FinalConnectionState,
  Handle,
  MiniMap,
  type Node,
  type NodeChange,
  type NodeProps,
  Position,
  ReactFlow,
  type ReactFlowInstance,
  applyNodeChanges,
} from "@xyflow/react";
import { type JSX, type MouseEvent, memo, useMemo, useRef, useState } from "react";

import type { Badge } from "../logic/diagnostics";
import type { DebugMarks } from "./graphView";
import type { GraphView, ParamView } from "../wire/protocol";
import {
  type Box,
  type Corner,
  type Point,
  type Size,
  argId,
  dispatchTitle,
  programNumbers,
  shortType,
} from "./geometry";
import { kindClass, portProblem } from "./ports";

export interface CanvasModel {
  graph: GraphView;
  positions: ReadonlyMap<string, Point>;
  sizes: ReadonlyMap<string, Size>;
  groups: ReadonlyMap<string, Box>;
  selection: ReadonlySet<string>;
  badges: ReadonlyMap<string, Badge>;
  marks: DebugMarks;
  /** The dashed box of a dispatch being added, and its text. */
  pending: { at: Point; text: string } | null;
  /** `wanted`: the overview is mounted; `shown`: it is visible (the Map button is on, some node is out of view). */
  minimap: { wanted: boolean; shown: boolean; corner: Corner };
  /** A refusal to show beside the canvas (a port that cannot take an arg), or null. */
  note: string | null;
  /** The node being renamed in place, or null. */
  renaming: string | null;
  /** Whether the bindings are drawn: not in a far overview, where 1,000 hidden edges still cost each frame. */
  bindings: boolean;
}

export interface CanvasEvents {
  select(id: string | null, extend: boolean): void;
  /** Nodes selected together (a box, Ctrl+A), beside the `selected` trait's one. */
  selectMany(ids: string[]): void;
  /** Nodes put at new positions; `group`: the group dragged as a whole, whose members these are. */
  place(positions: Record<string, [number, number]>, group?: string): void;
  bind(node: string, param: string, arg: string): void;
  acceptGuess(node: string, param: string | null): void;
  refuse(reason: string): void;
  contextMenu(target: { kind: "node" | "group" | "canvas"; id: string | null }, at: Point): void;
  /** Start renaming a node in place (double-click, F2). */
  startRename(id: string): void;
  /** The new name typed in place, or null: cancelled. */
  rename(id: string, name: string | null): void;
  toggleBreakpoint(id: string): void;
  ready(instance: ReactFlowInstance): void;
  /** The view was panned or zoomed (`byUser`: by the user, not by Fit). */
  viewportMoved(byUser: boolean): void;
  /** The zoom while the view moves (every frame of a pan or zoom: kept cheap). */
  zoomed(zoom: number): void;
  /** A click on the overview: centre the view on that point of the drawing. */
  centerAt(at: Point): void;
}

type DispatchData = {
  id: string;
  title: string;
  params: ParamView[];
  bindings: Record<string, string | null>;
  guessed: string[];
  badge: Badge | undefined;
  marks: DebugMarks;
  renaming: boolean;
  events: CanvasEvents;
  width: number;
  height: number;
};
type ArgData = {
  id: string;
  name: string;
  type: string;
  label: string;
  kindClass: string;
  badge: Badge | undefined;
  renaming: boolean;
  events: CanvasEvents;
  width: number;
  height: number;
};
type GroupData = {
  id: string;
  title: string;
  kind: string;
  badge: Badge | undefined;
  marks: DebugMarks;
  renaming: boolean;
  events: CanvasEvents;
  width: number;
  height: number;
};
type PendingData = { text: string };

function BadgeMark({ badge }: { badge: Badge | undefined }): JSX.Element | null {
  if (!badge) return null;
  return (
    <span className={`gl-badge gl-badge-${badge.severity}`} title={badge.text}>
      {badge.count > 9 ? "9+" : badge.count}
    </span>
  );
}

function RenameBox({ id, name, events }: { id: string; name: string; events: CanvasEvents }): JSX.Element {
  return (
    <input
      className="gl-rename nodrag"
      aria-label={`new name for ${id}`}
      defaultValue={name}
      autoFocus
      onKeyDown={(e) => {
        e.stopPropagation();
        if (e.key === "Enter") events.rename(id, e.currentTarget.value);
        if (e.key === "Escape") events.rename(id, null);
      }}
      onBlur={() => events.rename(id, null)}
    />
  );
}

function DebugOverlay({
  id,
  marks,
  events,
}: {
  id: string;
  marks: DebugMarks;
  events: CanvasEvents;
}): JSX.Element | null {
  if (!marks.active) return null;
  const on = marks.breakpoints.has(id);
  const fault = marks.faults.get(id);
  const time = marks.times.get(id);
  return (
    <>
      <button
        type="button"
        className={`gl-dbg gl-bp-dot nodrag${on ? " gl-bp-on" : ""}`}
        data-bp-node={id}
        title={on ? `Breakpoint: stops before ${id} (click to remove)` : `Click to stop before ${id}`}
        onClick={(e) => {
          e.stopPropagation();
          events.toggleBreakpoint(id);
        }}
      />
      {fault ? (
        <span className="gl-dbg gl-fault-mark" title={fault}>
          {"\u2716"}
        </span>
      ) : null}
      {marks.diverged?.[0] === id ? (
        <span className="gl-dbg gl-diverged-mark" title={marks.diverged[1]}>
          {"\u2260"}
        </span>
      ) : null}
      {time ? (
        <span className="gl-dbg gl-time" title={time[1]}>
          {time[0]}
        </span>
      ) : null}
    </>
  );
}

function markClasses(id: string, marks: DebugMarks): string {
  if (!marks.active) return "";
  return [
    id === marks.current ? "gl-current" : "",
    marks.faults.has(id) ? "gl-fault" : "",
    id === marks.nonfinite ? "gl-nonfinite" : "",
    marks.breakpoints.has(id) ? "gl-has-bp" : "",
    id === marks.diverged?.[0] ? "gl-diverged" : "",
  ]
    .filter(Boolean)
    .join(" ");
}

function DispatchNodeView({ data, selected }: NodeProps<Node<DispatchData>>): JSX.Element {
  const { id, params, bindings, guessed, marks } = data;
  const tooltip = [
    `${id}`,
    ...params.map(
      (p) =>
        `${p.name}: ${p.label} \u2190 ${bindings[p.name] ?? "(unbound)"}${guessed.includes(p.name) ? " (guessed)" : ""}`,
    ),
  ].join("\n");
  return (
    <div
      className={`gl-fnode gl-fdispatch ${selected ? "gl-selected" : ""} ${markClasses(id, marks)} ${data.badge ? `gl-sev-${data.badge.severity}` : ""}`}
      data-node-id={id}
      title={tooltip}
      style={{ width: data.width, height: data.height }}
    >
      <div className="gl-fbody">
        <div className="gl-ftitle">
          {data.renaming ? <RenameBox id={id} name={id.split("/").pop()!} events={data.events} /> : data.title}
        </div>
        {params.length > 0 ? (
          <div className="gl-fports">
            {params.map((p) => (
              <div
                key={p.name}
                className={`gl-fport ${kindClass(p.kind)}${bindings[p.name] ? " gl-bound" : ""}${guessed.includes(p.name) ? " gl-guessed" : ""}`}
                data-port={`${id}.${p.name}`}
                title={`${p.name}: ${p.label}${bindings[p.name] ? ` \u2190 ${bindings[p.name]}` : " (unbound: drag a buffer here)"}`}
              >
                <Handle
                  type="target"
                  position={Position.Top}
                  id={p.name}
                  className={`gl-handle ${kindClass(p.kind)}`}
                />
                {p.name}
              </div>
            ))}
          </div>
        ) : null}
      </div>
      <BadgeMark badge={data.badge} />
      <DebugOverlay id={id} marks={marks} events={data.events} />
    </div>
  );
}

function ArgNodeView({ data, selected }: NodeProps<Node<ArgData>>): JSX.Element {
  return (
    <div
      className={`gl-fnode gl-farg ${selected ? "gl-selected" : ""} ${data.badge ? `gl-sev-${data.badge.severity}` : ""}`}
      data-node-id={data.id}
      title={`${data.name}: ${data.label}`}
      style={{ width: data.width, height: data.height }}
    >
      <div className="gl-fbody">
        <div className="gl-ftitle">
          {data.renaming ? <RenameBox id={data.id} name={data.name} events={data.events} /> : data.name}
        </div>
        <div className="gl-ftype">{data.type}</div>
        <Handle
          type="source"
          position={Position.Bottom}
          id="out"
          className={`gl-handle ${data.kindClass}`}
          data-port={`${data.id}.out`}
        />
      </div>
      <BadgeMark badge={data.badge} />
    </div>
  );
}

function GroupNodeView({ data, selected }: NodeProps<Node<GroupData>>): JSX.Element {
  return (
    <div
      className={`gl-fgroup gl-fgroup-${data.kind} ${selected ? "gl-selected" : ""} ${markClasses(data.id, data.marks)}`}
      data-group={data.id}
      data-node-id={data.id}
      style={{ width: data.width, height: data.height }}
    >
      <div className="gl-fgroup-title gl-fbody">
        {data.renaming ? <RenameBox id={data.id} name={data.id.split("/").pop()!} events={data.events} /> : data.title}
      </div>
      <BadgeMark badge={data.badge} />
      <DebugOverlay id={data.id} marks={data.marks} events={data.events} />
    </div>
  );
}

function PendingNode({ data }: NodeProps<Node<PendingData>>): JSX.Element {
  return <div className="gl-pending-node">{data.text}</div>;
}

// memoised: with `reuseUnchanged` an unchanged node keeps its data object, so an edit redraws only what changed
const DispatchNode = memo(DispatchNodeView);
const ArgNode = memo(ArgNodeView);
const GroupNode = memo(GroupNodeView);

// not "group": React Flow styles its own group type (a border and a padding) on top of ours
const NODE_TYPES = { dispatch: DispatchNode, arg: ArgNode, container: GroupNode, pending: PendingNode };

/** What of the debugger's marks a node draws: a node whose part is unchanged need not redraw. */
function marksKey(id: string, marks: DebugMarks): string {
  if (!marks.active) return "";
  return JSON.stringify([
    markClasses(id, marks),
    marks.faults.get(id) ?? null,
    marks.times.get(id) ?? null,
    marks.diverged?.[0] === id ? marks.diverged[1] : null,
  ]);
}

/** A node's or edge's content as a string (the marks it draws, not the events it calls back). */
export function nodeKey(node: { id: string }): string {
  return JSON.stringify(node, (key: string, value: unknown) => {
    if (key === "events") return undefined;
    if (key === "marks") return marksKey(node.id, value as DebugMarks);
    return value;
  });
}

/**
 * The nodes (or edges) of `fresh`, each replaced by the one of the last drawing when its content is
 * the same, so React Flow and the memoised components skip it (an edit on mpm88 redraws a few nodes
 * and edges, not all of them). `cache` maps id -> [key, item] and is updated in place.
 */
export function reuseUnchanged<T extends { id: string }>(fresh: T[], cache: Map<string, [string, T]>): T[] {
  const seen = new Set<string>();
  const out = fresh.map((node) => {
    seen.add(node.id);
    const key = nodeKey(node);
    const old = cache.get(node.id);
    if (old && old[0] === key) return old[1];
    cache.set(node.id, [key, node]);
    return node;
  });
  for (const id of [...cache.keys()]) if (!seen.has(id)) cache.delete(id);
  return out;
}

/** Whether two canvas models draw the same nodes: the same objects, and selections with the same ids. */
export function sameNodes(a: CanvasModel, b: CanvasModel): boolean {
  return (
    a.graph === b.graph &&
    a.positions === b.positions &&
    a.sizes === b.sizes &&
    a.groups === b.groups &&
    a.badges === b.badges &&
    a.marks === b.marks &&
    a.pending === b.pending &&
    a.renaming === b.renaming &&
    a.selection.size === b.selection.size &&
    [...a.selection].every((id) => b.selection.has(id))
  );
}

/** Whether two canvas models draw the same: the same nodes, bindings, overview and note. */
export function sameModel(a: CanvasModel, b: CanvasModel): boolean {
  return (
    sameNodes(a, b) &&
    a.bindings === b.bindings &&
    a.note === b.note &&
    a.minimap.wanted === b.minimap.wanted &&
    a.minimap.shown === b.minimap.shown &&
    a.minimap.corner === b.minimap.corner
  );
}

/**
 * The changes React Flow reports that change something: each node's size is reported as it is drawn,
 * and a node drawn at the size it was given changes nothing. Applying those reports made new objects
 * of all 500 nodes of a large graph after each redraw, so React Flow took them all in and measured
 * them again (a long task, dropped frames while panning).
 */
export function newsOf(changes: NodeChange[], nodes: readonly Node[]): NodeChange[] {
  const given = new Map(nodes.map((n) => [n.id, n]));
  return changes.filter((c) => {
    if (c.type !== "dimensions" || c.resizing || !c.dimensions) return true;
    const node = given.get(c.id);
    return !node || node.width !== c.dimensions.width || node.height !== c.dimensions.height;
  });
}

function groupTitle(node: GraphView["nodes"][number]): string {
  switch (node.kind) {
    case "sequence":
      return node.repeat > 1 ? `${node.name} \u00d7${node.repeat}` : node.name;
    case "loop":
      return node.while !== null
        ? `${node.name}: while ${node.while}${node.max_iter !== null ? ` (max ${node.max_iter})` : ""}`
        : `${node.name}: \u00d7${node.count}`;
    case "cond":
      return `${node.name}: if ${node.flag}`;
    case "branch":
      return node.name;
    default:
      return node.name;
  }
}

/**
 * Where a group's members (its leaf nodes, and the groups inside it) are drawn when the group's box is
 * at `at`: each moved by the offset of the box from where the model draws it. Empty when the model
 * has no box for `id`. An empty group is its own member (it has a place of its own).
 */
export function groupDrag(model: Pick<CanvasModel, "positions" | "groups">, id: string, at: Point): Map<string, Point> {
  const box = model.groups.get(id);
  const moved = new Map<string, Point>();
  if (!box) return moved;
  const dx = at.x - box.x;
  const dy = at.y - box.y;
  const inside = (key: string): boolean => key.startsWith(`${id}/`);
  for (const [key, p] of model.positions) {
    if (inside(key) || key === id) moved.set(key, { x: p.x + dx, y: p.y + dy });
  }
  for (const [key, b] of model.groups) if (inside(key)) moved.set(key, { x: b.x + dx, y: b.y + dy });
  return moved;
}

/** React Flow's nodes for the model: groups first (drawn beneath), then args and dispatches. */
export function flowNodes(model: CanvasModel, events: CanvasEvents): Node[] {
  const { graph, positions, sizes, groups, selection, badges, marks } = model;
  const numbers = programNumbers(graph);
  const nodes: Node[] = [];
  const depth = (id: string): number => id.split("/").length;
  const containers = graph.nodes.filter((n) => n.kind !== "dispatch" && groups.has(n.id));
  containers.sort((a, b) => depth(a.id) - depth(b.id));
  for (const node of containers) {
    const box = groups.get(node.id)!;
    nodes.push({
      id: node.id,
      type: "container",
      position: { x: box.x, y: box.y },
      draggable: true, // a group with members drags them along (`groupDrag`)
      selected: selection.has(node.id),
      zIndex: depth(node.id),
      data: {
        id: node.id,
        title: groupTitle(node),
        kind: node.kind,
        badge: badges.get(node.id),
        marks,
        renaming: model.renaming === node.id,
        events,
        width: box.width,
        height: box.height,
      } satisfies GroupData,
      width: box.width,
      height: box.height,
    });
  }
  for (const arg of graph.args) {
    const id = argId(arg.name);
    const at = positions.get(id);
    const size = sizes.get(id);
    if (!at || !size) continue;
    nodes.push({
      id,
      type: "arg",
      position: at,
      ...size,
      selected: selection.has(id),
      zIndex: 1000,
      data: {
        id,
        name: arg.name,
        type: shortType(arg),
        label: arg.label,
        kindClass: kindClass(arg.kind),
        badge: badges.get(id),
        renaming: model.renaming === id,
        events,
        ...size,
      } satisfies ArgData,
    });
  }
  for (const node of graph.nodes) {
    if (node.kind !== "dispatch") continue;
    const at = positions.get(node.id);
    const size = sizes.get(node.id);
    if (!at || !size) continue;
    nodes.push({
      id: node.id,
      type: "dispatch",
      position: at,
      ...size,
      selected: selection.has(node.id),
      zIndex: 1000,
      data: {
        id: node.id,
        title: dispatchTitle(numbers.get(node.id), node.name),
        params: node.params,
        bindings: node.bindings,
        guessed: node.guessed ?? [],
        badge: badges.get(node.id),
        marks,
        renaming: model.renaming === node.id,
        events,
        ...size,
      } satisfies DispatchData,
    });
  }
  if (model.pending) {
    nodes.push({
      id: "\u0000pending",
      type: "pending",
      position: model.pending.at,
      width: 150,
      height: 40,
      draggable: false,
      selectable: false,
      zIndex: 1001,
      data: { text: model.pending.text } satisfies PendingData,
    });
  }
  return nodes;
}

const NO_EDGES: Edge[] = [];

/** One edge per bound parameter: from the arg's node to the dispatch's port. */
export function flowEdges(graph: GraphView, events: CanvasEvents): Edge[] {
  const edges: Edge[] = [];
  const declared = new Set(graph.args.map((a) => a.name));
  for (const node of graph.nodes) {
    if (node.kind !== "dispatch") continue;
    const kinds = new Map(node.params.map((p) => [p.name, p.kind]));
    for (const [param, arg] of Object.entries(node.bindings)) {
      if (arg === null || !declared.has(arg)) continue;
      const id = `${argId(arg)}->${node.id}.${param}`;
      const guessed = (node.guessed ?? []).includes(param);
      edges.push({
        id,
        source: argId(arg),
        sourceHandle: "out",
        target: node.id,
        targetHandle: param,
        className: `gl-fedge ${kindClass(kinds.get(param) ?? "unknown")}${guessed ? " gl-guessed" : ""}`,
        domAttributes: { "data-edge": id } as Edge["domAttributes"],
        ariaLabel: `${arg} \u2192 ${node.id}.${param}${guessed ? " (guessed: click to accept)" : ""}`,
        data: { guessed, node: node.id, param, events },
        zIndex: 999,
      });
    }
  }
  return edges;
}

/**
 * The nodes to draw, the same array while the model draws the same nodes: a pan or zoom that shows or
 * hides the overview changes the model, and rebuilding 500 nodes then (their keys, React Flow taking
 * a new array in) was a ~50 ms task as the pan ended, a dropped frame.
 */
function useFlowNodes(model: CanvasModel, events: CanvasEvents): Node[] {
  const cache = useRef(new Map<string, [string, Node]>());
  const last = useRef<{ model: CanvasModel; events: CanvasEvents; nodes: Node[] } | null>(null);
  const kept = last.current;
  if (kept !== null && kept.events === events && sameNodes(kept.model, model)) return kept.nodes;
  const nodes = reuseUnchanged(flowNodes(model, events), cache.current);
  last.current = { model, events, nodes };
  return nodes;
}

export function FlowView({ model, events }: { model: CanvasModel; events: CanvasEvents }): JSX.Element {
  const initial = useFlowNodes(model, events);
  const edgeCache = useRef(new Map<string, [string, Edge]>());
  // an edit's new graph makes every edge anew: the unchanged ones keep their objects, so only the edit's redraw
  const edges = useMemo(
    () => (model.bindings ? reuseUnchanged(flowEdges(model.graph, events), edgeCache.current) : NO_EDGES),
    [model.graph, model.bindings, events],
  );
  const [nodes, setNodes] = useState<Node[]>(initial);
  // new nodes from the model replace the drawn ones in this render, not in an effect after it: an
  // effect would commit the old nodes first and draw the edit one whole React Flow pass later
  const [shown, setShown] = useState(initial);
  if (shown !== initial) {
    setShown(initial);
    setNodes(initial);
  }

  const onNodesChange = (changes: NodeChange[]): void => {
    const wanted = newsOf(changes, nodes);
    if (wanted.length === 0) return;
    setNodes((current) => applyNodeChanges(wanted, current));
    const chosen = changes.filter((c) => c.type === "select");
    if (chosen.length > 0) {
      const after = applyNodeChanges(chosen, nodes);
      const ids = after.filter((n) => n.selected && n.type !== "pending").map((n) => n.id);
      if (ids.length > 1) events.selectMany(ids);
    }
  };

  // a group dragged alone moves its members with it while it moves, and is placed as a whole
  const onNodeDrag = (_e: unknown, node: Node, dragged: Node[]): void => {
    if (dragged.length !== 1 || node.type !== "container") return;
    const moved = groupDrag(model, node.id, node.position);
    if (moved.size === 0) return;
    setNodes((current) => current.map((n) => (moved.has(n.id) ? { ...n, position: moved.get(n.id)! } : n)));
  };

  const onNodeDragStop = (_e: unknown, node: Node, dragged: Node[]): void => {
    if (dragged.length === 1 && node.type === "container") {
      const positions: Record<string, [number, number]> = {};
      for (const [id, p] of groupDrag(model, node.id, node.position)) {
        if (model.positions.has(id)) positions[id] = [Math.round(p.x), Math.round(p.y)];
      }
      if (Object.keys(positions).length > 0) events.place(positions, node.id);
      return;
    }
    const positions: Record<string, [number, number]> = {};
    for (const n of dragged) {
      if (n.type === "container") continue; // a group in a wider selection stays where its members are
      positions[n.id] = [Math.round(n.position.x), Math.round(n.position.y)];
    }
    if (Object.keys(positions).length > 0) events.place(positions);
  };

  const isValidConnection = (c: Connection | Edge): boolean =>
    portProblem(model.graph, c.source, c.target, c.targetHandle ?? "") === null;

  const onConnect = (c: Connection): void => {
    const problem = portProblem(model.graph, c.source, c.target, c.targetHandle ?? "");
    if (problem !== null) events.refuse(problem);
    else events.bind(c.target, c.targetHandle ?? "", c.source.slice("arg:".length));
  };

  const onConnectEnd = (e: globalThis.MouseEvent | TouchEvent, state: FinalConnectionState): void => {
    if (state.isValid || !state.fromNode) return;
    // the port under the pointer: React Flow does not snap to a port that refuses the connection
    let target: [string, string] | null = state.toHandle ? [state.toHandle.nodeId, state.toHandle.id ?? ""] : null;
    if (target === null) {
      const point = "changedTouches" in e ? e.changedTouches[0] : e;
      const under = point ? document.elementFromPoint(point.clientX, point.clientY) : null;
      const port = under?.closest<HTMLElement>("[data-port]")?.dataset.port;
      const dot = port ? port.lastIndexOf(".") : -1;
      if (port && dot > 0) target = [port.slice(0, dot), port.slice(dot + 1)];
    }
    if (target === null) return;
    const problem = portProblem(model.graph, state.fromNode.id, target[0], target[1]);
    if (problem !== null) events.refuse(problem);
  };

  const menu =
    (kind: "node" | "group" | "canvas") =>
    (e: MouseEvent | globalThis.MouseEvent, node?: Node): void => {
      e.preventDefault();
      e.stopPropagation();
      const id = node ? node.id : null;
      events.contextMenu({ kind: node?.type === "container" ? "group" : kind, id }, { x: e.clientX, y: e.clientY });
    };

  return (
    <div className="gl-flow">
      <ReactFlow
        nodes={nodes}
        edges={edges}
        nodeTypes={NODE_TYPES}
        onNodesChange={onNodesChange}
        onNodeDrag={onNodeDrag}
        onNodeDragStop={onNodeDragStop}
        onNodeClick={(e, node) => {
          if (node.type === "pending") return;
          events.select(node.id, e.shiftKey);
        }}
        onNodeDoubleClick={(e, node) => {
          e.stopPropagation();
          if (node.type !== "pending") events.startRename(node.id);
        }}
        onPaneClick={() => events.select(null, false)}
        onEdgeClick={(_e, edge) => {
          const data = edge.data as { guessed: boolean; node: string; param: string } | undefined;
          if (data?.guessed) events.acceptGuess(data.node, data.param);
        }}
        onNodeContextMenu={menu("node")}
        onPaneContextMenu={menu("canvas")}
        onSelectionContextMenu={(e, selected) => menu("node")(e, selected[0])}
        isValidConnection={isValidConnection}
        onConnect={onConnect}
        onConnectEnd={onConnectEnd}
        onInit={(instance) => events.ready(instance as unknown as ReactFlowInstance)}
        onMove={(_e, viewport) => events.zoomed(viewport.zoom)}
        onMoveEnd={(e) => events.viewportMoved(e !== null)}
        minZoom={0.02}
        maxZoom={4}
        selectionKeyCode="Shift"
        multiSelectionKeyCode={["Meta", "Control"]}
        deleteKeyCode={null}
        zoomOnDoubleClick={false}
        elevateNodesOnSelect={false}
        proOptions={{ hideAttribution: true }}
        nodesConnectable
        nodesFocusable={false}
        edgesFocusable={false}
      >
        <Background gap={24} size={1} className="gl-flow-bg" />
        {model.minimap.wanted ? (
          // a large graph's is hidden, not unmounted, while every node is in view: mounting it anew over
          // 500 nodes when a pan or zoom ends took ~100 ms, a dropped frame
          <MiniMap
            onClick={(_e, at) => events.centerAt(at)}
            position={model.minimap.corner}
            className="gl-flow-minimap"
            style={{ width: 160, height: 110, display: model.minimap.shown ? undefined : "none" }}
            pannable
            zoomable
            ariaLabel="overview"
          />
        ) : null}
      </ReactFlow>
      {model.note !== null ? (
        <div className="gl-canvas-note" role="alert">
          {model.note}
        </div>
      ) : null}
    </div>
  );
}
