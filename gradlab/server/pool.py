"""Heavy engine work in pre-started worker processes, each ended (not waited for) over a limit.

The server runs every session in a thread of one process; a thread cannot be
stopped while one C call (a big-integer power, a long sympy printer walk) holds
the interpreter lock, and while it holds it every other session waits too.
:func:`run_limited` runs a picklable top-level engine function in a worker
process instead, and the calling thread only waits on a pipe:

* once the worker has computed for ``seconds`` (its CPU time, read from /proc: a
  busy machine stretches the wall clock, not the work), or waited
  :data:`~gradlab.server.deadline.WALL_CLOCK_FACTOR` times as long on the wall
  clock, it is killed (SIGKILL) and replaced, and the caller gets a
  :class:`~gradlab.errors.LimitError` naming the limit;
* each :func:`~gradlab.server.deadline.run_within` block inside the work is
  enforced the same way (the worker reports the block's limit; a C call that
  holds it past the limit plus :data:`GRACE_SECONDS` ends the worker);
* over ``LIMITS.worker_memory_mb`` of resident memory (read from /proc every
  :data:`POLL_SECONDS`) the worker is killed and the caller told so; a MemoryError
  in the worker (one allocation refused, under that limit or not) is told as that;
* a new call with the same ``session`` key kills that session's call still
  running or waiting (a new rerun replaces the old one), as does ``cancelled()``
  turning true (Streamlit's pending rerun or stop: also when the tab that made
  the call disconnects, as a reload does).

The caller sleeps on the worker's pipe, waking every :data:`POLL_SECONDS` (cancellation,
memory); the worker's CPU time is read only once a CPU limit could have been reached.

Workers are forked from a fork server that has imported torch, sympy, mpmath
and the engine once (:data:`gradlab.server.worker.PRELOAD`), so a replacement
starts in milliseconds; ``forkserver`` is safe with the server's threads and
torch, where a plain ``fork`` of the server would not be. ``LIMITS.pool_workers``
of them (default: one per usable core) wait for work. Calls run in two lanes of
``pool_workers`` calls each (:mod:`gradlab.server.lanes`), so at most twice
``pool_workers`` workers in all: a short lane that every call starts in and leaves
once it has computed :data:`LONG_CALL_SECONDS` (or :data:`SHORT_TURN_SECONDS` while
another call waits for it: a cheap call never waits behind heavy work), and a long
lane, at :data:`~gradlab.server.worker.LONG_CALL_NICENESS`, whose calls take turns
(one per visitor, fewest-running address first: :mod:`gradlab.server.lanes`).

Over-the-limit sentences end with ``advice``: the caller's, else the function's own
``limit_advice`` (:func:`gradlab.server.worker_entries.worker_entry`), else
:data:`~gradlab.server.deadline.SIMPLIFY`.

>>> run_limited(sum, [1, 2, 3], seconds=30, what="a small sum")
6
"""

from __future__ import annotations

import multiprocessing
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from gradlab.compat import forkserver_process_class
from gradlab.errors import LimitError
from gradlab.limits import LIMITS
from gradlab.server.deadline import SIMPLIFY, WALL_CLOCK_FACTOR, time_limit_message, waited_message
from gradlab.server.lanes import (LONG, LONG_CALL_SECONDS, SHORT, SHORT_TURN_SECONDS, Call, Lanes,
                                  busy_message, call_key)
from gradlab.server.worker import (PRELOAD, WorkerFailed, died_message, memory_message, refused_memory_message,
                                   serve, unpack_reply)
from gradlab.server.worker_process import CORES, WorkerProcess, coldest, readiness, warmest

__all__ = ["run_limited", "run_in_child", "WorkerPool", "WorkerFailed", "Superseded", "shared_pool",
           "POLL_SECONDS", "GRACE_SECONDS", "LONG_CALL_SECONDS", "SHORT_TURN_SECONDS"]

#: How often a waiting caller looks at cancellation (a newer call of its session, a pending rerun
#: or stop of its script run) and at the worker's memory; a message from the worker wakes it at once.
POLL_SECONDS = 0.1
#: The waiting caller's clock (tests inject one: the waits are counted, not timed).
_now = time.monotonic
#: Time a limited block gets past its limit before its worker is killed: the block's own
#: asynchronous exception ends Python-level work at the limit and keeps partial results.
GRACE_SECONDS = 2.0  # a loaded machine delivers the in-worker limit late; past this, the kill


class Superseded(LimitError):
    """The call was ended because the same session started a newer one."""

class _Restart(Exception):
    """A short call overran while the long lane was full: its worker is ended, it waits its turn."""


@dataclass
class WorkerPool:
    """``size`` worker processes (see the module docstring); ``context``: a multiprocessing start method."""
    size: int
    context: str = "forkserver"
    memory_mb: float = field(default_factory=lambda: LIMITS.worker_memory_mb)
    long_call_seconds: float = LONG_CALL_SECONDS  # (tests set it apart from SHORT_TURN_SECONDS)

    def __post_init__(self):
        self._ctx = multiprocessing.get_context(self.context)
        self._process = self._ctx.Process
        if self.context == "forkserver":
            self._ctx.set_forkserver_preload(list(PRELOAD))
            self._process = forkserver_process_class()  # children do not re-run the page script
        self._lock = threading.Condition()
        self._idle: list[WorkerProcess] = []
        self._busy: set[int] = set()
        self._starting = 0
        self._wanted = 0  # callers holding a lane's slot and waiting for a worker process
        self._start_failed = False  # the last worker start raised: callers are told, not kept waiting
        self._lanes = Lanes(max(1, int(self.size)))

    # ------------------------------------------------------------ workers

    def start(self, wait: bool = True) -> "WorkerPool":
        """Start the missing workers (imports are paid here, not by the first visitor).

        ``wait=False`` starts them in a background thread: the fork server imports
        torch and sympy first (seconds), and callers meanwhile wait in :meth:`run`.
        """
        with self._lock:
            missing = max(self.size - len(self._idle) - len(self._busy) - self._starting, 0)
            self._starting += missing

        def add_all() -> None:
            for _ in range(missing):
                self._add_worker()

        if wait:
            add_all()
        else:
            threading.Thread(target=add_all, name="gradlab-pool-start", daemon=True).start()
        return self

    def _add_worker(self) -> None:
        parent, child = self._ctx.Pipe()
        # A forked child has the parent's modules already; a fork-server child imports PRELOAD.
        process = self._process(target=serve, args=(child, self.context != "fork"), daemon=True,
                                name="gradlab-worker")
        try:
            process.start()
        except BaseException:
            with self._lock:  # callers waiting for it are told (_acquire), not left waiting
                self._starting -= 1
                self._start_failed = True
                self._lock.notify_all()
            raise
        child.close()
        with self._lock:
            self._starting -= 1
            self._start_failed = False
            self._idle.append(WorkerProcess(process, parent))
            self._lock.notify_all()

    def _replace(self, worker: WorkerProcess) -> None:
        """Kill ``worker`` and start another in the background (the caller does not wait for it)."""
        worker.kill()
        with self._lock:
            self._busy.discard(id(worker))
            needed = self._workers() < self.size  # workers for the lanes beyond size start on demand
            self._starting += needed
            self._lock.notify_all()

        def restart() -> None:
            worker.process.join(5)
            worker.conn.close()
            if needed:
                self._add_worker()

        threading.Thread(target=restart, name="gradlab-worker-restart", daemon=True).start()

    def _acquire(self, call: Call, cancelled, seconds: float, what: str, limit_name: str) -> WorkerProcess:
        """Wait for ``call``'s turn in its lane, then for a worker process (started if none is idle)."""
        waited_from = time.monotonic()
        with self._lock:
            while not self._lanes.admit(call):
                self._still_wanted(call, cancelled)
                if time.monotonic() - waited_from > seconds:
                    raise LimitError(busy_message(what, seconds, limit_name, self._lanes.slots, call.lane))
                self._lock.wait(POLL_SECONDS)
            self._wanted += 1
            try:
                while not self._idle:
                    if self._start_failed and not self._starting:
                        raise WorkerFailed("no worker process could be started")
                    if self._starting < self._wanted:
                        self._starting += 1
                        threading.Thread(target=self._add_worker, name="gradlab-pool-extra", daemon=True).start()
                    self._still_wanted(call, cancelled)
                    self._lock.wait(POLL_SECONDS)
            finally:
                self._wanted -= 1
            worker = self._idle.pop(warmest(self._idle))
            self._busy.add(id(worker))
            worker.call = call
            shared = self._lanes.shares_address(call)  # its client's second call: behind others' first
        if call.lane == LONG or shared:
            worker.lower_priority()
        return worker

    @staticmethod
    def _still_wanted(call: Call, cancelled) -> None:
        if call.cancelled or (cancelled is not None and cancelled()):
            raise Superseded("This request was replaced by a newer one from the same page.")

    def _workers(self) -> int:
        return len(self._idle) + len(self._busy) + self._starting

    def _leave_short_lane(self, worker: WorkerProcess, started: float, computed: float) -> bool:
        """Once the call on ``worker`` has computed long_call_seconds (or waited WALL_CLOCK_FACTOR
        times that), or SHORT_TURN_SECONDS while another call waits for the short lane, it goes on
        in the long lane (True) or is ended to wait its turn there (raises _Restart); else it
        stays (False). CPU seconds: on a busy machine a cheap call waits for a core, and keeps
        its place for it."""
        long = (computed >= self.long_call_seconds
                or _now() - started >= WALL_CLOCK_FACTOR * self.long_call_seconds)
        if not long and computed < SHORT_TURN_SECONDS:
            return False
        with self._lock:
            if not long and not self._lanes.contended(SHORT):
                return False
            kept = self._lanes.overran(worker.call, remember=long)
            self._lock.notify_all()  # the short slot it held is free
        if not kept:
            raise _Restart
        worker.lower_priority()
        return True

    def _release(self, worker: WorkerProcess) -> None:
        # A long call's worker cannot get its niceness back without privilege, and at most ``size``
        # workers wait idle: the rest are ended (replaced only while the pool is under its size).
        with self._lock:
            self._busy.discard(id(worker))
            worker.call = None
            if not worker.long:  # idle now; over size, the coldest idle worker goes instead of a warm one
                worker.served += 1
                self._idle.append(worker)
                worker = self._idle.pop(coldest(self._idle)) if len(self._idle) > self.size else None
            self._lock.notify_all()
        if worker is not None:
            self._replace(worker)

    def snapshot(self) -> dict[str, object]:
        """What the pool holds now: the sessions running in each lane, how many wait, the workers.

        >>> WorkerPool(1).snapshot()
        {'short': [], 'long': [], 'waiting short': 0, 'waiting long': 0, 'workers': 0}
        """
        with self._lock:
            lanes = self._lanes
            return {SHORT: lanes.sessions(SHORT), LONG: lanes.sessions(LONG),
                    "waiting short": len(lanes.waiting[SHORT]), "waiting long": len(lanes.waiting[LONG]),
                    "workers": self._workers()}

    # ------------------------------------------------------------ calls

    def run(self, fn: Callable, *args, seconds: float, what: str,
            limit_name: str = "LIMITS.request_seconds", advice: str | None = None, session=None,
            cancelled: Callable[[], bool] | None = None, progress: Callable[[int, int], None] | None = None,
            long: bool = False, visitor=None, **kwargs):
        """``fn(*args, **kwargs)`` in a worker, within its limits; see :func:`run_limited`."""
        advice = getattr(fn, "limit_advice", SIMPLIFY) if advice is None else advice
        call = Call(session, LONG if long else SHORT, call_key(fn, args, kwargs), visitor=visitor)
        with self._lock:
            self._lanes.enter(call)
        try:
            while True:
                worker = self._acquire(call, cancelled, seconds, what, limit_name)
                try:
                    worker.conn.send((fn, args, kwargs, progress is not None))
                    reply = self._wait(worker, seconds, what, limit_name, advice, cancelled, progress)
                except _Restart:
                    self._replace(worker)
                    continue
                except BaseException:
                    self._replace(worker)
                    raise
                self._release(worker)
                return unpack_reply(reply)
        finally:
            with self._lock:
                self._lanes.leave(call)
                self._lock.notify_all()

    def _wait(self, worker: WorkerProcess, seconds, what, limit_name, advice, cancelled, progress):
        # Limits are CPU seconds of the worker since the call began (computing, not waiting
        # for a core); the wall clock only ends a call that waits WALL_CLOCK_FACTOR x longer.
        # Its CPU time grows at most CORES s a second: read only once the nearest CPU mark could have
        # been reached (reading /proc thrice at every 20 ms wake-up costs ~7 ms of CPU a second waited).
        ready = readiness(worker.conn)
        start, cpu_start = _now(), worker.cpu_seconds()
        short = worker.call.lane == SHORT
        overall = (seconds, time_limit_message(what, seconds, limit_name, advice))
        phases: list[tuple[float, str]] = []
        computed, cpu_due, wall_end = 0.0, start, start + WALL_CLOCK_FACTOR * seconds
        while True:
            deadline, message = min([overall, *phases[-1:]])
            now = _now()
            if ready(max(0.0, min(POLL_SECONDS, wall_end - now))):  # CPU marks are seen at a wake-up
                try:
                    reply = worker.conn.recv()
                except (EOFError, OSError):
                    raise LimitError(died_message(what, worker.process.exitcode, self.memory_mb)) from None
                if reply[0] == "phase":
                    if reply[1] is None:
                        del phases[-1:]
                    else:
                        p_what, p_seconds, p_limit, p_advice = reply[1]
                        phases.append((worker.cpu_seconds() - cpu_start + p_seconds + GRACE_SECONDS,
                                       time_limit_message(p_what, p_seconds, p_limit, p_advice)))
                    cpu_due = _now()  # a new limit: when it can expire is worked out afresh
                    continue
                if reply[0] == "progress":
                    progress(reply[1], reply[2])  # may raise (a paced limit): the worker is replaced
                    continue
                if reply[:2] == ("error", "memory"):  # a MemoryError: not the kill at the limit
                    raise LimitError(refused_memory_message(what, reply[2], self.memory_mb))
                return reply
            now = _now()
            self._still_wanted(worker.call, cancelled)
            turn_over = short and (computed >= SHORT_TURN_SECONDS and self._lanes.contended(SHORT)
                                   or now - start >= WALL_CLOCK_FACTOR * self.long_call_seconds)
            if now >= cpu_due or turn_over:
                if not worker.process.is_alive():  # (its pipe's end tells it first: recv raises)
                    raise LimitError(died_message(what, worker.process.exitcode, self.memory_mb))
                computed = worker.cpu_seconds() - cpu_start
                if computed >= deadline:
                    raise LimitError(message)
                if short:
                    short = not self._leave_short_lane(worker, start, computed)
                mark = min(deadline, (SHORT_TURN_SECONDS if computed < SHORT_TURN_SECONDS
                                      else self.long_call_seconds) if short else deadline)
                cpu_due = now + max(POLL_SECONDS, (mark - computed) / CORES)
            if now >= wall_end:  # waited, not computed
                raise LimitError(waited_message(what, seconds, worker.cpu_seconds() - cpu_start))
            rss = worker.rss_mb()
            if rss > self.memory_mb:
                raise LimitError(memory_message(what, rss, self.memory_mb))

    def close(self) -> None:
        """Kill every worker (tests, and a CLI run that is done)."""
        with self._lock:
            workers, self._idle = self._idle, []
        for worker in workers:
            worker.kill()
            worker.conn.close()


_shared: WorkerPool | None = None
_shared_lock = threading.Lock()


def shared_pool() -> WorkerPool:
    """The process's pool (``LIMITS.pool_workers`` workers), created and started on first use."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = WorkerPool(int(LIMITS.pool_workers)).start(wait=False)
        return _shared


def run_limited(fn: Callable, *args, seconds: float, what: str, limit_name: str = "LIMITS.request_seconds",
                advice: str | None = None, session=None, cancelled: Callable[[], bool] | None = None,
                progress: Callable[[int, int], None] | None = None, long: bool = False, visitor=None, **kwargs):
    """``fn(*args, **kwargs)`` run in a worker of :func:`shared_pool`, ended over its limits.

    ``fn`` must be a top-level function and its arguments and result picklable.
    Over ``seconds``, over ``LIMITS.worker_memory_mb`` or over the limit of a
    ``run_within`` block inside, the worker is killed and a LimitError names the
    limit; a newer call with the same ``session`` (or ``cancelled()`` true) ends
    this one with :class:`Superseded`. The sentences end with ``advice`` (default: ``fn``'s
    ``limit_advice``, else SIMPLIFY). A GradLabError from ``fn`` is raised as
    itself; anything else as :class:`WorkerFailed`. ``progress(done, total)``,
    if given, is passed to ``fn`` and called here as the worker reports.
    ``long=True`` (the caller's forecast) starts the call in the long lane, not the
    short one (:mod:`gradlab.server.lanes`); ``visitor`` is who asked (lanes count visitors, not tabs).
    """
    return shared_pool().run(fn, *args, seconds=seconds, what=what, limit_name=limit_name, advice=advice,
                             session=session, cancelled=cancelled, progress=progress, long=long,
                             visitor=visitor, **kwargs)


def run_in_child(fn: Callable, *args, seconds: float, what: str, limit_name: str = "LIMITS.request_seconds",
                 advice: str | None = None, **kwargs):
    """:func:`run_limited` in one child forked for this call (the CLI: one call, no threads).

    Forked, so the modules the parent imported cost the child nothing; the
    child is killed when the call ends, in time or not. A process with other
    threads (a notebook, a test suite that ran Streamlit) is not forked: a child
    can deadlock on a lock another thread held at the fork,
    so there the call runs in this thread, limited only by the ``run_within``
    blocks inside it.

    >>> run_in_child(max, 3, 4, seconds=30, what="a max")
    4
    """
    if threading.active_count() > 1:
        return fn(*args, **kwargs)
    # One call and no other visitor to protect: it never moves to the niced long lane (behind
    # other processes a niced child starves until the wall-clock backstop ends it).
    pool = WorkerPool(1, context="fork", long_call_seconds=float("inf")).start()
    try:
        return pool.run(fn, *args, seconds=seconds, what=what, limit_name=limit_name, advice=advice, **kwargs)
    finally:
        pool.close()
