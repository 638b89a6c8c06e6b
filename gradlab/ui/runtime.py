"""Process-wide settings for the server, applied once from ``app.py``.

One Streamlit process serves every visitor, each session in its own thread.
Torch's default thread pools would let one visitor's tensor work claim every
core (and two visitors' work fight over them), so the server runs torch ops on
one thread each: a heavy request then slows its own session, not everyone's.

Memory of a closed tab must come back to the process. Streamlit keeps a
disconnected session for a reconnect (``server.disconnectedSessionTTL``) and,
when it evicts one, never shuts it down: the files and download callables that
session registered stay in the media-file manager for the life of the process
(Streamlit 1.67). GradLab's whole view is in the URL, so a reconnect loses
nothing when it starts a fresh session; every session is therefore marked not
resumable, and Streamlit shuts it down (releasing all of it) when its tab goes.
"""

from __future__ import annotations

import ctypes
import gc
import importlib
import logging
import os
import threading
import time

import torch

from gradlab.server.pool import shared_pool
from gradlab.ui.compat import connected_sessions, mark_session_nonresumable

_log = logging.getLogger(__name__)

__all__ = ["configure_runtime", "release_session_on_disconnect", "housekeeping",
           "TORCH_THREADS", "TORCH_INTEROP_THREADS", "CHECK_WORKERS", "COLLECT_EVERY_SECONDS"]

#: Intra-op threads per torch op; the server's parallelism comes from sessions, not ops.
TORCH_THREADS = 1
#: Worker threads of one gradient check on the page (scripts and the CLI default to
#: LIMITS.check_workers, one per core): one visitor's full check keeps to one core, as
#: TORCH_THREADS keeps their tensor ops, so a second visitor is not slowed by it.
CHECK_WORKERS = 1
#: Inter-op threads (torch allows setting this once per process, before any parallel work).
TORCH_INTEROP_THREADS = 1

#: Streamlit's own full gc.collect() after every rerun is off (.streamlit/config.toml,
#: runner.postScriptGC): with torch, sympy and plotly loaded it froze every session for up
#: to a second. Garbage of closed sessions is collected here instead, by a background
#: thread (so memory comes back also when nobody is rerunning): this often under load,
#: where each collection stalls every session for a few tens of milliseconds ...
COLLECT_EVERY_SECONDS = 30.0
#: ... and, once nobody has rerun for IDLE_SECONDS, every IDLE_COLLECT_SECONDS for
#: IDLE_COLLECTIONS rounds: one collection does not hand a class's memory back (a
#: Round-off class, 35 s after the last tab closes: +27 % RSS with a collection every 30 s,
#: +11.6 % with one every 10 s, as much as 70 s of 30 s collections give).
IDLE_SECONDS = 5.0
IDLE_COLLECT_SECONDS = 10.0
IDLE_COLLECTIONS = 3
#: Once no tab has been connected for EMPTY_SECONDS, the results and figures cached for
#: the class (st.cache_data, st.cache_resource) are released, once, and the memory handed
#: back: nobody is left to reuse them, and they hold the process +55-64 % above its
#: pre-class size a minute after the class leaves (load test, every page). The next visitor
#: recomputes their view (the whole view is in the URL).
EMPTY_SECONDS = 20.0
#: How often the background thread looks whether a collection is due.
HOUSEKEEPING_TICK_SECONDS = 2.5
#: glibc malloc arenas for the whole process. glibc gives each new thread its own arena, up
#: to 8 per core, and Streamlit runs every rerun in a fresh thread: memory freed by closed
#: sessions is left scattered over a dozen part-used arenas (load test: RSS +12% after the
#: load, +5% with two arenas; the GIL serialises most allocation anyway).
MALLOC_ARENAS = 2
_M_ARENA_MAX = -8  # mallopt parameter number, from glibc's malloc.h
#: oneDNN (torch's CPU kernels) keeps a compiled kernel per layer shape, 1024 by default;
#: networks of every width a class types fill it, and its native memory is never returned (network
#: engine, 450 random shapes: RSS +25% with 1024, +15% with 16, same speed). Read by oneDNN
#: when it first builds a kernel, so it is set before any page runs.
ONEDNN_KERNEL_CACHE = 16
#: Imported once at start-up, then frozen out of the collector's sight (gc.freeze): the
#: libraries' millions of long-lived objects are never scanned again.
_HEAVY_MODULES = ("sympy", "mpmath", "pandas", "plotly.graph_objects", "gradlab.step_sweep.engine",
                  "gradlab.labs.explorer.figures", "gradlab.check.api", "gradlab.labs.roundoff.engine", "gradlab.labs.network.engine")

_lock = threading.Lock()
_configured = False
_last_collect = time.monotonic()
_last_rerun = time.monotonic()
_idle_collections = 0
_empty_since: float | None = None  # when the last tab went (None: a tab is connected)
_caches_released = False  # released since the last rerun


def configure_runtime() -> None:
    """Limit torch to one intra-op and one inter-op thread; call it on every rerun.

    The intra-op setting is re-applied each time (cheap), so code that changed it
    meanwhile cannot leave the server on every core. The rest is done once per
    process, before any page runs: the inter-op pool, oneDNN's kernel cache,
    glibc's arenas, the frozen start-up heap, the background housekeeper and
    the worker processes of heavy work.
    """
    global _configured, _last_rerun, _idle_collections, _caches_released
    with _lock:
        _last_rerun, _idle_collections = time.monotonic(), 0  # busy again: collect at the pace under load
        _caches_released = False
        if torch.get_num_threads() != TORCH_THREADS:
            torch.set_num_threads(TORCH_THREADS)
        if _configured:
            return
        os.environ.setdefault("ONEDNN_PRIMITIVE_CACHE_CAPACITY", str(ONEDNN_KERNEL_CACHE))
        try:
            torch.set_num_interop_threads(TORCH_INTEROP_THREADS)
        except RuntimeError:
            pass  # already set, or parallel work already started: it can only be set once
        _limit_malloc_arenas()
        _freeze_startup_heap()
        _start_housekeeper()
        shared_pool()  # the worker processes start now, in the background (gradlab.server.pool)
        _configured = True


def _limit_malloc_arenas() -> bool:
    """Cap glibc's arenas (effective for arenas not yet created: glibc fixes its limit
    only once eight exist); False where there is no glibc."""
    libc = _glibc()
    return bool(libc and libc.mallopt(_M_ARENA_MAX, MALLOC_ARENAS))


def _glibc():
    """glibc for mallopt and malloc_trim, or None elsewhere (musl, macOS)."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None
    except OSError:
        return None


def _freeze_startup_heap() -> None:
    for name in _HEAVY_MODULES:
        importlib.import_module(name)
    gc.collect()
    gc.freeze()


def release_session_on_disconnect() -> bool:
    """Have Streamlit shut this session down when its tab disconnects; call it on every rerun.

    Returns False outside a Streamlit server (a bare script or a test without a
    runtime). Streamlit has no public API for it: see
    :func:`gradlab.ui.compat.mark_session_nonresumable`.
    """
    return mark_session_nonresumable()


def _start_housekeeper() -> None:
    def loop() -> None:
        while True:
            time.sleep(HOUSEKEEPING_TICK_SECONDS)
            _housekeeping_round()

    threading.Thread(target=loop, name="gradlab-housekeeping", daemon=True).start()


def _housekeeping_round() -> None:
    try:
        housekeeping()
    except Exception:  # one failed round must not end housekeeping for the server's life
        _log.exception("housekeeping round failed")


def housekeeping() -> bool:
    """Collect garbage and hand freed memory back to the OS when due; True if it did.

    Due every COLLECT_EVERY_SECONDS while sessions rerun, and every
    IDLE_COLLECT_SECONDS for the first IDLE_COLLECTIONS rounds once the server
    is idle (see those constants). Cheap because the start-up heap is frozen (a
    full collection of everything else takes a few tens of milliseconds under
    load); without it, memory freed by closed sessions would stay with the
    process (glibc keeps freed arenas unless trimmed).
    """
    global _last_collect, _idle_collections
    now = time.monotonic()
    if _release_caches_when_empty(now):
        return True
    idle = now - _last_rerun >= IDLE_SECONDS and _idle_collections < IDLE_COLLECTIONS
    every = IDLE_COLLECT_SECONDS if idle else COLLECT_EVERY_SECONDS
    if now - _last_collect < every or not _lock.acquire(blocking=False):
        return False
    try:
        _last_collect = now
        _idle_collections += idle
        gc.collect()
        _malloc_trim()
    finally:
        _lock.release()
    return True


def _release_caches_when_empty(now: float) -> bool:
    """Once no tab has been connected for EMPTY_SECONDS: clear the caches, collect, trim; True if it did."""
    global _empty_since, _caches_released, _last_collect
    if connected_sessions() != 0:  # someone is here (or this is no server): keep what they use
        _empty_since = None
        return False
    if _empty_since is None:
        _empty_since = now
    if _caches_released or now - _empty_since < EMPTY_SECONDS or not _lock.acquire(blocking=False):
        return False
    try:
        import streamlit as st

        st.cache_data.clear()
        st.cache_resource.clear()
        _caches_released, _last_collect = True, now
        gc.collect()
        _malloc_trim()
    finally:
        _lock.release()
    return True


def _malloc_trim() -> None:
    libc = _glibc()
    if libc:  # elsewhere there is nothing to trim
        libc.malloc_trim(0)
