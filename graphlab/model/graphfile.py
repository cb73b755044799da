"""The graph file: versioned JSON with a stable key order, loaded without executing anything.

Format ``graphlab.graph/1``::

    {"format": "graphlab.graph/1", "name": "update",
     "args": [{"name": "x", "kind": "ndarray", "dtype": "f32", "ndim": 1, "element_shape": [2],
               "role": "state", "shape": ["n"], "fmt": null}, ...],
     "sequences": [{"name": "substep", "body": [<node>, ...]}],
     "body": [{"type": "dispatch", "name": "init", "kernel": "mpm88:init_particles",
               "bindings": {"x": "x", "v": "v"}},
              {"type": "sequence", "name": "substep", "sequence": "substep", "repeat": 500}],
     "layout": {"init": [0, 0], "substep/p2g": [40, 120]}}

``layout`` (optional; files written before it load without it) holds where the editor's canvas draws
each node, by node id (:mod:`graphlab.model.layout`); it changes nothing the graph computes.

Kernels are references (``module:qualname``) resolved only against the ``kernels=`` the caller
passes. Every problem raises :class:`GraphFileError` naming the JSON path.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar, overload

from graphlab.core.errors import GraphError, GraphFileError, KernelError
from graphlab.core.fileio import FileTooLargeError, atomic_write_text, read_limited
from graphlab.core.limits import (
    MAX_ELEMENT_AXES,
    element_dim_problem,
    element_shape_problem,
    ndim_problem,
    repeat_problem,
)
from graphlab.core.names import check_dim_size, name_problem, shown
from graphlab.core.nesting import MAX_JSON_DEPTH, MAX_NESTING, deep_json_path
from graphlab.core.spec import Arg
from graphlab.model.graph import Graph, Into, SequenceBuilder
from graphlab.model.graphdata import GraphState
from graphlab.model.kernels import KernelRegistry, KernelSource
from graphlab.model.layout import Layout, placeable_ids, position_problem
from graphlab.model.nodes import Cond, Dispatch, Loop

FORMAT = "graphlab.graph/1"
G = TypeVar("G", bound=Graph)  # the class a graph file is read into
MAX_FILE_BYTES = 64 * 1024 * 1024
MAX_NAME = 200


def to_dict(graph: Graph) -> dict[str, Any]:
    """The file content of a graph as plain data."""
    return {
        "format": FORMAT,
        "name": graph.name,
        "args": [arg.to_dict() for arg in graph.args.values()],
        "sequences": [
            {"name": name, "body": [_node_dict(node) for node in body]} for name, body in graph.sequences.items()
        ],
        "body": [_node_dict(node) for node in graph.body],
    } | _layout_dict(graph)


def _layout_dict(graph: Graph) -> dict[str, Any]:
    """The ``layout`` section: positions of the nodes that exist (none: no section, as older files had)."""
    ids = placeable_ids(graph)
    positions = {k: [x, y] for k, (x, y) in graph.layout.positions.items() if k in ids}
    return {"layout": positions} if positions else {}


def dumps(graph: Graph) -> str:
    """The file text: sorted keys and two-space indentation, so it diffs well in git."""
    return json.dumps(to_dict(graph), indent=2, sort_keys=True) + "\n"


def save(graph: Graph, path: str | os.PathLike[str]) -> None:
    """Write the file atomically (see :func:`graphlab.core.fileio.atomic_write_text`).

    The model and the loader share their limits (:mod:`graphlab.core.limits`, :mod:`graphlab.core.names`), so
    what the model holds loads back; the text is still read back with the loader before anything is
    written, so a file :func:`load` would refuse is never written: GraphFileError says why instead.
    """
    text = dumps(graph)
    try:
        loads(text, kernels=KernelRegistry(_kernels_of(graph)), file=str(path))
    except GraphFileError as exc:
        raise GraphFileError(
            f"not saved: the file would not load back ({exc.reason}); the old file, if any, is unchanged",
            file=exc.file,
            json_path=exc.json_path,
        ) from exc
    atomic_write_text(path, text)


def _kernels_of(graph: Graph) -> list[Any]:
    """The kernels the graph dispatches, read from its definitions (not its node ids, which can be many)."""
    found: dict[int, Any] = {}
    for body in (graph.body, *graph.sequences.values()):
        for node in body:
            if isinstance(node, Dispatch):
                found.setdefault(id(node.kernel), node.kernel)
    return list(found.values())


def _node_dict(node: Any) -> dict[str, Any]:
    if isinstance(node, Dispatch):
        return {"type": "dispatch", "name": node.name, "kernel": node.kernel.ref, "bindings": dict(node.bindings)}
    if isinstance(node, Cond):
        return {"type": "cond", "name": node.name, "flag": node.flag, "then": node.then, "else": node.else_}
    if isinstance(node, Loop):
        saved = {
            "type": "loop",
            "name": node.name,
            "body": node.body,
            "while": node.while_,
            "count": node.count,
            "max_iter": node.max_iter,
        }
        if node.check_every != 1:
            saved["check_every"] = node.check_every
        if node.guarded:
            saved["guarded"] = True
        return saved
    return {"type": "sequence", "name": node.name, "sequence": node.sequence, "repeat": node.repeat}


# --- loading -------------------------------------------------------------------------------------


@overload
def load(path: str | os.PathLike[str], *, kernels: KernelSource) -> Graph: ...
@overload
def load(path: str | os.PathLike[str], *, kernels: KernelSource, graph_type: type[G]) -> G: ...
def load(path: str | os.PathLike[str], *, kernels: KernelSource, graph_type: type[Graph] = Graph) -> Graph:
    """Load a graph file; kernels resolve only from ``kernels`` (a module, dict, list or registry).

    ``graph_type`` is the class made (the public :class:`graphlab.Graph` passes itself)."""
    if not isinstance(path, (str, os.PathLike)) or isinstance(os.fspath(path), bytes):
        raise GraphFileError(f"path={shown(path)}: give the graph file's path as a str or pathlib.Path")
    file = str(path)
    if "\0" in file:  # os.stat would raise ValueError
        raise GraphFileError(
            f"the path holds a NUL character at index {file.index(chr(0))}; no file name can",
            file=file.replace("\0", "\\0"),
        )
    return loads(read_graph_file(path, file=file), kernels=kernels, file=file, graph_type=graph_type)


def read_graph_file(source: str | os.PathLike[str] | int, *, file: str) -> bytes:
    """The bytes of a graph file (a path, or a descriptor open for reading) named ``file`` in errors.

    Read by :func:`graphlab.core.fileio.read_limited`: at most :data:`MAX_FILE_BYTES`, regular files only
    (a FIFO or ``/dev/zero`` is refused, never read until memory runs out).
    """
    try:
        return read_limited(source, limit=MAX_FILE_BYTES)
    except FileTooLargeError as exc:
        raise GraphFileError(exc.strerror or str(exc), file=file) from exc
    except OSError as exc:
        raise GraphFileError(f"cannot read the file: {exc.strerror or exc}", file=file) from exc


@overload
def loads(text: str | bytes, *, kernels: KernelSource, file: str | None = None) -> Graph: ...
@overload
def loads(text: str | bytes, *, kernels: KernelSource, file: str | None = None, graph_type: type[G]) -> G: ...
def loads(
    text: str | bytes, *, kernels: KernelSource, file: str | None = None, graph_type: type[Graph] = Graph
) -> Graph:
    """Load a graph from JSON text (into a ``graph_type``, as for :func:`load`)."""
    if not isinstance(text, (str, bytes, bytearray)):
        raise GraphFileError(f"expected the file's text as str or bytes, got {type(text).__name__}", file=file)
    try:
        data = json.loads(text, parse_constant=_reject_constant)
    except RecursionError:  # Python's parser gives up near 1000 levels; say where the file is too deep
        raise GraphFileError(
            f"JSON nested too deeply to read: more than {MAX_JSON_DEPTH} levels here (a graph file nests "
            "about 5); the file is damaged or not a graph file",
            file=file,
            json_path=deep_json_path(text) or "$",
        ) from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise GraphFileError(f"not valid JSON ({exc}); the file may be truncated", file=file) from None
    try:
        registry = kernels if isinstance(kernels, KernelRegistry) else KernelRegistry(kernels)
    except KernelError as exc:
        raise GraphFileError(f"kernels= argument: {exc}", file=file) from exc
    try:
        return _Reader(file, registry, graph_type).graph(data)
    except RecursionError:  # a backstop: the walk is bounded by MAX_NESTING (see _Reader.referenced)
        raise GraphFileError(
            f"nested too deeply to load; graphlab allows sequences {MAX_NESTING} deep", file=file
        ) from None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed in a graph file")


class _Reader:
    """Walks the parsed JSON with typed accessors that know their JSON path."""

    def __init__(self, file: str | None, registry: KernelRegistry, graph_type: type[Graph]) -> None:
        self.file = file
        self.registry = registry
        self.graph_type = graph_type

    def fail(self, path: str, message: str) -> GraphFileError:
        return GraphFileError(message, file=self.file, json_path=path)

    def field(self, obj: Any, key: str, path: str, kind: type | tuple[type, ...], optional: bool = False) -> Any:
        if not isinstance(obj, dict):
            raise self.fail(path, f"expected an object, got {_json_type(obj)}")
        if key not in obj:
            if optional:
                return None
            raise self.fail(f"{path}.{key}", "missing")
        value = obj[key]
        if value is None and optional:
            return None
        ok = isinstance(value, kind) and not (isinstance(value, bool) and bool not in _as_tuple(kind))
        if not ok:
            names = " or ".join(_TYPE_NAMES.get(k, k.__name__) for k in _as_tuple(kind))
            raise self.fail(f"{path}.{key}", f"expected {names}, got {_json_type(value)}")
        if isinstance(value, str) and len(value) > MAX_NAME:
            raise self.fail(f"{path}.{key}", f"string of {len(value)} characters is too long (max {MAX_NAME})")
        return value

    def repeat(self, obj: Any, key: str, path: str, optional: bool = False) -> Any:
        """A repeat count or max_iter, checked by the model's own rule (graphlab.core.limits.repeat_problem)."""
        value = self.field(obj, key, path, int, optional=optional)
        problem = None if value is None else repeat_problem(value)
        if problem is not None:
            raise self.fail(f"{path}.{key}", f"GL014: {problem}")
        return value

    def items(self, obj: Any, key: str, path: str) -> list[Any]:
        return self.field(obj, key, path, list)

    def graph(self, data: Any) -> Graph:
        fmt = self.field(data, "format", "$", str)
        if fmt != FORMAT:
            raise self.fail("$.format", f"unsupported format {fmt!r}; this graphlab reads {FORMAT!r}")
        graph = self.guard("$.name", lambda: self.graph_type(self.field(data, "name", "$", str)))
        for i, item in enumerate(self.items(data, "args", "$")):
            arg = self.guard(f"$.args[{i}]", partial(self.arg, item, f"$.args[{i}]"))
            self.guard(f"$.args[{i}]", partial(graph.declare, arg))
        sequences = self.items(data, "sequences", "$")
        bodies: dict[str, tuple[str, list[Any]]] = {}
        for i, item in enumerate(sequences):
            path = f"$.sequences[{i}]"
            name = self.field(item, "name", path, str)
            if name in bodies:
                raise self.fail(f"{path}.name", f"sequence {name!r} is defined twice")
            bodies[name] = (path, self.items(item, "body", path))
        state = _Building(graph, bodies)
        self.body(state, None, self.items(data, "body", "$"), "$.body", ())
        for name in bodies:  # defined, not used yet: the model allows it (g.define), so the file does too
            if name not in state.done:
                self.fill(state, name, self.guard(bodies[name][0], partial(graph.define, name)), ())
        # definitions in the file's order (loading made them in order of first use), as the model had them
        held = graph.snapshot()
        order = {name: i for i, name in enumerate(bodies)}
        graph.restore(GraphState(held.args, held.body, tuple(sorted(held.sequences, key=lambda s: order[s[0]]))))
        graph.layout = self.layout(graph, data)
        return graph

    def layout(self, graph: Graph, data: dict[str, Any]) -> Layout:
        """The optional ``layout`` section: ``{node id: [x, y]}`` for nodes (and ``arg:<name>``) the file defines."""
        section = self.field(data, "layout", "$", dict, optional=True)
        if section is None:
            return Layout()
        ids = placeable_ids(graph)
        for node_id, value in section.items():
            path = f"$.layout[{json.dumps(node_id)}]"
            if node_id not in ids:
                known = ", ".join(sorted(ids)[:8]) or "none"
                raise self.fail(
                    path, f"no node {node_id!r} in this graph (nodes: {known}); fix the id or delete the entry"
                )
            problem = position_problem(value)
            if problem is not None:
                raise self.fail(path, f"{problem}; write the position as [x, y]")
        return Layout(positions={k: (float(v[0]), float(v[1])) for k, v in section.items()})

    def body(self, state: _Building, into: Into, nodes: list[Any], path: str, stack: tuple[str, ...]) -> None:
        for i, item in enumerate(nodes):
            here = f"{path}[{i}]"
            kind = self.field(item, "type", here, str)
            name = self.field(item, "name", here, str)
            if kind == "dispatch":
                self.dispatch(state.graph, into, item, here, name)
            elif kind == "sequence":
                self.sequence_use(state, into, item, here, name, stack)
            elif kind in ("cond", "loop"):
                self.control(state, into, item, here, name, stack, kind)
            else:
                raise self.fail(
                    f"{here}.type", f"unknown node type {kind!r}; expected 'dispatch', 'sequence', 'cond' or 'loop'"
                )

    def dispatch(self, graph: Graph, into: Into, item: Any, path: str, name: str) -> None:
        ref = self.field(item, "kernel", path, str)
        try:
            info = self.registry.resolve(ref)
        except KeyError as exc:
            raise self.fail(f"{path}.kernel", str(exc.args[0])) from None
        bindings = self.field(item, "bindings", path, dict)
        for param, bound in bindings.items():
            if bound is not None and not isinstance(bound, str):
                raise self.fail(f"{path}.bindings.{param}", f"expected an arg name or null, got {_json_type(bound)}")
        self.guard(path, lambda: graph.insert(info, into=into, name=name, bindings=bindings))

    def sequence_use(
        self, state: _Building, into: Into, item: Any, path: str, name: str, stack: tuple[str, ...]
    ) -> None:
        seq = self.referenced(state, item, "sequence", path, stack)
        repeat = self.repeat(item, "repeat", path)
        graph = state.graph
        if seq in state.done:
            self.guard(path, lambda: graph.append(seq, repeat, into=into, name=name))
            return
        builder = self.guard(path, lambda: graph.sequence(seq, repeat, into=into, use_name=name))
        self.fill(state, seq, builder, stack)

    def control(
        self, state: _Building, into: Into, item: Any, path: str, name: str, stack: tuple[str, ...], kind: str
    ) -> None:
        keys = ("then", "else") if kind == "cond" else ("body",)
        sequences: dict[str, str | None] = {}
        for key in keys:
            if key == "else" and item.get("else") is None:
                sequences[key] = None
                continue
            seq = self.referenced(state, item, key, path, stack)
            if seq not in state.done:
                builder = self.guard(path, partial(state.graph.define, seq))
                self.fill(state, seq, builder, stack)
            sequences[key] = seq
        graph = state.graph
        if kind == "cond":
            flag = self.field(item, "flag", path, str)
            then = sequences["then"] or ""  # "then" is required: referenced() returned a name
            self.guard(path, lambda: graph.cond(flag, then, sequences["else"], name=name, into=into))
            return
        while_ = self.field(item, "while", path, str, optional=True)
        count = self.field(item, "count", path, str, optional=True)
        max_iter = self.repeat(item, "max_iter", path, optional=True)
        check_every = self.repeat(item, "check_every", path, optional=True) or 1
        guarded = self.field(item, "guarded", path, bool, optional=True) or False
        self.guard(
            path,
            lambda: graph.loop(
                sequences["body"] or "",
                while_=while_,
                count=count,
                max_iter=max_iter,
                check_every=check_every,
                guarded=guarded,
                name=name,
                into=into,
            ),
        )

    def referenced(self, state: _Building, item: Any, key: str, path: str, stack: tuple[str, ...]) -> str:
        """A sequence name the node refers to, checked against $.sequences and for self-containment."""
        seq = self.field(item, key, path, str)
        if seq not in state.bodies:
            raise self.fail(f"{path}.{key}", f"no sequence {seq!r} is defined in $.sequences")
        if seq in stack:
            raise self.fail(f"{path}.{key}", f"GL015: sequence {seq!r} contains itself")
        if len(stack) >= MAX_NESTING:  # the same limit the model keeps (graphlab.core.nesting)
            raise self.fail(
                f"{path}.{key}",
                f"sequence {seq!r} would be nested {len(stack) + 1} deep ({' > '.join((*stack, seq))}), past "
                f"the limit of {MAX_NESTING} (graphlab.core.nesting.MAX_NESTING); flatten a level",
            )
        return seq

    def fill(self, state: _Building, seq: str, builder: SequenceBuilder, stack: tuple[str, ...]) -> None:
        """Load a sequence's body into its (new) definition."""
        state.done.add(seq)
        seq_path, seq_body = state.bodies[seq]
        self.body(state, builder, seq_body, f"{seq_path}.body", (*stack, seq))

    def arg(self, item: Any, path: str) -> Any:
        # the same checks as the model's Arg (graphlab.core.limits, graphlab.core.names), here to name the JSON path
        shape = self.field(item, "shape", path, list, optional=True)
        element_shape = self.field(item, "element_shape", path, list)
        ndim = self.field(item, "ndim", path, int)
        problem = ndim_problem(ndim)
        if problem is not None:
            raise self.fail(f"{path}.ndim", problem)
        if len(element_shape) > MAX_ELEMENT_AXES:
            raise self.fail(f"{path}.element_shape", element_shape_problem(element_shape) or "")
        for j, dim in enumerate(element_shape):
            problem = element_dim_problem(dim)
            if problem is not None:
                raise self.fail(f"{path}.element_shape[{j}]", problem)
        for j, dim in enumerate(shape or []):
            if isinstance(dim, str):
                problem = name_problem(dim)
                if problem is not None:
                    raise self.fail(f"{path}.shape[{j}]", f"not a dim name ({problem})")
            else:
                self.guard(f"{path}.shape[{j}]", partial(check_dim_size, dim, "a shape entry"))
        return Arg(
            name=self.field(item, "name", path, str),
            kind=self.field(item, "kind", path, str),
            dtype=self.field(item, "dtype", path, str, optional=True),
            ndim=ndim,
            element_shape=tuple(element_shape),
            fmt=self.field(item, "fmt", path, str, optional=True),
            role=self.field(item, "role", path, str, optional=True) or "state",
            shape=None if shape is None else tuple(shape),
        )

    def guard(self, path: str, build: Callable[[], Any]) -> Any:
        """Run a model call; its refusal becomes a GraphFileError at ``path``."""
        try:
            return build()
        except (GraphError, KernelError) as exc:
            raise self.fail(path, str(exc)) from exc


class _Building:
    def __init__(self, graph: Graph, bodies: dict[str, tuple[str, list[Any]]]) -> None:
        self.graph = graph
        self.bodies = bodies
        self.done: set[str] = set()


_TYPE_NAMES = {str: "a string", int: "an integer", list: "a list", dict: "an object", bool: "true/false"}


def _as_tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    return {str: "a string", int: "an integer", float: "a number", list: "a list", dict: "an object"}.get(
        type(value), type(value).__name__
    )


__all__ = ["FORMAT", "dumps", "load", "loads", "read_graph_file", "save", "to_dict"]
