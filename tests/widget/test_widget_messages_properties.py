"""The widget's message handler answers every message, whatever it holds, and a refused one changes nothing.

A property test sends arbitrary JSON-like messages (real kinds and ops, fields of random types, huge
strings and lists) to ``GraphEditor.handle_message``; targeted tests pin the cases an adversarial
review found: a list where a string belongs, a 50 MB name with a million stale ids, ints too large to
print, a half-built editor's ``close()``.
"""

import json
import time
from collections.abc import Mapping

import numpy as np
import pytest
from editor_demo import axpy, fill
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from widget_comm import recording_comm  # noqa: F401  (autouse fixture)

from graphlab.model.graphfile import to_dict
from graphlab.widget import GraphEditor, editor
from graphlab.widget.messages import (
    ARG_SPEC_FIELDS,
    EDIT_OPS,
    KINDS,
    MAX_ECHO,
    MAX_MESSAGE_CHARS,
    MAX_NAME,
    MAX_REPLY_ERROR,
    PANEL_MESSAGES,
)

#: A reply, as JSON, is never larger than this (the review's bound).
REPLY_BYTES = 10_000


@pytest.fixture
def ed(graph):
    widget = editor(graph, kernels=[fill, axpy], access="ast")
    yield widget
    widget.close()


def state(widget):
    """What a refused message must leave as it was: the graph's version, its saved form, the history."""
    return widget.model.version, to_dict(widget.model), widget.history


def send(widget, message):
    """``handle_message`` (it must not raise), checking that exactly that reply went to the front-end."""
    before = len(widget.comm.replies())
    reply = widget.handle_message(message)
    replies = widget.comm.replies()
    assert len(replies) == before + 1 and replies[-1] == reply
    assert set(reply) == {"kind", "request", "ok", "error"} and reply["kind"] == "reply"
    assert isinstance(reply["ok"], bool) and (reply["error"] is None) == reply["ok"]
    assert len(json.dumps(reply)) < REPLY_BYTES
    if not reply["ok"]:
        assert isinstance(reply["error"], str) and reply["error"] and len(reply["error"]) <= MAX_REPLY_ERROR
    return reply


def refused(widget, message):
    """Send a message that must be refused; returns the error text after checking nothing changed."""
    before = state(widget)
    reply = send(widget, message)
    assert reply["ok"] is False, message
    assert state(widget) == before
    return reply["error"]


# --- the property ------------------------------------------------------------------------------------

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-1000, 1000) | st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
)
_json = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)
# Values of the right type for each field, right or wrong for the graph (so that many messages reach
# the graph and some edits pass). No valid export arch is ever drawn: an export that passed would
# compile for seconds per example.
_node = st.sampled_from(["init", "step", "step/axpy", "gone", "step/gone", ""])
_arg_name = st.sampled_from(["x", "y", "a", "nope", "bad name"])
_param = st.sampled_from(["x", "value", "a", "y", "zz"])
_small = st.integers(-2, 5)
_arg_spec = st.fixed_dictionaries(
    {
        "name": st.sampled_from(["q", "x", "bad name", "r"]),
        "kind": st.sampled_from(["scalar", "ndarray", "matrix", "bogus"]),
    },
    optional={
        "dtype": st.sampled_from(["f32", "i32", "vec2", None, "f99"]),
        "ndim": _small,
        "element_shape": st.lists(_small, max_size=3),
        "fmt": st.none() | st.just("rgba8"),
        "role": st.sampled_from(["state", "input", "temp", "bogus"]),
        "shape": st.none() | st.lists(_small | st.sampled_from(["n", "bad dim"]), max_size=3),
    },
)
_GOOD = {
    "node": _node,
    "nodes": st.lists(_node, max_size=3),
    "name": st.sampled_from(["m", "init", "g2", "bad name", "", "step"]),
    "kernel": st.sampled_from([f"{fill.__module__}:fill", f"{axpy.__module__}:axpy", "nowhere:x"]),
    "bindings": st.dictionaries(_param, st.none() | _arg_name, max_size=3),
    "into": st.none() | _node,
    "group": st.none() | _node,
    "index": st.none() | _small,
    "param": _param,
    "arg": st.none() | _arg_name,
    "repeat": _small,
    "role": st.sampled_from(["input", "output", "state", "temp", "inout"]),
    "bind": st.none() | st.fixed_dictionaries({"node": _node, "param": _param}),
    "session": st.just(1) | st.integers(0, 3),
    "target": _small,
    "expression": st.sampled_from(["x.max()", "", "1 +", "y.min() > 0", "nope"]),
    "every": st.sampled_from(["repetition", "dispatch", "never"]),
    "id": _small,
    "buffer": _arg_name,
    "component": st.none() | _small,
    "page": _small,
    "arch": st.sampled_from(["metal", "X64", "x86"]),
    "path": st.text("abc", min_size=1, max_size=4),
    "overwrite": st.booleans(),
    "verify": st.booleans(),
    "cpu_threads": st.none() | _small,
    "dims": st.dictionaries(st.sampled_from(["n", "G", "bad dim"]), _small, max_size=2),
    # never a valid arch or module folder: a comparison that ran would take seconds per example
    "against": st.sampled_from(["vulkan2", "X64", "no/such/folder", "", " "]),
    "rtol": st.floats(allow_nan=True, allow_infinity=True) | _small,
    "atol": st.floats(-1.0, 2e6) | _small,
    "timeout": st.floats(allow_nan=True, allow_infinity=True) | _small,
    # never "check": a checked start runs a child process, seconds per example (test_widget_bounds.py runs it)
    "bounds": st.sampled_from(["trust", "Check", "", "checked"]),
    # the loop form (make_loop / make_cond) and the values panel
    "body": st.sampled_from(["body", "init", "2x", ""]),
    "else_body": st.none() | st.sampled_from(["other", "body"]),
    "mode": st.sampled_from(["while", "count", "until"]),
    "flag": st.none() | _arg_name,
    "count": st.none() | _arg_name,
    "max_iter": st.none() | _small,
    "check_every": _small,
    "guarded": st.booleans(),
    "value": st.floats(allow_nan=True, allow_infinity=True) | _small,
    "shape": st.lists(_small, max_size=3),
    "fill": st.sampled_from(["zeros", "random", "ones"]),
    "seed": _small,
    "dim": st.sampled_from(["n", "m", "x", "bad dim"]),
    "size": st.none() | _small,
    "variable": st.sampled_from(["x0", "nope", ""]),
    "slice": st.none() | st.lists(_small, max_size=2),
    # the canvas's edits
    "position": st.none() | st.lists(st.floats(-1e8, 1e8) | _small, min_size=1, max_size=3),
    "positions": st.dictionaries(_node, st.lists(st.floats(allow_nan=True) | _small, min_size=2, max_size=2), max_size=3),
    "guessed": st.lists(_param, max_size=3),
    "dx": st.none() | st.floats(allow_nan=True) | _small,  # a paste's step, the canvas's choice
    "dy": st.none() | st.floats(allow_nan=True) | _small,
}
# Anything: real names of other fields, JSON of random shape, and bigger-than-allowed strings and lists.
_plausible = st.sampled_from(
    ["init", "step/axpy", "gone", "x", "value", "repetition", "add", "toggle", "", " ", 0, 1, -1]
)
_huge = st.one_of(
    st.integers(MAX_NAME - 2, MAX_MESSAGE_CHARS + 10).map(lambda n: "n" * n),
    st.integers(0, 12_000).map(lambda n: [f"gone{i}" for i in range(n)]),
    st.integers(0, 300).map(lambda n: {f"k{i}": i for i in range(n)}),
    st.integers(1, 8).map(lambda d: _nested(d)),
    st.integers(2**53 - 1, 2**53 + 1) | st.just(10**5000),
)
_value = st.one_of(_json, _plausible, _huge)


def _nested(depth):
    value = ["leaf"]
    for _ in range(depth):
        value = [value]
    return value


def _fields_of(kind, op):
    """The field names a message of this kind and op may have (its real ones)."""
    if kind == "edit":
        return list(EDIT_OPS.get(op, {}))
    if kind == "select":
        return ["node"]
    if isinstance(kind, str) and kind in PANEL_MESSAGES:
        key, ops = PANEL_MESSAGES[kind]
        return list(ops.get("" if key is None else op, {}))
    return []


def _mostly(draw, good):
    """A well-typed value 9 times in 10, else anything."""
    return draw(good) if draw(st.integers(0, 9)) else draw(_value)


@st.composite
def messages(draw, kinds=KINDS):
    kind = _mostly(draw, st.sampled_from(kinds))
    message = {"kind": kind} if draw(st.integers(0, 19)) else {}
    op = None
    if kind == "edit":
        op = _mostly(draw, st.sampled_from(list(EDIT_OPS)))
        message["op"] = op
    elif isinstance(kind, str) and kind in PANEL_MESSAGES and PANEL_MESSAGES[kind][0] is not None:
        key, ops = PANEL_MESSAGES[kind]
        op = _mostly(draw, st.sampled_from(list(ops)))
        message[key] = op
    if draw(st.integers(0, 9)):
        message["request"] = _mostly(draw, st.integers(0, 100))
    for name in _fields_of(kind, op) if isinstance(op, str) or op is None else []:
        if not draw(st.integers(0, 9)):  # now and then a field is missing
            continue
        good = _arg_spec if kind == "edit" and op in ("new_arg", "redeclare") and name == "arg" else _GOOD[name]
        if good is _arg_spec and not draw(st.integers(0, 5)):  # every spec field, each of any type
            message[name] = {field: draw(_value) for field in ARG_SPEC_FIELDS if draw(st.booleans())}
        elif draw(st.integers(0, 5)):
            message[name] = draw(good)
        else:  # a wrong type or size
            message[name] = draw(_value)
    if not draw(st.integers(0, 9)):  # an extra field
        message[draw(st.text(max_size=6) | st.just("force"))] = draw(_value)
    return message


@settings(
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(message=messages())
def test_every_message_is_answered_and_a_refused_one_changes_nothing(ed, message):
    _answered_and_refusals_change_nothing(ed, message)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(message=messages(kinds=("debug", "breakpoint", "watch", "inspect", "select")))
def test_panel_messages_reach_a_live_debug_session_and_are_answered(ed, message):
    """The same, with a debug session running, so well-typed panel messages reach the session's API."""
    if ed.session is None:  # the first example, or an edit or a stop ended it
        ed.debug({"x": np.zeros(8, np.float32), "y": np.zeros(8, np.float32), "a": 0.5})
    if message.get("session") == 1:  # session 1 stands for the one running now
        message["session"] = ed.debugger["session"]
    _answered_and_refusals_change_nothing(ed, message)


def _answered_and_refusals_change_nothing(ed, message):
    before = state(ed)
    reply = send(ed, message)
    request = message.get("request")
    if isinstance(request, int) and not isinstance(request, bool) and abs(request) <= 2**53:
        assert reply["request"] == request
    if not reply["ok"]:
        assert state(ed) == before, reply["error"]


# --- targeted -----------------------------------------------------------------------------------------

_LIST_FOR_STRING = [
    ({"kind": ["edit"], "op": "remove", "request": 1, "node": "init"}, "unknown message kind ['edit']"),
    ({"kind": "edit", "op": ["remove"], "request": 1, "node": "init"}, "unknown edit op ['remove']"),
    ({"kind": "debug", "action": ["step"], "request": 1, "session": 1}, "debug: unknown action ['step']"),
    ({"kind": "breakpoint", "op": {"toggle": 1}, "request": 1}, "breakpoint: unknown op {'toggle': 1}"),
    ({"kind": "watch", "op": ["add"], "request": 1, "session": 1, "expression": "x"}, "unknown op ['add']"),
    ({"kind": "edit", "op": "rename", "request": 1, "node": "init", "name": ["b"]}, "field 'name' must be"),
    ({"kind": "edit", "op": "remove", "request": 1, "node": ["init"]}, "field 'node' must be a node id"),
    ({"kind": "edit", "op": "group", "request": 1, "nodes": [["init"]], "name": "g"}, "a list of node ids"),
    ({"kind": "edit", "op": "dispatch", "request": 1, "kernel": ["k"]}, "field 'kernel' must be"),
    ({"kind": "edit", "op": "new_arg", "request": 1, "arg": "q"}, "field 'arg' must be an arg spec"),
    ({"kind": "edit", "op": "new_arg", "request": 1, "arg": {"name": ["q"], "kind": "scalar"}}, "'name' must be"),
    (
        {
            "kind": "edit",
            "op": "new_arg",
            "request": 1,
            "arg": {"name": "q", "kind": "ndarray", "dtype": "f32", "element_shape": ["2"]},
        },
        "field 'element_shape' must be",
    ),
    (
        {
            "kind": "edit",
            "op": "new_arg",
            "request": 1,
            "arg": {"name": "q", "kind": "scalar", "dtype": "f32"},
            "bind": {"node": ["init"], "param": "value"},
        },
        "field 'bind' must be",
    ),
    ({"kind": "edit", "op": "rebind", "request": 1, "node": "init", "param": "x", "arg": ["x"]}, "'arg' must be"),
    ({"kind": "select", "node": ["init"]}, "field 'node' must be a node id"),
    ({"kind": "export", "request": 1, "arch": ["x64"], "path": "out"}, "field 'arch' must be"),
    ({"kind": "export", "request": 1, "arch": "x64", "path": "out", "dims": {"n": [16]}}, "field 'dims' must be"),
    ({"kind": "inspect", "request": 1, "session": 1, "buffer": ["x"]}, "field 'buffer' must be"),
]


@pytest.mark.parametrize(("message", "reason"), _LIST_FOR_STRING)
def test_a_list_where_a_string_belongs_gets_an_error_reply(ed, message, reason):
    error = refused(ed, message)
    assert error.startswith("message ignored") and reason in error, error


def test_a_malformed_panel_message_is_refused_without_the_banner(ed):
    error = refused(ed, {"kind": "debug", "action": ["step"], "request": 3, "session": 1})
    assert "unknown action" in error and ed.error == ""
    error = refused(ed, {"kind": ["debug"], "action": "step", "request": 3, "session": 1})
    assert "unknown message kind" in ed.error  # not recognisably a panel's: the banner says it


def test_a_50_mb_name_with_a_million_stale_ids_is_answered_quickly_and_briefly(graph):
    for i in range(200):  # a graph of some size: looking each stale id up in it was O(ids x nodes), 22 s here
        graph.dispatch(fill, "x", "a", name=f"fill{i}")
    ed = editor(graph, kernels=[fill, axpy], access="ast")
    message = {"kind": "edit", "op": "group", "request": 8, "nodes": [f"gone{i}" for i in range(10**6)],
               "name": "n" * (50 * 2**20), "repeat": 1}  # fmt: skip
    before = state(ed)
    started = time.perf_counter()
    reply = send(ed, message)
    seconds = time.perf_counter() - started
    ed.close()
    print(f"50 MB name + 10**6 stale ids: answered in {seconds * 1000:.1f} ms, {len(json.dumps(reply))} bytes")
    assert seconds < 5
    assert reply["ok"] is False and reply["request"] == 8 and state(ed) == before
    assert "a message holds at most" in reply["error"]


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        (
            {"kind": "edit", "op": "rename", "request": 1, "node": "init", "name": "n" * (50 * 2**20)},
            "52,428,800 characters",
        ),
        ({"kind": "select", "node": "n" * (50 * 2**20)}, "a message holds at most"),
        ({"kind": "edit", "op": "remove", "request": 1, "node": "n" * 3000}, "(3,000 characters)"),
        (
            {"kind": "edit", "op": "rename", "request": 1, "node": "init", "name": "n" * (MAX_NAME + 1)},
            f"({MAX_NAME + 1} characters)",
        ),
        ({"kind": "watch", "op": "add", "request": 1, "session": 1, "expression": "x" * 5000}, "(5,000 characters)"),
        ({"kind": "edit", "op": "group", "request": 1, "nodes": ["gone"] * 9000, "name": "g"}, "9,000 items"),
        (
            {"kind": "edit", "op": "remove", "request": 1, "node": "init", **{f"f{i}": i for i in range(5000)}},
            "and 4,996 more",
        ),
    ],
)
def test_what_is_too_big_is_refused_and_echoed_briefly(ed, message, reason):
    error = refused(ed, message)
    assert reason in error and len(error) < 600, error


def test_ints_too_large_to_print_are_refused(ed):
    """``repr(10**5000)`` raises in Python 3.11; the reply must not try to quote it, nor echo it as the request."""
    error = refused(ed, {"kind": "edit", "op": "set_repeat", "request": 1, "node": "step", "repeat": 10**5000})
    assert "field 'repeat' is an int of 16,610 bits" in error
    reply = send(ed, {"kind": "undo", "request": 10**5000})
    assert reply["request"] is None and reply["ok"] is False


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        (
            {"kind": "edit", "op": "dispatch", "request": 1, "kernel": "k", "bindings": {"x": {"y": {"z": ["w"]}}}},
            "field 'bindings.x.y' is nested too deep",
        ),
        ({"kind": "edit", "op": "dispatch", "request": 1, "kernel": "k", "bindings": {"x": ["a"]}}, "'bindings'"),
        (
            {
                "kind": "edit",
                "op": "new_arg",
                "request": 1,
                "arg": {"name": "q", "kind": "ndarray", "dtype": "f32", "element_shape": [[2]]},
            },
            "field 'arg.element_shape[0]' is nested too deep",
        ),
        ({"kind": "edit", "op": "new_arg", "request": 1, "arg": [{"name": "q"}]}, "field 'arg' must be"),
        (
            {
                "kind": "edit",
                "op": "new_arg",
                "request": 1,
                "arg": {"name": "q", "kind": "scalar", "dtype": "f32"},
                "bind": ["init", "value"],
            },
            "field 'bind' must be",
        ),
        ({"kind": "edit", "op": "remove", "request": 1, "node": "init", 7: "x"}, "has the key 7"),
        ({"kind": "edit", "op": "remove", "request": 1, "node": ("init",)}, "a tuple, which JSON does not carry"),
        ({"kind": "edit", "op": "remove", "request": 1.0, "node": "init"}, "'request' must be an int"),
        ({"kind": "edit", "op": "move", "request": 1, "node": "init", "index": 1.5}, "field 'index' must be an int"),
        ({"kind": "edit", "op": "move", "request": 1, "node": "init", "index": False}, "field 'index' must be"),
        ({"kind": "edit", "op": "remove", "request": 1, "node": "init", "force": True}, "unexpected field(s) 'force'"),
        ({"kind": "undo", "request": 1, "extra": None}, "unexpected field(s) 'extra'"),
    ],
)
def test_wrong_nesting_types_and_extra_fields_are_refused(ed, message, reason):
    error = refused(ed, message)
    assert reason in error, error


def test_a_long_value_is_quoted_in_at_most_max_echo_characters(ed):
    error = refused(ed, {"kind": "edit", "op": "move", "request": 1, "node": "init", "index": "9" * 10_000})
    quoted = error.split("got ", 1)[1]
    assert quoted.startswith("'999") and len(quoted) <= MAX_ECHO + 30, quoted


def test_an_edit_refused_part_way_leaves_the_version_alone(ed):
    """``new_arg`` declares, then binds; a refused binding must not leave a bumped version behind
    (it would end the debug session and show as an edit in other editors of the graph)."""
    spec = {"name": "n", "kind": "ndarray", "dtype": "i32", "ndim": 1}
    refused(ed, {"kind": "edit", "op": "new_arg", "request": 1, "arg": spec, "bind": {"node": "init", "param": "zz"}})
    assert "n" not in ed.model.args


# --- a half-built editor ------------------------------------------------------------------------------


def test_close_is_safe_after_init_raised_early(graph):
    widget = GraphEditor.__new__(GraphEditor)
    with pytest.raises(TypeError, match="values= takes a dict"):
        widget.__init__(graph, values=["not", "a", "mapping"])
    widget.close()  # used to raise AttributeError: no attribute '_panels'
    widget.close()


class _Unreadable(Mapping):
    """Run values whose reading fails (a lazy mapping over files that are gone)."""

    def __getitem__(self, key):
        raise OSError(f"cannot read run value {key!r}")

    def __iter__(self):
        return iter(["x"])

    def __len__(self):
        return 1


def test_an_editor_whose_init_raised_late_stops_following_the_graph(graph):
    observers = len(graph._observers)
    widget = GraphEditor.__new__(GraphEditor)
    with pytest.raises(OSError, match="cannot read run value"):
        widget.__init__(graph, values=_Unreadable())
    assert len(graph._observers) == observers, "the half-built editor still follows the graph"
    widget.close()
    graph.rename("init", "start")  # nothing left to notify
