"""Whether a kernel's first access to a buffer may read what was in it before the dispatch.

Read/write flags say *whether* a kernel reads a buffer, not *when*. A kernel that fills a scratch
buffer and then uses it, or clears an accumulator and then adds to it, reads only its own writes:
calling that "read before written" would stop a correct graph. Neither source of flags knows the
order (Vulkan's ``arr_access`` is a plain bit set), so it is read here from the kernel's Python code.

Write-first is claimed only where it is proven:

- a whole-element store ``a[I] = ...`` that comes before a read ``a[I]`` on every path through one
  loop body (or the kernel body), with the same index and no name of the index assigned in between;
- a top-level loop over the buffer itself (``for I in ti.grouped(a)``, ``for i in a``, or
  ``for i in range(a.shape[0])`` on a 1-D buffer) whose body stores ``a[I]`` on every path: Taichi
  finishes one top-level loop before it starts the next, so every element is written by then;
- a later top-level loop over the very same range (``range(n)`` twice, ``n`` unchanged) reading
  ``a[i]`` after an earlier one stored ``a[i]`` on every path;
- a top-level loop over *another* buffer ``b`` storing ``a[I]``: proven only if ``a`` has ``b``'s
  shape, which the kernel cannot know; :class:`KernelOrder` records it and the data flow checks the
  graph's declared shapes (Taichi's mpm99 clears ``grid_v`` in a loop over ``grid_m``).

READ is claimed when the kernel's first access to the buffer, in source order, is a plain read (a
load, ``+=``, ``ti.atomic_*``) that no condition or earlier ``break``/``continue``/``return`` can skip
(a ``break`` or ``continue`` skips only the rest of its own loop; an inner loop's leaves the outer
body's later statements, and the claims above, as they are).
Everything else is MAY_READ: the checks then say "may" and warn instead of refusing.
"""

from __future__ import annotations

import ast
import enum
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from graphlab.child.payload import CarryError
from graphlab.kernelfacts.access_ast import AccessFlag, buffer_params, load_access, parse_function, resolve_callee

__all__ = ["FirstAccess", "KernelOrder", "first_from_flags", "kernel_order", "reads_own_write"]

# index expressions made only of these are pure: equal text means the same element
_PURE_INDEX = (ast.Name, ast.Constant, ast.BinOp, ast.UnaryOp, ast.Tuple, ast.expr_context, ast.operator,
               ast.unaryop)  # fmt: skip
_SIMPLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Return, ast.Pass, ast.Assert, ast.Break,
           ast.Continue)  # fmt: skip


class FirstAccess(enum.Enum):
    """How a kernel's first access to a buffer parameter relates to the data already in it."""

    WRITE = "write"  # proven: the kernel never reads a value it did not write itself (or never reads)
    MAY_READ = "may read"  # not proven either way: treated as a read, reported with "may"
    READ = "read"  # certain: the first access is a read

    @property
    def may_read(self) -> bool:
        """Whether the kernel may read the buffer's incoming contents."""
        return self is not FirstAccess.WRITE


def first_from_flags(flags: AccessFlag) -> FirstAccess:
    """The order the flags alone can tell: reads only are read-first, no reads write-first, both unknown."""
    if not flags & AccessFlag.READ:
        return FirstAccess.WRITE
    return FirstAccess.READ if flags == AccessFlag.READ else FirstAccess.MAY_READ


@dataclass(frozen=True)
class KernelOrder:
    """What the source tells of one kernel's access order, per buffer parameter.

    ``shaped_like[a] = {"b"}``: a top-level loop over ``b`` stores every element of ``a`` it visits, so
    ``a`` is write-first when the graph gives ``a`` and ``b`` the same shape (the kernel alone cannot
    know; :mod:`graphlab.analysis.dataflow` checks the declared shapes).
    """

    first: dict[str, FirstAccess]
    shaped_like: dict[str, frozenset[str]]


def kernel_order(kernel: Callable[..., Any], flags: Mapping[str, AccessFlag]) -> KernelOrder:
    """The order facts for the buffer parameters in ``flags`` (from either source).

    Only parameters both read and written need the source code; where it cannot be read, or it does
    not show the reads the flags report, the answer is MAY_READ.
    """
    first = {name: first_from_flags(f) for name, f in flags.items()}
    shaped_like: dict[str, frozenset[str]] = {}
    kinds = buffer_params(kernel)
    ndarrays = [name for name, f in flags.items() if f == AccessFlag.READ_WRITE and kinds.get(name) == "ndarray"]
    if not ndarrays:
        return KernelOrder(first, shaped_like)
    try:
        fdef, scope = parse_function(kernel)
    except CarryError:
        return KernelOrder(first, shaped_like)
    ndims = _declared_ndims(kernel)
    parents = {child: node for node in ast.walk(fdef) for child in ast.iter_child_nodes(node)}
    buffers = frozenset(kinds)
    for name in ndarrays:
        order = _Order(name, parents, scope, ndims.get(name), buffers)
        first[name] = order.run(fdef)
        others = frozenset(order.shaped_like - {name})
        if first[name] is not FirstAccess.WRITE and others:
            again = _Order(name, parents, scope, ndims.get(name), buffers, assume_same_shape=others)
            if again.run(fdef) is FirstAccess.WRITE:
                shaped_like[name] = others
    return KernelOrder(first, shaped_like)


def reads_own_write(kernel: Callable[..., Any], param: str) -> bool:
    """Whether a top-level statement of ``kernel`` reads buffer ``param`` after an earlier one wrote it.

    Taichi finishes each top-level statement (a parallel loop) before it starts the next, so that
    read sees the kernel's own write: an accumulator summed with ``s[None] += ...`` in one loop and
    read in the next is used, not a dead write (GL010). False where the source cannot be read or the
    name is rebound.
    """
    key = (id(kernel), param)
    cached = _OWN_USE.get(key)
    if cached is not None and cached[0] is kernel:
        return cached[1]
    answer = False
    try:
        fdef, scope = parse_function(kernel)
    except (CarryError, OSError, TypeError, SyntaxError, StopIteration, ValueError):  # no source: not proven
        fdef = None
    if fdef is not None:
        parents = {child: node for node in ast.walk(fdef) for child in ast.iter_child_nodes(node)}
        wrote = False
        for stmt in fdef.body:
            names = [n for n in ast.walk(stmt) if isinstance(n, ast.Name) and n.id == param]
            if any(not isinstance(n.ctx, ast.Load) for n in names):
                break  # rebound: an alias this does not follow
            flags = AccessFlag.NONE
            for name in names:
                flags |= load_access(name, parents, scope)
            if wrote and flags & AccessFlag.READ:
                answer = True
                break
            wrote = wrote or bool(flags & AccessFlag.WRITE)
    _OWN_USE[key] = (kernel, answer)
    return answer


_OWN_USE: dict[tuple[int, str], tuple[Callable[..., Any], bool]] = {}


def _declared_ndims(kernel: Callable[..., Any]) -> dict[str, int | None]:
    from graphlab.bridge.types import annotation_spec, kernel_parameters  # import cost: Taichi

    out: dict[str, int | None] = {}
    for name, annotation in kernel_parameters(kernel):
        try:
            out[name] = annotation_spec(annotation).ndim
        except Exception:  # an annotation graphlab cannot classify fixes no ndim we could use
            out[name] = None
    return out


@dataclass
class _Use:
    reads: bool
    plain_read: bool  # a load, ``+=`` or ``ti.atomic_*``: certainly reads when it runs
    key: str | None  # the index's text where it is pure; None: unknown elements
    key_names: frozenset[str]
    store: bool  # a whole-element store ``a[key] = ...``


@dataclass
class _Order:
    """One walk over a kernel body for one buffer, in source order."""

    name: str
    parents: Mapping[ast.AST, ast.AST]
    scope: Mapping[str, object]
    ndim: int | None
    buffers: frozenset[str]  # the kernel's buffer parameters
    assume_same_shape: frozenset[str] = frozenset()  # buffers taken to have this one's shape
    shaped_like: set[str] = field(default_factory=set)  # loops over these buffers store every element
    spaces: dict[str, frozenset[str]] = field(default_factory=dict)  # fully stored loop ranges -> names
    all_written: bool = False
    first: bool | None = None  # whether the first access is a certain read; None before any access
    seen_read: bool = False
    uncovered: bool = False
    unknown: bool = False  # the buffer's name is rebound: an alias this walk does not follow
    jumped: bool = False  # a jump may have skipped code since the current loop (or the kernel) began
    left: bool = False  # a return or an unmodelled statement: what follows may not run at all
    _conditional: int = 0

    def run(self, fdef: ast.FunctionDef) -> FirstAccess:
        written: dict[str, frozenset[str]] = {}
        for stmt in fdef.body:  # top level: Taichi runs each loop here after the one before has finished
            written = self._stmt(stmt, written, True)
            changed = _assigned(stmt)
            self.spaces = {k: v for k, v in self.spaces.items() if not v & changed}
        if self.unknown or not self.seen_read:  # the source does not show the reads the flags report
            return FirstAccess.MAY_READ
        if not self.uncovered:
            return FirstAccess.WRITE
        return FirstAccess.READ if self.first else FirstAccess.MAY_READ

    # ------------------------------------------------------------ statements
    def _block(self, body: Iterable[ast.stmt], written: dict[str, frozenset[str]]) -> dict[str, frozenset[str]]:
        """Walk nested statements in order; return the keys written on every path that falls through."""
        for stmt in body:
            written = self._stmt(stmt, written, False)
        return written

    def _stmt(self, stmt: ast.stmt, written: dict[str, frozenset[str]], top: bool) -> dict[str, frozenset[str]]:
        if isinstance(stmt, _SIMPLE):
            written = self._accesses(list(self._loads(stmt)), written, _assigned(stmt))
            if isinstance(stmt, (ast.Break, ast.Continue, ast.Return)):
                self.jumped = True
                self.left = self.left or isinstance(stmt, ast.Return)
            return written
        if isinstance(stmt, ast.If):
            written = self._accesses(list(self._loads(stmt.test)), written, set())
            self._conditional += 1
            then = self._block(stmt.body, dict(written))
            other = self._block(stmt.orelse, dict(written))
            self._conditional -= 1
            return {k: v for k, v in then.items() if k in other}
        if isinstance(stmt, ast.For):
            return self._for(stmt, written, top)
        if isinstance(stmt, ast.While):
            changed = _assigned(stmt)
            written = _drop(written, changed)
            self._conditional += 1
            written = self._accesses(list(self._loads(stmt.test)), written, set())
            jumped_before = self.jumped
            self._block(stmt.body, dict(written))
            self.jumped = jumped_before or self.left
            self._conditional -= 1
            return written
        if isinstance(stmt, ast.With):
            for item in stmt.items:
                written = self._accesses(list(self._loads(item)), written, _assigned(item))
            return self._block(stmt.body, written)
        # anything else (try, match, nested def, ...): every use is a read of unknown elements
        self._conditional += 1
        uses = [_Use(u.reads, False, None, frozenset(), False) for u in self._loads(stmt, deep=True)]
        self._accesses(uses, written, set())
        self._conditional -= 1
        self.jumped = self.left = True
        return _drop(written, _assigned(stmt))

    def _for(self, stmt: ast.For, written: dict[str, frozenset[str]], top: bool) -> dict[str, frozenset[str]]:
        written = self._accesses(list(self._loads(stmt.iter)), written, set())
        written = _drop(written, _assigned(stmt))
        key = _target_key(stmt.target)
        space = ast.dump(stmt.iter)
        seeded = dict(written)
        if top and key is not None and space in self.spaces:  # an earlier loop over these indices stored them
            seeded[key] = _names(stmt.target)
        jumped_before = self.jumped
        end = self._block(stmt.body, seeded)
        if stmt.orelse:
            self._conditional += 1
            self._block(stmt.orelse, dict(written))
            self._conditional -= 1
        self.jumped = jumped_before or self.left  # a break or continue ends this loop's iterations, nothing after
        stable = not _assigned_in(stmt.body) & _names(stmt.target)
        if not (top and key is not None and key in end and stable and not _jumps(stmt.body)):
            return written  # a skipped or redirected store leaves an element unwritten
        if self._fixed_range(stmt.iter):  # a later top-level loop over the same indices reads them
            self.spaces[space] = _names(stmt.iter)
        over = self._loop_buffer(stmt.iter)
        if over == self.name or over in self.assume_same_shape:
            self.all_written = True
        elif over is not None:
            self.shaped_like.add(over)
        return written

    def _fixed_range(self, it: ast.expr) -> bool:
        """Whether the same text visits the same indices later: names, dims and ``range``/``ti.ndrange``.

        A range read from a buffer (``range(n[None])``) is not: the kernel may change the buffer.
        """
        for node in ast.walk(it):
            if isinstance(node, ast.Subscript) and not (
                isinstance(node.value, ast.Attribute) and node.value.attr == "shape"
            ):
                return False
            if isinstance(node, ast.Call):
                callee = resolve_callee(node.func, self.scope)
                taichi_range = _is_taichi(callee) and getattr(callee, "__name__", "") in ("ndrange", "grouped")
                if callee is not range and not taichi_range:
                    return False
        return True

    def _loop_buffer(self, it: ast.expr) -> str | None:
        """The buffer parameter a struct-for runs over (``for i in b``, ``ti.grouped(b)``), if any."""
        if isinstance(it, ast.Name) and it.id in self.buffers:
            return it.id
        if isinstance(it, ast.Call) and len(it.args) == 1 and not it.keywords:
            callee = resolve_callee(it.func, self.scope)
            arg = it.args[0]
            if getattr(callee, "__name__", "") == "grouped" and _is_taichi(callee) and isinstance(arg, ast.Name):
                return arg.id if arg.id in self.buffers else None
            if callee is range and self.ndim == 1 and _is_shape0(arg, self.name):
                return self.name
        return None

    # ------------------------------------------------------------ accesses
    def _accesses(
        self, uses: list[_Use], written: dict[str, frozenset[str]], changed: set[str]
    ) -> dict[str, frozenset[str]]:
        """Reads happen before the statement's stores; then assigned names void the keys that use them."""
        if uses and self.first is None:  # the statement's reads run before its stores
            plain = all(u.plain_read or u.store for u in uses) and any(u.reads for u in uses)
            self.first = plain and not self._conditional and not self.jumped
        for use in uses:
            if use.reads:
                self.seen_read = True
                covered = self.all_written or (use.key is not None and use.key in written)
                self.uncovered = self.uncovered or not covered
        written = _drop(written, changed)
        for use in uses:
            if use.store and use.key is not None and not use.key_names & changed:
                written[use.key] = use.key_names
        return written

    def _loads(self, node: ast.AST, *, deep: bool = False) -> Iterator[_Use]:
        """The buffer's uses inside ``node``: its own expressions, nested statements too if ``deep``."""
        for sub in ast.walk(node) if deep else _own_nodes(node):
            if not isinstance(sub, ast.Name) or sub.id != self.name:
                continue
            if not isinstance(sub.ctx, ast.Load):
                self.unknown = True
                continue
            flags = load_access(sub, self.parents, self.scope)
            if flags == AccessFlag.NONE:
                continue
            yield self._use(sub, flags)

    def _use(self, name: ast.Name, flags: AccessFlag) -> _Use:
        sub = self.parents.get(name)
        if not (isinstance(sub, ast.Subscript) and sub.value is name):
            return _Use(bool(flags & AccessFlag.READ), flags == AccessFlag.READ, None, frozenset(), False)
        key, key_names = _key(sub.slice)
        holder = self.parents.get(sub)
        rmw = isinstance(holder, ast.AugAssign) and holder.target is sub
        atomic = isinstance(holder, ast.Call) and holder.args[:1] == [sub] and self._is_atomic(holder)
        plain = flags == AccessFlag.READ or (flags == AccessFlag.READ_WRITE and (rmw or atomic))
        store = flags == AccessFlag.WRITE and isinstance(sub.ctx, ast.Store)
        return _Use(bool(flags & AccessFlag.READ), plain, key, key_names, store)

    def _is_atomic(self, call: ast.Call) -> bool:
        callee = resolve_callee(call.func, self.scope)
        return _is_taichi(callee) and getattr(callee, "__name__", "").startswith("atomic_")


# ---------------------------------------------------------------- helpers
def _own_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """``node`` and its sub-expressions, without descending into nested statement bodies."""
    todo = [node]
    while todo:
        current = todo.pop()
        yield current
        for child in ast.iter_child_nodes(current):
            if isinstance(child, ast.stmt) and child is not node:
                continue
            todo.append(child)


def _target_key(target: ast.expr) -> str | None:
    """The key ``b[target]`` has for a loop target ``i``, ``I`` or ``i, j``."""
    if isinstance(target, ast.Name):
        return ast.dump(ast.Name(id=target.id, ctx=ast.Load()))
    if isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts):
        elts: list[ast.expr] = [ast.Name(id=e.id, ctx=ast.Load()) for e in target.elts]  # type: ignore[attr-defined]
        return ast.dump(ast.Tuple(elts=elts, ctx=ast.Load()))
    return None


def _key(index: ast.expr) -> tuple[str | None, frozenset[str]]:
    if not all(isinstance(n, _PURE_INDEX) for n in ast.walk(index)):
        return None, frozenset()
    return ast.dump(index), _names(index)


def _names(node: ast.AST) -> frozenset[str]:
    return frozenset(n.id for n in ast.walk(node) if isinstance(n, ast.Name))


def _assigned(node: ast.AST) -> set[str]:
    """Local names ``node`` binds anywhere inside it (targets, loop variables, ``:=``)."""
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}


def _assigned_in(body: Iterable[ast.stmt]) -> set[str]:
    return set().union(*(_assigned(stmt) for stmt in body))


def _jumps(body: Iterable[ast.stmt]) -> bool:
    """Whether a loop with this body may skip part of an iteration: a return anywhere, or a break or
    continue of the loop itself (one inside a nested loop ends only that inner loop)."""
    todo: list[ast.AST] = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Break, ast.Continue, ast.Return)):
            return True
        if isinstance(node, (ast.For, ast.While)):
            if any(isinstance(n, ast.Return) for n in ast.walk(node)):
                return True
            continue
        todo += ast.iter_child_nodes(node)
    return False


def _drop(written: dict[str, frozenset[str]], changed: set[str]) -> dict[str, frozenset[str]]:
    if not changed:
        return written
    return {k: v for k, v in written.items() if not v & changed}


def _is_shape0(node: ast.expr, name: str) -> bool:
    """Whether ``node`` is ``name.shape[0]``."""
    return (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "shape"
        and isinstance(node.value.value, ast.Name)
        and node.value.value.id == name
        and isinstance(node.slice, ast.Constant)
        and node.slice.value == 0
    )


def _is_taichi(obj: object) -> bool:
    module = getattr(obj, "__module__", None) or ""
    return module == "taichi" or module.startswith("taichi.")
