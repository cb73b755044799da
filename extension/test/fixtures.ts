import type { ArgView, GraphView, NodeView, ParamView } from "../src/wire/protocol";

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
