"""The server's process-wide settings: torch threads, a frozen start-up heap, housekeeping."""

import gc
import os
import platform
import threading
from pathlib import Path
from types import SimpleNamespace


import pytest
import torch
from streamlit.testing.v1 import AppTest

from gradlab.ui import runtime


def test_configure_runtime_limits_torch_and_freezes_the_heap():
    runtime.configure_runtime()
    assert torch.get_num_threads() == runtime.TORCH_THREADS
    # oneDNN's kernel cache is limited unless the operator chose a size
    assert int(os.environ["ONEDNN_PRIMITIVE_CACHE_CAPACITY"]) <= 64
    assert gc.get_freeze_count() > 0  # the libraries' objects are out of the collector's sight


def test_housekeeping_collects_garbage_at_most_every_interval(monkeypatch):
    calls = []
    monkeypatch.setattr(runtime.gc, "collect", lambda *a: calls.append("collect") or 0)
    monkeypatch.setattr(runtime, "_malloc_trim", lambda: calls.append("trim"))
    monkeypatch.setattr(runtime, "_last_collect", 0.0)
    monkeypatch.setattr(runtime.time, "monotonic", lambda: runtime.COLLECT_EVERY_SECONDS + 1.0)
    runtime.housekeeping()
    runtime.housekeeping()  # within the interval of the first: nothing
    assert calls == ["collect", "trim"]  # garbage collected, then freed memory back to the OS


def test_an_idle_server_collects_a_few_times_soon_then_at_the_usual_pace(monkeypatch):
    calls, clock = [], {"now": 0.0}
    monkeypatch.setattr(runtime.gc, "collect", lambda *a: calls.append(clock["now"]) or 0)
    monkeypatch.setattr(runtime, "_malloc_trim", lambda: None)
    monkeypatch.setattr(runtime.time, "monotonic", lambda: clock["now"])
    monkeypatch.setattr(runtime, "_last_collect", 0.0)
    monkeypatch.setattr(runtime, "_last_rerun", 0.0)  # the class's last rerun
    monkeypatch.setattr(runtime, "_idle_collections", 0)
    tick = runtime.HOUSEKEEPING_TICK_SECONDS
    for k in range(1, int(2 * runtime.COLLECT_EVERY_SECONDS / tick) + 1):
        clock["now"] = k * tick
        runtime.housekeeping()
    quick = [runtime.IDLE_COLLECT_SECONDS * (i + 1) for i in range(runtime.IDLE_COLLECTIONS)]
    # the first IDLE_COLLECTIONS come every IDLE_COLLECT_SECONDS, then every COLLECT_EVERY_SECONDS
    assert calls[:len(quick)] == pytest.approx(quick, abs=tick)
    assert calls[len(quick)] - calls[len(quick) - 1] == pytest.approx(runtime.COLLECT_EVERY_SECONDS, abs=tick)


def test_a_rerun_brings_back_the_pace_under_load(monkeypatch):
    monkeypatch.setattr(runtime, "_idle_collections", runtime.IDLE_COLLECTIONS)
    monkeypatch.setattr(runtime, "_last_rerun", 0.0)
    runtime.configure_runtime()  # what every rerun calls
    assert runtime._idle_collections == 0 and runtime._last_rerun > 0.0


def test_the_housekeeper_runs_in_the_background_once_configured():
    runtime.configure_runtime()
    names = [t.name for t in threading.enumerate()]
    assert names.count("gradlab-housekeeping") == 1  # started once, however many reruns


def test_a_failing_round_does_not_end_housekeeping(monkeypatch, caplog):
    def broken():
        raise AttributeError("Mock object has no attribute '_session_mgr'")  # what AppTest's runtime did

    monkeypatch.setattr(runtime, "housekeeping", broken)
    runtime._housekeeping_round()  # logged, not raised: the thread's loop goes on
    assert "housekeeping round failed" in caplog.text


def test_malloc_arenas_are_capped_on_glibc():
    if platform.libc_ver()[0] != "glibc":
        pytest.skip("mallopt is glibc's")
    assert runtime._limit_malloc_arenas()


class _FakeRuntime:
    def __init__(self):
        self.marked = []

    def mark_session_nonresumable(self, session_id):
        self.marked.append(session_id)


def test_each_rerun_marks_its_session_to_be_shut_down_when_its_tab_closes(monkeypatch):
    import streamlit.runtime as st_runtime
    import streamlit.runtime.scriptrunner as st_scriptrunner

    fake = _FakeRuntime()
    monkeypatch.setattr(st_runtime.Runtime, "exists", classmethod(lambda cls: True))
    monkeypatch.setattr(st_runtime.Runtime, "instance", classmethod(lambda cls: fake))
    monkeypatch.setattr(st_scriptrunner, "get_script_run_ctx",
                        lambda suppress_warning=False: SimpleNamespace(session_id="tab-1"))
    assert runtime.release_session_on_disconnect()
    assert fake.marked == ["tab-1"]


def test_outside_a_server_nothing_is_marked():
    assert runtime.release_session_on_disconnect() is False


def test_app_releases_sessions_on_every_rerun(monkeypatch):
    # app.py's runs counted through the function it imports: one call per run, the first and a rerun.
    calls = []
    monkeypatch.setattr(runtime, "release_session_on_disconnect", lambda: calls.append("run") or False)
    monkeypatch.setattr(runtime, "configure_runtime", lambda: None)  # no housekeeping thread here
    at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "app.py"), default_timeout=60)
    at.run()
    at.run()
    assert not at.exception and calls == ["run", "run"]


def _empty_server(monkeypatch, connected):
    """housekeeping() with a fake clock, ``connected()`` tabs, and the cache clears recorded."""
    import streamlit as st

    clock, cleared = {"now": 1000.0}, []
    monkeypatch.setattr(runtime.time, "monotonic", lambda: clock["now"])
    monkeypatch.setattr(runtime, "connected_sessions", connected)
    monkeypatch.setattr(runtime, "_empty_since", None)
    monkeypatch.setattr(runtime, "_caches_released", False)
    monkeypatch.setattr(runtime, "_malloc_trim", lambda: None)
    monkeypatch.setattr(st.cache_data, "clear", lambda: cleared.append("data"))
    monkeypatch.setattr(st.cache_resource, "clear", lambda: cleared.append("resource"))
    return clock, cleared


def test_the_caches_are_released_once_nobody_has_been_connected_for_a_while(monkeypatch):
    clock, cleared = _empty_server(monkeypatch, lambda: 0)
    runtime.housekeeping()  # the last tab has just gone
    clock["now"] += runtime.EMPTY_SECONDS - 1
    runtime.housekeeping()
    assert cleared == []  # a student reloading a tab keeps the class's results
    clock["now"] += 2
    runtime.housekeeping()
    assert cleared == ["data", "resource"]
    clock["now"] += 10 * runtime.EMPTY_SECONDS
    runtime.housekeeping()
    assert cleared == ["data", "resource"]  # once: nothing new was cached meanwhile


def test_the_caches_stay_while_a_tab_is_connected_and_outside_a_server(monkeypatch):
    for count in (3, None):  # a class; a script or test without a server
        clock, cleared = _empty_server(monkeypatch, lambda count=count: count)
        for _ in range(5):
            runtime.housekeeping()
            clock["now"] += runtime.EMPTY_SECONDS
        assert cleared == []
