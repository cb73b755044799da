"""Drawing a graph with Graphviz: plain functions from the model (and its data flow) to DOT.

Three views:

- ``program`` (default): dispatches in sequences drawn as clusters labelled with their repeat count
  (a sequence repeated 2,500 times is drawn once), args as their own shape labelled short, name and
  numpy-style type (``x  f32[n,2]``; undeclared dims are the bounds read from the kernels' loops,
  ``f32[≥n]``, see :mod:`graphlab.kernelfacts.shape_facts`), with the full declaration in the tooltip, as a
  dispatch's bindings are in its tooltip,
  edges for reads (arg -> dispatch) and writes (dispatch -> arg), told apart by colour and arrow
  (``R x`` / ``W x`` / ``RW x`` in the edge's tooltip: text on every edge cluttered the drawing and
  made dot slow). Dispatches are numbered and drawn top to bottom in program order.
- ``dataflow``: dispatch -> dispatch dependencies, labelled per buffer (``a: RAW``, ``b: WAR``; the
  tooltip spells them out), dashed where the dependency is carried from one repetition to the next.
- ``unrolled``: every step of the unrolled program in order (refused past ``max_steps``).

Nodes with diagnostics are coloured, with the messages as tooltips. A dispatch whose kernel draws random
numbers (``ti.random``, :mod:`graphlab.kernelfacts.effects`) is marked: a ``ti.random`` line in its label and
cut corners (``diagonals``), in every view, so the step that makes runs differ shows at a glance. SVG
node ids are the graphlab node ids (``substep/p2g``, ``arg:x``), which the widget uses to map clicks
back to the model.

Everything goes through one DOT boundary (:func:`_digraph`'s class): text attributes (labels,
tooltips, ids) are escaped (backslashes doubled, never read as an HTML-like ``<...>`` label) and
DOT node names must be made of checked names, so no name or message can break out of its string.
"""

from __future__ import annotations

import dataclasses
import functools
import html
import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphlab.analysis.check import validate
from graphlab.analysis.dataflow import dataflow_facts, dataflow_graph
from graphlab.analysis.render_text import arg_declaration, dispatch_tooltip, short_type
from graphlab.core.errors import GraphError, ToolMissingError
from graphlab.kernelfacts.access import AccessFlag
from graphlab.kernelfacts.effects import kernel_effects
from graphlab.kernelfacts.shape_facts import graph_shape_relations, inferred_shapes
from graphlab.model.nodes import Cond, Dispatch, Loop, children

if TYPE_CHECKING:
    import graphviz

    from graphlab.core.diagnostics import Diagnostic
    from graphlab.model.graph import Graph

SEVERITY_COLOURS = {"error": "#d62728", "warning": "#ff7f0e", "info": "#1f77b4"}
#: Past this many nodes the rest of a body is folded into one node: program order ranks dispatches one
#: below the other, and buffers shared by all of them make dot's time grow steeply with the count
#: (a flat 10,000-dispatch graph: 0.5 s with 40 drawn, 8 s with 60; bench/check_scale.py).
MAX_DRAWN_NODES = 40
#: Past this many args, only those the drawn nodes bind and the first others up to this count are
#: drawn; the rest are folded into one node (10**5 args would give dot 10**5 nodes to lay out).
MAX_DRAWN_ARGS = 40
READ_COLOUR, WRITE_COLOUR, RW_COLOUR = "#1f77b4", "#d62728", "#9467bd"
#: Edges of a drawing made without read/write facts (the analysis failed, or a file drawn without kernels).
UNKNOWN_COLOUR = "#7f7f7f"
#: The one font family drawings are laid out and drawn in. Graphviz must measure the text with the
#: metrics of the font the browser then draws, or labels spill out of their shapes (laid out for
#: Helvetica, drawn in the wider DejaVu Sans on Debian). DejaVu Sans is the family both Graphvizes
#: know: the WebAssembly one in the widget has its metrics built in (given by this exact name) and the
#: system ``dot`` finds it with fontconfig wherever its Debian package is installed. The widget's
#: stylesheet asks the browser for the same family first (``.gl-svg text``).
FONT_FAMILY = "DejaVu Sans"


def render(
    graph: Graph,
    *,
    view: str = "program",
    highlight: str | None = None,
    diagnostics: list[Diagnostic] | None = None,
    max_steps: int = 400,
    access: str = "auto",
) -> graphviz.Digraph:
    """Draw ``graph``; ``highlight`` outlines one node id; diagnostics default to ``graph.validate()``."""
    import graphviz  # import cost: graphviz

    if view not in ("program", "dataflow", "unrolled"):
        raise GraphError(f"render view {view!r}: choose 'program', 'dataflow' or 'unrolled'")
    if diagnostics is None:
        diagnostics = validate(graph, access=access)  # type: ignore[arg-type]
    marks = _marks(diagnostics)
    dot = _digraph()(
        name=_dot_name(graph.name),
        graph_attr={
            "rankdir": "TB",
            "newrank": "true",  # rank clusters with the rest: program order holds across their borders
            "fontname": FONT_FAMILY,
            "label": graphviz.escape(graph.name),
            "labelloc": "t",
            "tooltip": graphviz.escape(graph.name),
        },
    )
    dot.attr("node", fontname=FONT_FAMILY, fontsize="11")
    dot.attr("edge", fontname=FONT_FAMILY, fontsize="9")
    if view == "program":
        _program(graph, dot, marks, highlight, access)
    elif view == "dataflow":
        _dataflow(graph, dot, marks, highlight, access)
    else:
        _unrolled(graph, dot, marks, highlight, max_steps)
    return dot


#: Attributes holding free text (Graphviz escStrings): escaped at the boundary.
_TEXT_ATTRIBUTES = frozenset(("label", "xlabel", "headlabel", "taillabel", "tooltip", "id"))
#: What DOT node and subgraph names are made of: checked names, '#n', '/', '[k]', 'arg.' and '...'.
_DOT_NAME = re.compile(r"[A-Za-z0-9_#/\[\].]+")


def _dot_name(name: str) -> str:
    """A DOT node or subgraph name, refused unless it is made of checked names (no quoting tricks)."""
    if not _DOT_NAME.fullmatch(name):
        raise GraphError(f"cannot draw a node named {name!r}: names are letters, digits and '_'")
    return name


def _dot_attrs(attrs: dict[str, Any]) -> dict[str, Any]:
    import graphviz  # import cost: graphviz

    return {k: graphviz.escape(str(v)) if k in _TEXT_ATTRIBUTES and v is not None else v for k, v in attrs.items()}


@functools.cache
def _digraph() -> type[graphviz.Digraph]:
    """A ``graphviz.Digraph`` whose nodes, edges and attributes escape text and check names."""
    import graphviz  # import cost: graphviz

    class SafeDigraph(graphviz.Digraph):
        def node(self, name: str, label: str | None = None, _attributes: Any = None, **attrs: Any) -> None:
            text = None if label is None else graphviz.escape(label)
            super().node(_dot_name(name), text, _attributes=_attributes, **_dot_attrs(attrs))

        def edge(self, tail_name: str, head_name: str, label: str | None = None, _attributes: Any = None,
                 **attrs: Any) -> None:  # fmt: skip
            text = None if label is None else graphviz.escape(label)
            super().edge(_dot_name(tail_name), _dot_name(head_name), text, _attributes=_attributes, **_dot_attrs(attrs))

        def attr(self, kw: str | None = None, _attributes: Any = None, **attrs: Any) -> None:
            super().attr(kw, _attributes=_attributes, **_dot_attrs(attrs))

        def subgraph(self, graph: Any = None, name: str | None = None, **kwargs: Any) -> Any:
            return super().subgraph(graph, name=None if name is None else _dot_name(name), **kwargs)

    return SafeDigraph


def _marks(diagnostics: list[Diagnostic]) -> dict[str, tuple[str, str]]:
    """node id (or ``arg:name``) -> (worst severity, tooltip text)."""
    order = {"error": 0, "warning": 1, "info": 2}
    found: dict[str, list[Diagnostic]] = {}
    for diagnostic in diagnostics:
        key = diagnostic.node or (f"arg:{diagnostic.arg}" if diagnostic.arg else None)
        if key:
            found.setdefault(key, []).append(diagnostic)
    return {
        key: (
            min((d.severity for d in items), key=order.__getitem__),
            "\n".join(f"{d.code}: {d.message}" for d in items),
        )
        for key, items in found.items()
    }


def _node_style(node_id: str, marks: dict[str, tuple[str, str]], highlight: str | None, label: str) -> dict[str, str]:
    style = {"id": node_id, "tooltip": label}
    if node_id in marks:
        severity, text = marks[node_id]
        colour = SEVERITY_COLOURS[severity]
        style.update(color=colour, penwidth="2", tooltip=f"{text}\n\n{label}", fontcolor=colour)  # problems first
    if highlight == node_id:
        style.update(style="rounded,filled,bold", fillcolor="#fff3b0", penwidth="3")
    return style


def _arg_node(name: str) -> str:
    """DOT name of an arg's node (its SVG id stays ``arg:name``; ':' would mean a port in DOT)."""
    return f"arg.{name}"


def _dispatch_label(node_id: str, node: Dispatch, number: int) -> str:
    """``3. p2g``: the number is the dispatch's place in program order (depth first, as it runs)."""
    name = node_id.rsplit("/", 1)[-1]
    label = f"{number}. {name}" if name == node.kernel.name else f"{number}. {name}\n({node.kernel.name})"
    return label + RANDOM_LABEL if draws_random(node) else label


#: The line a random dispatch's label ends with, and the style that cuts its corners.
RANDOM_LABEL, RANDOM_STYLE = "\nti.random", "rounded,diagonals"


def draws_random(node: Dispatch) -> bool:
    """Whether the dispatch's kernel calls ``ti.random``/``ti.randn`` (itself or through ``ti.func``s)."""
    return bool(kernel_effects(node.kernel.fn).random)


def _program(graph: Graph, dot: Any, marks: dict, highlight: str | None, access: str) -> None:
    facts = _facts(graph, access)
    _add_body(graph, dot, None, "", marks, highlight, facts=facts)
    used = {b for _, n in graph.nodes() if isinstance(n, Dispatch) for _, b in n.bindings if b}
    inferred, relations = _shape_facts(graph)
    drawn = set(_drawn_names(dot))
    shown, folded = _args_to_draw(graph, drawn)
    for name in shown:
        arg = graph.args[name]
        label = f"{name}  {short_type(arg, inferred.get(name))}" + ("" if arg.role == "state" else f"\n{arg.role}")
        shape_kind = "cylinder" if arg.is_buffer else "note"
        full = "\n".join([*arg_declaration(arg, inferred.get(name)), *relations.get(name, [])])
        style = _node_style(f"arg:{name}", marks, highlight, full)
        if name not in used:
            style.setdefault("style", "dashed")
        dot.node(_arg_node(name), label, shape=shape_kind, **style)
    if folded:
        _fold_args(dot, folded)
    for node_id, node in graph.nodes():
        decided_by = node.flag if isinstance(node, Cond) else node.while_ if isinstance(node, Loop) else None
        if decided_by and node_id in drawn and decided_by in graph.args:
            dot.edge(_arg_node(decided_by), node_id, tooltip="R decide", color=READ_COLOUR,
                     style="dashed")  # fmt: skip
        if not isinstance(node, Dispatch) or node_id not in drawn:
            continue
        flags_by_arg = facts.args.get(node_id, {}) if facts else {}
        for param, bound in node.bindings:
            if bound is None or bound not in graph.args:
                continue
            if facts is None and graph.args[bound].is_buffer:  # no read/write facts (no kernels): no direction
                unknown = f"{param}: whether the kernel reads or writes it is unknown"
                dot.edge(_arg_node(bound), node_id, dir="none", color=UNKNOWN_COLOUR, tooltip=unknown)  # fmt: skip
                continue
            flags = flags_by_arg.get(bound, AccessFlag.READ) if graph.args[bound].is_buffer else AccessFlag.READ
            if flags == AccessFlag.READ_WRITE:
                dot.edge(node_id, _arg_node(bound), tooltip=f"RW {param}", dir="both", color=RW_COLOUR)
            elif flags & AccessFlag.WRITE:
                dot.edge(node_id, _arg_node(bound), tooltip=f"W {param}", color=WRITE_COLOUR)
            else:
                dot.edge(_arg_node(bound), node_id, tooltip=f"R {param}", color=READ_COLOUR)


_INVISIBLE = {"style": "invis"}


@dataclasses.dataclass
class _Pen:
    """What drawing a body carries along: nodes left to draw, the last dispatch number given, and
    the program-order edges (drawn at the top level once the body is: a node named inside a cluster
    would be pulled into it)."""

    budget: int = MAX_DRAWN_NODES
    number: int = 0
    order: list[tuple[str, str, dict[str, str]]] = dataclasses.field(default_factory=list)
    #: Read/write facts for the dispatches' tooltips (None: not known).
    facts: Any = None
    #: Titles of the structures being drawn, outermost first (``substep ×2,500``).
    within: list[str] = dataclasses.field(default_factory=list)


def _add_body(
    graph: Graph,
    dot: Any,
    container: str | None,
    prefix: str,
    marks: dict,
    highlight: str | None,
    pen: _Pen | None = None,
    after: Sequence[str] = (),
    facts: Any = None,
) -> list[str]:
    """Draw a body in program order; return the ids of the nodes that run last in it.

    Program order is drawn as rank constraints: an invisible edge from each node that runs just
    before (``after``) to the node that runs next, so dot ranks the body top to bottom in the order it
    runs (one light edge per step; no weights, so big graphs lay out as fast as before). Decision
    nodes come before their bodies, where the host decides.
    """
    if pen is None:
        pen = _Pen(facts=facts)
        last = _add_body(graph, dot, container, prefix, marks, highlight, pen, after)
        for previous, node_id, attrs in pen.order:
            dot.edge(previous, node_id, **attrs)
        return last
    body = graph.body if container is None else graph.sequences[container]
    last = list(after)
    for index, node in enumerate(body):
        node_id = f"{prefix}{node.name}"
        if pen.budget <= 0:
            fold_id = _fold_rest(dot, body[index:], prefix)
            pen.order += [(previous, fold_id, {"style": "dashed", "arrowhead": "none"}) for previous in last]
            return [fold_id]
        pen.budget -= 1
        if isinstance(node, Dispatch):
            pen.number += 1
            label = _dispatch_label(node_id, node, pen.number)
            hover = dispatch_tooltip(node_id, node, pen.number, pen.within, pen.facts)
            # one Graphviz group per body: its order edges stay straight, so a run of dispatches is a column
            look = _node_style(node_id, marks, highlight, hover)
            rounded = RANDOM_STYLE if draws_random(node) else "rounded"
            style = {"shape": "box", "style": rounded, "group": prefix or "/", **look}
            dot.node(node_id, label, **style)
            pen.order += [(previous, node_id, _INVISIBLE) for previous in last]
            last = [node_id]
            continue
        with dot.subgraph(name=f"cluster_{node_id}") as sub:
            title = _structure_title(node)
            style = _node_style(node_id, marks, highlight, title)
            sub.attr(label=title, style="rounded,dashed", color=style.get("color", "#888888"),
                     tooltip=style["tooltip"], id=node_id)  # fmt: skip
            if isinstance(node, (Cond, Loop)):
                _decision_node(sub, node_id, node, style)
                pen.order += [(previous, node_id, _INVISIBLE) for previous in last]
                last = [node_id]
            ends: list[str] = []
            pen.within.append(title)
            for segment, sequence in children(node):
                if isinstance(node, Cond):
                    branch = segment.rstrip("/")
                    with sub.subgraph(name=f"cluster_{node_id}/{branch}") as arm:
                        arm.attr(label=branch, style="dotted", id=f"{node_id}/{branch}")
                        ends += _add_body(graph, arm, sequence, f"{node_id}/{segment}", marks, highlight, pen, last)
                else:
                    ends += _add_body(graph, sub, sequence, f"{node_id}/", marks, highlight, pen, last)
            pen.within.pop()
            last = list(dict.fromkeys(ends)) or last
    return last


def _structure_title(node: Any) -> str:
    """Cluster label: ``substep ×500``, ``solve: while flag (max 100)`` (``, flag read every 8`` with
    ``check_every``, ``, guarded`` added when it is), ``branch: if flag``."""
    if isinstance(node, Loop):
        every = f", flag read every {node.check_every}" if node.check_every > 1 else ""
        every += ", guarded" if node.guarded else ""
        test = f"while {node.while_} ≠ 0 (max {node.max_iter:,}{every})" if node.while_ else f"{node.count} times"
        return f"{node.name}: {test}"
    if isinstance(node, Cond):
        return f"{node.name}: if {node.flag} ≠ 0"
    return f"{node.name} ×{node.repeat:,}" if node.repeat > 1 else node.name


def _decision_node(dot: Any, node_id: str, node: Cond | Loop, style: dict[str, str]) -> None:
    """The host-side decision: a diamond for a conditional, a hexagon for a loop's test."""
    if isinstance(node, Cond):
        label, shape = f"{node.flag} ≠ 0 ?\nthen | else", "diamond"
    else:
        label, shape = (f"while {node.while_}" if node.while_ else f"repeat {node.count}"), "hexagon"
    attrs = {k: v for k, v in style.items() if k not in ("style",)}
    dot.node(node_id, label, shape=shape, **attrs)


def _fold_rest(dot: Any, rest: Sequence[Any], prefix: str) -> str:
    """One node standing for what is past the drawing budget (Graphviz cannot lay out 10,000 nodes)."""
    fold_id = f"{prefix}..."
    names = ", ".join(n.name for n in rest[:5]) + (", ..." if len(rest) > 5 else "")
    dot.node(
        fold_id,
        f"... {len(rest):,} more nodes",
        shape="box",
        style="dashed",
        id=fold_id,
        tooltip=f"not drawn: {names}; group repeated dispatches into sequences to see them",
    )
    return fold_id


def _args_to_draw(graph: Graph, drawn: set[str]) -> tuple[list[str], list[str]]:
    """(args drawn, args folded), in declaration order: every arg a drawn node binds or decides on is
    drawn (its edges need it), then others while fewer than :data:`MAX_DRAWN_ARGS` are."""
    names = list(graph.args)
    if len(names) <= MAX_DRAWN_ARGS:
        return names, []
    needed: set[str] = set()
    for node_id, node in graph.nodes():
        if node_id not in drawn:
            continue
        if isinstance(node, Dispatch):
            needed.update(bound for _, bound in node.bindings if bound)
        elif isinstance(node, Cond):
            needed.add(node.flag)
        elif isinstance(node, Loop) and node.while_:
            needed.add(node.while_)
    room = MAX_DRAWN_ARGS - len(needed & set(names))
    shown, folded = [], []
    for name in names:
        if name in needed:
            shown.append(name)
        elif room > 0:
            shown.append(name)
            room -= 1
        else:
            folded.append(name)
    return shown, folded


def _fold_args(dot: Any, folded: Sequence[str]) -> None:
    """One node standing for the args past :data:`MAX_DRAWN_ARGS` that no drawn node binds."""
    names = ", ".join(folded[:5]) + (", ..." if len(folded) > 5 else "")
    dot.node(
        _arg_node("..."),
        f"... {len(folded):,} more args",
        shape="note",
        style="dashed",
        id="arg:...",
        tooltip=f"not drawn (no drawn node binds them): {names}",
    )


def _shape_facts(graph: Graph) -> tuple[dict[str, str], dict[str, list[str]]]:
    """Inferred lower bounds per undeclared arg (``[≥n]``) and every relation on an arg, for tooltips."""
    try:
        relations: dict[str, list[str]] = {}
        for rel in graph_shape_relations(graph):
            relations.setdefault(rel.arg, []).append(f"inferred: {rel.describe()}")
        return inferred_shapes(graph), relations
    except Exception:  # a drawing must not fail because reading the kernels' source did
        return {}, {}


def _facts(graph: Graph, access: str) -> Any:
    try:
        return dataflow_facts(graph, access=access)
    except Exception:  # a drawing must not fail because the read/write analysis did
        return None


def _dataflow(graph: Graph, dot: Any, marks: dict, highlight: str | None, access: str) -> None:
    flow = dataflow_graph(graph, access=access)
    _add_body(graph, dot, None, "", marks, highlight)
    for u, v, data in flow.edges(data=True):
        if data["kind"] != "dep":
            continue
        label, tooltip = _hazard_label(data["hazards"])
        dot.edge(
            u,
            v,
            label=label,
            tooltip=tooltip,
            style="dashed" if data["carried"] else "solid",
            constraint=str(not data["carried"]).lower(),
        )


_HAZARD_WORDS = {"raw": "read after write", "war": "write after read", "waw": "write after write"}


def _hazard_label(hazards: dict[str, str | frozenset[str]]) -> tuple[str, str]:
    """One line per buffer (``a: RAW``, ``b: WAR+WAW``): one edge can be a different hazard per buffer."""
    lines, words = [], []
    for buffer, found in sorted(hazards.items()):
        kinds = [k for k in _HAZARD_WORDS if k in ({found} if isinstance(found, str) else found)]
        lines.append(f"{buffer}: {'+'.join(k.upper() for k in kinds)}")
        words.append(f"{buffer}: {', '.join(_HAZARD_WORDS[k] for k in kinds)}")
    return "\n".join(lines), "; ".join(words)


def _unrolled(graph: Graph, dot: Any, marks: dict, highlight: str | None, max_steps: int) -> None:
    count = graph.step_count()
    if count > max_steps:
        raise GraphError(
            f"the unrolled view of graph {graph.name!r} has {count:,} steps, over max_steps={max_steps}; "
            "use view='program' (sequences drawn once) or raise max_steps"
        )
    previous = None
    for step in graph.steps():
        random = draws_random(step.dispatch)
        label = f"{step.index}: {step.id}" + (RANDOM_LABEL if random else "")
        style = _node_style(step.node_id, marks, highlight, label)
        style["id"] = step.id
        rounded = RANDOM_STYLE if random else "rounded"
        dot.node(step.id, label, shape="box", style=rounded, **{k: v for k, v in style.items() if k != "style"})
        if previous:
            dot.edge(previous, step.id)
        previous = step.id


def _drawn_names(dot: Any) -> set[str]:
    """Node names a Digraph (and its clusters) declares."""
    names = set()
    for line in dot.body:
        match = re.match(r'\s*"?([^"\s\[]+)"?\s*\[', line)
        if match:
            names.add(match.group(1))
    return names


def require_dot() -> str:
    """The path of Graphviz's ``dot``, or an error that says how to install it."""
    path = shutil.which("dot")
    if path is None:
        raise ToolMissingError(
            "Graphviz's 'dot' program is not installed; install it with 'apt-get install graphviz' "
            "(Debian/Ubuntu), 'brew install graphviz' (macOS) or 'conda install graphviz'"
        )
    return path


def to_svg(graph: Graph, **options: Any) -> str:
    """The SVG drawing (needs Graphviz's ``dot``)."""
    require_dot()
    return render(graph, **options).pipe(format="svg").decode("utf-8")


def write(graph: Graph, path: str | Path, **options: Any) -> Path:
    """Write ``.svg``, ``.png`` or ``.dot`` by the path's suffix."""
    target = Path(path)
    fmt = target.suffix.lstrip(".").lower()
    dot = render(graph, **options)
    if fmt in ("dot", "gv"):
        target.write_text(dot.source, encoding="utf-8")
        return target
    if fmt not in ("svg", "png", "pdf"):
        raise GraphError(f"cannot write {target.name!r}: use a .svg, .png, .pdf or .dot file name")
    require_dot()
    target.write_bytes(dot.pipe(format=fmt))
    return target


def mimebundle(graph: Graph) -> dict[str, Any]:
    """What a notebook shows for a graph: SVG, or the text and the fix when ``dot`` is missing."""
    text = repr(graph)
    try:
        return {"image/svg+xml": to_svg(graph), "text/plain": text}
    except ToolMissingError as exc:
        return {
            "text/plain": f"{text}\n({exc})",
            "text/html": f"<pre>{html.escape(text)}\n{html.escape(str(exc))}</pre>",
        }
