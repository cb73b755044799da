"""docs/ARCHITECTURE.md describes the tree as it is: every package of graphlab/ has its paragraph.

A package added without a word in the architecture document fails here, and so does a paragraph
about a package that is gone.
"""

from __future__ import annotations

import re
from pathlib import Path

import graphlab

PACKAGE = Path(graphlab.__file__).resolve().parent
DOC = PACKAGE.parent / "docs" / "ARCHITECTURE.md"


def packages() -> set[str]:
    return {path.parent.name for path in PACKAGE.glob("*/__init__.py")}


def described() -> set[str]:
    """The packages named in the document's ``### `name/` `` headings."""
    headings = re.findall(r"^###\s+(.+)$", DOC.read_text(encoding="utf-8"), re.M)
    return {name for heading in headings for name in re.findall(r"`(\w+)/`", heading)}


def test_every_package_has_its_paragraph():
    assert packages() - described() == set()


def test_no_paragraph_describes_a_package_that_is_gone():
    assert described() - packages() == set()


def test_the_document_names_the_module_level_side_effects():
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Module-level side effects", 1)[1].split("\n## ", 1)[0]
    for needed in ("sys.meta_path", "bridge/runtime.py", "Ndarray.__init__", "Texture.__init__"):
        assert needed in section, needed
