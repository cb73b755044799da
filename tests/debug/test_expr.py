"""The breakpoint/watch expression language (graphlab.debug.expr)."""

import ast
import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import taichi as ti
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphlab.debug.expr as expr_mod
from graphlab.core.errors import GraphlabError
from graphlab.debug.expr import ELEMENTWISE, REDUCTIONS, ExprError, compile_expr


@pytest.fixture(scope="module")
def bufs():
    ti.init(arch=ti.cpu, log_level=ti.ERROR)
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(300) * 4).astype(np.float32)
    x[[7, 100]] = np.nan
    x[50] = np.inf
    x[[3, 4]] = 0.0
    y = rng.integers(-5, 6, size=(6, 7)).astype(np.int32)
    grid_m = (rng.random((16, 16)) * 2000).astype(np.float32)
    arrays = {"x": x, "y": y, "grid_m": grid_m}
    nd = {}
    for name, a in arrays.items():
        nd[name] = ti.ndarray(ti.f32 if a.dtype == np.float32 else ti.i32, shape=a.shape)
        nd[name].from_numpy(a)
    return SimpleNamespace(np=arrays, nd=nd, specs=dict.fromkeys(arrays))


# --------------------------------------------------------------------------------------------
# A numpy reference with the documented semantics (NaN skipped by min/max, finite values for
# mean/std/sum), and an "uncertain" flag for comparisons of nearly equal floats.


def ref_reduce(a: np.ndarray, fn: str, op: str):
    a = a.reshape(-1)
    if fn in ("isnan", "isinf", "isfinite"):
        m = getattr(np, fn)(a) if a.dtype.kind == "f" else np.full(a.shape, fn == "isfinite")
        if op == "count_nonzero":
            return int(np.count_nonzero(m))
        v = getattr(m, op)()
        return bool(v) if op in ("any", "all") else (int(v) if op in ("sum", "min", "max") else float(v))
    b = np.abs(a) if fn == "abs" else a
    if op in ("any", "all", "count_nonzero"):
        nz = b != 0  # NaN is nonzero, as in numpy
        return {"any": bool(nz.any()), "all": bool(nz.all()), "count_nonzero": int(nz.sum())}[op]
    if op in ("min", "max"):
        keep = b[~np.isnan(b)] if b.dtype.kind == "f" else b
        return getattr(keep, op)().item() if keep.size else math.nan
    fin = b[np.isfinite(b)].astype(np.float64) if b.dtype.kind == "f" else b.astype(np.float64)
    if not fin.size:
        return math.nan if op != "sum" else 0.0
    return float(getattr(fin, op)())


def close(a, b) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-6)


def ieee(op: str, a, b):
    if op != "/" and isinstance(a, int) and isinstance(b, int):
        r = {"+": a + b, "-": a - b, "*": a * b}[op]
        return r if abs(r) <= 2**63 else math.copysign(math.inf, r)
    with np.errstate(all="ignore"):
        x, y = np.float64(a), np.float64(b)
        return float({"+": x + y, "-": x - y, "*": x * y, "/": x / y}[op])


CMP = {
    "==": float.__eq__,
    "!=": float.__ne__,
    "<": float.__lt__,
    "<=": float.__le__,
    ">": float.__gt__,
    ">=": float.__ge__,
}


def compare(op: str, a, b):
    """(result, uncertain): uncertain when the operands are nearly but not exactly equal floats."""
    fa, fb = float(a), float(b)
    near = fa != fb and math.isfinite(fa) and math.isfinite(fb) and math.isclose(fa, fb, rel_tol=1e-6, abs_tol=1e-6)
    return CMP[op](fa, fb), near


# A generated expression is (text, reference(arrays) -> (value, uncertain)).
NUMBERS = st.one_of(
    st.integers(-20, 20).map(lambda v: (str(v), lambda _a, v=v: (v, False))),
    st.sampled_from([0.5, 1e3, 2.5e-3, 0.0, 7.25]).map(lambda v: (repr(v), lambda _a, v=v: (v, False))),
    st.sampled_from(["inf", "nan", "True", "False"]).map(
        lambda t: (t, lambda _a, t=t: ({"inf": math.inf, "nan": math.nan, "True": True, "False": False}[t], False))
    ),
)


@st.composite
def reductions(draw):
    name = draw(st.sampled_from(["x", "y"]))
    fn = draw(st.sampled_from(["", *ELEMENTWISE]))
    src = f"{fn}({name})" if fn else name
    if draw(st.booleans()):
        op = draw(st.sampled_from(REDUCTIONS))
        text = f"{src}.{op}()"
    else:
        op, text = "count_nonzero", f"count_nonzero({src})"
    return text, lambda arrays: (ref_reduce(arrays[name], fn, op), False)


def combine(children):
    def arith(pair, op):
        (ta, fa), (tb, fb) = pair

        def ref(arrays):
            (a, ua), (b, ub) = fa(arrays), fb(arrays)
            return ieee(op, a, b), ua or ub

        return f"({ta}) {op} ({tb})", ref

    def cmp(pair, op):
        (ta, fa), (tb, fb) = pair

        def ref(arrays):
            (a, ua), (b, ub) = fa(arrays), fb(arrays)
            r, near = compare(op, a, b)
            return r, ua or ub or near

        return f"({ta}) {op} ({tb})", ref

    def logic(pair, op):
        (ta, fa), (tb, fb) = pair

        def ref(arrays):
            a, ua = fa(arrays)
            if bool(a) == (op == "or") and not ua:
                return op == "or", False
            b, ub = fb(arrays)
            return (bool(a) and bool(b)) if op == "and" else (bool(a) or bool(b)), ua or ub

        return f"({ta}) {op} ({tb})", ref

    def unary(child, op):
        t, f = child

        def ref(arrays):
            v, u = f(arrays)
            return {"not": lambda: not v, "-": lambda: -v, "abs": lambda: abs(v)}[op](), u

        return (f"abs({t})" if op == "abs" else f"{op} ({t})"), ref

    pairs = st.tuples(children, children)
    return st.one_of(
        st.builds(arith, pairs, st.sampled_from(["+", "-", "*", "/"])),
        st.builds(cmp, pairs, st.sampled_from(list(CMP))),
        st.builds(logic, pairs, st.sampled_from(["and", "or"])),
        st.builds(unary, children, st.sampled_from(["not", "-", "abs"])),
    )


EXPRESSIONS = st.recursive(st.one_of(NUMBERS, reductions()), combine, max_leaves=8)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(EXPRESSIONS)
def test_valid_expressions_agree_with_numpy(bufs, generated):
    text, ref = generated
    want, uncertain = ref(bufs.np)
    e = compile_expr(text, bufs.specs)
    got = e.evaluate(bufs.nd.__getitem__)
    if uncertain:
        return
    assert close(got, want), f"{text}: got {got!r}, numpy says {want!r}"


# --------------------------------------------------------------------------------------------
# Nothing but ExprError, whatever the text


TOKENS = [
    "x",
    "y",
    "z",
    ".",
    "(",
    ")",
    "[",
    "]",
    ",",
    "max",
    "min",
    "mean",
    "any",
    "isnan",
    "abs",
    "count_nonzero",
    "1",
    "2.5",
    "1e400",
    "-",
    "+",
    "*",
    "/",
    "**",
    "//",
    "%",
    "==",
    "<",
    ">=",
    "and",
    "or",
    "not",
    "lambda",
    ":",
    "if",
    "else",
    "__import__",
    "'s'",
    '"',
    "\\",
    "\n",
    " ",
    "@",
    "~",
    "is",
    "in",
    "j",
    "0x",
    "_",
    "=",
    "{",
    "}",
    "*",
    "**",
    "await",
    "yield",
    "f'",
    "...",
    "#",
    "\x00",
    "9" * 40,
    "é",
    ";",
]


@settings(max_examples=400, deadline=None)
@given(
    st.one_of(
        st.text(max_size=60),
        st.lists(st.sampled_from(TOKENS), max_size=25).map("".join),
        st.lists(st.sampled_from(TOKENS), max_size=25).map(" ".join),
    )
)
def test_random_text_raises_nothing_but_expr_error(text):
    try:
        e = compile_expr(text, {"x": None, "y": None})
    except ExprError as err:
        assert isinstance(err, GraphlabError) and isinstance(err, ValueError)
        assert str(err)
    else:
        assert e.buffers <= {"x", "y"}


BAD = [
    "x[0]",
    "(1) ** 2",
    "x.max().real",
    "f(1)",
    "(lambda: 1)",
    "(1 if x.max() else 2)",
    "x",
    "isnan(x)",
    "[1]",
    "x.max(0)",
    "{}",
    "(1 is 1)",
    "'s'",
    "~1",
    "(y := 1)",
    "x.sum(axis=1)",
    "abs(x)",
    "(1, 2)",
]
GOOD = ["1", "x.max()", "isnan(x).any()", "inf"]


@settings(max_examples=150, deadline=None)
@given(
    st.recursive(
        st.sampled_from(BAD),
        lambda c: st.one_of(
            st.tuples(c, st.sampled_from(["+", "<", "and", "or", "*"]), st.sampled_from(GOOD)).map(
                lambda t: f"({t[0]}) {t[1]} ({t[2]})"
            ),
            st.tuples(st.sampled_from(GOOD), st.sampled_from(["-", ">=", "or"]), c).map(
                lambda t: f"({t[0]}) {t[1]} ({t[2]})"
            ),
            c.map(lambda t: f"not ({t})"),
        ),
        max_leaves=6,
    )
)
def test_disallowed_constructs_always_raise_expr_error(text):
    with pytest.raises(ExprError):
        compile_expr(text, {"x": None})


def test_non_string_input_is_an_expr_error():
    with pytest.raises(ExprError, match="is a string, got int"):
        compile_expr(3, {})


# --------------------------------------------------------------------------------------------
# Behaviour


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("grid_m.max() > 1e3", lambda n: bool(n["grid_m"].max() > 1e3)),
        ("isnan(x).any()", lambda n: True),
        ("isinf(x).sum() > 0 or y.min() < 0.5", lambda n: True),
        ("abs(x).max() >= 10", lambda n: True),  # the +Inf
        ("x.mean()", lambda n: float(np.mean(n["x"][np.isfinite(n["x"])], dtype=np.float64))),
        ("count_nonzero(grid_m) == 0", lambda n: False),
        ("count_nonzero(y)", lambda n: int(np.count_nonzero(n["y"]))),
        ("isnan(x).sum()", lambda n: 2),
        ("y.sum() / 2", lambda n: int(n["y"].sum()) / 2),
        ("1 / 0", lambda n: math.inf),
        ("not x.all()", lambda n: True),
        ("x.min() < x.mean() < x.max()", lambda n: True),
    ],
)
def test_examples_from_the_debugger(bufs, text, want):
    got = compile_expr(text, bufs.specs).evaluate(bufs.nd.__getitem__)
    assert close(got, want(bufs.np))


def test_buffers_lists_the_names_read(bufs):
    assert compile_expr("isinf(x).sum() > 0 or y.min() < 0.5", bufs.specs).buffers == {"x", "y"}
    assert compile_expr("1 + 2 > inf", bufs.specs).buffers == frozenset()


def test_each_buffer_is_reduced_once_per_evaluation(bufs, monkeypatch):
    calls = []

    def counting(arr, **kw):
        calls.append(kw)
        return real(arr, **kw)

    real = expr_mod.buffer_stats
    monkeypatch.setattr(expr_mod, "buffer_stats", counting)
    e = compile_expr("x.max() > 0 and x.min() < 1 and abs(x).mean() > 0 and isnan(x).any()", bufs.specs)
    assert e.evaluate(bufs.nd.__getitem__) is True
    assert calls == [{"with_abs": True}]
    e.evaluate(bufs.nd.__getitem__)
    assert len(calls) == 2  # a new evaluation reads the buffer again


def test_short_circuit_skips_buffers(bufs):
    seen = []

    def resolve(name):
        seen.append(name)
        return bufs.nd[name]

    assert compile_expr("count_nonzero(x) > 0 or y.max() > 0", bufs.specs).evaluate(resolve) is True
    assert seen == ["x"]


@pytest.mark.parametrize(
    ("text", "column", "pattern"),
    [
        ("x.max() > yy", 10, r"unknown name 'yy' at column 10; buffers: grid_m, x, y"),
        ("x.max() ** 2", 8, r"operator \*\* is not allowed"),
        ("__import__('os').system('ls')", 17, r"unknown reduction \.system\(\)"),
        ("x.max(axis=0)", 11, r"takes no keyword arguments"),
        ("x.mean(1)", 7, r"\.mean\(\) takes 0 arguments, got 1"),
        ("x + 1", 0, r"'x' is a buffer: reduce it to a number first, e\.g\. x\.max\(\)"),
        ("isnan(x)", 0, r"isnan\(\.\.\.\) gives a buffer"),
        ("x[0] > 1", 0, r"indexing is not allowed"),
        ("(lambda: 1)()", 1, r"lambda is not allowed"),
        ("x.max() is 1", 8, r"comparison is is not allowed"),
        ("'x' == 1", 0, r"the str constant 'x' is not allowed"),
        ("x.max() >", 9, r"syntax error"),
        ("x.median()", 2, r"unknown reduction \.median\(\) at column 2; reductions: \.min\(\)"),
        ("isnan(1).any()", 6, r"isnan\(\) takes a buffer name"),
    ],
)
def test_errors_name_the_column_and_what_is_allowed(bufs, text, column, pattern):
    with pytest.raises(ExprError, match=pattern) as info:
        compile_expr(text, bufs.specs)
    assert info.value.column == column
    assert str(info.value).endswith(f"\n  {text}\n  {' ' * column}^")


def test_columns_count_characters_not_bytes():
    with pytest.raises(ExprError, match="unknown name 'yy' at column 10") as info:
        compile_expr("é.max() > yy", {"é": None})  # ast counts 11 bytes before yy
    assert info.value.column == 10


def test_non_ndarray_args_cannot_be_reduced():
    specs = {"dt": SimpleNamespace(kind="scalar"), "x": SimpleNamespace(kind="ndarray")}
    with pytest.raises(ExprError, match="'dt' is a scalar arg, not an ndarray buffer.*buffers: x"):
        compile_expr("dt.max() > 0", specs)


def test_deep_nesting_and_long_text_are_refused():
    with pytest.raises(ExprError, match="nested"):
        compile_expr("-" * 500 + "1", {})
    with pytest.raises(ExprError, match="at most 2000"):
        compile_expr("1 + " * 600 + "1", {})


def test_no_module_of_the_debugger_calls_eval_or_exec():
    banned = {"eval", "exec", "compile", "__import__"}
    for path in Path(expr_mod.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                assert node.func.id not in banned, f"{path.name}:{node.lineno} calls {node.func.id}"
