"""Heavy engine work in pre-started worker processes, each ended (not waited for) over a bound.

The server runs every session in a thread of one process; a thread cannot be
stopped while one C call (a big-integer power, a long sympy printer walk) holds
the interpreter lock, and while it holds it every other session waits too.
:func:`run_bounded` runs a picklable top-level engine function in a worker
process instead, and the calling thread only waits on a pipe:

* over ``seconds`` of wall clock the worker is killed (SIGKILL) and replaced,
  and the caller gets a :class:`~gradlab.errors.LimitError` naming the bound;
* each :func:`~gradlab.server.deadline.run_within` block inside the work is
  enforced the same way (the worker reports the block's bound; a C call that
  holds it past the bound plus :data:`GRACE_SECONDS` ends the worker);
* over ``LIMITS.worker_memory_mb`` of resident memory (read from /proc every
  :data:`POLL_SECONDS`) the worker is killed and the caller told so; a MemoryError
  in the worker (one allocation refused, under that bound or not) is told as that;
* a new call with the same ``session`` key kills that session's call still
  running (a new rerun replaces the old one), as does ``cancelled()`` turning true.

Workers are forked from a fork server that has imported torch, sympy, mpmath
and the engine once (:data:`gradlab.server.worker.PRELOAD`), so a replacement
starts in milliseconds; ``forkserver`` is safe with the server's threads and
torch, where a plain ``fork`` of the server would not be. There are
``LIMITS.pool_workers`` of them (default: one per usable core); a call running longer
than :data:`LONG_CALL_SECONDS` no longer counts, so another starts beside it, up to
twice ``pool_workers`` workers in all; callers beyond that wait.

Over-a-bound sentences end with ``advice``: the caller's, else the function's own
``limit_advice`` (:func:`gradlab.server.heavy_work.advised`), else
:data:`~gradlab.server.deadline.SIMPLIFY`.

>>> run_bounded(sum, [1, 2, 3], seconds=30, what="a small sum")
6
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from gradlab.compat import forkserver_process_class
from gradlab.errors import GradLabError, LimitError
from gradlab.limits import LIMITS
from gradlab.server.deadline import SIMPLIFY, time_limit_message
from gradlab.server.worker import LONG_CALL_NICENESS, PRELOAD, memory_message, refused_memory_message, serve

__all__ = ["run_bounded", "run_in_child", "WorkerPool", "WorkerFailed", "Superseded", "shared_pool",
           "POLL_SECONDS", "GRACE_SECONDS", "LONG_CALL_SECONDS"]

#: How often a waiting caller looks at the clock, the worker's memory and cancellation.
POLL_SECONDS = 0.02
#: Time a bounded block gets past its bound before its worker is killed: the block's own
#: asynchronous exception ends Python-level work at the bound and keeps partial results.
GRACE_SECONDS = 2.0  # a loaded machine delivers the in-worker bound late; past this, the kill
#: A call running longer than this is *long*: its worker drops to LONG_CALL_NICENESS and no
#: longer counts against the pool's size, so a short call beside it starts at once on a
#: worker of its own (up to twice the size in all). Load test, every page, 2 cores: with
#: both workers in 5-30 s full checks, round-off reruns of 0.4 s of work waited 2-7 s.
LONG_CALL_SECONDS = 1.0


class WorkerFailed(RuntimeError):
    """The work raised something other than a GradLabError (a bug): shown generically."""


class Superseded(LimitError):
    """The call was ended because the same session started a newer one."""


@dataclass
class _Worker:
    process: multiprocessing.process.BaseProcess
    conn: object
    session: object = None
    cancelled: bool = False
    long: bool = False  # running a long call, at LONG_CALL_NICENESS (see LONG_CALL_SECONDS)

    def rss_mb(self) -> float:
        try:
            with open(f"/proc/{self.process.pid}/statm") as f:
                return int(f.read().split()[1]) * _PAGE / 2**20
        except (OSError, ValueError, IndexError):
            return 0.0

    def kill(self) -> None:
        try:
            self.process.kill()
        except (OSError, AttributeError, ValueError):
            pass

    def lower_priority(self) -> None:
        try:  # raising one's own process's niceness needs no privilege
            os.setpriority(os.PRIO_PROCESS, self.process.pid, LONG_CALL_NICENESS)
        except (OSError, TypeError):
            pass


_PAGE = os.sysconf("SC_PAGE_SIZE")


@dataclass
class WorkerPool:
    """``size`` worker processes (see the module docstring); ``context``: a multiprocessing start method."""

    size: int
    context: str = "forkserver"
    memory_mb: float = field(default_factory=lambda: LIMITS.worker_memory_mb)

    def __post_init__(self):
        self._ctx = multiprocessing.get_context(self.context)
        self._process = self._ctx.Process
        if self.context == "forkserver":
            self._ctx.set_forkserver_preload(list(PRELOAD))
            self._process = forkserver_process_class()  # children do not re-run the page script
        self._lock = threading.Condition()
        self._idle: list[_Worker] = []
        self._busy: set[int] = set()
        self._starting = 0
        self._long = 0  # busy workers running a long call: they do not count against size
        self._by_session: dict[object, _Worker] = {}

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
                self._lock.notify_all()
            raise
        child.close()
        with self._lock:
            self._starting -= 1
            self._idle.append(_Worker(process, parent))
            self._lock.notify()

    def _replace(self, worker: _Worker) -> None:
        """Kill ``worker`` and start another in the background (the caller does not wait for it)."""
        worker.kill()
        with self._lock:
            self._busy.discard(id(worker))
            self._long -= worker.long
            needed = self._workers() < self.size  # an extra worker beside a long call is not replaced
            self._starting += needed
            self._lock.notify_all()

        def restart() -> None:
            worker.process.join(5)
            worker.conn.close()
            if needed:
                self._add_worker()

        threading.Thread(target=restart, name="gradlab-worker-restart", daemon=True).start()

    def _acquire(self, session, cancelled: Callable[[], bool] | None) -> _Worker:
        with self._lock:
            previous = self._by_session.get(session) if session is not None else None
            if previous is not None:
                previous.cancelled = True  # its caller kills and replaces it on its next poll
            while not self._idle:
                if not self._busy and not self._starting:
                    raise WorkerFailed("no worker process could be started")
                if self._may_add_beside_long_calls():
                    self._starting += 1
                    threading.Thread(target=self._add_worker, name="gradlab-pool-extra", daemon=True).start()
                if cancelled is not None and cancelled():
                    raise Superseded("This request was replaced by a newer one from the same page.")
                self._lock.wait(POLL_SECONDS * 5)
            worker = self._idle.pop()
            self._busy.add(id(worker))
            worker.session, worker.cancelled = session, False
            if session is not None:
                self._by_session[session] = worker
            return worker

    def _workers(self) -> int:
        return len(self._idle) + len(self._busy) + self._starting

    def _may_add_beside_long_calls(self) -> bool:
        """True when fewer than ``size`` workers are busy with short calls or starting, and the
        pool is under twice its size: a new call gets a worker of its own (lock held)."""
        prompt = len(self._busy) - self._long + self._starting
        return prompt < self.size and self._workers() < 2 * self.size

    def _mark_long(self, worker: _Worker) -> None:
        worker.lower_priority()
        with self._lock:
            worker.long = True
            self._long += 1
            self._lock.notify_all()  # a waiting caller may now get a worker beside it

    def _release(self, worker: _Worker) -> None:
        # A long call's worker cannot get its niceness back without privilege, and no more than
        # ``size`` workers are kept for short calls: either is ended (and replaced only while the
        # pool is under its size), so the extras beside long calls go with them.
        with self._lock:
            short_calls_capacity = len(self._idle) + len(self._busy) - self._long - 1  # without this one
            ended = worker.long or short_calls_capacity >= self.size
        if ended:
            self._forget(worker)
            self._replace(worker)
            return
        with self._lock:
            self._busy.discard(id(worker))
            if worker.session is not None and self._by_session.get(worker.session) is worker:
                del self._by_session[worker.session]
            worker.session = None
            self._idle.append(worker)
            self._lock.notify()

    def _forget(self, worker: _Worker) -> None:
        with self._lock:
            if worker.session is not None and self._by_session.get(worker.session) is worker:
                del self._by_session[worker.session]

    # ------------------------------------------------------------ calls

    def run(self, fn: Callable, *args, seconds: float, what: str,
            bound_name: str = "LIMITS.request_seconds", advice: str | None = None, session=None,
            cancelled: Callable[[], bool] | None = None, progress: Callable[[int, int], None] | None = None,
            **kwargs):
        """``fn(*args, **kwargs)`` in a worker, bounded; see :func:`run_bounded`."""
        advice = getattr(fn, "limit_advice", SIMPLIFY) if advice is None else advice
        worker = self._acquire(session, cancelled)
        try:
            worker.conn.send((fn, args, kwargs, progress is not None))
            reply = self._wait(worker, seconds, what, bound_name, advice, cancelled, progress)
        except BaseException:
            self._forget(worker)
            self._replace(worker)
            raise
        self._release(worker)
        return _unpack(reply)

    def _wait(self, worker: _Worker, seconds, what, bound_name, advice, cancelled, progress):
        start = time.monotonic()
        long_at = start + LONG_CALL_SECONDS
        overall = (start + seconds, time_limit_message(what, seconds, bound_name, advice))
        phases: list[tuple[float, str]] = []
        while True:
            deadline, message = min([overall, *phases[-1:]])
            if worker.conn.poll(max(0.0, min(POLL_SECONDS, deadline - time.monotonic()))):
                try:
                    reply = worker.conn.recv()
                except (EOFError, OSError):
                    raise LimitError(_died(what, worker, self.memory_mb)) from None
                if reply[0] == "phase":
                    if reply[1] is None:
                        del phases[-1:]
                    else:
                        p_what, p_seconds, p_bound, p_advice = reply[1]
                        phases.append((time.monotonic() + p_seconds + GRACE_SECONDS,
                                       time_limit_message(p_what, p_seconds, p_bound, p_advice)))
                    continue
                if reply[0] == "progress":
                    progress(reply[1], reply[2])  # may raise (a paced bound): the worker is replaced
                    continue
                if reply[:2] == ("error", "memory"):  # a MemoryError: not the kill at the bound
                    raise LimitError(refused_memory_message(what, reply[2], self.memory_mb))
                return reply
            if time.monotonic() >= deadline:
                raise LimitError(message)
            if not worker.long and time.monotonic() >= long_at:
                self._mark_long(worker)
            rss = worker.rss_mb()
            if rss > self.memory_mb:
                raise LimitError(memory_message(what, rss, self.memory_mb))
            if worker.cancelled or (cancelled is not None and cancelled()):
                raise Superseded("This request was replaced by a newer one from the same page.")
            if not worker.process.is_alive():
                raise LimitError(_died(what, worker, self.memory_mb))

    def close(self) -> None:
        """Kill every worker (tests, and a CLI run that is done)."""
        with self._lock:
            workers, self._idle = self._idle, []
        for worker in workers:
            worker.kill()
            worker.conn.close()


def _died(what: str, worker: _Worker, bound: float) -> str:
    """The sentence for a worker that ended by itself (the kernel's out-of-memory killer)."""
    return (f"Computing {what} ended the process that ran it (exit code {worker.process.exitcode}), "
            f"most likely for want of memory (GradLab's bound is LIMITS.worker_memory_mb = {bound:g} MB "
            f"per request): one request cannot slow the server for everyone. Simplify the expression "
            f"or ask for less.")


def _unpack(reply: tuple):
    if reply[0] == "done":
        return reply[1]
    _, kind, payload = reply
    if isinstance(payload, GradLabError):
        raise payload
    if kind == "limit":
        raise LimitError(payload)
    if kind == "gradlab":
        raise GradLabError(payload)
    raise WorkerFailed(payload)


_shared: WorkerPool | None = None
_shared_lock = threading.Lock()


def shared_pool() -> WorkerPool:
    """The process's pool (``LIMITS.pool_workers`` workers), created and started on first use."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = WorkerPool(int(LIMITS.pool_workers)).start(wait=False)
        return _shared


def run_bounded(fn: Callable, *args, seconds: float, what: str, bound_name: str = "LIMITS.request_seconds",
                advice: str | None = None, session=None, cancelled: Callable[[], bool] | None = None,
                progress: Callable[[int, int], None] | None = None, **kwargs):
    """``fn(*args, **kwargs)`` run in a worker of :func:`shared_pool`, ended over its bounds.

    ``fn`` must be a top-level function and its arguments and result picklable.
    Over ``seconds``, over ``LIMITS.worker_memory_mb`` or over the bound of a
    ``run_within`` block inside, the worker is killed and a LimitError names the
    bound; a newer call with the same ``session`` (or ``cancelled()`` true) ends
    this one with :class:`Superseded`. The sentences end with ``advice`` (default: ``fn``'s
    ``limit_advice``, else SIMPLIFY). A GradLabError from ``fn`` is raised as
    itself; anything else as :class:`WorkerFailed`. ``progress(done, total)``,
    if given, is passed to ``fn`` and called here as the worker reports.
    """
    return shared_pool().run(fn, *args, seconds=seconds, what=what, bound_name=bound_name, advice=advice,
                             session=session, cancelled=cancelled, progress=progress, **kwargs)


def run_in_child(fn: Callable, *args, seconds: float, what: str, bound_name: str = "LIMITS.request_seconds",
                 advice: str | None = None, **kwargs):
    """:func:`run_bounded` in one child forked for this call (the CLI: one call, no threads).

    Forked, so the modules the parent imported cost the child nothing; the
    child is killed when the call ends, in time or not. A process with other
    threads (a notebook, a test suite that ran Streamlit) is not forked: a child
    can deadlock on a lock another thread held at the fork (seen in the suite),
    so there the call runs in this thread, bounded only by the ``run_within``
    blocks inside it.

    >>> run_in_child(max, 3, 4, seconds=30, what="a max")
    4
    """
    if threading.active_count() > 1:
        return fn(*args, **kwargs)
    pool = WorkerPool(1, context="fork").start()
    try:
        return pool.run(fn, *args, seconds=seconds, what=what, bound_name=bound_name, advice=advice, **kwargs)
    finally:
        pool.close()
