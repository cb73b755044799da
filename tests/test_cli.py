"""The graphlab console script."""

from __future__ import annotations

import subprocess
import sys

import graphlab as gl
from graphlab.cli import main


def test_version_and_help():
    out = subprocess.run([sys.executable, "-m", "graphlab.cli", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == f"graphlab {gl.__version__}"
    out = subprocess.run([sys.executable, "-m", "graphlab.cli", "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "check" in out.stdout and "render" in out.stdout


def test_no_command_prints_help(capsys):
    assert main([]) == 0
    assert "usage: graphlab" in capsys.readouterr().out


def test_import_is_light():
    code = "import graphlab, sys; print(sorted(m for m in ('taichi', 'anywidget', 'ipywidgets', 'jupyterlab') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
