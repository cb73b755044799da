"""The graphlab console script."""

from __future__ import annotations

import subprocess
import sys

import pytest

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


def test_option_errors_name_the_option(tmp_path, capsys):
    """Errors found before anything loads name the command-line option, not a Python keyword."""
    graph, kernels = str(tmp_path / "g.graph.json"), str(tmp_path / "k.py")
    assert main(["render", graph, "--kernels", kernels, "-o", str(tmp_path / "drawing.txt")]) == 2
    err = capsys.readouterr().err
    assert f"-o {tmp_path / 'drawing.txt'}: use a .svg, .png, .pdf or .dot file name" in err
    with pytest.raises(SystemExit) as exited:
        main(["check", graph, "--kernels", kernels, "--target", "webgpu"])
    assert exited.value.code == 2
    assert "argument --target: invalid choice: 'webgpu'" in capsys.readouterr().err
    assert main(["export", graph, "--kernels", kernels, "-o", str(tmp_path / "m"), "--cpu-threads", "-2"]) == 2
    err = capsys.readouterr().err
    assert "--cpu-threads -2: give a positive int, or leave it out for every core" in err and "cpu_threads=" not in err
