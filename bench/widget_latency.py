"""Interaction latency of the widget: click Step, until the inspector shows the new step.

Measured in a real browser: this script starts a JupyterLab server (127.0.0.1, a token, a temporary
folder), opens a notebook that shows ``gl.editor`` on Taichi's mpm88 graph with its buffers, starts
a debug session and inspects ``grid_m`` (a 128 x 128 heat map). Each sample clicks **Step** in
headless Chromium and waits, in the page, until the inspect panel is redrawn for the new position
and one animation frame has passed. That spans the whole path: the click, the message to the kernel,
the dispatch (launched and timed by the debugger), the device statistics, picture, page and diff of
the inspected buffer, the trait update back (JSON and bytes), and the panel's redraw with its canvas.

    python bench/widget_latency.py                # ti.cpu, 40 steps after a warm-up
    python bench/widget_latency.py --steps 100 --arch cuda --buffer grid_v

Prints one line: median, p90 and max in ms, with the device.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import tempfile
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from labserver import chromium, running_lab  # noqa: E402
from nbpage import Notebook  # noqa: E402

#: Click Step, resolve with the milliseconds until the inspector shows `expected` and a frame passed.
CLICK_AND_WAIT = """([expected]) => new Promise((resolve, reject) => {
  const root = document.querySelector('.gl-editor');
  const panel = root.querySelector('.gl-inspect');
  const button = root.querySelector('[data-debug=step]');
  const start = performance.now();
  const timer = setTimeout(() => { observer.disconnect(); reject(new Error('no update in 30 s')); }, 30000);
  const done = () => requestAnimationFrame(() => { clearTimeout(timer); resolve(performance.now() - start); });
  const observer = new MutationObserver(() => {
    if (panel.dataset.position === String(expected)) { observer.disconnect(); done(); }
  });
  observer.observe(panel, { attributes: true, attributeFilter: ['data-position'] });
  button.click();
})"""


def notebook(arch: str, substeps: int) -> nbformat.NotebookNode:
    setup = f"""import taichi as ti
import graphlab as gl
from graphlab.api.examples import load_taichi_example, mpm88_buffers, mpm88_graph

ti.init(arch=ti.{arch}, log_level=ti.WARN)
m = load_taichi_example("mpm88_graph")
g = mpm88_graph(m, substeps={substeps})
ed = gl.editor(g, values=mpm88_buffers(m))
ed"""
    nb = new_notebook(cells=[new_code_cell(setup)])
    nb.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
    return nb


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--arch", default="cpu", choices=["cpu", "cuda", "vulkan"])
    parser.add_argument("--steps", type=int, default=40, help="measured steps (after a warm-up of one substep)")
    parser.add_argument("--buffer", default="grid_m", help="the buffer the inspector shows")
    options = parser.parse_args()
    warmup = 4  # one substep: every kernel compiled, every inspector path taken once
    substeps = (warmup + options.steps) // 4 + 2
    with tempfile.TemporaryDirectory(prefix="graphlab-latency-") as tmp:
        root = Path(tmp, "notebooks")
        root.mkdir()
        nbformat.write(notebook(options.arch, substeps), root / "latency.ipynb")
        log = Path(tmp, "jupyterlab.log")
        with running_lab(root, Path(tmp, "home"), log) as lab, chromium(Path(tmp, "chrome")) as ctx:
            page = ctx.new_page()
            nb = Notebook(page, Path(tmp))
            nb.open(lab.notebook_url("latency.ipynb"))
            nb.run_all()
            if nb.errors():
                raise SystemExit(f"the notebook failed: {nb.errors()}")
            w = nb.widget()
            w.locator("[data-debug=start]").click()
            w.locator(".gl-timeline").wait_for()
            w.locator(".gl-tab[data-tab=inspect]").click()
            w.locator(".gl-inspect[data-position='0']").wait_for()
            w.locator("[aria-label=buffer]").select_option(options.buffer)
            w.locator(f".gl-inspect[data-buffer='{options.buffer}']").wait_for()
            for k in range(1, warmup + 1):
                page.evaluate(CLICK_AND_WAIT, [k])
            samples = [float(page.evaluate(CLICK_AND_WAIT, [warmup + k])) for k in range(1, options.steps + 1)]
    samples.sort()
    p90 = samples[min(len(samples) - 1, round(0.9 * (len(samples) - 1)))]
    print(
        f"widget step latency, mpm88 on {options.arch} ({platform.machine()}, inspector on {options.buffer}): "
        f"median {statistics.median(samples):.1f} ms, p90 {p90:.1f} ms, max {samples[-1]:.1f} ms over "
        f"{len(samples)} steps (click -> inspector redrawn, headless Chromium + JupyterLab)"
    )


if __name__ == "__main__":
    main()
