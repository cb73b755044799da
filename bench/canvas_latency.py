"""The node editor canvas's latencies, measured in a real JupyterLab and headless Chromium.

Three numbers, each over real clicks and frames in the page:

- **edit**: on Taichi's mpm88 graph, a click on a palette kernel (a dispatch added after the selected
  one: the message to the kernel, the model edit, validation, the trait sync back and React Flow's
  redraw) until the new node is in the drawing and a frame has passed; then Ctrl+Z until it is gone.
- **ELK**: a 500-dispatch graph laid out by ELK in its web worker (the time the worker took, read from
  the canvas's ``data-elk-ms``), with the main thread's long tasks (> 50 ms) counted meanwhile; the
  worker's start (once a page: parsing ELK's script, a two-node warm-up) is ``data-elk-start-ms``.
- **pan/zoom**: frame times (``requestAnimationFrame`` deltas) while the 500-node graph is dragged
  across the canvas by its background and zoomed with the wheel; a frame over 1.5 x 16.7 ms counts as
  dropped. The same gestures on a 3-dispatch graph in the same run are the reference: the frames the
  browser and the machine drop without the graph.

    python bench/canvas_latency.py              # 30 edits, 5 layouts, 3 rounds of panning and zooming each graph

Prints one line per measure.
"""

from __future__ import annotations

import argparse
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

MPM88 = """import taichi as ti
import graphlab as gl
from graphlab.api.examples import load_taichi_example, mpm88_graph
ti.init(arch=ti.cpu, log_level=ti.WARN)
m = load_taichi_example("mpm88_graph")
g = mpm88_graph(m, substeps=8)
ed = gl.editor(g)
ed"""

BIG = """import taichi as ti
import graphlab as gl
ti.init(arch=ti.cpu, log_level=ti.WARN)

@ti.kernel
def step(x: ti.types.ndarray(dtype=ti.f32, ndim=1), y: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in x:
        y[i] += x[i]

big = gl.Graph("big")
bufs = [big.ndarray(f"b{k}", ti.f32, ndim=1, shape="n") for k in range(20)]
for k in range(500):
    big.dispatch(step, bufs[k % 20], bufs[(k * 7 + 3) % 20], name=f"s{k}")
ed = gl.editor(big, kernels={"step": step}, access="ast")
ed"""

#: The reference for pan/zoom: the same widget and gestures on 3 dispatches, so what the browser, the page
#: and this machine drop by themselves is measured in the same run.
SMALL = BIG.replace("range(500)", "range(3)")

#: Click, then resolve with the ms until `done()` holds in a mutation and a frame has passed.
TIMED = """([what]) => new Promise((resolve, reject) => {
  const w = document.querySelector('.gl-editor');
  const checks = {
    add: () => w.querySelectorAll('.gl-fdispatch').length > window.__glCount,
    undo: () => w.querySelectorAll('.gl-fdispatch').length === window.__glCount,
  };
  const start = performance.now();
  const timer = setTimeout(() => { observer.disconnect(); reject(new Error('no redraw in 30 s')); }, 30000);
  const observer = new MutationObserver(() => {
    if (!checks[what]()) return;
    observer.disconnect();
    requestAnimationFrame(() => { clearTimeout(timer); resolve(performance.now() - start); });
  });
  observer.observe(w, {subtree: true, childList: true});
  if (what === 'add') w.querySelector('.gl-kernel-item').click();
  else w.querySelector('.gl-flow-canvas').dispatchEvent(
    new KeyboardEvent('keydown', {key: 'z', ctrlKey: true, bubbles: true}));
})"""

COUNT = "() => { window.__glCount = document.querySelectorAll('.gl-editor .gl-fdispatch').length; }"

#: Record requestAnimationFrame deltas until stopped; count main-thread long tasks meanwhile.
FRAMES_START = """() => {
  const rec = window.__glFrames = {deltas: [], long: 0, on: true};
  try {
    new PerformanceObserver((l) => { rec.long += l.getEntries().length; }).observe({type: 'longtask'});
  } catch (e) {}
  let last = performance.now();
  const tick = (t) => { rec.deltas.push(t - last); last = t; if (rec.on) requestAnimationFrame(tick); };
  requestAnimationFrame(tick);
}"""


#: A point of the canvas's background near its middle (a drag there pans; at Fit the middle of a tall
#: graph is a node's port, and a drag from it draws a connection instead).
EMPTY_SPOT = """() => {
  const pane = document.querySelector('.gl-editor .react-flow__pane').getBoundingClientRect();
  for (let dx = 0; dx < pane.width / 2; dx += 8) {
    for (const x of [pane.left + pane.width / 2 - dx, pane.left + pane.width / 2 + dx]) {
      const y = pane.top + pane.height / 2;
      const under = document.elementFromPoint(x, y);
      if (under && under.classList.contains('react-flow__pane')) return [x, y];
    }
  }
  throw new Error('no background to drag in the canvas');
}"""


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def open_notebook(lab, ctx, tmp: Path, name: str, code: str):  # Playwright objects in, a page and a locator out
    nbformat.write(_notebook(code), lab.root / name)
    page = ctx.new_page()
    page.set_viewport_size({"width": 1600, "height": 1000})
    nb = Notebook(page, tmp)
    nb.open(lab.notebook_url(name))
    nb.run_all()
    if nb.errors():
        raise SystemExit(f"the notebook failed: {nb.errors()}")
    w = nb.widget()
    w.locator(".gl-fdispatch").first.wait_for()
    w.scroll_into_view_if_needed()
    return page, w


def _notebook(code: str) -> nbformat.NotebookNode:
    nb = new_notebook(cells=[new_code_cell(code)])
    nb.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
    return nb


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--edits", type=int, default=30)
    parser.add_argument("--layouts", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3, help="pan/zoom rounds of each graph")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="graphlab-canvas-") as tmp:
        root = Path(tmp, "notebooks")
        root.mkdir()
        with running_lab(root, Path(tmp, "home"), Path(tmp, "jupyterlab.log")) as lab, chromium(Path(tmp, "c")) as ctx:
            page, w = open_notebook(lab, ctx, Path(tmp), "mpm88.ipynb", MPM88)
            w.locator("[data-node-id='substep/substep_p2g']").click()
            adds, undos = [], []
            for k in range(options.edits + 2):
                page.evaluate(COUNT)
                add = float(page.evaluate(TIMED, ["add"]))
                undo = float(page.evaluate(TIMED, ["undo"]))
                if k >= 2:  # the first two compile and warm the caches
                    adds.append(add)
                    undos.append(undo)
            print(f"edit on mpm88 (click a kernel -> new node drawn): median {statistics.median(adds):.1f} ms, "
                  f"p90 {percentile(adds, 0.9):.1f} ms; undo (Ctrl+Z -> node gone): median "
                  f"{statistics.median(undos):.1f} ms over {len(adds)}")  # fmt: skip
            page.close()

            page, w = open_notebook(lab, ctx, Path(tmp), "big.ipynb", BIG)
            page.wait_for_function("() => document.querySelector('.gl-flow-canvas').dataset.elkMs !== undefined",
                                   timeout=120_000)  # fmt: skip
            times = [float(w.locator(".gl-flow-canvas").get_attribute("data-elk-ms"))]
            # nan: a build from before the worker's start was timed apart
            start_ms = float(w.locator(".gl-flow-canvas").get_attribute("data-elk-start-ms") or "nan")
            page.evaluate(FRAMES_START)
            for _ in range(options.layouts):
                before = w.locator(".gl-flow-canvas").get_attribute("data-elk-ms")
                page.evaluate("() => { delete document.querySelector('.gl-flow-canvas').dataset.elkMs; }")
                w.locator("[data-canvas=tidy]").click()
                page.wait_for_function("() => document.querySelector('.gl-flow-canvas').dataset.elkMs !== undefined",
                                       timeout=120_000)  # fmt: skip
                times.append(float(w.locator(".gl-flow-canvas").get_attribute("data-elk-ms")))
                del before
            long_tasks = page.evaluate("() => { window.__glFrames.on = false; return window.__glFrames.long; }")
            print(f"ELK layout of 500 dispatches + 20 buffers in the web worker: median "
                  f"{statistics.median(times):.0f} ms, max {max(times):.0f} ms over {len(times)} (the first "
                  f"{times[0]:.0f} ms, after the worker's start of {start_ms:.0f} ms, once a page); "
                  f"main-thread long tasks during Tidy: {long_tasks}")  # fmt: skip

            big_rounds = [pan_zoom(page, w) for _ in range(options.rounds)]
            page.close()
            page, w = open_notebook(lab, ctx, Path(tmp), "small.ipynb", SMALL)
            small_rounds = [pan_zoom(page, w) for _ in range(options.rounds)]
            for name, rounds in (("500 dispatches", big_rounds), ("3 dispatches (the reference)", small_rounds)):
                deltas = [d for r in rounds for d in r]
                dropped = [sum(1 for d in r if d > DROPPED) for r in rounds]
                rounds_text = ", ".join(map(str, dropped))
                print(f"pan/zoom of {name}: {len(deltas)} frames in {len(rounds)} rounds, median "
                      f"{statistics.median(deltas):.1f} ms, p95 {percentile(deltas, 0.95):.1f} ms, max "
                      f"{max(deltas):.1f} ms, over 25 ms: {sum(dropped)} ({rounds_text} a round)")  # fmt: skip


#: A frame time over 1.5 frames of 60 Hz counts as dropped.
DROPPED = 1.5 * 1000 / 60


def pan_zoom(page, w) -> list[float]:  # Playwright objects in: frame times (ms) of one pan and zoom
    """Drag the graph by its background across the canvas, then zoom in and out with the wheel, from Fit."""
    w.locator("[data-canvas=fit]").click()
    page.wait_for_timeout(300)
    cx, cy = page.evaluate(EMPTY_SPOT)
    page.evaluate(FRAMES_START)
    page.mouse.move(cx, cy)
    page.mouse.down()
    for i in range(60):
        page.mouse.move(cx + 200 * ((i % 20) - 10) / 10, cy + 60 * ((i % 10) - 5) / 5)
        page.wait_for_timeout(16)
    page.mouse.up()
    page.mouse.move(cx, cy)
    for i in range(40):
        page.mouse.wheel(0, -120 if i < 20 else 120)
        page.wait_for_timeout(16)
    page.wait_for_timeout(300)  # the frames after the move ends (more detail is drawn then)
    return page.evaluate("() => { window.__glFrames.on = false; return window.__glFrames.deltas.slice(1); }")


if __name__ == "__main__":
    main()
