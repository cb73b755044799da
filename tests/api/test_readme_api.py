"""Every graphlab name README.md uses exists: ``gl.X``, ``graphlab.x.y`` and ``from graphlab... import``.

The README is the public API's documentation; a name moved or renamed without it would send a reader
to an AttributeError. Names are read from its code (fenced blocks and inline spans) and resolved by
importing, so the test follows the README as it changes.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

import graphlab

README = Path(__file__).resolve().parents[2] / "README.md"
CODE = re.compile(r"```[^\n]*\n(.*?)```|`([^`\n]+)`", re.S)
DOTTED = re.compile(r"(?<![\w.])(gl|graphlab)((?:\.[A-Za-z_]\w*)+)(?![\w/])")
FROM_IMPORT = re.compile(r"from (graphlab(?:\.\w+)*) import ([\w, ]+)")


def readme_code() -> str:
    return "\n".join(block or span for block, span in CODE.findall(README.read_text(encoding="utf-8")))


def used_names() -> list[str]:
    """Dotted names (``graphlab.debug.RebuildError``), ``gl.`` written as ``graphlab.``."""
    code = readme_code()
    names = {f"graphlab{rest}" for _, rest in DOTTED.findall(code)}
    for module, imported in FROM_IMPORT.findall(code):
        names.update(f"{module}.{name.strip()}" for name in imported.split(",") if name.strip())
    return sorted(names)


def resolve(dotted: str) -> object:
    """Import the longest module prefix of ``dotted``, then read the rest as attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attr in parts[cut:]:
            value = getattr(value, attr)
        return value
    raise ModuleNotFoundError(dotted)


def test_the_readme_names_the_public_api():
    names = used_names()
    assert {"graphlab.Graph", "graphlab.load", "graphlab.load_module", "graphlab.verify"} <= set(names), names
    assert "graphlab.export" in names  # gl.export, the function (relayout: keep)


@pytest.mark.parametrize("dotted", used_names())
def test_every_name_the_readme_uses_imports(dotted):
    assert resolve(dotted) is not None


def test_a_name_that_is_gone_is_found():
    with pytest.raises(AttributeError):
        resolve("graphlab.conveniences_that_never_were")
    assert resolve("graphlab.Graph") is graphlab.Graph
