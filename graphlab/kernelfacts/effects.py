"""What a kernel does that makes its results vary from run to run, read from its Python source.

Three facts decide whether two runs of the same graph on the same inputs can differ, and each is
visible in the kernels' code:

- **random draws**: ``ti.random`` / ``ti.randn`` in the kernel or in a ``ti.func`` it calls (followed
  transitively). Every run, and every replay in the debugger, draws other numbers;
- **atomic adds**: ``x[k] += v`` (or ``ti.atomic_add``) inside a parallel loop at an index that is not
  the loop's own variables, so several threads add into one cell; float sums then depend on the
  order the threads reach it;
- **races**: the outermost (parallel) loop writes a buffer at one index and reads it at another
  (``rho[i, j] = rho[inb, jnb]``): whether the read sees the old or the new value depends on thread
  order.

``validate()`` reports the first (GL027) and the last (GL028); the debugger, ``compare`` and
``gl.verify`` use all three to say *why* values differ instead of blaming noise. Races follow a
buffer the parallel loop passes into a ``ti.func`` (its indices read in the caller's terms); atomic
adds are read from the kernel's own body only; random draws are followed into ``ti.func`` calls, up
to a few levels deep.

Examples
--------
>>> import contextlib
>>> with contextlib.redirect_stdout(None):  # Taichi prints a banner when first imported
...     import taichi as ti
>>> @ti.kernel
... def shuffle(x: ti.types.ndarray(ndim=1)):
...     for i in x:
...         x[i] = x[x.shape[0] - 1 - i] + ti.random()
>>> effects = kernel_effects(shuffle)
>>> [d.function for d in effects.random], [(r.param, r.write, r.reads) for r in effects.races]
(['shuffle'], [('x', 'i', ('x.shape[0] - 1 - i',))])
"""

import ast
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphlab.bridge import is_taichi_function, python_function
from graphlab.kernelfacts.access_ast import buffer_params, module_of, parse_function, resolve_callee
from graphlab.model.nodes import Dispatch

if TYPE_CHECKING:
    from graphlab.model.graph import Graph

__all__ = [
    "REPRODUCIBLE_HINT",
    "AtomicAdd",
    "KernelEffects",
    "NodeEffects",
    "Race",
    "RandomDraw",
    "graph_effects",
    "kernel_effects",
]

#: What a warning about a random draw suggests instead.
REPRODUCIBLE_HINT = "use graphlab.random (counter-based, reproducible)"
#: Taichi's random number functions (``taichi.lang.ops.random``, ``taichi._funcs.randn``).
_RANDOM_NAMES = frozenset({"random", "randn"})
_MAX_DEPTH = 8


@dataclass(frozen=True)
class RandomDraw:
    """A call of ``ti.random``/``ti.randn``: in ``function`` (the kernel or a ``ti.func``), at source ``line``.

    ``path`` lists the ``ti.func`` calls from the kernel down to ``function`` (empty in the kernel itself).
    """

    call: str
    function: str
    line: int
    path: tuple[str, ...] = ()

    def describe(self) -> str:
        """``ti.random() in helper (called from init via helper), line 12``."""
        via = f" (called via {' -> '.join(self.path[:-1])})" if len(self.path) > 1 else ""
        return f"{self.call} in {self.function}{via}, line {self.line}"


@dataclass(frozen=True)
class AtomicAdd:
    """``param[index] += ...`` in a parallel loop, at an index other than the loop's variables."""

    param: str
    index: str
    line: int


@dataclass(frozen=True)
class Race:
    """A parallel loop that writes ``param[write]`` and reads ``param[read]`` for each of ``reads``: other elements."""

    param: str
    write: str
    reads: tuple[str, ...]
    write_line: int
    read_line: int
    loop: str

    def describe(self, buffer: str | None = None) -> str:
        """``'rho' is written at [i, j] (line 30) and read at [inb, jnb] (line 30) in its parallel loop ...``."""
        name = buffer or self.param
        read = " and ".join(f"[{r}]" for r in self.reads)
        return (
            f"{name!r} is written at [{self.write}] (line {self.write_line}) and read at {read} "
            f"(line {self.read_line}) in its parallel loop `{self.loop}`"
        )


@dataclass(frozen=True)
class KernelEffects:
    """Random draws, atomic adds into shared cells and read/write races of one kernel."""

    random: tuple[RandomDraw, ...] = ()
    atomics: tuple[AtomicAdd, ...] = ()
    races: tuple[Race, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.random or self.atomics or self.races)


@dataclass(frozen=True)
class NodeEffects:
    """A dispatch's kernel effects with its parameters mapped to the graph's args (``args``: param -> arg)."""

    node: str
    kernel: str
    effects: KernelEffects
    args: Mapping[str, str]

    def arg(self, param: str) -> str:
        """The arg bound to ``param`` (the parameter itself when unbound)."""
        return self.args.get(param, param)

    def random_note(self) -> str:
        """``dispatch 'init' draws random numbers (ti.random() in init_particles, line 12)``."""
        where = "; ".join(d.describe() for d in self.effects.random)
        return f"dispatch {self.node!r} draws random numbers ({where})"


# ---------------------------------------------------------------- one kernel
_CACHE: dict[int, tuple[Callable[..., Any], KernelEffects]] = {}


def kernel_effects(kernel: Callable[..., Any]) -> KernelEffects:
    """The effects of a ``@ti.kernel`` (cached per function); none when its source cannot be read."""
    cached = _CACHE.get(id(kernel))
    if cached is not None and cached[0] is kernel:
        return cached[1]
    try:
        arrays = {name for name, kind in buffer_params(kernel).items() if kind == "ndarray"}
        fdef, scope = parse_function(kernel)
    except (OSError, TypeError, SyntaxError, StopIteration, ValueError):  # no source: nothing known
        effects = KernelEffects()
    else:
        first = _first_line(kernel)
        name = getattr(kernel, "__name__", fdef.name)
        loops = list(_parallel_loops(fdef, scope))
        effects = KernelEffects(
            tuple(dict.fromkeys(_draws(fdef, scope, name, first, (), set()))),
            tuple(dict.fromkeys(a for loop in loops for a in _atomics(loop, scope, arrays, first))),
            tuple(dict.fromkeys(r for loop in loops for r in _races(loop, scope, arrays, first))),
        )
    _CACHE[id(kernel)] = (kernel, effects)
    return effects


def _first_line(fn: Callable[..., Any]) -> int:
    """The file line of the parsed source's first line (its first decorator)."""
    code = getattr(python_function(fn), "__code__", None)
    return int(code.co_firstlineno) if code is not None else 1


def _draws(
    fdef: ast.FunctionDef, scope: Mapping[str, object], name: str, first: int, path: tuple[str, ...], seen: set[int]
) -> Iterator[RandomDraw]:
    """Random draws in a function body and in the ``ti.func``s it calls (each read once: ``seen``)."""
    for node in ast.walk(fdef):
        if not isinstance(node, ast.Call):
            continue
        callee = resolve_callee(node.func, scope)
        if module_of(callee).split(".")[0] == "taichi" and getattr(callee, "__name__", "") in _RANDOM_NAMES:
            yield RandomDraw(f"ti.{callee.__name__}()", name, first + node.lineno - 1, path)  # type: ignore[attr-defined]
        elif is_taichi_function(callee) and id(callee) not in seen and len(path) < _MAX_DEPTH:
            seen.add(id(callee))
            try:
                inner, inner_scope = parse_function(callee)  # type: ignore[arg-type]
            except (OSError, TypeError, SyntaxError, StopIteration, ValueError):
                continue
            callee_name = getattr(callee, "__name__", inner.name)
            yield from _draws(inner, inner_scope, callee_name, _first_line(callee), (*path, callee_name), seen)  # type: ignore[arg-type]


def _parallel_loops(fdef: ast.FunctionDef, scope: Mapping[str, object]) -> Iterator[ast.For]:
    """The loops Taichi runs in parallel: ``for`` statements at the top of the kernel's body, unless a
    ``ti.loop_config(serialize=True)`` comes just before one or it is a ``ti.static`` unrolled loop."""
    serial = False
    for stmt in fdef.body:
        if isinstance(stmt, ast.For):
            if not serial and not _is_static(stmt.iter, scope):
                yield stmt
            serial = False
            continue
        serial = isinstance(stmt, ast.Expr) and _serializes(stmt.value, scope)


def _is_static(expr: ast.expr, scope: Mapping[str, object]) -> bool:
    return isinstance(expr, ast.Call) and getattr(resolve_callee(expr.func, scope), "__name__", "") == "static"


def _serializes(expr: ast.expr, scope: Mapping[str, object]) -> bool:
    """Whether ``expr`` is ``ti.loop_config(serialize=True)``."""
    if not isinstance(expr, ast.Call) or getattr(resolve_callee(expr.func, scope), "__name__", "") != "loop_config":
        return False
    return any(k.arg == "serialize" and isinstance(k.value, ast.Constant) and k.value.value for k in expr.keywords)


def _loop_names(loop: ast.For) -> list[str]:
    target = loop.target
    elts = target.elts if isinstance(target, ast.Tuple) else [target]
    return [e.id for e in elts if isinstance(e, ast.Name)]


def _index(sub: ast.Subscript) -> str:
    """``i, j`` for ``x[i, j]``: the index as written, without tuple parentheses."""
    parts = sub.slice.elts if isinstance(sub.slice, ast.Tuple) else [sub.slice]
    return ", ".join(ast.unparse(part) for part in parts)


def _loop_text(loop: ast.For) -> str:
    names = loop.target.elts if isinstance(loop.target, ast.Tuple) else [loop.target]
    return f"for {', '.join(ast.unparse(n) for n in names)} in {ast.unparse(loop.iter)}"


def _accesses(loop: ast.AST, arrays: set[str]) -> Iterator[tuple[str, ast.Subscript, bool]]:
    """``(param, subscript, written)`` for every element access of an ndarray parameter in the loop."""
    parents = {child: node for node in ast.walk(loop) for child in ast.iter_child_nodes(node)}
    for node in ast.walk(loop):
        if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in arrays):
            continue
        if isinstance(parents.get(node), ast.Subscript) and parents[node].value is node:  # type: ignore[attr-defined]
            continue  # x[i][j]: the outer subscript is the access
        stored = isinstance(node.ctx, ast.Store)
        aug = isinstance(parents.get(node), ast.AugAssign) and parents[node].target is node  # type: ignore[attr-defined]
        yield node.value.id, node, stored or aug
        if aug:
            yield node.value.id, node, False  # x[k] += v reads x[k] too


def _atomics(loop: ast.For, scope: Mapping[str, object], arrays: set[str], first: int) -> Iterator[AtomicAdd]:
    """Adds into a cell that other iterations may add into too: the index is not the loop's variables."""
    own = ", ".join(_loop_names(loop))
    for node in ast.walk(loop):
        target: ast.expr | None = None
        if isinstance(node, ast.AugAssign) and isinstance(node.op, (ast.Add, ast.Sub)):
            target = node.target
        elif isinstance(node, ast.Call) and node.args:
            callee = resolve_callee(node.func, scope)
            if module_of(callee).split(".")[0] == "taichi" and getattr(callee, "__name__", "") in (
                "atomic_add",
                "atomic_sub",
            ):
                target = node.args[0]
        if (
            isinstance(target, ast.Subscript)
            and isinstance(target.value, ast.Name)
            and target.value.id in arrays
            and _index(target) != own
        ):
            yield AtomicAdd(target.value.id, _index(target), first + target.lineno - 1)


def _races(loop: ast.For, scope: Mapping[str, object], arrays: set[str], first: int) -> Iterator[Race]:
    """A buffer written at one index and read at others within one parallel loop.

    Accesses inside a ``ti.func`` the loop passes the buffer to count too, at the call's line, their
    indices written in the caller's terms (``write_at(a, i, a[i - 1])`` writes ``a[i]``).
    Left out: atomic adds (their read is the add itself), a buffer whose name is rebound in the loop,
    reads of another plane the whole loop keeps (``grid[src, i, j]`` while writing ``grid[dst, i, j]``,
    ``src`` and ``dst`` the same on every iteration: ping-pong layers, a race only if the caller makes
    them equal), and red-black updates (every write under a parity test of the loop variables, ``(i + j) & 1 ==
    phase``, and every other read one step away along one axis: a cell of the other colour).
    """
    rebound = {n.id for n in ast.walk(loop) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    parents = {child: node for node in ast.walk(loop) for child in ast.iter_child_nodes(node)}
    names = set(_loop_names(loop))
    writes: dict[str, dict[str, ast.Subscript]] = {}
    reads: dict[str, dict[str, ast.Subscript]] = {}
    found = [*_accesses(loop, arrays - rebound), *_func_accesses(loop, scope, arrays - rebound, 0)]
    for param, sub, written in found:
        (writes if written else reads).setdefault(param, {}).setdefault(_index(sub), sub)
    varying = names | rebound
    for param, written_at in writes.items():
        others = {
            i: sub
            for i, sub in reads.get(param, {}).items()
            if i not in written_at and not all(_other_plane(w, sub, varying) for w in written_at.values())
        }
        if not others:
            continue
        if all(_parity_guarded(w, parents, names) for w in written_at.values()) and all(
            _unit_step(w, r) for w in written_at.values() for r in others.values()
        ):
            continue
        write, write_sub = next(iter(written_at.items()))
        read_line = first + next(iter(others.values())).lineno - 1
        yield Race(param, write, tuple(others), first + write_sub.lineno - 1, read_line, _loop_text(loop))


def _func_accesses(
    body: ast.AST, scope: Mapping[str, object], arrays: set[str], depth: int
) -> Iterator[tuple[str, ast.Subscript, bool]]:
    """Accesses to ``arrays`` inside the ``ti.func``s called in ``body`` with one of them as an argument.

    Each is given as the caller's array indexed by the func's index with the func's parameters replaced
    by the call's arguments, placed at the call's line. A func whose source cannot be read, that
    rebinds a parameter or takes keyword arguments is left out; nested calls are followed a few levels.
    """
    if depth >= _MAX_DEPTH:
        return
    for call in ast.walk(body):
        if not isinstance(call, ast.Call) or call.keywords:
            continue
        passed = {k: a.id for k, a in enumerate(call.args) if isinstance(a, ast.Name) and a.id in arrays}
        callee = resolve_callee(call.func, scope) if passed else None
        if callee is None or not is_taichi_function(callee):
            continue
        try:
            fdef, inner_scope = parse_function(callee)  # type: ignore[arg-type]
        except (OSError, TypeError, SyntaxError, StopIteration, ValueError):
            continue
        params = [a.arg for a in fdef.args.args]
        if len(params) != len(call.args) or any(
            isinstance(n, ast.Name) and n.id in params and not isinstance(n.ctx, ast.Load) for n in ast.walk(fdef)
        ):
            continue
        mapping = dict(zip(params, call.args, strict=True))
        inner_arrays = {params[k] for k in passed}
        inner = [*_accesses(fdef, inner_arrays), *_func_accesses(fdef, inner_scope, inner_arrays, depth + 1)]
        for param, sub, written in inner:
            try:
                index = _Substitute(mapping).visit(_copy(sub.slice))
            except SyntaxError:  # a slice, which ndarrays do not take: nothing to compare
                continue
            array = passed[params.index(param)]
            outer = ast.Subscript(value=ast.Name(id=array, ctx=ast.Load()), slice=index, ctx=sub.ctx)
            yield array, ast.copy_location(outer, call), written


class _Substitute(ast.NodeTransformer):
    """Replace a func's parameter names with the caller's argument expressions."""

    def __init__(self, mapping: Mapping[str, ast.expr]) -> None:
        self.mapping = mapping

    def visit_Name(self, node: ast.Name) -> ast.expr:
        return _copy(self.mapping[node.id]) if node.id in self.mapping else node


def _copy(node: ast.expr) -> ast.expr:
    return ast.parse(ast.unparse(node), mode="eval").body


def _parity_guarded(access: ast.AST, parents: Mapping[ast.AST, ast.AST], names: set[str]) -> bool:
    """Whether an ``if`` around ``access`` tests ``(...) & 1`` or ``(...) % 2`` of the loop variables."""
    node = parents.get(access)
    while node is not None:
        if isinstance(node, ast.If):
            for part in ast.walk(node.test):
                if (
                    isinstance(part, ast.BinOp)
                    and (
                        (isinstance(part.op, ast.BitAnd) and _int_value(part.right) == 1)
                        or (isinstance(part.op, ast.Mod) and _int_value(part.right) == 2)
                    )
                    and names & {n.id for n in ast.walk(part.left) if isinstance(n, ast.Name)}
                ):
                    return True
        node = parents.get(node)
    return False


def _int_value(expr: ast.expr) -> int | None:
    return expr.value if isinstance(expr, ast.Constant) and type(expr.value) is int else None


def _other_plane(write: ast.Subscript, read: ast.Subscript, varying: set[str]) -> bool:
    """Whether some axis is indexed by two different expressions that no iteration changes (``dst``, ``src``)."""
    w = write.slice.elts if isinstance(write.slice, ast.Tuple) else [write.slice]
    r = read.slice.elts if isinstance(read.slice, ast.Tuple) else [read.slice]
    return len(w) == len(r) and any(
        ast.dump(a) != ast.dump(b) and _invariant(a, varying) and _invariant(b, varying) for a, b in zip(w, r)
    )


def _invariant(expr: ast.expr, varying: set[str]) -> bool:
    """Names, numbers and arithmetic on them, none a loop variable or assigned in the loop."""
    return all(isinstance(n, _PURE) and not (isinstance(n, ast.Name) and n.id in varying) for n in ast.walk(expr))


_PURE = (ast.Name, ast.Constant, ast.BinOp, ast.UnaryOp, ast.expr_context, ast.operator, ast.unaryop)


def _unit_step(write: ast.Subscript, read: ast.Subscript) -> bool:
    """Whether ``read``'s index is ``write``'s with one position changed by ``+ 1`` or ``- 1``."""
    w = write.slice.elts if isinstance(write.slice, ast.Tuple) else [write.slice]
    r = read.slice.elts if isinstance(read.slice, ast.Tuple) else [read.slice]
    if len(w) != len(r):
        return False
    changed = [(a, b) for a, b in zip(w, r) if ast.dump(a) != ast.dump(b)]
    if len(changed) != 1:
        return False
    a, b = changed[0]
    return (
        isinstance(b, ast.BinOp)
        and isinstance(b.op, (ast.Add, ast.Sub))
        and ast.dump(b.left) == ast.dump(a)
        and _int_value(b.right) == 1
    )


# ---------------------------------------------------------------- a graph
def graph_effects(graph: "Graph") -> list[NodeEffects]:
    """The dispatches whose kernels draw random numbers, add atomically or race, in program order
    (cached until the next edit)."""
    found: list[NodeEffects] = graph.cached("kernel_effects", lambda: list(_graph_effects(graph)))
    return found


def _graph_effects(graph: "Graph") -> Iterator[NodeEffects]:
    for node_id, node in graph.nodes():
        if not isinstance(node, Dispatch):
            continue
        effects = kernel_effects(node.kernel.fn)
        if effects:
            args = {param: arg for param, arg in node.bindings if arg is not None}
            yield NodeEffects(node_id, node.kernel.name, effects, args)
