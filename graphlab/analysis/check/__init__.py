"""Validation: every rule about what a valid graph is lives in this package.

Each ``rules_*`` module holds standalone functions ``(graph, context) -> Iterable[Diagnostic]``;
:func:`validate` runs them all. Codes are stable (``GL012``) so users can look them up and
tools can filter them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphlab.analysis.check import (
    rules_bindings,
    rules_control,
    rules_dataflow,
    rules_effects,
    rules_names,
    rules_shapes,
    rules_size,
    rules_structure,
    rules_targets,
)
from graphlab.analysis.check.context import CheckContext
from graphlab.analysis.check.registry import RULES, rule_table
from graphlab.core.diagnostics import Diagnostic
from graphlab.core.errors import GraphError

if TYPE_CHECKING:
    from graphlab.model.graph import Graph

__all__ = ["RULES", "CheckContext", "check", "rule_table", "validate"]

#: The rule modules after the size rule, in the order their diagnostics are listed.
_RULE_MODULES = (
    rules_structure,
    rules_bindings,
    rules_names,
    rules_dataflow,
    rules_control,
    rules_targets,
    rules_shapes,
    rules_effects,
)


def validate(graph: Graph, *, target: str | None = None, access: str = "auto") -> list[Diagnostic]:
    """Run every rule; diagnostics come sorted by severity, then in program order."""
    context = CheckContext(graph, target=target, access_source=access)
    found: list[Diagnostic] = list(rules_size.validate_size(graph, context))
    if rules_size.too_large_to_analyse(graph):  # the other rules walk node ids and the trace: they would not end
        return found
    for module in _RULE_MODULES:
        for rule in module.RULE_FUNCTIONS:  # (registry.RULES is the catalogue: code -> text)
            found.extend(rule(graph, context))
    order = {"error": 0, "warning": 1, "info": 2}
    return sorted(found, key=lambda d: order[d.severity])


def check(graph: Graph, *, target: str | None = None, access: str = "auto") -> None:
    """Raise :class:`GraphError` listing every error; warnings do not raise."""
    errors = [d for d in validate(graph, target=target, access=access) if d.severity == "error"]
    if errors:
        listed = "\n".join(f"  {d}" for d in errors)
        raise GraphError(f"graph {graph.name!r} has {len(errors)} error(s):\n{listed}", errors)
