"""The widget runs Taichi only on the thread that called ``ti.init``, wherever its messages arrive.

ipykernel 7 hands JupyterLab's widget messages to the widget on a subshell thread while cells (and
``ti.init``) run on the main thread, which runs an event loop. These tests do the same: the editor
is made inside a running asyncio loop on the thread of ``ti.init``, and the browser's messages are
delivered through the widget's comm handler from another thread. Taichi's LLVM backend asserts that
the first compile after ``ti.init`` (it adds the struct module) happens on the ``ti.init`` thread,
so a Debug click run where it arrived fails with ``main_thread_id_``. The last test does it with a
real ipykernel: the messages go over a subshell, as JupyterLab's ``commsOverSubshells`` sends them.
"""

import asyncio
import threading
import time

import numpy as np
import pytest
import taichi as ti
from jupyter_client.manager import start_new_kernel
from widget_comm import recording_comm  # noqa: F401  (autouse fixture)

import graphlab as gl
from graphlab.widget.home import HomeThread, HomeThreadError


@ti.kernel
def fill(x: ti.types.ndarray(dtype=ti.f32, ndim=1), value: ti.f32):
    for i in x:
        x[i] = value


@ti.kernel
def double(x: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in x:
        x[i] *= 2.0


def clicks_editor():
    """The issue's notebook: args declared, no dispatch yet, nothing run since ``ti.init``."""
    g = gl.Graph("clicks")
    g.ndarray("x", ti.f32, ndim=1, role="output")
    g.scalar("value", ti.f32, role="input")
    return gl.editor(g, kernels=[fill, double], access="ast", values={"x": np.zeros(8, np.float32), "value": 1.5})


def custom(message):
    return {"content": {"data": {"method": "custom", "content": message}}, "buffers": []}


ADD_FILL = {"kind": "edit", "op": "dispatch", "kernel": f"{__name__}:fill", "bindings": {"x": "x", "value": "value"}}


def from_thread(work, name="subshell"):
    """Run ``work`` on another thread, as ipykernel 7 runs a comm message; returns the thread."""
    thread = threading.Thread(target=work, name=name)
    thread.start()
    return thread


async def replies_for(ed, count, timeout=120.0):
    """Let the loop run until the editor has sent ``count`` replies (the ti.init thread's loop)."""
    deadline = time.monotonic() + timeout
    while len(ed.comm.replies()) < count:
        assert time.monotonic() < deadline, f"only {len(ed.comm.replies())} of {count} replies came"
        await asyncio.sleep(0.01)
    return ed.comm.replies()


def test_debug_after_an_edit_from_a_comm_thread_runs_on_the_ti_init_thread(ti_cpu):
    """The issue's steps: click a kernel (an edit), click Debug; both arrive on a subshell thread."""

    async def notebook():
        ed = clicks_editor()
        try:
            handler = ed.comm.handler  # what ipykernel calls for each comm message
            thread = from_thread(
                lambda: [
                    handler(custom({**ADD_FILL, "request": 1})),
                    handler(custom({"kind": "debug", "action": "start", "request": 2})),
                ]
            )
            replies = await replies_for(ed, 2)
            thread.join()
            return ed, replies
        finally:
            ed.close()

    ed, replies = asyncio.run(notebook())
    assert [r["request"] for r in replies] == [1, 2]
    assert replies[1]["error"] is None, replies[1]["error"]
    assert all(r["ok"] for r in replies)
    assert ed.debugger["session"] == 1
    assert "fill" in [n["id"] for n in ed.graph["nodes"]]


def test_the_comm_thread_returns_before_the_work_is_done(ti_cpu):
    """ipykernel's subshell is not held while the editor's thread compiles: the handler only queues."""

    async def notebook():
        ed = clicks_editor()
        try:
            returned = threading.Event()

            def deliver():
                ed.comm.handler(custom({**ADD_FILL, "request": 1}))
                returned.set()

            thread = from_thread(deliver)
            thread.join()  # the loop has not run since: the edit cannot have been applied
            assert returned.is_set() and ed.comm.replies() == []
            assert ed.model.body == ()
            return await replies_for(ed, 1)
        finally:
            ed.close()

    assert asyncio.run(notebook())[0]["ok"]


def test_handle_message_from_another_thread_waits_for_the_reply(ti_cpu):
    """A script calling ``handle_message`` on a worker thread gets the reply, worked out on the home thread."""

    async def notebook():
        ed = clicks_editor()
        try:
            got = {}

            def worker():
                got["edit"] = ed.handle_message({**ADD_FILL, "request": 1})
                got["debug"] = ed.handle_message({"kind": "debug", "action": "start", "request": 2})

            thread = from_thread(worker)
            while thread.is_alive():
                await asyncio.sleep(0.01)
            return got, ed.comm.replies()
        finally:
            ed.close()

    got, sent = asyncio.run(notebook())
    assert got["edit"]["ok"]
    assert got["debug"]["ok"], got["debug"]["error"]
    assert sent == [got["edit"], got["debug"]]


def test_editor_debug_from_another_thread_starts_the_session_on_the_home_thread(ti_cpu):
    async def notebook():
        ed = clicks_editor()
        ed.model.dispatch(fill, ed.model.args["x"], ed.model.args["value"])
        try:
            got = {}
            thread = from_thread(lambda: got.setdefault("session", ed.debug()))
            while thread.is_alive():
                await asyncio.sleep(0.01)
            return ed, got
        finally:
            ed.close()

    ed, got = asyncio.run(notebook())
    assert got["session"] is not None
    assert ed.debugger["session"] == 1


def test_a_message_from_another_thread_with_no_loop_at_home_is_refused(ti_cpu):
    """Made outside any event loop, the editor cannot hand work home: it refuses, runs nothing, says how."""
    ed = clicks_editor()
    try:
        got = {}
        from_thread(lambda: got.setdefault("reply", ed.handle_message({**ADD_FILL, "request": 7}))).join()
        reply = got["reply"]
        assert reply["request"] == 7 and not reply["ok"]
        assert "MainThread" in reply["error"] and "no event loop" in reply["error"]
        assert "make the editor inside a running event loop" in reply["error"]
        assert ed.model.body == ()  # nothing was done off the home thread

        from_thread(lambda: ed.comm.handler(custom({**ADD_FILL, "request": 8}))).join()
        assert ed.comm.replies()[-1]["request"] == 8 and "no event loop" in ed.comm.replies()[-1]["error"]
        assert ed.model.body == ()
    finally:
        ed.close()


def test_a_graph_edit_in_python_on_another_thread_is_drawn_on_the_home_thread(ti_cpu):
    async def notebook():
        ed = clicks_editor()
        try:
            drawn_on = []
            sync = ed._sync

            def recording_sync():
                drawn_on.append(threading.current_thread().name)
                sync()

            ed._sync = recording_sync
            from_thread(lambda: ed.model.dispatch(fill, ed.model.args["x"], ed.model.args["value"])).join()
            while "fill" not in [n["id"] for n in ed.graph["nodes"]]:
                await asyncio.sleep(0.01)
            return drawn_on
        finally:
            ed.close()

    assert asyncio.run(notebook()) == [threading.current_thread().name]


# --- HomeThread itself -----------------------------------------------------------------------------


def test_work_posted_from_threads_and_at_home_runs_at_home_in_arrival_order():
    async def main():
        home = HomeThread()
        ran = []

        def item(n):
            return lambda: ran.append((n, threading.current_thread() is home.thread))

        from_thread(lambda: [home.post(item(1)), home.post(item(2))]).join()
        home.post(item(3))  # at home, but after the two queued: it waits its turn
        assert ran == []
        while len(ran) < 3:
            await asyncio.sleep(0.001)
        return ran

    assert asyncio.run(main()) == [(1, True), (2, True), (3, True)]


def test_call_from_another_thread_raises_the_work_s_exception_there():
    async def main():
        home = HomeThread()
        got = {}

        def worker():
            try:
                home.call(lambda: 1 / 0)
            except ZeroDivisionError as exc:
                got["error"] = exc

        thread = from_thread(worker)
        while thread.is_alive():
            await asyncio.sleep(0.001)
        return got

    assert isinstance(asyncio.run(main())["error"], ZeroDivisionError)


def test_post_from_another_thread_without_a_loop_at_home_raises_a_graphlab_error():
    home = HomeThread()
    got = {}

    def worker():
        try:
            home.post(lambda: None)
        except HomeThreadError as exc:
            got["error"] = exc

    from_thread(worker, name="worker-7").join()
    error = got["error"]
    assert isinstance(error, gl.GraphlabError) and isinstance(error, RuntimeError)
    assert "'worker-7'" in str(error) and "'MainThread'" in str(error)


def test_post_from_another_thread_after_the_home_loop_closed_says_so():
    async def make():
        return HomeThread()

    home = asyncio.run(make())
    got = {}

    def worker():
        try:
            home.post(lambda: None)
        except HomeThreadError as exc:
            got["error"] = str(exc)

    from_thread(worker).join()
    assert "its event loop there has closed" in got["error"]
    assert "make the editor inside a running event loop" in got["error"]


def test_work_left_queued_when_the_loop_closed_runs_at_home_before_the_next_post():
    async def make():
        return HomeThread()

    loop = asyncio.new_event_loop()
    home = loop.run_until_complete(make())
    ran = []
    from_thread(lambda: home.post(lambda: ran.append("queued"))).join()
    loop.close()  # before the queued work ran
    assert ran == []
    home.post(lambda: ran.append("later"))
    assert ran == ["queued", "later"]


@pytest.mark.parametrize("here", [True, False])
def test_here_is_true_only_on_the_making_thread(here):
    home = HomeThread()
    got = {}
    if here:
        got["here"] = home.here
    else:
        from_thread(lambda: got.setdefault("here", home.here)).join()
    assert got["here"] is here


# --- a real ipykernel 7, messages sent over a subshell as JupyterLab 4.4+ sends them -----------------

KERNEL_CELL = """
import numpy as np
import taichi as ti
import graphlab as gl
ti.init(arch=ti.cpu, log_level=ti.WARN)

@ti.kernel
def fill(x: ti.types.ndarray(dtype=ti.f32, ndim=1), value: ti.f32):
    for i in x:
        x[i] = value

g = gl.Graph("clicks")
g.ndarray("x", ti.f32, ndim=1, role="output")
g.scalar("value", ti.f32, role="input")
ed = gl.editor(g, access="ast", values={"x": np.zeros(8, np.float32), "value": 1.5})
print("<<" + ed.comm.comm_id + ">>")
"""


@pytest.fixture
def kernel(tmp_path):
    """An ipykernel (this interpreter's, this checkout on its path) and a blocking client."""
    km, kc = start_new_kernel(kernel_name="python3", cwd=str(tmp_path), startup_timeout=120)
    yield kc
    kc.stop_channels()
    km.shutdown_kernel(now=True)


def widget_reply(kc, request, timeout=120.0):
    """The editor's reply to ``request`` (a custom comm message on IOPub)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        msg = kc.get_iopub_msg(timeout=deadline - time.monotonic())
        if msg["msg_type"] != "comm_msg":
            continue
        data = msg["content"]["data"]
        if data.get("method") == "custom" and data["content"].get("request") == request:
            return data["content"]
    raise AssertionError(f"no reply to request {request} within {timeout} s")


def test_a_real_kernel_debugs_after_an_edit_sent_over_a_subshell(kernel):
    """ipykernel routes the Debug click to the subshell the edit's reply went out on (a thread of its own)."""
    kc = kernel
    printed = []
    kc.execute_interactive(KERNEL_CELL, timeout=120, output_hook=lambda m: printed.append(m["content"].get("text", "")))
    comm_id = "".join(printed).split("<<")[1].split(">>")[0]
    create = kc.session.msg("create_subshell_request", {})
    kc.control_channel.send(create)
    subshell = kc.control_channel.get_msg(timeout=30)["content"]["subshell_id"]

    def send(message):
        msg = kc.session.msg("comm_msg", {"comm_id": comm_id, "data": {"method": "custom", "content": message}})
        msg["header"]["subshell_id"] = subshell  # JupyterLab's commsOverSubshells (per comm target)
        kc.shell_channel.send(msg)
        return widget_reply(kc, message["request"])

    edit = send(
        {
            "kind": "edit",
            "op": "dispatch",
            "kernel": "__main__:fill",
            "bindings": {"x": "x", "value": "value"},
            "request": 1,
        }
    )
    assert edit["ok"], edit["error"]
    debug = send({"kind": "debug", "action": "start", "request": 2})
    assert debug["ok"], debug["error"]
