"""The wire protocol is declared once (graphlab/widget/protocol.py) and everything else follows it.

The TypeScript types are generated from it (the committed protocol.gen.ts must be what the generator
writes), the message checks read it (every declared message is accepted and reaches a handler; every
kind the handler dispatches on is declared), and the widget's traits and replies have its fields.
"""

import ast
import importlib
import inspect
import re
import subprocess
import sys
import textwrap
import typing
from pathlib import Path

import numpy as np
import pytest
import taichi as ti
import traitlets
from widget_comm import recording_comm  # noqa: F401  (autouse fixture)

import graphlab as gl
from graphlab.widget import GraphEditor, editor, messages, panels, protocol
from graphlab.widget.messages import MessageError, field_checks, parse_message
from graphlab.widget.protocol import Default, NotRequired, TypedDict
from graphlab.widget.protocol_ts import COMMAND, GENERATED, ProtocolError, generate, generate_protocol, write

ROOT = Path(__file__).resolve().parent.parent.parent
EDITOR = importlib.import_module("graphlab.widget.editor")  # graphlab.widget.editor is also a function


@ti.kernel
def fill(x: ti.types.ndarray(dtype=ti.f32, ndim=1), value: ti.f32):
    for i in x:
        x[i] = value


@pytest.fixture
def ed(ti_cpu):
    g = gl.Graph("demo")
    g.dispatch(fill, g.ndarray("x", ti.f32, ndim=1), g.scalar("a", ti.f32), name="init")
    widget = editor(g, kernels=[fill], access="ast", values={"x": np.zeros(8, np.float32), "a": 0.5})
    yield widget
    widget.close()


def records(union):
    return typing.get_args(union)


def hints(record):
    return typing.get_type_hints(record)


# --- the generated TypeScript --------------------------------------------------------------------------


def test_protocol_gen_ts_is_what_the_generator_writes():
    assert GENERATED == ROOT / "extension" / "src" / "wire" / "protocol.gen.ts"
    assert GENERATED.read_text(encoding="utf-8") == generate_protocol(), f"protocol.gen.ts is stale: run {COMMAND}"


def test_a_declaration_changed_without_regenerating_fails_the_freshness_check():
    source = inspect.getsource(protocol).replace("    ok: bool\n", "    ok: bool\n    retry_in: float | None\n")
    changed = generate(source, vars(protocol), origin="graphlab/widget/protocol.py")
    assert "  retry_in: number | null;\n" in changed
    assert changed != GENERATED.read_text(encoding="utf-8")


def test_the_command_prints_the_file_and_checks_it():
    """Taichi's import banner must not end up in the printed file."""
    run = [sys.executable, "-m", "graphlab.widget.protocol_ts"]
    printed = subprocess.run(run, cwd=ROOT, capture_output=True, text=True, timeout=300, check=True)
    assert printed.stdout == GENERATED.read_text(encoding="utf-8")
    checked = subprocess.run([*run, "--check"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert checked.returncode == 0, checked.stderr


def test_importing_the_widget_and_its_protocol_does_not_import_taichi():
    """The command's output is the file, and Taichi prints a banner on import (the widget imports it lazily)."""
    code = "import sys, graphlab.widget.protocol_ts, graphlab.widget; print('taichi' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.stdout == "False\n", done.stdout + done.stderr


def test_the_debuggers_vocabularies_are_the_debug_packages():
    from graphlab.debug import breakpoints, report

    assert typing.get_args(protocol.StopReason) == typing.get_args(report.StopReason)
    assert typing.get_args(protocol.BreakKind) == typing.get_args(breakpoints.BreakKind)
    assert typing.get_args(protocol.Every) == typing.get_args(breakpoints.Every)


def test_write_replaces_the_file_whole_and_only_when_it_changed(tmp_path):
    target = tmp_path / "protocol.gen.ts"
    assert write(target, "export type A = 1;\n") is True
    assert write(target, "export type A = 1;\n") is False
    assert target.read_text() == "export type A = 1;\n" and [p.name for p in tmp_path.iterdir()] == [target.name]
    with pytest.raises(FileNotFoundError, match="needs a checkout of graphlab"):
        write(tmp_path / "no" / "src" / "protocol.gen.ts", "x")


def test_the_generated_types_read_like_the_declarations():
    text = GENERATED.read_text(encoding="utf-8")
    assert text.startswith(f"/**\n * Generated from graphlab/widget/protocol.py by `{COMMAND}`; do not edit.")
    assert 'export interface DispatchView extends NodeBase {\n  kind: "dispatch";' in text
    assert "  while: string | null;\n" in text and "  from: number;\n" in text  # Python keywords as fields
    assert "  problem?: string;\n" in text  # NotRequired
    assert '  /** Default: `"repetition"`. */\n  every?: Every;\n' in text
    assert 'export type ArgKind = "scalar" | "ndarray" | "matrix" | "texture" | "rw_texture";' in text
    assert "  inspect_picture: DataView | null;\n" in text


_NS = {"__all__": ["A"]}


@pytest.mark.parametrize(
    ("source", "namespace", "problem"),
    [
        ("class A(TypedDict):\n    x: set[int]\n", _NS, "A.x: set[int] has no TypeScript form"),
        ("class A(TypedDict):\n    x: B\n", _NS, "A.x: B is not a wire type: list it in __all__"),
        ("class A(TypedDict):\n    x: int\n", {}, "__all__: it is missing or not a list of names"),
        ("class A(TypedDict, total=False):\n    x: int\n", _NS, "A: class keywords (total=False)"),
        ("class A:\n    x: int\n", _NS, "A: a wire record must be a TypedDict"),
        ("class A(B):\n    x: int\n", _NS, "A: its base B is not a TypedDict class listed in __all__"),
        ("class A(TypedDict):\n    x: int = 1\n", _NS, "A: line 2: a TypedDict body holds only"),
        ("class A(TypedDict):\n    x: list[NotRequired[int]]\n", _NS, "A.x: NotRequired[...] goes around"),
        ("class A(TypedDict):\n    x: dict[int, str]\n", _NS, "A.x: JSON object keys are strings"),
        ("class A(TypedDict):\n    x: Literal[1.5]\n", _NS, "A.x: Literal[...] takes strings"),
        ("class A(TypedDict):\n    x: NotRequired[Annotated[int, Default(f())]]\n", _NS, "A.x: Default(...) takes"),
        ('A = TypedDict("B", {"x": int})\n', _NS, 'A: write it as A = TypedDict("A"'),
        ('A = TypedDict("A", {1: int})\n', _NS, "A: the field names of a TypedDict(...) are string literals"),
        ('A = TypedDict("A", {"my-field": int})\n', _NS, "A.my-field: a field name must be an identifier"),
        ("B = int\n", _NS, "A: it is in __all__ but not defined or imported there"),
        ("from x import A\n", {**_NS, "A": int}, "A: imported from x, it must be a Literal of strings"),
    ],
)
def test_what_has_no_typescript_form_is_refused_with_its_place(source, namespace, problem):
    with pytest.raises(ProtocolError, match=re.escape(f"demo.py: {problem}")):
        generate(source, namespace, origin="demo.py")


def test_a_long_union_is_laid_out_as_prettier_lays_it_out():
    members = [f"Member{i:02}WithAFairlyLongName" for i in range(5)]
    source = "\n\n".join(f"class {m}(TypedDict):\n    x: int" for m in members)
    source += f"\n\nU = {' | '.join(members)}\nV = {' | '.join(members[:4])}\n"
    text = generate(source, {"__all__": [*members, "U", "V"]}, origin="demo.py")
    assert "export type U =\n  | Member00WithAFairlyLongName\n  | Member01" in text  # too long for one line
    assert (
        "export type V =\n  Member00WithAFairlyLongName | Member01WithAFairlyLongName | Member02" in text
    )  # fits below


# --- the Python side follows the declarations ------------------------------------------------------------


def sample(hint):
    """A small value of a declared type that every check accepts."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, __import__("types").UnionType):
        return sample(next(a for a in args if a is not type(None)))
    if origin is typing.Literal:
        return args[0]
    if typing.is_typeddict(hint):
        required = hint.__required_keys__
        return {name: sample(h) for name, h in hints(hint).items() if name in required}
    return {str: "a", int: 1, float: 1.0, bool: True, list: [], dict: {}}[origin or hint]


def declared_messages():
    """One message of every declared kind and operation, with only its required fields."""
    out = []
    for record in records(protocol.ClientMessage):
        operation = next((f for f in protocol.OPERATION_FIELDS if f in hints(record)), None)
        for op in typing.get_args(hints(record)[operation]) if operation else [None]:
            message = sample(record)
            if operation:
                message[operation] = op
            out.append(message)
    return out


def test_every_declared_message_is_accepted_with_its_defaults():
    seen = set()
    for message in declared_messages():
        parsed = parse_message(message)
        op = message.get("op") or message.get("action")
        head = {name: value for name, value in message.items() if name in ("kind", "op", "action", "request")}
        assert {name: parsed[name] for name in head} == head  # what names the message is kept as sent
        seen.add((parsed["kind"], op))
    assert ("debug", "goto") in seen and ("edit", "new_arg") in seen and ("export", None) in seen
    assert len(seen) == 16 + 2 + 2 + 1 + 11 + 3 + 2 + 1 + 1 + 5  # edits, structure edits, undo/redo, select, ..., values
    export = parse_message({"kind": "export", "request": 1, "arch": "x64", "path": "out"})
    assert export == {"kind": "export", "request": 1, "arch": "x64", "path": "out", "overwrite": False,
                      "verify": True, "cpu_threads": None, "dims": {}}  # fmt: skip
    compare = parse_message({"kind": "debug", "action": "compare", "request": 1, "session": 1, "against": "vulkan"})
    assert compare == {"kind": "debug", "action": "compare", "request": 1, "session": 1, "against": "vulkan",
                       "rtol": 0.0, "atol": 0.0, "timeout": 600.0}  # fmt: skip


def test_a_default_list_or_object_is_not_shared_between_messages():
    first = parse_message({"kind": "edit", "op": "dispatch", "request": 1, "kernel": "m:k"})
    first["bindings"]["x"] = "y"
    second = parse_message({"kind": "edit", "op": "dispatch", "request": 2, "kernel": "m:k"})
    assert second["bindings"] == {}


def test_an_arg_spec_outside_the_declared_kinds_is_refused_by_the_checks():
    with pytest.raises(MessageError, match=r"edit 'new_arg' arg: field 'kind' must be 'scalar', 'ndarray', .*'bogus'"):
        parse_message({"kind": "edit", "op": "new_arg", "request": 1, "arg": {"name": "q", "kind": "bogus"}})


def test_every_kind_the_editor_dispatches_on_is_declared_and_every_declared_kind_is_handled():
    """The editor narrows on ``kind`` (select, undo, redo, edit); the panels' table handles the rest."""
    declared = {typing.get_args(hints(r)["kind"])[0] for r in records(protocol.ClientMessage)}
    narrowed = set()
    for node in ast.walk(ast.parse(textwrap.dedent(inspect.getsource(EDITOR.GraphEditor._handle)))):
        if isinstance(node, ast.Compare) and ast.unparse(node.left) == "message['kind']":
            narrowed |= {c.value for c in node.comparators if isinstance(c, ast.Constant)}
    by_panels = {kind for kind, _ in panels._PANEL_MESSAGES.keys}
    assert narrowed == {"select", "undo", "redo", "edit"}
    assert narrowed | by_panels == declared == set(messages.KINDS) and not narrowed & by_panels


def test_every_edit_op_has_one_handler_and_every_handler_a_declared_op():
    edits = protocol.EditMessage | protocol.StructureEdit
    declared = [("edit", typing.get_args(hints(r)["op"])[0]) for r in records(edits)]
    assert EDITOR._EDITS.keys == declared and {op for _, op in declared} == set(messages.EDIT_OPS)


def test_every_panel_message_and_debugger_action_has_a_handler():
    declared = [(kind, op or None) for kind, (_, by_op) in messages.PANEL_MESSAGES.items() for op in by_op]
    assert sorted(panels._PANEL_MESSAGES.keys, key=str) == sorted(declared, key=str)
    actions = {op for kind, op in declared if kind == "debug"}
    assert actions == {"start", "step", "step_over", "continue", "back", "restart", "find_nonfinite", "stop", "goto",
                       "compare", "prepare_compare"}  # fmt: skip


def test_every_declared_panel_message_reaches_its_handler(ed):
    """A live session gets each one: it is done, or refused for a reason of its own (no bug, no 'unknown')."""
    for message in declared_messages():
        if message["kind"] in ("edit", "undo", "redo", "select", "export"):  # an export would compile for seconds
            continue
        if ed.session is None:
            ed.debug()
        if "session" in message:
            message["session"] = ed.debugger["session"]
        reply = ed.handle_message(message)
        error = reply["error"] or ""
        assert not any(s in error for s in ("message ignored", "graphlab bug", "unknown debugger")), (message, error)


def test_every_check_rule_names_a_declared_field():
    fields = {(r.__name__, name) for r in (*records(protocol.ClientMessage), protocol.ArgSpec, protocol.BindTarget)
              for name in hints(r)}  # fmt: skip
    for rule in messages._RULES:
        record, _, name = rule.rpartition(".")
        assert any(name == f and record in ("", r) for r, f in fields), f"_RULES[{rule!r}] names no declared field"


class _NoRule(TypedDict):
    mystery_text: str


class _NoDefault(TypedDict):
    kind: typing.Literal["x"]
    count: NotRequired[int]


class _RequiredDefault(TypedDict):
    count: typing.Annotated[int, Default(3)]


class _Unsupported(TypedDict):
    path: bytes


class _FloatNoRule(TypedDict):
    mystery_scale: float  # NaN and infinities pass a type check: every float needs its bounds


@pytest.mark.parametrize(
    ("record", "problem"),
    [
        (_NoRule, r"_NoRule.mystery_text needs a rule in graphlab.widget.messages._RULES"),
        (_NoDefault, r"_NoDefault.count is NotRequired but has no Default\(...\)"),
        (_RequiredDefault, r"_RequiredDefault.count has a Default\(...\) but is required"),
        (_Unsupported, r"_Unsupported.path has a type messages cannot check: <class 'bytes'>"),
        (_FloatNoRule, r"_FloatNoRule.mystery_scale needs a rule in graphlab.widget.messages._RULES"),
    ],
)
def test_a_declaration_the_checks_cannot_follow_is_refused_at_import(record, problem):
    with pytest.raises(TypeError, match=problem):
        field_checks(record)


# --- traits and replies -----------------------------------------------------------------------------------


def test_traits_are_the_ones_the_protocol_declares():
    import ipywidgets

    ours = set(GraphEditor.class_trait_names(sync=True)) - set(ipywidgets.DOMWidget.class_trait_names(sync=True))
    ours = {name for name in ours if not name.startswith("_")}
    declared = hints(protocol.Traits)
    assert ours == set(declared)
    for name, hint in declared.items():
        trait = GraphEditor.class_traits()[name]
        expected = {bytes: traitlets.Bytes, str: traitlets.Unicode, list: traitlets.List}.get(
            typing.get_origin(hint) or hint, traitlets.Dict
        )
        assert isinstance(trait, expected), (name, hint, trait)


def test_array_traits_are_bytes_on_the_wire():
    """Arrays travel as binary buffers (a DataView in the browser), never as JSON lists."""
    for name in ("inspect_picture", "inspect_diff", "inspect_page"):
        assert hints(protocol.Traits)[name] is bytes
        assert isinstance(GraphEditor.class_traits()[name], traitlets.Bytes)


def test_a_reply_has_the_fields_the_protocol_declares(ed):
    for message in ({"kind": "undo", "request": 4}, {"kind": "select", "node": "init"}, "not a message"):
        reply = ed.handle_message(message)
        assert set(reply) == set(hints(protocol.ReplyMessage)) and reply["kind"] == "reply"
    assert ed.comm.replies()[-1] == reply
