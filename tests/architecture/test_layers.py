"""The layers contract (pyproject.toml, run by ``lint-imports`` in ``make test``) can fail.

A copy of the package gets one deliberately upward import (the core importing the widget, the
model importing analysis) or one between siblings (the debugger importing the deployer); the
contract, one level per package, must name it. The untouched copy passes, so the failure is the import's doing.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_copy(tmp_path: Path, upward: str | None, into: str = "core/spec.py") -> subprocess.CompletedProcess:
    shutil.copytree(ROOT / "graphlab", tmp_path / "graphlab", ignore=shutil.ignore_patterns("static", "__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    if upward is not None:
        module = tmp_path / "graphlab" / into
        module.write_text(module.read_text() + f"\n{upward}\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--config", str(tmp_path / "pyproject.toml")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def test_the_package_keeps_its_layers(tmp_path):
    done = lint_copy(tmp_path, None)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 kept, 0 broken" in done.stdout


@pytest.mark.parametrize(
    ("into", "upward", "named"),
    [
        ("core/spec.py", "import graphlab.widget.editor  # noqa", "graphlab.core.spec -> graphlab.widget.editor"),
        ("core/spec.py", "from graphlab.run import compiled  # noqa", "graphlab.core.spec -> graphlab.run.compiled"),
        (
            "model/graph.py",
            "from graphlab.analysis import dataflow  # noqa",
            "graphlab.model.graph -> graphlab.analysis",
        ),
        ("debug/flow.py", "import graphlab.deploy.manifest  # noqa", "graphlab.debug.flow -> graphlab.deploy.manifest"),
        ("model/nodes.py", "import graphlab.child.carry  # noqa", "graphlab.model.nodes -> graphlab.child.carry"),
    ],
)
def test_an_upward_import_breaks_the_contract(tmp_path, into, upward, named):
    done = lint_copy(tmp_path, upward, into)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "0 kept, 1 broken" in done.stdout and named in done.stdout
