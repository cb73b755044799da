"""Located diagnostics: what is wrong, where, and how to fix it."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

Severity = Literal["error", "warning", "info"]


@dataclass(frozen=True)
class Diagnostic:
    """One problem found in a graph.

    ``node`` is a node id (``substep/p2g``) or None for the whole graph; ``arg`` the arg or
    parameter concerned.
    """

    code: str
    severity: Severity
    message: str
    node: str | None = None
    arg: str | None = None
    hint: str | None = None

    def __str__(self) -> str:
        where = self.node or "graph"
        if self.arg:
            where += f" [{self.arg}]"
        text = f"{self.code} {self.severity} at {where}: {self.message}"
        return f"{text} (fix: {self.hint})" if self.hint else text

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON (CLI ``--json``, the widget)."""
        return asdict(self)
