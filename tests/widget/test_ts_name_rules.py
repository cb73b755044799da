"""The widget checks a new sequence's name as it is typed (extension/src/logic/names.ts); that mirror of
graphlab/core/names.py must not drift from it, or the form would refuse names Python takes (or the reverse).
"""

from __future__ import annotations

import keyword
import re
from pathlib import Path

from graphlab.core.names import MAX_NAME_LENGTH

NAMES_TS = Path(__file__).resolve().parent.parent.parent / "extension" / "src" / "logic" / "names.ts"


def _ts() -> str:
    return NAMES_TS.read_text(encoding="utf-8")


def test_the_keyword_list_is_pythons():
    block = re.search(r"PYTHON_KEYWORDS[^=]*= new Set\(\[(.*?)\]\)", _ts(), re.S)
    assert block, "PYTHON_KEYWORDS not found in names.ts"
    assert re.findall(r'"(\w+)"', block.group(1)) == keyword.kwlist


def test_the_length_limit_is_the_models():
    limit = re.search(r"export const MAX_NAME_LENGTH = (\d+);", _ts())
    assert limit, "MAX_NAME_LENGTH not found in names.ts"
    assert int(limit.group(1)) == MAX_NAME_LENGTH
