"""Property: a breakpoint condition or watch typed into a live debug session parses or is refused, never executed.

tests/debug/test_expr.py fuzzes the expression compiler alone; here the text goes through the
session's own entry points (``break_when``, ``watch``), mixed with attempts to escape into Python:
``__import__``, attribute walks to ``__globals__``/``__subclasses__``, ``open``, calls that would
write a buffer. None may run: a sentinel file must not appear, no buffer may change, and a refused
text adds no breakpoint or watch.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import graphlab as gl
from graphlab.api.doc_kernels import demo_graph
from graphlab.debug.expr import ExprError

ESCAPES = [
    '__import__("os").mkdir(SENTINEL)',
    'open(SENTINEL, "w")',
    "y.__class__",
    "y.max.__globals__",
    "y.max().__class__.__bases__",
    "().__class__.__bases__[0].__subclasses__()",
    'getattr(y, "max")()',
    'eval("1")',
    'exec("y = 1")',
    "breakpoint()",
    "globals()",
    "__builtins__",
    "y.fill(7)",
    "y.from_numpy(0)",
    "y.to_numpy()",
    "y.max(__import__('os'))",
    "isnan(__import__('os')).any()",
    "count_nonzero(y, __import__('os'))",
    "abs(__import__('os'))",
    "y.max(key=open)",
    "(lambda: 0)()",
    "[c for c in y]",
    'f"{y}"',
    "y[0]",
    "(y := 1)",
    "y.max().real",
    "__import__",
]
GOOD = ["y.max() > 0", "isnan(x).any()", "a.max() == 1", "1", "not (y.sum() < 3)"]
ESCAPE = st.sampled_from(ESCAPES)
TEXTS = st.one_of(
    ESCAPE,
    st.tuples(st.sampled_from(GOOD), st.sampled_from([" and ", " or ", " + ", " < "]), ESCAPE).map("".join),
    st.tuples(ESCAPE, st.sampled_from([" and ", " or ", " * "]), st.sampled_from(GOOD)).map("".join),
    ESCAPE.map(lambda e: f"not ({e})"),
    ESCAPE.map(lambda e: f"abs({e}) > 1"),
)


@pytest.fixture
def session(ti_cpu):
    return demo_graph().debug(a=1.0, x=np.ones(4, np.float32), y=np.zeros(4, np.float32))


def test_escape_attempts_are_refused_and_nothing_runs(session, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    sentinel = tmp_path / "SENTINEL"
    before = session.inspect("y").numpy().copy()

    def check(text: str) -> None:
        text = text.replace("SENTINEL", repr(str(sentinel)))
        for add in (session.break_when, session.watch):
            with pytest.raises(ExprError) as info:
                add(text)
            assert "column" in str(info.value) or "allowed" in str(info.value), info.value
        assert session.breakpoints == [] and session.watches == []
        assert not sentinel.exists()
        assert np.array_equal(session.inspect("y").numpy(), before)

    fuzz = given(TEXTS)(check)
    for text in ESCAPES:
        fuzz = example(text)(fuzz)
    settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))(fuzz)()
    assert session.continue_().reason == "end"  # the session still works, and y ran as it should
    assert session.inspect("y").numpy().tolist() == [6.0] * 4


TOKENS = ["x", "y", "a", ".max()", ".sum()", "(", ")", " and ", " or ", "not ", "<", "1", "inf", "isnan(", "__", "."]


def test_any_text_is_accepted_or_refused_leaving_the_session_as_it_was(session):
    def check(text: str) -> None:
        stop_before = session.position.index
        try:
            breakpoint_ = session.break_when(text)
        except gl.GraphlabError as exc:
            assert isinstance(exc, ExprError) and str(exc)
            assert session.breakpoints == []
        else:
            session.remove_breakpoint(breakpoint_)
        try:
            session.watch(text)
        except gl.GraphlabError as exc:
            assert isinstance(exc, ExprError) and str(exc)
            assert session.watches == []
        else:
            session.unwatch()
        assert session.position.index == stop_before

    strategy = st.one_of(st.text(max_size=40), st.lists(st.sampled_from(TOKENS), max_size=12).map("".join))
    settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))(given(strategy)(check))()
