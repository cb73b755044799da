"""Shape relations a kernel's source makes certain, so that a too-short array is refused before Taichi runs.

Taichi 1.7.4 checks no shapes: a kernel that loops over ``x`` and writes ``J[p]`` reads and writes
past the end of a shorter ``J`` (on the CPU a segfault that takes the notebook kernel with it). Most
kernels, Taichi's own examples among them, declare no shapes, so the relations are read from the
kernel's Python source, and only where they are certain:

- the loop is a struct-for over an ndarray parameter (``for p in x``, ``for i, j in x``), a
  ``range(x.shape[k])`` (or ``range(0, x.shape[k])``), a ``ti.ndrange`` whose arguments are
  ``x.shape[k]`` or int constants, or ``ti.grouped`` over either;
- the index is exactly the loop variable (``J[p]``, ``b[i, j]``, ``y[I]``): no offset, no arithmetic;
  an int literal or a scalar parameter before it (``grid[k, i, j]``) stands for one axis;
- the access runs on every iteration: no ``if``, ``while`` or ``return`` and no loop of unknown
  length between the kernel's top and the access, no ``break`` in a loop around it and no
  ``continue`` of one before it (a ``break`` of an inner loop ends that loop only, so the accesses
  after the inner loop stay certain), and neither the loop variable nor the array is assigned to.

Each such access gives ``J.shape[a] >= x.shape[k]``, required whenever the enclosing loops run at
least once. A constant bound gives ``grid.shape[a] >= 128``: a literal (``ti.ndrange(128, 128)``,
``range(4, 16)``) or a module constant (``GRID_SIZE = 128`` at module level), also under
``ti.static(...)`` or in ``+ - * //`` of such (``GRID_SIZE * 2``). A module constant is
read once, as an ``int`` and nothing else (no code runs: only the global's current value), when the
kernel's facts are first read; Taichi reads it once too, when it compiles the kernel, and keeps that
value, so rebinding the constant later changes neither. A literal index ``x[3]`` gives
``x.shape[0] >= 4``.

Everything else stays unchecked: offsets (``J[p + 1]``), indices computed from data
(``grid[base + offset]``), accesses inside ``ti.func`` calls, loops over a scalar ``n``, accesses
under an ``if``. :func:`kernel_unchecked_accesses` lists them; ``run(..., bounds="check")`` checks
them by running the graph once under Taichi's own bounds checks (:mod:`graphlab.run.boundscheck`).

Examples
--------
>>> import contextlib
>>> with contextlib.redirect_stdout(None):  # Taichi prints a banner when first imported
...     import taichi as ti
>>> @ti.kernel
... def scale(x: ti.types.ndarray(ndim=1), J: ti.types.ndarray(ndim=1)):
...     for p in x:
...         J[p] = 2 * x[p]
>>> [str(fact) for fact in kernel_shape_facts(scale)]
['J.shape[0] >= x.shape[0] (J[p] in for p in x)']
"""

import ast
import operator
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphlab.kernelfacts.access_ast import buffer_params, module_of, parse_function, resolve_callee
from graphlab.model.nodes import Dispatch

if TYPE_CHECKING:
    from graphlab.model.graph import Graph

__all__ = [
    "KernelShapeFact",
    "ShapeRelation",
    "first_violation",
    "graph_shape_relations",
    "graph_unchecked_accesses",
    "inferred_shapes",
    "kernel_shape_facts",
    "kernel_unchecked_accesses",
]

#: Expressions whose parts run only sometimes (or never): an access inside one is not certain.
_MAYBE_RUN = (ast.IfExp, ast.BoolOp, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
#: Statements that run what they hold once, unconditionally.
_PLAIN_STATEMENTS = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr)
_LEAVES = (ast.Break, ast.Continue, ast.Return)


@dataclass(frozen=True)
class Extent:
    """How far a loop variable runs: over ``param.shape[axis]`` (``axis`` None: every axis, ``ti.grouped(x)``)."""

    param: str
    axis: int | None


@dataclass(frozen=True)
class Count:
    """A constant extent: the loop variable runs below ``stop`` (and at least once), so an index needs ``stop``."""

    stop: int


#: A loop variable's components: one per axis it covers; None for an extent that bounds nothing.
Components = tuple[Extent | Count | None, ...]


@dataclass(frozen=True)
class KernelShapeFact:
    """``param.shape[axis] >= source.shape[source_axis]`` whenever every extent in ``guards`` is non-empty.

    ``axis`` and ``source_axis`` are None together for ``y[I]`` with ``I`` from ``ti.grouped(x)``: every
    axis of ``x``. ``access`` is the source text for messages (``J[p] in for p in x``). A constant
    bound has ``source`` None and ``minimum`` set: ``param.shape[axis] >= minimum``.
    """

    param: str
    axis: int | None
    source: str | None
    source_axis: int | None
    guards: tuple[Extent, ...]
    access: str
    minimum: int | None = None

    def __str__(self) -> str:
        here = "shape" if self.axis is None else f"shape[{self.axis}]"
        if self.source is None:
            return f"{self.param}.{here} >= {self.minimum} ({self.access})"
        there = "shape" if self.source_axis is None else f"shape[{self.source_axis}]"
        return f"{self.param}.{here} >= {self.source}.{there} ({self.access})"


@dataclass(frozen=True)
class ShapeRelation:
    """``arg.shape[axis] >= source.shape[source_axis]`` between graph args, required by dispatch ``node``.

    ``guards`` are ``(arg, axis)`` extents of the loops around the access (axis None: all axes); when
    one of them is 0 the access never runs and the relation is not required. A constant bound (a
    literal or module constant in the loop) has ``source``, ``source_axis`` and ``source_param``
    None and ``minimum`` set: ``arg.shape[axis] >= minimum``.
    """

    node: str
    kernel: str
    arg: str
    axis: int
    source: str | None
    source_axis: int | None
    param: str
    source_param: str | None
    access: str
    guards: tuple[tuple[str, int | None], ...]
    minimum: int | None = None

    def bound_text(self) -> str:
        """The right-hand side: ``x.shape[0]`` or ``128``."""
        return str(self.minimum) if self.source is None else f"{self.source}.shape[{self.source_axis}]"

    def needed(self, shapes: Mapping[str, tuple[int, ...]]) -> int | None:
        """The size ``arg`` needs along ``axis`` with these shapes; None when the source has no shape here."""
        if self.source is None:
            return self.minimum
        need = shapes.get(self.source)
        assert self.source_axis is not None
        return None if need is None or len(need) <= self.source_axis else need[self.source_axis]

    def describe(self) -> str:
        """``J.shape[0] >= x.shape[0] (dispatch 'p2g' indexes J[p] in for p in x)``."""
        return f"{self.arg}.shape[{self.axis}] >= {self.bound_text()} (dispatch {self.node!r} indexes {self.access})"


# ---------------------------------------------------------------- one kernel
@dataclass(frozen=True)
class _Reading:
    """What one kernel's source gives: its certain facts, and the accesses they leave unchecked."""

    facts: tuple[KernelShapeFact, ...]
    unchecked: tuple[str, ...]


_READING_CACHE: dict[int, tuple[Callable[..., Any], _Reading]] = {}


def kernel_shape_facts(kernel: Callable[..., Any]) -> tuple[KernelShapeFact, ...]:
    """The certain shape facts of a ``@ti.kernel`` (cached per function); none when its source is unreadable."""
    return _reading(kernel).facts


def kernel_unchecked_accesses(kernel: Callable[..., Any]) -> tuple[str, ...]:
    """The source text of each ndarray access (or ``ti.func`` call given an ndarray) no fact covers.

    An access is covered when every index it uses is bounded by a fact or by the array's own loop
    (``x[p]`` in ``for p in x``). The rest (``J[p + 1]``, ``a[k, i]`` with a scalar ``k``, an access
    under an ``if``) Taichi indexes unchecked; ``bounds="check"`` runs them under its checks.
    Empty when the source cannot be read (nothing is claimed either way).
    """
    return _reading(kernel).unchecked


def _reading(kernel: Callable[..., Any]) -> _Reading:
    cached = _READING_CACHE.get(id(kernel))
    if cached is not None and cached[0] is kernel:
        return cached[1]
    try:
        kinds = _param_kinds(kernel)
        fdef, scope = parse_function(kernel)
    except (OSError, TypeError, SyntaxError, StopIteration):  # no source (a lambda, a REPL line): nothing certain
        reading = _Reading((), ())
    else:
        arrays = {name for name, kind in kinds.items() if kind == "ndarray"}
        scalars = {name for name, kind in kinds.items() if kind == "scalar"}
        facts: list[KernelShapeFact] = []
        unchecked: list[str] = []
        for access, found, covered in _facts(fdef, scope, arrays, scalars):
            facts += found
            if not covered:
                unchecked.append(access)
        reading = _Reading(tuple(dict.fromkeys(facts)), tuple(dict.fromkeys(unchecked)))
    _READING_CACHE[id(kernel)] = (kernel, reading)
    return reading


def _param_kinds(kernel: Callable[..., Any]) -> dict[str, str]:
    """``{param: kind}`` for the ndarray and scalar parameters (a scalar index covers one axis)."""
    from graphlab.bridge.types import annotation_kind, kernel_parameters  # import cost: Taichi

    kinds = {name: kind for name, kind in buffer_params(kernel).items() if kind == "ndarray"}
    for name, annotation in kernel_parameters(kernel):
        if name not in kinds and annotation_kind(annotation) == "scalar":
            kinds[name] = "scalar"
    return kinds


def _facts(
    fdef: ast.FunctionDef, scope: Mapping[str, object], arrays: set[str], scalars: set[str]
) -> Iterator[tuple[str, list[KernelShapeFact], bool]]:
    """Per ndarray access (and ``ti.func`` call given an ndarray): its text, its facts, whether they cover it."""
    parents = {child: node for node in ast.walk(fdef) for child in ast.iter_child_nodes(node)}
    stored = {n.id for n in ast.walk(fdef) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    arrays = arrays - stored  # an array name bound to something else is not followed
    scalars = scalars - stored
    reader = _LoopReader(scope, arrays, stored)
    for node in ast.walk(fdef):
        if isinstance(node, ast.Call) and any(isinstance(a, ast.Name) and a.id in arrays for a in node.args):
            callee = resolve_callee(node.func, scope)
            if module_of(callee).split(".")[0] != "taichi":  # a ti.func indexes what it is given, unseen here
                yield ast.unparse(node), [], False
            continue
        if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in arrays):
            continue
        text = ast.unparse(node)
        loops = _certain_loops(node, parents, fdef)
        if loops is None:
            yield text, [], False
            continue
        read = [r for r in (reader.read(loop) for loop in loops) if r is not None]
        if len(read) != len(loops):
            yield text, [], False  # a loop of unknown length (range(n), a while): the access may never run
            continue
        bound: dict[str, Components] = {}
        guards: list[Extent] = []
        for loop, (names, components) in zip(loops, read):
            # outermost first: an inner loop's variable hides an outer one of the same name
            guards += [e for c in components for e in c if isinstance(e, Extent)]
            for name, comp in zip(names, components):
                if not any(isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)
                           for stmt in loop.body for n in ast.walk(stmt)):  # fmt: skip
                    bound[name] = comp
                else:
                    bound.pop(name, None)
        loop_text = " / ".join(_loop_text(loop) for loop in loops)
        found, covered = _index_facts(node, bound, tuple(dict.fromkeys(guards)), loop_text, reader, scalars)
        yield text, found, covered


_FOLDED: dict[type[ast.operator], Callable[[int, int], int]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
}


class _LoopReader:
    """What a ``for`` loop's variables run over, or None when it is not a loop of known length."""

    def __init__(self, scope: Mapping[str, object], arrays: set[str], local: set[str]) -> None:
        self.scope = scope
        self.arrays = arrays
        self.local = local  # names the kernel assigns: they shadow a module constant of that name

    def const(self, expr: ast.expr) -> int | None:
        """An int literal, a module constant holding an int (read, never called or evaluated), either
        under ``ti.static(...)``, or ``+``, ``-``, ``*``, ``//`` of them (``GRID_SIZE * 2``), which
        Taichi folds in Python before it compiles the kernel."""
        if isinstance(expr, ast.Constant):
            return expr.value if type(expr.value) is int else None
        if isinstance(expr, ast.Name) and expr.id not in self.local and expr.id not in self.arrays:
            value = self.scope.get(expr.id)
            return value if type(value) is int else None  # bool and int subclasses are not taken
        if isinstance(expr, ast.Call) and len(expr.args) == 1 and not expr.keywords:
            callee = resolve_callee(expr.func, self.scope)
            if module_of(callee).split(".")[0] == "taichi" and getattr(callee, "__name__", "") == "static":
                return self.const(expr.args[0])  # ti.static(GRID_SIZE): the same Python int
            return None
        if isinstance(expr, ast.BinOp) and type(expr.op) in _FOLDED:
            left, right = self.const(expr.left), self.const(expr.right)
            if left is None or right is None or (isinstance(expr.op, ast.FloorDiv) and right == 0):
                return None
            return _FOLDED[type(expr.op)](left, right)
        return None

    def read(self, loop: ast.For) -> tuple[list[str], list[Components]] | None:
        names = _target_names(loop.target)
        if names is None:
            return None
        it = loop.iter
        if isinstance(it, ast.Name) and it.id in self.arrays:  # struct-for: for i, j in x
            return names, [(Extent(it.id, k),) for k in range(len(names))]
        if not isinstance(it, ast.Call) or it.keywords:
            return None
        callee = resolve_callee(it.func, self.scope)
        name = getattr(callee, "__name__", "")
        taichi = module_of(callee).split(".")[0] == "taichi"
        if callee is range:
            comp = self._range(it.args)
            return (names, [comp]) if comp is not None and len(names) == 1 else None
        if taichi and name == "static" and len(it.args) == 1 and isinstance(it.args[0], ast.Call):
            unrolled = ast.For(target=loop.target, iter=it.args[0], body=[], orelse=[])
            return self.read(unrolled)  # ti.static(range(3)): unrolled, same extents
        if taichi and name == "ndrange":
            comps = self._ndrange(it.args)
            return (names, [(c,) for c in comps]) if comps is not None and len(names) == len(comps) else None
        if taichi and name == "grouped" and len(it.args) == 1 and len(names) == 1:
            inner_it = it.args[0]
            if isinstance(inner_it, ast.Name) and inner_it.id in self.arrays:
                return names, [(Extent(inner_it.id, None),)]
            if isinstance(inner_it, ast.Call) and not inner_it.keywords:
                inner = resolve_callee(inner_it.func, self.scope)
                if module_of(inner).split(".")[0] == "taichi" and getattr(inner, "__name__", "") == "ndrange":
                    comps = self._ndrange(inner_it.args)
                    if comps is not None:
                        return names, [comps]
        return None

    def _shape_ref(self, expr: ast.expr) -> Extent | None:
        """``Extent(x, k)`` for exactly ``x.shape[k]`` with ``x`` an ndarray parameter."""
        if (
            isinstance(expr, ast.Subscript)
            and isinstance(expr.value, ast.Attribute)
            and expr.value.attr == "shape"
            and isinstance(expr.value.value, ast.Name)
            and expr.value.value.id in self.arrays
            and isinstance(expr.slice, ast.Constant)
            and type(expr.slice.value) is int
            and expr.slice.value >= 0
        ):
            return Extent(expr.value.value.id, expr.slice.value)
        return None

    def _range(self, args: Sequence[ast.expr]) -> Components | None:
        """``(Extent,)`` for range(x.shape[k]) or range(0, x.shape[k]); ``(Count(stop),)`` for constant
        bounds ``0 <= start < stop`` (never empty); None for anything else (the loop's length is unknown)."""
        if len(args) == 2 and self.const(args[0]) == 0:
            args = args[1:]
        if len(args) == 2:
            return self._span(args[0], args[1])
        if len(args) != 1:
            return None
        extent = self._shape_ref(args[0])
        if extent is not None:
            return (extent,)
        count = self.const(args[0])
        return (Count(count),) if count is not None and count > 0 else None

    def _span(self, low_expr: ast.expr, high_expr: ast.expr) -> Components | None:
        """Constant ``low..high``: ``(Count(high),)`` when it runs; a negative low bounds nothing."""
        low, high = self.const(low_expr), self.const(high_expr)
        if low is None or high is None or high <= low:
            return None
        return (Count(high),) if low >= 0 else (None,)

    def _ndrange(self, args: Sequence[ast.expr]) -> Components | None:
        """One component per ``ti.ndrange`` argument (as :meth:`_range`), or None if one is unknown."""
        comps: list[Extent | Count | None] = []
        for arg in args:
            comp: Components | None
            if isinstance(arg, ast.Tuple) and len(arg.elts) == 2:
                comp = self._range(arg.elts)
            else:
                comp = self._range([arg])
            if comp is None:
                return None
            comps += comp
        return tuple(comps)


def _target_names(target: ast.expr) -> list[str] | None:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts):
        return [e.id for e in target.elts if isinstance(e, ast.Name)]
    return None


def _certain_loops(access: ast.AST, parents: Mapping[ast.AST, ast.AST], fdef: ast.FunctionDef) -> list[ast.For] | None:
    """The loops around ``access`` (outermost first) when it runs on every iteration of them, else None."""
    loops: list[ast.For] = []
    child, node = access, parents.get(access)
    while node is not None and node is not fdef:
        if isinstance(node, ast.For):
            if child not in node.body or _may_skip(node, access):
                return None
            loops.append(node)
        elif isinstance(node, _MAYBE_RUN) or (isinstance(node, ast.stmt) and not isinstance(node, _PLAIN_STATEMENTS)):
            return None
        child, node = node, parents.get(node)
    return loops[::-1] if node is fdef else None


def _may_skip(loop: ast.For, access: ast.AST) -> bool:
    """Whether an iteration of ``loop`` may end before ``access``, or the loop end before its last iteration.

    A ``return`` anywhere does; a ``break`` of this loop does (later iterations never run); a
    ``continue`` of this loop does when it comes before the access. A ``break`` or ``continue`` of a
    loop nested inside ends only that inner loop, so it skips nothing here.
    """
    where = (getattr(access, "lineno", 0), getattr(access, "col_offset", 0))
    todo: list[ast.AST] = list(loop.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Return, ast.Break)):
            return True
        if isinstance(node, ast.Continue) and (node.lineno, node.col_offset) < where:
            return True
        if isinstance(node, (ast.For, ast.While)):  # an inner loop: only its returns reach out
            if any(isinstance(n, ast.Return) for n in ast.walk(node)):
                return True
            continue
        todo += ast.iter_child_nodes(node)
    return False


def _loop_text(loop: ast.For) -> str:
    return f"for {ast.unparse(loop.target)} in {ast.unparse(loop.iter)}"


def _index_facts(
    access: ast.Subscript,
    bound: Mapping[str, Components],
    guards: tuple[Extent, ...],
    loop_text: str,
    reader: _LoopReader,
    scalars: set[str],
) -> tuple[list[KernelShapeFact], bool]:
    """One fact per axis indexed exactly by a loop variable or a literal, and whether they cover every index.

    Positions stop at the first index that may cover any number of axes (a vector expression).
    """
    assert isinstance(access.value, ast.Name)
    param = access.value.id
    if isinstance(access.slice, ast.Constant) and access.slice.value is None:
        return [], True  # x[None]: the one element of a 0-d ndarray
    parts = access.slice.elts if isinstance(access.slice, ast.Tuple) else [access.slice]
    text = f"{ast.unparse(access)} in {loop_text}" if loop_text else ast.unparse(access)
    found: list[KernelShapeFact] = []
    covered = True
    axis = 0
    for part in parts:
        literal = reader.const(part)
        if literal is not None:  # x[3]: one axis, at least 4 long
            if literal >= 1:
                found.append(KernelShapeFact(param, axis, None, None, guards, text, literal + 1))
            covered = covered and literal >= 0
            axis += 1
            continue
        if isinstance(part, ast.Name) and part.id in scalars and part.id not in bound:
            covered = False  # a scalar parameter: one axis, its value unknown here
            axis += 1
            continue
        comps = bound.get(part.id) if isinstance(part, ast.Name) else None
        if comps is None:
            return found, False  # an expression may cover any number of axes: the positions after it are unknown
        for comp in comps:
            if isinstance(comp, Extent) and comp.axis is None:  # y[I] with I from ti.grouped(x): all axes, alone
                if len(parts) == 1 and len(comps) == 1 and comp.param != param:
                    found.append(KernelShapeFact(param, None, comp.param, None, guards, text))
                return found, len(parts) == 1 and len(comps) == 1
            if isinstance(comp, Count):
                found.append(KernelShapeFact(param, axis, None, None, guards, text, comp.stop))
            elif isinstance(comp, Extent) and not (comp.param == param and comp.axis == axis):
                found.append(KernelShapeFact(param, axis, comp.param, comp.axis, guards, text))
            elif comp is None:
                covered = False
            axis += 1
    return found, covered


# ---------------------------------------------------------------- a graph
def graph_shape_relations(graph: "Graph") -> list[ShapeRelation]:
    """Every kernel fact mapped through the graph's bindings to its args (cached until the next edit)."""
    relations: list[ShapeRelation] = graph.cached("shape_facts", lambda: _relations(graph))
    return relations


def _relations(graph: "Graph") -> list[ShapeRelation]:
    found: dict[tuple[Any, ...], ShapeRelation] = {}
    seen: set[tuple[Any, ...]] = set()  # a later dispatch of one kernel with the same bindings adds nothing
    for node_id, node in graph.nodes():
        if not isinstance(node, Dispatch) or (node.kernel, node.bindings) in seen:
            continue
        seen.add((node.kernel, node.bindings))
        bound = {param: arg for param, arg in node.bindings if arg is not None}
        ndims = {p: graph.args[a].ndim for p, a in bound.items() if a in graph.args and graph.args[a].kind == "ndarray"}
        for fact in kernel_shape_facts(node.kernel.fn):
            if fact.param not in ndims or any(g.param not in ndims for g in fact.guards):
                continue
            guards = tuple((bound[g.param], g.axis) for g in fact.guards)
            arg = bound[fact.param]
            if fact.source is None:  # a constant bound: arg.shape[axis] >= minimum
                if fact.axis is not None and fact.axis < ndims[fact.param]:
                    key: tuple[Any, ...] = (arg, fact.axis, None, fact.minimum, guards)
                    found.setdefault(key, ShapeRelation(
                        node_id, node.kernel.name, arg, fact.axis, None, None, fact.param, None, fact.access, guards,
                        fact.minimum,
                    ))  # fmt: skip
                continue
            if fact.source not in ndims:
                continue
            pairs = (
                [(fact.axis, fact.source_axis)]
                if fact.axis is not None
                else [(a, a) for a in range(ndims[fact.source])]
            )
            for axis, source_axis in pairs:
                assert axis is not None and source_axis is not None
                source = bound[fact.source]
                if (
                    axis >= ndims[fact.param]
                    or source_axis >= ndims[fact.source]
                    or (arg, axis) == (source, source_axis)
                ):
                    continue
                key = (arg, axis, source, source_axis, guards)
                found.setdefault(key, ShapeRelation(
                    node_id, node.kernel.name, arg, axis, source, source_axis, fact.param, fact.source, fact.access,
                    guards,
                ))  # fmt: skip
    return list(found.values())


def graph_unchecked_accesses(graph: "Graph") -> dict[str, tuple[str, ...]]:
    """``{node id: accesses}``: each dispatch's ndarray accesses no relation covers (first dispatch per kernel)."""
    found: dict[str, tuple[str, ...]] = {}
    seen: set[Any] = set()
    for node_id, node in graph.nodes():
        if isinstance(node, Dispatch) and node.kernel.fn not in seen:
            seen.add(node.kernel.fn)
            unchecked = kernel_unchecked_accesses(node.kernel.fn)
            if unchecked:
                found[node_id] = unchecked
    return found


def inferred_shapes(graph: "Graph") -> dict[str, str]:
    """``[≥n]``-style lower bounds for each ndarray arg with no declared shape that a relation bounds.

    An axis is bounded by the source's declared dim where it has one (``≥n``, ``≥128``), else by the
    source's own axis (``≥x.shape[0]``); an axis nothing bounds is ``?``. Render and the widget show
    these where a declared shape would be.
    """
    bounds: dict[str, dict[int, dict[str, None]]] = {}
    for rel in graph_shape_relations(graph):
        arg = graph.args[rel.arg]
        if arg.shape is not None:
            continue
        if rel.source is None or rel.source_axis is None:
            text = str(rel.minimum)
        else:
            source = graph.args[rel.source]
            declared = None if source.shape is None else source.shape[rel.source_axis]
            text = f"{rel.source}.shape[{rel.source_axis}]" if declared is None else str(declared)
        bounds.setdefault(rel.arg, {}).setdefault(rel.axis, {})[text] = None
    shown = {}
    for name, axes in bounds.items():
        parts = []
        for axis in range(graph.args[name].ndim):
            found = list(axes.get(axis, ()))
            parts.append("?" if not found else f"≥{found[0]}" if len(found) == 1 else f"≥max({', '.join(found)})")
        shown[name] = f"[{', '.join(parts)}]"
    return shown


def first_violation(
    relations: Iterable[ShapeRelation], shapes: Mapping[str, tuple[int, ...]]
) -> tuple[ShapeRelation, str] | None:
    """The first relation the concrete ``shapes`` (arg -> field dims) break, and why; None when all hold.

    A relation whose args have no shape here (a temp not yet allocated) is skipped, and so is one
    whose loops run zero times.
    """
    for rel in relations:
        have, need = shapes.get(rel.arg), rel.needed(shapes)
        if have is None or need is None or len(have) <= rel.axis:
            continue
        if have[rel.axis] >= need or not _loops_run(rel, shapes):
            continue
        what = (
            f"shape[{rel.source_axis}] of arg {rel.source!r} (param {rel.source_param!r})"
            if rel.source is not None
            else f"{need}, the constant bound of its loop"
        )
        why = (
            f"dispatch {rel.node!r}{_kernel_note(rel)} indexes {rel.access}, so arg {rel.arg!r} (param {rel.param!r}) "
            f"needs shape[{rel.axis}] >= {what}; got {have[rel.axis]} < {need}, and Taichi would read and write "
            f"past the end of {rel.arg!r}. Give {rel.arg!r} at least {need} along axis {rel.axis}"
        )
        return rel, why
    return None


def _kernel_note(rel: ShapeRelation) -> str:
    return "" if rel.node.rsplit("/", 1)[-1] == rel.kernel else f" (kernel {rel.kernel})"


def _loops_run(rel: ShapeRelation, shapes: Mapping[str, tuple[int, ...]]) -> bool:
    """Whether every loop around the access runs at least once (unknown: False, the relation waits)."""
    for arg, axis in rel.guards:
        shape = shapes.get(arg)
        if shape is None or 0 in (shape if axis is None else shape[axis : axis + 1]):
            return False
    return True
