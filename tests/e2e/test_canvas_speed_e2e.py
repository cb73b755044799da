"""How the canvas redraws an edit, in a real JupyterLab and Chromium: nothing the widget's code does on the
way from the click to the drawn node makes the browser lay out or restyle the page early.

A read of a layout property (``clientWidth``, ``getBoundingClientRect``, ``getComputedStyle`` ...) after the
page changed forces the browser to recompute styles and layout at once, and again for the frame: on
mpm88 that was ~13 ms of an edit (``bench/canvas_latency.py`` measures the whole). The reads are counted
where they are made, by the widget's own module (loaded from a ``blob:`` URL), from the click until the
new node is in the page.
"""

from __future__ import annotations

import pytest
from nbpage import Notebook
from playwright.sync_api import Locator, expect
from test_canvas_e2e import MPM88_EDITOR

pytestmark = pytest.mark.e2e

#: Count layout reads made by the widget's module while ``window.__glSpy.on``, with where they came from.
#: Reads in a ResizeObserver's callback are left out: it runs after the browser laid the page out, so they
#: force nothing (React Flow measures its nodes there).
_SPY = """(() => {
  const spy = window.__glSpy = {on: false, reads: [], observing: 0};
  const Observer = window.ResizeObserver;
  window.ResizeObserver = class extends Observer {
    constructor(callback) {
      super((...args) => { spy.observing++; try { return callback(...args); } finally { spy.observing--; } });
    }
  };
  const note = (what) => {
    if (!spy.on || spy.observing > 0) return;
    const stack = new Error().stack.split('\\n').slice(2);
    if (stack.some((line) => line.includes('blob:'))) spy.reads.push(what + ' ' + stack.slice(0, 3).join(' | '));
  };
  for (const [proto, names] of [[Element.prototype, ['clientWidth', 'clientHeight', 'scrollWidth', 'scrollHeight']],
                                [HTMLElement.prototype, ['offsetWidth', 'offsetHeight', 'offsetTop', 'offsetLeft']]]) {
    for (const name of names) {
      const d = Object.getOwnPropertyDescriptor(proto, name);
      Object.defineProperty(proto, name, {...d, get() { note(name); return d.get.call(this); }});
    }
  }
  const rect = Element.prototype.getBoundingClientRect;
  Element.prototype.getBoundingClientRect = function () { note('getBoundingClientRect'); return rect.call(this); };
  const style = window.getComputedStyle;
  window.getComputedStyle = function (...args) { note('getComputedStyle'); return style.apply(this, args); };
})()"""

#: Click the palette's first kernel; resolve with the layout reads made until the new node is in the page.
_ADD = """() => new Promise((resolve, reject) => {
  const w = document.querySelector('.gl-editor');
  const before = w.querySelectorAll('.gl-fdispatch').length;
  const timer = setTimeout(() => { observer.disconnect(); reject(new Error('no new node in 30 s')); }, 30000);
  const observer = new MutationObserver(() => {
    if (w.querySelectorAll('.gl-fdispatch').length <= before) return;
    window.__glSpy.on = false;
    observer.disconnect();
    clearTimeout(timer);
    resolve(window.__glSpy.reads.splice(0));
  });
  observer.observe(w, {subtree: true, childList: true});
  window.__glSpy.on = true;
  w.querySelector('.gl-kernel-item').click();
})"""


def open_mpm88_with(lab, page, artifacts, init_script: str) -> Locator:
    """mpm88's editor at 1600x1000 with ``init_script`` run before the page loads (React Flow makes its
    observers, JupyterLab its sockets, as they start); p2g selected, so an add lands after it."""
    page.set_viewport_size({"width": 1600, "height": 1000})
    page.add_init_script(init_script)
    nb = Notebook(page, artifacts)
    nb.open(lab.notebook_url("quickstart.ipynb"))
    nb.run_code(MPM88_EDITOR)
    w = nb.widget()
    p2g = w.locator("[data-node-id='substep/substep_p2g']")
    expect(p2g).to_have_count(1)
    w.scroll_into_view_if_needed()
    p2g.click()
    return w


def test_an_edit_is_drawn_without_forcing_the_page_layout_first(lab, page, artifacts):
    w = open_mpm88_with(lab, page, artifacts, _SPY)
    for attempt in range(3):  # the first add also starts things once (the palette's fonts, the comm)
        reads = page.evaluate(_ADD)
        expect(w.locator(".gl-fdispatch")).to_have_count(5 + attempt)
        page.wait_for_timeout(300)  # the widget's height follows the drawing after the frame
    assert reads == [], "the widget read the layout before drawing the edit:\n" + "\n".join(reads)


#: Count the frames between the kernel's message with the edited graph (the largest message of the edit)
#: and the new node in the page. Installed before the page loads: JupyterLab opens its sockets as it starts.
_FRAMES_AFTER_UPDATE = """(() => {
  const seen = window.__glUpdate = {frames: null};
  const Socket = window.WebSocket;
  window.WebSocket = class extends Socket {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (e) => {
        const size = e.data.byteLength ?? e.data.length ?? 0;
        if (size > 4000) seen.frames = 0;  // the graph trait of mpm88 is ~12 kB; status messages ~0.6 kB
      });
    }
  };
  const tick = () => { if (seen.frames !== null) seen.frames++; requestAnimationFrame(tick); };
  requestAnimationFrame(tick);
})()"""

#: Click the palette's first kernel; resolve with the frames drawn between the update's arrival and the new node.
_ADD_FRAMES = """() => new Promise((resolve, reject) => {
  const w = document.querySelector('.gl-editor');
  const before = w.querySelectorAll('.gl-fdispatch').length;
  window.__glUpdate.frames = null;
  const timer = setTimeout(() => { observer.disconnect(); reject(new Error('no new node in 30 s')); }, 30000);
  const observer = new MutationObserver(() => {
    if (w.querySelectorAll('.gl-fdispatch').length <= before) return;
    observer.disconnect();
    clearTimeout(timer);
    resolve(window.__glUpdate.frames);
  });
  observer.observe(w, {subtree: true, childList: true});
  w.querySelector('.gl-kernel-item').click();
})"""


def test_an_edit_is_drawn_in_the_frame_its_update_arrives_in(lab, page, artifacts):
    """The edited graph is drawn while the kernel's message is handled, not in a task React schedules
    after it: in between, the browser painted the panels' half of the update and the node came a frame
    late (~12 ms of the edit's ~50, bench/canvas_latency.py)."""
    w = open_mpm88_with(lab, page, artifacts, _FRAMES_AFTER_UPDATE)
    frames = []
    for attempt in range(5):
        frames.append(page.evaluate(_ADD_FRAMES))
        expect(w.locator(".gl-fdispatch")).to_have_count(5 + attempt)
    assert None not in frames, f"no message of the graph's size came before the node was drawn: {frames}"
    assert frames == [0] * len(frames), f"frames drawn between the update's arrival and the new node: {frames}"
