"""A small, safe expression language for conditional breakpoints and watches.

Users type conditions such as ``grid_m.max() > 1e3`` or ``isnan(x).any() or J.min() < 0.5`` into
the debugger. The text is parsed with Python's :mod:`ast` and only a whitelisted grammar is
accepted, so nothing a user types is ever executed as Python. Every reduction is computed on the
device by :func:`graphlab.debug.stats.buffer_stats`: one pass per buffer per evaluation, shared by
all the reductions of that buffer, and a buffer behind a short-circuited ``and``/``or`` is not
read at all.

Grammar::

    expr      := expr (and | or) expr | not expr | expr (+ | - | * | /) expr | - expr | + expr
               | expr (== | != | < | <= | > | >=) expr ...   (chains allowed)
               | number | True | False | inf | nan | abs(expr) | ( expr )
               | source.reduction() | count_nonzero(source)
    source    := buffer | isnan(buffer) | isinf(buffer) | isfinite(buffer) | abs(buffer)
    reduction := min | max | mean | std | sum | any | all

Reductions follow numpy on ``buffer.to_numpy()`` except for non-finite values: ``min``/``max``
skip NaN, ``mean``/``std``/``sum`` use the finite values only (ask ``isnan(x).any()`` for those);
a reduction over nothing is NaN. Arithmetic is IEEE (``1 / 0`` is ``inf``).

Examples
--------
>>> e = compile_expr("isnan(x).any() or x.max() > 1e3", {"x": None})
>>> sorted(e.buffers)
['x']
>>> compile_expr("x.max() > y", {"x": None})
Traceback (most recent call last):
...
graphlab.debug.expr.ExprError: unknown name 'y' at column 10; buffers: x
  x.max() > y
            ^
"""

import ast
import math
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graphlab.core.errors import GraphlabError
from graphlab.debug.stats import BufferStats, buffer_stats

__all__ = ["ELEMENTWISE", "REDUCTIONS", "Expr", "ExprError", "compile_expr"]

REDUCTIONS = ("min", "max", "mean", "std", "sum", "any", "all")
ELEMENTWISE = ("isnan", "isinf", "isfinite", "abs")
_CONSTANTS = {"inf": math.inf, "nan": math.nan}
_MAX_LEN = 2000
_MAX_DEPTH = 64
_ALLOWED = (
    "allowed: numbers, True/False, inf, nan, buffer reductions like x.max() "
    f"({', '.join('.' + r + '()' for r in REDUCTIONS)}) of a buffer or of "
    f"{', '.join(f + '(x)' for f in ELEMENTWISE)}, count_nonzero(x), abs(number), "
    "+ - * /, comparisons, and/or/not, parentheses"
)

Value = float | int | bool


class ExprError(GraphlabError, ValueError):
    """An expression is not in the accepted grammar; ``column`` is where (0-based), if known."""

    def __init__(self, message: str, *, text: str = "", column: int | None = None) -> None:
        where = f" at column {column}" if column is not None else ""
        caret = f"\n  {text}\n  {' ' * column}^" if column is not None and "\n" not in text else ""
        located = message.replace("{where}", where) if "{where}" in message else message + where
        super().__init__(located + caret)
        self.text = text
        self.column = column
        self.reason = message.replace("{where}", "")


# ---------------------------------------------------------------------------------------------
# The compiled tree: plain nodes, evaluated with an environment that caches stats per buffer.


class _Env:
    def __init__(self, resolve: Callable[[str], Any], needs_abs: frozenset[str]) -> None:
        self._resolve = resolve
        self._needs_abs = needs_abs
        self._stats: dict[str, BufferStats] = {}

    def stats(self, name: str) -> BufferStats:
        if name not in self._stats:
            self._stats[name] = buffer_stats(self._resolve(name), with_abs=name in self._needs_abs)
        return self._stats[name]


@dataclass(frozen=True)
class _Const:
    value: Value

    def eval(self, env: _Env) -> Value:
        return self.value


@dataclass(frozen=True)
class _Reduce:
    buffer: str
    fn: str  # "" (the buffer itself), "isnan", "isinf", "isfinite", "abs"
    op: str  # a reduction, or "count_nonzero"

    def eval(self, env: _Env) -> Value:
        s = env.stats(self.buffer)
        if self.fn in ("isnan", "isinf", "isfinite"):
            hits = {"isnan": s.nan, "isinf": s.inf, "isfinite": s.finite}[self.fn]
            return _reduce_mask(hits, s.count, self.op)
        if self.op in ("any", "all", "count_nonzero"):
            nonzero = s.count - s.zeros  # |x| is nonzero where x is; NaN counts as nonzero
            return {"any": nonzero > 0, "all": nonzero == s.count, "count_nonzero": nonzero}[self.op]
        src: Any = s.magnitude if self.fn == "abs" else s
        got = getattr(src, self.op)
        return math.nan if got is None else got


def _reduce_mask(hits: int, count: int, op: str) -> Value:
    """Reductions of a boolean mask with ``hits`` true values out of ``count``."""
    p = hits / count
    table: dict[str, Value] = {
        "sum": hits,
        "count_nonzero": hits,
        "any": hits > 0,
        "all": hits == count,
        "max": int(hits > 0),
        "min": int(hits == count),
        "mean": p,
        "std": math.sqrt(p * (1.0 - p)),
    }
    return table[op]


_ARITH = {ast.Add: np.add, ast.Sub: np.subtract, ast.Mult: np.multiply, ast.Div: np.divide}


def _ieee(op: type[ast.operator], a: Value, b: Value) -> float:
    """IEEE arithmetic in f64, as numpy does it: ``1 / 0`` is ``inf``, not ZeroDivisionError."""
    with np.errstate(all="ignore"):
        return float(_ARITH[op](np.float64(a), np.float64(b)))


@dataclass(frozen=True)
class _Arith:
    op: type[ast.operator]
    left: Any
    right: Any

    def eval(self, env: _Env) -> Value:
        a, b = self.left.eval(env), self.right.eval(env)
        if isinstance(a, int) and isinstance(b, int) and self.op is not ast.Div:
            r = {ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b}[self.op]
            return r if abs(r) <= 2**63 else math.copysign(math.inf, r)  # keep ints float-convertible
        return _ieee(self.op, a, b)


@dataclass(frozen=True)
class _Unary:
    op: str  # "neg", "pos", "not", "abs"
    operand: Any

    def eval(self, env: _Env) -> Value:
        v = self.operand.eval(env)
        if self.op == "not":
            return not v
        if self.op == "abs":
            return abs(v)
        return -v if self.op == "neg" else +v


@dataclass(frozen=True)
class _Logic:
    is_and: bool
    values: tuple[Any, ...]

    def eval(self, env: _Env) -> Value:
        for node in self.values:  # short-circuit: later buffers are not even reduced
            if bool(node.eval(env)) != self.is_and:
                return not self.is_and
        return self.is_and


_CMP = {
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
}


@dataclass(frozen=True)
class _Compare:
    first: Any
    ops: tuple[type[ast.cmpop], ...]
    rest: tuple[Any, ...]

    def eval(self, env: _Env) -> Value:
        a = self.first.eval(env)
        for op, node in zip(self.ops, self.rest):
            b = node.eval(env)
            if not _CMP[op](a, b):
                return False
            a = b
        return True


# ---------------------------------------------------------------------------------------------
# Parsing: ast.parse(mode="eval"), then a whitelist walk that builds the tree above.


class _Compiler:
    def __init__(self, text: str, buffers: Mapping[str, Any]) -> None:
        self.text = text
        self.buffers = buffers
        self.read: set[str] = set()
        self.abs_read: set[str] = set()
        self.lines = text.split("\n")

    def column(self, lineno: int, byte_offset: int) -> int:
        """Character column in ``text`` of an ast position (ast counts UTF-8 bytes per line)."""
        line = self.lines[lineno - 1] if 0 < lineno <= len(self.lines) else ""
        col = len(line.encode("utf-8", "surrogatepass")[:byte_offset].decode("utf-8", "replace"))
        return col + sum(len(x) + 1 for x in self.lines[: lineno - 1])

    def fail(self, message: str, node: ast.AST | None) -> ExprError:
        col = None
        if isinstance(node, ast.Attribute) and node.end_col_offset is not None:
            col = self.column(node.end_lineno or node.lineno, node.end_col_offset - len(node.attr.encode()))
        elif isinstance(node, (ast.BinOp, ast.Compare)):  # point at the operator, after the left side
            left = node.left
            col = self.column(left.end_lineno or left.lineno, left.end_col_offset or 0)
            while col < len(self.text) and self.text[col] in " )\t\n":
                col += 1
        elif isinstance(node, (ast.expr, ast.keyword)):
            col = self.column(node.lineno, node.col_offset)
        return ExprError(message, text=self.text, column=col)

    def buffer(self, node: ast.AST, context: str) -> str:
        if not isinstance(node, ast.Name):
            raise self.fail(f"{context} takes a buffer name, got {_describe(node)}{{where}}; {_ALLOWED}", node)
        name = node.id
        if name not in self.buffers:
            raise self.fail(f"unknown name {name!r}{{where}}; {self._known()}", node)
        kind = getattr(self.buffers[name], "kind", "ndarray")
        if kind != "ndarray":
            raise self.fail(f"{name!r} is a {kind} arg, not an ndarray buffer{{where}}; {self._known()}", node)
        self.read.add(name)
        return name

    def _known(self) -> str:
        names = [n for n, spec in self.buffers.items() if getattr(spec, "kind", "ndarray") == "ndarray"]
        return f"buffers: {', '.join(sorted(names))}" if names else "no buffers are known"

    def source(self, node: ast.AST) -> tuple[str, str]:
        """A reducible source: ``x`` or ``isnan(x)``-like; gives (buffer, elementwise fn)."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ELEMENTWISE:
            self.no_extra_args(node, 1)
            name = self.buffer(node.args[0], f"{node.func.id}()")
            if node.func.id == "abs":
                self.abs_read.add(name)
            return name, node.func.id
        return self.buffer(node, "a reduction"), ""

    def no_extra_args(self, node: ast.Call, nargs: int) -> None:
        what = _call_name(node)
        if node.keywords:
            raise self.fail(f"{what} takes no keyword arguments{{where}}", node.keywords[0].value)
        if len(node.args) != nargs or any(isinstance(a, ast.Starred) for a in node.args):
            extra = node.args[nargs] if len(node.args) > nargs else node
            raise self.fail(f"{what} takes {nargs} argument{'s' * (nargs != 1)}, got {len(node.args)}{{where}}", extra)

    def build(self, node: ast.AST, depth: int = 0) -> Any:
        if depth > _MAX_DEPTH:
            raise self.fail(f"expression nested deeper than {_MAX_DEPTH} levels{{where}}", node)
        d = depth + 1
        if isinstance(node, ast.Constant):
            return self.constant(node)
        if isinstance(node, ast.Name):
            if node.id in _CONSTANTS and node.id not in self.buffers:
                return _Const(_CONSTANTS[node.id])
            if node.id in self.buffers:
                raise self.fail(
                    f"{node.id!r} is a buffer: reduce it to a number first, e.g. {node.id}.max(){{where}}", node
                )
            raise self.fail(f"unknown name {node.id!r}{{where}}; {self._known()}", node)
        if isinstance(node, ast.BoolOp):
            return _Logic(isinstance(node.op, ast.And), tuple(self.build(v, d) for v in node.values))
        if isinstance(node, ast.UnaryOp):
            ops = {ast.Not: "not", ast.USub: "neg", ast.UAdd: "pos"}
            if type(node.op) not in ops:
                raise self.fail(f"operator ~ is not allowed{{where}}; {_ALLOWED}", node)
            return _Unary(ops[type(node.op)], self.build(node.operand, d))
        if isinstance(node, ast.BinOp):
            if not isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
                raise self.fail(
                    f"operator {_OP_NAMES.get(type(node.op), '?')} is not allowed{{where}}; {_ALLOWED}", node
                )
            return _Arith(type(node.op), self.build(node.left, d), self.build(node.right, d))
        if isinstance(node, ast.Compare):
            for op in node.ops:
                if type(op) not in _CMP:
                    raise self.fail(
                        f"comparison {_OP_NAMES.get(type(op), '?')} is not allowed{{where}}; use == != < <= > >=", node
                    )
            return _Compare(
                self.build(node.left, d),
                tuple(type(o) for o in node.ops),
                tuple(self.build(c, d) for c in node.comparators),
            )
        if isinstance(node, ast.Call):
            return self.call(node, d)
        raise self.fail(f"{_describe(node)} is not allowed{{where}}; {_ALLOWED}", node)

    def constant(self, node: ast.Constant) -> _Const:
        v = node.value
        if isinstance(v, bool):
            return _Const(v)
        if isinstance(v, int):
            if abs(v) > 2**63:
                raise self.fail(f"integer {str(v)[:12]}... is too large{{where}}; write it as a float", node)
            return _Const(v)
        if isinstance(v, float):
            return _Const(v)
        raise self.fail(f"{_describe(node)} is not allowed{{where}}; {_ALLOWED}", node)

    def call(self, node: ast.Call, depth: int) -> Any:
        f = node.func
        if isinstance(f, ast.Attribute):
            if f.attr not in REDUCTIONS:
                raise self.fail(
                    f"unknown reduction .{f.attr}(){{where}}; reductions: "
                    f"{', '.join('.' + r + '()' for r in REDUCTIONS)}",
                    f,
                )
            self.no_extra_args(node, 0)
            name, fn = self.source(f.value)
            return _Reduce(name, fn, f.attr)
        if isinstance(f, ast.Name) and f.id == "count_nonzero":
            self.no_extra_args(node, 1)
            name, fn = self.source(node.args[0])
            return _Reduce(name, fn, "count_nonzero")
        if isinstance(f, ast.Name) and f.id == "abs":
            self.no_extra_args(node, 1)
            if isinstance(node.args[0], ast.Name) and node.args[0].id in self.buffers:
                raise self.fail(
                    f"abs({node.args[0].id}) is a buffer: reduce it, e.g. abs({node.args[0].id}).max(){{where}}", node
                )
            return _Unary("abs", self.build(node.args[0], depth))
        if isinstance(f, ast.Name) and f.id in ELEMENTWISE:
            raise self.fail(f"{f.id}(...) gives a buffer: reduce it, e.g. {f.id}(x).any(){{where}}", node)
        raise self.fail(f"call of {_describe(f)} is not allowed{{where}}; {_ALLOWED}", f)


_OP_NAMES = {
    ast.Pow: "**",
    ast.Mod: "%",
    ast.FloorDiv: "//",
    ast.MatMult: "@",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.BitOr: "|",
    ast.BitAnd: "&",
    ast.BitXor: "^",
    ast.Is: "is",
    ast.IsNot: "is not",
    ast.In: "in",
    ast.NotIn: "not in",
}


def _call_name(node: ast.Call) -> str:
    f = node.func
    if isinstance(f, ast.Attribute):
        return f".{f.attr}()"
    return f"{f.id}()" if isinstance(f, ast.Name) else "call"


def _describe(node: ast.AST) -> str:
    if isinstance(node, ast.Constant):
        return f"the {type(node.value).__name__} constant {node.value!r:.20}"
    if isinstance(node, ast.Name):
        return f"the name {node.id!r}"
    if isinstance(node, ast.Attribute):
        return f"the attribute .{node.attr}"
    return {
        ast.Subscript: "indexing",
        ast.Lambda: "lambda",
        ast.IfExp: "if/else",
        ast.NamedExpr: ":=",
        ast.List: "a list",
        ast.Tuple: "a tuple",
        ast.Dict: "a dict",
        ast.Set: "a set",
        ast.ListComp: "a comprehension",
        ast.GeneratorExp: "a generator",
        ast.SetComp: "a comprehension",
        ast.DictComp: "a comprehension",
        ast.JoinedStr: "an f-string",
        ast.Starred: "*",
        ast.Await: "await",
        ast.Yield: "yield",
        ast.YieldFrom: "yield",
        ast.Slice: "a slice",
        ast.Call: "a call",
        ast.BinOp: "arithmetic",
        ast.UnaryOp: "an operator",
        ast.Compare: "a comparison",
        ast.BoolOp: "and/or",
    }.get(type(node), type(node).__name__)


@dataclass(frozen=True)
class Expr:
    """A checked expression; evaluate it once per debugger stop.

    ``buffers`` names the buffers it reads (re-evaluate when one of them was written).
    """

    text: str
    buffers: frozenset[str]
    _root: Any = field(repr=False)
    _needs_abs: frozenset[str] = field(repr=False)

    def evaluate(self, resolve: Callable[[str], Any]) -> Value:
        """Value of the expression; ``resolve(name)`` gives the ``ti.ndarray`` bound to a buffer.

        Each buffer is reduced at most once per call, on its device, and only if reached.
        """
        return self._root.eval(_Env(resolve, self._needs_abs))

    def __str__(self) -> str:
        return self.text


def compile_expr(text: str, buffers: Mapping[str, Any]) -> Expr:
    """Check ``text`` against the grammar and the known ``buffers``; raise :class:`ExprError`.

    ``buffers`` maps names to their specs (a ``graphlab`` ``Arg``, an ndarray, or ``None``); an
    entry whose spec has a ``kind`` other than ``"ndarray"`` cannot be reduced.
    """
    if not isinstance(text, str):
        raise ExprError(f"an expression is a string, got {type(text).__name__}")
    if len(text) > _MAX_LEN:
        raise ExprError(f"expression is {len(text)} characters long; at most {_MAX_LEN} are accepted")
    if not text.strip():
        raise ExprError(f"the expression is empty; {_ALLOWED}")
    try:
        with warnings.catch_warnings():  # "invalid decimal literal" and the like: we report our own
            warnings.simplefilter("ignore")
            tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as e:
        stripped = text.strip()
        col = None
        if e.lineno == 1 and e.offset is not None:  # offset 0: the parser ran out of text
            col = min(e.offset - 1, len(stripped)) if e.offset > 0 else len(stripped)
        raise ExprError(f"syntax error: {e.msg}{{where}}", text=stripped, column=col) from None
    except (ValueError, RecursionError, MemoryError, OverflowError) as e:
        raise ExprError(f"cannot parse the expression: {type(e).__name__}: {e}") from None
    comp = _Compiler(text.strip(), buffers)
    try:
        root = comp.build(tree.body)
    except RecursionError:
        raise ExprError(f"expression nested too deeply; at most {_MAX_DEPTH} levels") from None
    return Expr(text.strip(), frozenset(comp.read), root, frozenset(comp.abs_read))
