"""Whether buffers of a given size fit in this machine's memory, asked before they are made.

``gl.export`` accepts dims up to 2**32 - 1 (what Taichi's C API can pass): a module for a machine
much bigger than this one is legitimate. But ``gl.verify`` draws every input here, and numpy asked
for 32 GiB raises a bare ``MemoryError`` (or the kernel kills the process). So verify counts the
bytes first and refuses with the numbers, and export warns when its default dims could not be
verified on the machine that exports.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["available_bytes", "gib", "physical_bytes", "too_big"]


def _meminfo(key: str) -> int | None:
    try:
        with Path("/proc/meminfo").open(encoding="ascii") as handle:
            for line in handle:
                name, _, rest = line.partition(":")
                if name == key:
                    return int(rest.split()[0]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def physical_bytes() -> int | None:
    """This machine's memory in bytes (None where the system does not say)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return _meminfo("MemTotal")


def available_bytes() -> int | None:
    """Memory a new allocation can get now without swapping: Linux's MemAvailable (None where unknown)."""
    found = _meminfo("MemAvailable")
    if found is not None:
        return found
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def gib(nbytes: float) -> str:
    """``nbytes`` as GiB with one decimal (``16.0 GiB``)."""
    return f"{nbytes / 2**30:,.1f} GiB"


def too_big(sizes: Mapping[str, int], limit: int | None) -> str | None:
    """Why buffers of ``sizes`` (bytes by name) do not fit in ``limit`` bytes, largest first; None if they do."""
    total = sum(sizes.values())
    if limit is None or total <= limit:
        return None
    largest = sorted(sizes.items(), key=lambda item: -item[1])[:3]
    parts = ", ".join(f"{name}: {gib(size)}" for name, size in largest)
    more = f" and {len(sizes) - 3} more" if len(sizes) > 3 else ""
    return f"{gib(total)} ({parts}{more}), more than the {gib(limit)} this machine has"
