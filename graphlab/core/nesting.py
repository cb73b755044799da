"""How deep things may nest: sequences in a graph, and containers in the JSON files graphlab reads.

The model (:mod:`graphlab.model.graph`), the graph file loader (:mod:`graphlab.model.graphfile`) and the
manifest reader (:mod:`graphlab.deploy.manifest`) share these numbers, so what the model holds
saves and loads back, and no file can make a reader recurse until Python gives up.

- :data:`MAX_NESTING` (32): sequences on one chain of containment (a sequence used inside a
  sequence inside ...; bodies of conditionals and loops count as sequences). Real graphs nest two
  to four deep; every walker of the model and of the files recurses once a level, and the bound
  keeps them far from Python's recursion limit (1000), whatever a file holds.
- :data:`MAX_JSON_DEPTH` (80): arrays and objects inside each other, past the deepest file graphlab
  writes (graph files nest about five deep, a manifest's control tree two a level). Python's own
  parser fails near 1000 levels with a bare RecursionError; the readers turn that into their
  file's error, naming the JSON path (from :func:`deep_json_path`) where the file passes this depth.

This module imports nothing of graphlab, so every other module can import it.
"""

from __future__ import annotations

import json
import re

__all__ = ["MAX_JSON_DEPTH", "MAX_NESTING", "deep_json_path"]

MAX_NESTING = 32
MAX_JSON_DEPTH = 2 * MAX_NESTING + 16

# A JSON string (escapes included) or one of the structural characters.
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}:,]')


def deep_json_path(text: str | bytes, limit: int = MAX_JSON_DEPTH) -> str | None:
    """The JSON path of the first array or object nested deeper than ``limit`` in ``text``, or None.

    Scans the text without parsing it (iteratively, so any depth is fine): call it after
    ``json.loads`` raised RecursionError, to say where the file is too deep.
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    opened: list[str] = []  # "[" or "{" for each open container
    at: list[int | str | None] = []  # its current index, or the key being read
    last_string: str | None = None
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token in ("[", "{"):
            if len(opened) >= limit:
                return _path(opened, at)
            opened.append(token)
            at.append(0 if token == "[" else None)
        elif token in ("]", "}"):
            if opened:
                opened.pop()
                at.pop()
        elif token == "," and opened and opened[-1] == "[":
            index = at[-1]
            at[-1] = index + 1 if isinstance(index, int) else 0
        elif token == ":" and opened and opened[-1] == "{":
            at[-1] = last_string
        elif token.startswith('"'):
            try:
                last_string = json.loads(token)
            except ValueError:
                last_string = token[1:-1]
    return None


def _path(opened: list[str], at: list[int | str | None]) -> str:
    parts = ["$"]
    for opening, where in zip(opened, at):
        if opening == "[" or not isinstance(where, str):
            parts.append(f"[{where}]")
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", where):
            parts.append(f".{where}")
        else:
            parts.append(f"[{json.dumps(where)}]")
    return "".join(parts)
