"""Widget messages are typed from parsing to the model call: mypy catches a misspelt field.

mypy runs for real (``mypy.api.run``) on small snippets and on copies of the editor's and the panels'
handlers with one field misspelt; graphlab is imported from this checkout (mypy runs in its root).
Also the handler tables' own refusals (:mod:`graphlab.widget.handlers`).
"""

import re
import textwrap
import typing
from pathlib import Path

import pytest
from mypy import api

from graphlab.widget import protocol
from graphlab.widget.editor import NODE_FIELDS
from graphlab.widget.handlers import Handlers, key_of, record_keys
from graphlab.widget.messages import parse_message

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.fixture(scope="module")
def mypy_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("mypy-cache")


@pytest.fixture
def mypy(tmp_path, mypy_cache, monkeypatch):
    """Type-check one module's source with the project's mypy settings; returns mypy's report lines."""
    monkeypatch.chdir(ROOT)  # graphlab resolves to this checkout, not to an installed copy

    def check(source: str, name: str = "snippet") -> list[str]:
        path = tmp_path / f"{name}.py"
        path.write_text(source, encoding="utf-8")
        out, err, _ = api.run(
            ["--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", str(mypy_cache), str(path)]
        )
        assert not err, err
        return [line for line in out.splitlines() if ": error:" in line]

    return check


def test_a_misspelt_field_of_a_parsed_message_is_a_type_error(mypy):
    source = textwrap.dedent("""
        from graphlab.widget.messages import parse_message

        def new_name(content: object) -> str:
            message = parse_message(content)
            if message["kind"] == "edit" and message["op"] == "rename":
                return message["{field}"]
            return ""
    """)
    assert mypy(source.replace("{field}", "name")) == []
    errors = mypy(source.replace("{field}", "nme"))
    assert len(errors) == 1 and 'TypedDict "RenameEdit" has no key "nme"' in errors[0], errors


def test_a_field_of_another_operation_is_a_type_error(mypy):
    """Narrowed on ``op``, a message has only its own record's fields (``index`` is a move's, not a rename's)."""
    errors = mypy(
        textwrap.dedent("""
        from graphlab.widget.messages import parse_message

        def position(content: object) -> int:
            message = parse_message(content)
            if message["kind"] == "edit" and message["op"] == "rename":
                return message["index"]
            return 0
    """)
    )
    assert len(errors) == 1 and 'TypedDict "RenameEdit" has no key "index"' in errors[0], errors


@pytest.mark.parametrize(
    ("module", "field", "record"),
    [
        ("editor", 'edit["kernel"]', "DispatchEdit"),
        ("editor", 'repeat=edit["repeat"]', "GroupEdit"),
        ("editor", 'bind["param"]', "BindTarget"),
        ("panels", 'message["expression"], message["every"]', "BreakpointCondition"),
        ("panels", 'message["buffer"]', "InspectMessage"),
    ],
)
def test_a_misspelt_field_in_a_handler_of_the_widget_is_a_type_error(mypy, module, field, record):
    """The handlers that make the model calls read their message's declared fields (a copy, one field misspelt)."""
    source = (ROOT / "graphlab" / "widget" / f"{module}.py").read_text(encoding="utf-8")
    assert source.count(field) == 1, f"{field} not found once in graphlab/widget/{module}.py"
    misspelt = re.sub(r'\["(\w+)"\]', lambda m: f'["{m[1]}x"]', field, count=1)
    name = re.search(r'\["(\w+)"\]', field)[1]
    errors = mypy(source.replace(field, misspelt), name=f"{module}_copy")
    assert len(errors) == 1 and f'TypedDict "{record}" has no key "{name}x"' in errors[0], errors


def test_a_handler_filed_under_another_message_is_a_type_error(mypy):
    errors = mypy(
        textwrap.dedent("""
        from graphlab.widget.handlers import Handlers
        from graphlab.widget.protocol import EditMessage, MoveEdit, RenameEdit

        table: Handlers[EditMessage, [], str] = Handlers(EditMessage)

        @table.on(RenameEdit)
        def rename(edit: MoveEdit) -> str:
            return edit["node"]
    """)
    )
    assert len(errors) == 1 and '"Callable[[MoveEdit], str]"' in errors[0] and "RenameEdit" in errors[0], errors


# --- the handler tables ------------------------------------------------------------------------------------


def test_a_message_reaches_the_handler_of_its_record():
    table: Handlers[protocol.WatchMessage, [list[str]], str] = Handlers(protocol.WatchMessage)

    @table.on(protocol.WatchAdd)
    def add(message, seen):
        seen.append("add")
        return message["expression"]

    @table.on(protocol.WatchRemove)
    def remove(message, seen):
        seen.append("remove")
        return message["expression"]

    table.complete()
    seen: list[str] = []
    message = parse_message({"kind": "watch", "op": "remove", "request": 1, "session": 1, "expression": "x.max()"})
    assert key_of(message) == ("watch", "remove")
    assert table(message, seen) == "x.max()" and seen == ["remove"]


def test_a_record_answers_to_every_operation_it_declares():
    assert record_keys(protocol.DebugGoto) == [("debug", "goto")]
    assert ("debug", "find_nonfinite") in record_keys(protocol.DebugControl)
    assert record_keys(protocol.InspectMessage) == [("inspect", None)]


def test_a_handler_for_a_record_outside_the_union_is_refused():
    table: Handlers[protocol.WatchMessage, [], None] = Handlers(protocol.WatchMessage)
    with pytest.raises(TypeError, match=r"RenameEdit is not one of this table's messages \(WatchAdd, WatchRemove\)"):
        table.on(protocol.RenameEdit)


def test_a_second_handler_for_a_record_is_refused():
    table: Handlers[protocol.WatchMessage, [], None] = Handlers(protocol.WatchMessage)
    table.on(protocol.WatchAdd)(lambda message: None)
    with pytest.raises(TypeError, match=r"WatchAdd: watch 'add' has a handler already"):
        table.on(protocol.WatchAdd)(lambda message: None)


def test_a_table_missing_a_handler_is_refused_when_completed():
    table: Handlers[protocol.DebugMessage, [], None] = Handlers(protocol.DebugMessage)
    table.on(protocol.DebugStart)(lambda message: None)
    with pytest.raises(TypeError, match=r"no handler for the message\(s\) debug 'step', .*debug 'goto'.*@table.on"):
        table.complete()


def test_a_message_handed_to_another_union_s_table_is_a_type_error(mypy):
    errors = mypy(
        textwrap.dedent("""
        from graphlab.widget.handlers import Handlers
        from graphlab.widget.protocol import EditMessage, WatchAdd

        table: Handlers[EditMessage, [], str] = Handlers(EditMessage)

        def send(message: WatchAdd) -> str:
            return table(message)
    """)
    )
    assert len(errors) == 1 and '"WatchAdd"' in errors[0] and "[arg-type]" in errors[0], errors


def test_the_node_fields_the_stale_check_reads_across_edits_are_declared():
    """The one place that reads edits as plain mappings names only declared fields, of the types it expects."""
    declared: dict[str, set[str]] = {}
    for record in typing.get_args(protocol.EditMessage):
        for name, hint in typing.get_type_hints(record).items():
            declared.setdefault(name, set()).add(str(hint))
    assert set(NODE_FIELDS) <= set(declared), set(NODE_FIELDS) - set(declared)
    assert declared["into"] == {"str | None"} and declared["nodes"] == {"list[str]"}
    assert "BindTarget" in str(declared["bind"]) and "node" in typing.get_type_hints(protocol.BindTarget)
