"""The export panel's side in Python: ``gl.export`` with its progress shown, then ``gl.verify``.

One export runs at a time, in the kernel, through the exporter's public API; its ``progress``
callback publishes the ``export`` trait (``ExportView`` in :mod:`graphlab.widget.protocol`) as the
stages go by, so the bar moves while the cell-less comm handler runs. The panel ends with the files
written and the verification report, or with the error that stopped it (nothing half-written: the
exporter writes to a temporary folder and renames it).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, get_args

from graphlab.core.errors import GraphlabError
from graphlab.core.names import name_problem, shown
from graphlab.deploy.exporter import export
from graphlab.deploy.folders import output_folder
from graphlab.widget.jobs import finish_job, throttled
from graphlab.widget.protocol import ExportArch, ValuesView
from graphlab.widget.wording import ui_text

TARGETS: tuple[str, ...] = get_args(ExportArch)
#: Share of the bar given to the export; verification takes the rest.
EXPORT_SHARE = 0.8
MAX_FILES = 200


def default_arch() -> str:
    """The arch the notebook runs on, as an export target (``x64`` on a CPU, else Vulkan)."""
    try:
        from graphlab.bridge.runtime import current_arch  # import cost: Taichi

        arch = current_arch()
    except Exception:  # no runtime yet: Vulkan is the portable default
        return "vulkan"
    return {"x64": "x64", "arm64": "x64", "cuda": "cuda"}.get(arch, "vulkan")


def dims_field_problem(dims: Mapping[str, int]) -> str | None:
    """Why a name typed in the export form's dims field is no dim name, or None. Checked first: the name
    would be written into manifest.json and the C host, and it is what the user got wrong."""
    for name in dims:
        problem = name_problem(name)
        if problem is not None:
            return (
                f"dims field: {shown(name)} is not a dim name ({problem}); type the dim names of the args' shapes, "
                "ASCII letters, digits and '_' (n=64)"
            )
    return None


def unsized_dim(values: ValuesView, *, dims: Mapping[str, int], verify: bool) -> str | None:
    """Why the export (or its verification) could not size a dim, in the panels' terms; None when it can.

    Said before anything runs, as Debug says it (``Debug needs a size for dim 'm'``), so the panel points at
    the Values tab instead of relaying the exporter's ``dims={...}``. A temp needs its dims for the memory
    plan; with ``verify``, so does every other arg without a value, since verification draws inputs.
    ``values`` is the values panel's view (a value's shape or a size by name sizes a dim), ``dims`` the
    export form's sizes.
    """
    entries = {entry["arg"]: entry for entry in values["entries"]}
    for entry in values["dims"]:
        dim = entry["dim"]
        if entry["size"] is not None or dim in dims:
            continue
        unsized = [entries[a] for a in entry["args"] if a in entries and not entries[a]["given"]]
        temps = [e["arg"] for e in unsized if e["role"] == "temp"]
        drawn = [e["arg"] for e in unsized if e["role"] != "temp"]
        hint = f"(in Python: gl.export(g, folder, dims={{{dim!r}: 64}}))"
        if temps:
            valued = f", or give {drawn[0]!r} a value there" if drawn else ""
            return (
                f"Export needs a size for dim {dim!r} (the shape of temp {', '.join(map(repr, temps))} names it, "
                f"and no value given sizes it): give it in the Values panel, under Dims ({dim}=64){valued}, or "
                f"in the dims field here {hint}"
            )
        if verify and drawn:
            return (
                f"Verification needs a size for dim {dim!r} (it draws values for {', '.join(map(repr, drawn))}, "
                f"whose shape names it, and no value given sizes it): give it in the Values panel, under Dims "
                f"({dim}=64), or give one of them a value there, or untick \u201cverify\u201d {hint}"
            )
    return None


def _output_view(o: Any) -> dict[str, Any]:
    return {
        "name": o.name,
        "dtype": o.dtype,
        "shape": list(o.shape),
        "max_abs": o.max_abs,
        "max_rel": o.peak_rel,  # verify.OutputDiff.peak_rel
        "noise": o.noise,
        "mismatched": o.mismatched,
        "passed": o.passed,
        "verdict": o.verdict,
    }


def _verify_view(report: Any) -> dict[str, Any]:
    return {
        "passed": bool(report.passed),
        "identical": bool(report.identical),
        "verdict": report.verdict,
        "text": str(report),
        "outputs": [_output_view(o) for o in report.outputs],
        "notes": list(report.notes),
    }


class ExportPanel:
    """Runs exports for the widget and keeps the ``export`` trait's value."""

    def __init__(self, graph_name: str) -> None:
        self.run_number = 0
        self._view: dict[str, Any] = {
            "run": 0,
            "state": "idle",
            "targets": list(TARGETS),
            "default_arch": default_arch(),
            "default_path": f"out/{graph_name}",
            "arch": None,
            "path": None,
            "stage": "",
            "fraction": 0.0,
            "files": [],
            "file_count": 0,
            "result": "",
            "verify": None,
            "verify_error": None,
            "error": None,
            "seconds": 0.0,
        }

    def view(self) -> dict[str, Any]:
        """The ``export`` trait (``ExportView``)."""
        return dict(self._view)

    def run(
        self,
        graph: Any,
        *,
        arch: str,
        path: str,
        overwrite: bool,
        verify: bool,
        cpu_threads: int | None,
        dims: Mapping[str, int],
        values: Mapping[str, Any] | None,
        publish: Callable[[dict[str, Any]], None],
    ) -> str | None:
        """Export (and verify), publishing the view at each stage; returns the error text, or None."""
        from graphlab.deploy.verify import verify as run_verify  # import cost: Taichi

        self.run_number += 1
        started = time.perf_counter()
        view = self._view
        try:
            target = str(output_folder(path))
        except GraphlabError:  # export() below refuses it, and the view shows why
            target = str(path)
        view.update(run=self.run_number, state="running", arch=arch, path=target, stage="start", fraction=0.0)
        view.update(files=[], file_count=0, result="", verify=None, verify_error=None, error=None, seconds=0.0)
        publish(self.view())
        share = EXPORT_SHARE if verify else 1.0

        def report(stage: str, fraction: float) -> None:
            view.update(stage=stage, fraction=round(share * float(fraction), 4))
            publish(self.view())

        def work() -> None:
            result = export(
                graph,
                path,
                arch,
                dims=dict(dims) or None,
                values=values,
                overwrite=overwrite,
                progress=throttled(report),
                cpu_threads=cpu_threads,
            )
            files = result.files_on_disk()  # the same files str(result) counts
            view.update(files=files[:MAX_FILES], file_count=len(files), path=str(result.path))
            view.update(result=str(result))
            if verify:

                def verifying(stage: str, fraction: float) -> None:  # the rest of the bar, stage by stage
                    view.update(stage=stage, fraction=round(EXPORT_SHARE + (1 - EXPORT_SHARE) * fraction, 4))
                    publish(self.view())

                verifying("verify: starting", 0.0)
                self._verify(result.path, functools.partial(run_verify, progress=verifying))
            view.update(state="done", stage="done", fraction=1.0)

        try:
            interrupted = "the export was interrupted; nothing was written"
            error = finish_job(view, work, what="export", interrupted=interrupted, started=started)
            return None if error is None else ui_text(error)
        finally:
            if view.get("error"):  # said in the panel's terms ("tick 'overwrite the folder'"), Python as a hint
                view["error"] = ui_text(view["error"])
            publish(self.view())

    def refuse(self, error: str, *, arch: str, path: str, publish: Callable[[dict[str, Any]], None]) -> None:
        """Show an export refused before it ran (nothing written): a numbered run that failed at once."""
        self.run_number += 1
        self._view.update(run=self.run_number, state="failed", arch=arch, path=path, stage="", fraction=0.0)
        self._view.update(files=[], file_count=0, result="", verify=None, verify_error=None, seconds=0.0)
        self._view["error"] = error
        publish(self.view())

    def _verify(self, folder: Path, run_verify: Callable[[Path], Any]) -> None:
        """Verify the written module: its report, or why it could not run and the fix.

        The module is on disk either way, so a verification that cannot run (no C compiler, no
        Vulkan) is not an export that failed: the panel says so and how to check it later.
        """
        try:
            report = run_verify(folder)
        except GraphlabError as exc:
            self._view["verify_error"] = (
                f"{exc}. The module is written; once that is fixed, check it with "
                f"gl.verify({str(folder)!r}), or export again with 'overwrite' ticked."
            )
            return
        self._view["verify"] = _verify_view(report)
