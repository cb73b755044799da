"""The files Taichi 1.7.4's AOT module saver writes, per arch: declared once.

``ti.aot.Module.save`` writes a metadata file and a graphs file whose names depend on the arch
(``.tcb`` for the LLVM arches, ``.json`` for Vulkan). The access probe reads Vulkan's metadata,
the C runner checks a folder holds both before loading it (the x64 loader segfaults on a folder
without them), and the generated C host checks the metadata file; all read the names from here.
"""

from __future__ import annotations

__all__ = ["MODULE_FILES", "metadata_file"]

#: arch -> (metadata file, graphs file) that ``ti_load_aot_module`` reads from a module folder.
MODULE_FILES: dict[str, tuple[str, str]] = {
    "x64": ("metadata.tcb", "graphs.tcb"),
    "cuda": ("metadata.tcb", "graphs.tcb"),
    "vulkan": ("metadata.json", "graphs.json"),
}


def metadata_file(arch: str) -> str:
    """The metadata file of an ``arch`` module: its absence means "not a module of this arch"."""
    return MODULE_FILES[arch][0]
