"""Entries the leftovers tests run in a child process through ``graphlab.child.process.run_child``."""

from __future__ import annotations

import time
from typing import Any


def sleep(request: dict[str, Any]) -> dict[str, Any]:
    """Sleep ``request["seconds"]``: a child busy long enough for its parent to be killed meanwhile."""
    time.sleep(float(request["seconds"]))
    return {}
