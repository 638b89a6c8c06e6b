"""The server's process-wide settings: torch threads, a frozen start-up heap, housekeeping."""

import gc

import torch

from gradlab.ui import runtime


def test_configure_runtime_limits_torch_and_freezes_the_heap():
    runtime.configure_runtime()
    assert torch.get_num_threads() == runtime.TORCH_THREADS
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
