"""A time limit for work that cannot watch the clock itself (sympy, mpmath).

Size limits keep most work small, but symbolic differentiation can still blow
up: each order of ``tan(tan(tan(x)))`` is several times larger than the last.
:func:`run_within` limits such a call: once the working thread has computed for
``seconds`` a watchdog raises an exception *in that thread*
(:func:`gradlab.compat.raise_in_thread`, a CPython internal), which Python delivers
at the next bytecode, and the block ends with a :class:`~gradlab.errors.LimitError`
naming the limit. The thread is only interrupted between Python bytecodes (a single
long C call finishes first).

The limit counts the thread's own CPU time, not the wall clock: on a busy server
(other sessions, other processes) an ordinary request waits for a core without
spending its limit, while a request that really computes for ``seconds`` is stopped
as before. A wall-clock backstop of :data:`WALL_CLOCK_FACTOR` times the limit still
ends work that waits instead of computing. Where the platform has no per-thread CPU
clock, the wall clock is the limit.

Only the thread that entered the block is interrupted: other Streamlit sessions
run on. Do not nest two limits in one thread (the inner one may report the
outer one's expiry as its own).

>>> run_within(1.0, "a quick sum", sum, range(1000))
499500

Work that reports its progress (a full gradient check) is limited differently:
:func:`paced_progress` projects the total time from the pace so far and stops
the work at once, not after the limit has been spent, when the projection is
over it; before its first report such work may forecast its least cost
(``report.forecast``), and is stopped then.
"""

from __future__ import annotations

import threading
import time
from typing import Callable, TypeVar

from gradlab.compat import raise_in_thread
from gradlab.errors import LimitError

__all__ = ["run_within", "time_limit_message", "waited_message", "paced_progress", "PACE_AFTER_SECONDS",
           "set_phase_reporter"]

#: Time measured before the pace is trusted for a projection (the first chunk includes warm-up).
PACE_AFTER_SECONDS = 0.5

T = TypeVar("T")

#: Told when a limited block starts (its limit) and ends (None); set in a pool worker
#: (gradlab.server.worker) so the parent process can kill the worker when a single C
#: call (a big-integer power) holds the interpreter past the limit, which the
#: asynchronous exception below cannot interrupt.
_phase_reporter: Callable[[tuple | None], None] | None = None


def set_phase_reporter(reporter: Callable[[tuple | None], None] | None) -> None:
    """Have :func:`run_within` report ``(what, seconds, limit_name, advice)`` on entry and None on exit."""
    global _phase_reporter
    _phase_reporter = reporter


class _Expired(BaseException):
    """Raised asynchronously in the guarded thread; a BaseException so no ``except Exception``
    inside sympy swallows it. Converted to LimitError before it leaves :func:`run_within`."""


#: How many times its limit a block may last on the wall clock while computing less:
#: a backstop for work that waits (a lock, a sleep) instead of computing.
WALL_CLOCK_FACTOR = 5.0
#: How often the watchdog reads the working thread's CPU clock: the interpreter's own
#: switch interval, the finest grain at which the expiry can be delivered anyway.
POLL_SECONDS = 0.005
#: How often an expiry is raised again while the block goes on after one (see _Watchdog._watch).
REFIRE_SECONDS = 0.05


def _thread_cpu_clock(ident: int) -> Callable[[], float] | None:
    """A function returning the CPU seconds of thread ``ident`` so far, or None where the
    platform cannot read one thread's CPU time (then the wall clock limits the block)."""
    try:
        clock_id = time.pthread_getcpuclockid(ident)
        time.clock_gettime(clock_id)
    except (AttributeError, OSError):
        return None
    return lambda: time.clock_gettime(clock_id)


class _Watchdog:
    """A thread that raises :class:`_Expired` in the thread that created it once that thread
    has computed for ``seconds`` (or waited WALL_CLOCK_FACTOR times as long), unless stopped first."""

    def __init__(self, seconds: float):
        self._lock = threading.Lock()
        self._done = self.fired = self.waited = False
        self._seconds = seconds
        self._thread = threading.get_ident()
        self._cpu = _thread_cpu_clock(self._thread)
        self._stopped = threading.Event()
        self._poller = threading.Thread(target=self._watch, name="gradlab-deadline", daemon=True)

    def start(self) -> None:
        self._wall_start = time.monotonic()
        self._cpu_start = self._cpu() if self._cpu else 0.0
        self._poller.start()

    def _spent(self) -> bool:
        wall = time.monotonic() - self._wall_start
        if self._cpu is None:
            return wall >= self._seconds
        if self._cpu() - self._cpu_start >= self._seconds:
            return True
        # The backstop: the thread waited (for a core, a lock) rather than computed.
        self.waited = wall >= WALL_CLOCK_FACTOR * self._seconds
        return self.waited

    def computed(self) -> float:
        """CPU seconds the guarded thread has computed since the block began."""
        return self._cpu() - self._cpu_start if self._cpu else time.monotonic() - self._wall_start

    def _watch(self) -> None:
        # Sleep most of the limit first: no thread computes faster than the wall clock.
        if self._stopped.wait(self._seconds):
            return
        # A limit shorter than the poll (a test's) is polled at its own scale.
        while not self._stopped.wait(min(POLL_SECONDS, self._seconds)):
            if self._spent():
                self._fire()
                # An expiry delivered where Python swallows exceptions (a gc callback such as
                # hypothesis's, a __del__, a weakref callback) is lost: fire until the block ends.
                while not self._stopped.wait(REFIRE_SECONDS):
                    self._fire()
                return

    def _fire(self) -> None:
        with self._lock:
            if not self._done:
                self.fired = True
                raise_in_thread(self._thread, _Expired)

    def stop(self) -> None:
        """After this returns no expiry can reach the thread: a pending one is raised here.

        A pending expiry is let through rather than withdrawn: on CPython 3.11,
        ``PyThreadState_SetAsyncExc(id, NULL)`` leaves the interpreter's eval
        breaker set for good, which slows every thread of the server and makes
        a thread with a tracer (a debugger, coverage, hypothesis) spin forever.
        """
        with self._lock:
            self._done = True
            self._stopped.set()
        if self.fired:
            _let_expiry_through()


def _stop(watchdog: _Watchdog) -> None:
    """Stop ``watchdog``, taking any expiry it raises meanwhile (it fires again until stopped)."""
    while True:
        try:
            watchdog.stop()
            return
        except _Expired:
            continue


def _let_expiry_through() -> None:
    """A backward jump: where Python checks for, and raises, a pending asynchronous exception."""
    for _ in range(2):
        pass


SIMPLIFY = "Simplify the expression (fewer nested functions or factors)."


def time_limit_message(what: str, seconds: float, limit_name: str = "LIMITS.evaluation_seconds",
                       advice: str = SIMPLIFY) -> str:
    """The sentence shown when ``what`` ran over its time limit."""
    return (
        f"Computing {what} took longer than {seconds:g} s, the longest this server computes one "
        f"request (its setting {limit_name}), so it was stopped: one request cannot slow the "
        f"server for everyone. {advice}"
    )


def waited_message(what: str, seconds: float, computed: float) -> str:
    """The sentence shown when ``what`` was stopped by the wall-clock backstop: it waited
    WALL_CLOCK_FACTOR times its limit while computing less than the limit.

    >>> waited_message("the sweep", 2, 0.4)[:62]
    'Computing the sweep was stopped after waiting 10 s for the mac'
    """
    return (
        f"Computing {what} was stopped after waiting {WALL_CLOCK_FACTOR * seconds:g} s for the machine "
        f"(it computed {computed:.1f} s of its {seconds:g} s limit): the server is busy, so try again "
        f"in a moment."
    )


def run_within(seconds: float, what: str, fn: Callable[..., T], *args,
               limit_name: str = "LIMITS.evaluation_seconds", advice: str = SIMPLIFY, **kwargs) -> T:
    """``fn(*args, **kwargs)``, or a LimitError naming ``what`` once it runs over ``seconds``.

    A function rather than a ``with`` block: the expiry can arrive at any bytecode,
    including the first one of a context manager's ``__exit__``, and only an
    enclosing ``try`` in this frame is sure to catch it.
    """
    watchdog = _Watchdog(seconds)
    reporter = _phase_reporter
    try:
        if reporter is not None:
            reporter((what, seconds, limit_name, advice))
        watchdog.start()
        try:
            return fn(*args, **kwargs)
        finally:
            _stop(watchdog)
            if reporter is not None:
                reporter(None)
    except _Expired:
        _stop(watchdog)  # again: a second expiry may have cut the finally short
        if watchdog.waited:
            raise LimitError(waited_message(what, seconds, watchdog.computed())) from None
        raise LimitError(time_limit_message(what, seconds, limit_name, advice)) from None


def paced_progress(seconds: float, what: str, progress: Callable[[int, int], None] | None = None,
                   *, limit_name: str, advice: str,
                   clock: Callable[[], float] = time.process_time) -> Callable[[int, int], None]:
    """A ``progress(done, total)`` callback that raises LimitError when the work will overrun.

    Time is the process's CPU time (``clock``): the work runs in a process of its own (a
    pool worker, the CLI's child), and a busy machine stretches its wall clock, not its work.

    Once :data:`PACE_AFTER_SECONDS` have passed, the total time is projected
    from the pace so far (``elapsed * total / done``); over ``seconds`` the
    callback raises, which stops the work that called it. ``progress`` is then
    called as before.

    Work whose first report would come late (a gradient check's set-up) can say
    earlier what it will cost at least: ``report.forecast(least_seconds, detail)``
    raises the same way when the time spent plus ``least_seconds`` is over
    ``seconds`` (:mod:`gradlab.check.running.cost_forecast` times one evaluation for it).

    >>> tick = iter([0.0, 1.0, 2.0, 2.5])
    >>> report = paced_progress(10, "a check", limit_name="B", advice="Go smaller.",
    ...                         clock=lambda: next(tick))
    >>> report(50, 100)  # half done in 1 s: 2 s projected
    >>> report(60, 100)  # 60 % in 2 s: 3.3 s projected
    >>> report.forecast(40.0, "40 rows of 1 s")  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    gradlab.errors.LimitError: A check would take at least about 42 s (40 rows of 1 s), over 10 s,
    GradLab's limit (B), so it was stopped: one request cannot slow the server for everyone. Go smaller.
    """
    start = clock()

    def stop(projected: float, how: str, detail: str) -> LimitError:
        return LimitError(
            f"{what[:1].upper()}{what[1:]} would take {how}about {projected:.0f} s ({detail}), over {seconds:g} s, "
            f"GradLab's limit ({limit_name}), so it was stopped: one request cannot slow "
            f"the server for everyone. {advice}")

    def report(done: int, total: int) -> None:
        elapsed = clock() - start
        if done < total and elapsed >= PACE_AFTER_SECONDS:
            projected = elapsed * total / max(done, 1)
            if projected > seconds:
                raise stop(projected, "", f"{done:,} of {total:,} done in {elapsed:.1f} s")
        if progress is not None:
            progress(done, total)

    def forecast(least_seconds: float, detail: str) -> None:
        """Before the work's first report: it says it needs at least ``least_seconds`` more
        (``detail``: from what); over the limit, together with the time spent, it is stopped."""
        projected = clock() - start + least_seconds
        if projected > seconds:
            raise stop(projected, "at least ", detail)

    report.forecast = forecast
    return report
