"""The notebooks in notebooks/ run top to bottom without errors, on the CPU, in a fresh kernel.

Each runs in a temporary copy of the folder (what it writes, such as ``out/``, stays there) with
nbclient and the ``python3`` kernel of this interpreter (a kernelspec is installed into its prefix
when none is found).
"""

import shutil
import sys
from pathlib import Path

import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).parent.parent.parent / "notebooks"


@pytest.fixture(scope="module")
def kernel_name() -> str:
    """The python3 kernel, made to run this interpreter."""
    specs = KernelSpecManager().find_kernel_specs()
    if "python3" not in specs:
        from ipykernel.kernelspec import install

        install(prefix=sys.prefix, kernel_name="python3")
    return "python3"


@pytest.mark.parametrize("name", ["quickstart.ipynb", "mpm88_debug.ipynb", "export.ipynb", "random_init.ipynb"])
def test_notebook_runs_without_errors(name, kernel_name, tmp_path):
    shutil.copytree(
        NOTEBOOKS, tmp_path / "notebooks", ignore=shutil.ignore_patterns("out", "*.graph.json", ".ipynb_checkpoints")
    )
    path = tmp_path / "notebooks" / name
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb, timeout=600, kernel_name=kernel_name, resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()
    errors = [
        f"cell {i}: {out.get('ename')}: {out.get('evalue')}"
        for i, cell in enumerate(nb.cells)
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
        if out.output_type == "error"
    ]
    assert errors == []
    assert all(c.get("execution_count") for c in nb.cells if c.cell_type == "code"), "every code cell ran"


def test_notebooks_keep_kernels_out_of_future_annotations():
    """Kernels defined in a ``from __future__ import annotations`` context break in Taichi 1.7.4."""
    for path in NOTEBOOKS.glob("*.ipynb"):
        nb = nbformat.read(path, as_version=4)
        assert not any("from __future__ import annotations" in c.source for c in nb.cells), path.name
