"""The layers contract (pyproject.toml, run by ``lint-imports`` in ``make test``) can fail.

A copy of the package gets one deliberately upward import (the model importing the widget); the
contract must name it. The untouched copy passes, so the failure is the import's doing.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_copy(tmp_path: Path, upward: str | None) -> subprocess.CompletedProcess:
    shutil.copytree(ROOT / "graphlab", tmp_path / "graphlab", ignore=shutil.ignore_patterns("static", "__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    if upward is not None:
        spec = tmp_path / "graphlab" / "spec.py"
        spec.write_text(spec.read_text() + f"\n{upward}\n")
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
    ("upward", "named"),
    [
        ("import graphlab.widget.editor  # noqa", "graphlab.spec -> graphlab.widget.editor"),
        ("from graphlab import compiled  # noqa", "graphlab.spec -> graphlab.compiled"),
    ],
)
def test_an_upward_import_breaks_the_contract(tmp_path, upward, named):
    done = lint_copy(tmp_path, upward)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "0 kept, 1 broken" in done.stdout and named in done.stdout
