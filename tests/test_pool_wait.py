"""WorkerPool._wait on an injected clock: each limit still ends the call at its mark, and the
waiting caller wakes every POLL_SECONDS, not more often, reading the worker's CPU time from /proc
only as a CPU limit comes near (no processes: a fake worker whose CPU time is the clock's).

A caller that polled its worker every few ms (or read /proc at every wake-up) held several ms of
the server's CPU per second it waited; these tests count the wake-ups and readings per second of
the injected clock, so they fail on such a wait whatever the machine's speed.
"""

from __future__ import annotations

import math

import pytest

import gradlab.server.pool as pool_module
from gradlab.errors import LimitError
from gradlab.server.deadline import WALL_CLOCK_FACTOR
from gradlab.server.lanes import LONG, SHORT, Call
from gradlab.server.pool import POLL_SECONDS, Superseded, WorkerPool

MAX_POLLS = 100_000  # a wait that polls without letting the clock move is stopped here, and fails


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


class FakeConn:
    """A worker's pipe: poll(timeout) lets the clock move by timeout, or to the reply's moment."""

    def __init__(self, clock: Clock, reply_at: float | None = None) -> None:
        self.clock, self.reply_at, self.polls = clock, reply_at, 0

    def poll(self, timeout: float) -> bool:
        self.polls += 1
        assert self.polls < MAX_POLLS, "the wait polls without waiting"
        assert timeout >= 0
        if self.reply_at is not None and self.clock.t + timeout >= self.reply_at:
            self.clock.t = max(self.clock.t, self.reply_at)
            return True
        self.clock.t += timeout
        return False

    def recv(self):
        return ("ok", "the answer")


class FakeProcess:
    pid, exitcode = None, None

    def is_alive(self) -> bool:
        return True


class FakeWorker:
    """Computes ``rate`` CPU seconds per second of the clock; counts its /proc readings."""

    def __init__(self, clock: Clock, rate: float, lane: str = LONG, reply_at: float | None = None) -> None:
        self.clock, self.rate = clock, rate
        self.conn, self.process = FakeConn(clock, reply_at), FakeProcess()
        self.call, self.long = Call("tab", lane=lane), False
        self.cpu_reads = self.rss_reads = 0

    def cpu_seconds(self) -> float:
        self.cpu_reads += 1
        return self.rate * self.clock.t

    def rss_mb(self) -> float:
        self.rss_reads += 1
        return 100.0

    def lower_priority(self) -> None:
        self.long = True


@pytest.fixture
def clock(monkeypatch) -> Clock:
    clock = Clock()
    monkeypatch.setattr(pool_module, "_now", clock)
    monkeypatch.setattr(pool_module, "CORES", 2)  # the CPU time can grow twice as fast as the clock
    return clock


def _wait(pool: WorkerPool, worker: FakeWorker, seconds: float, cancelled=None):
    return pool._wait(worker, seconds, "the work", "LIMITS.request_seconds", "Simplify.", cancelled, None)


def test_a_computing_worker_is_ended_at_its_cpu_limit_after_few_readings(clock):
    worker = FakeWorker(clock, rate=1.0)
    with pytest.raises(LimitError, match="LIMITS.request_seconds"):
        _wait(WorkerPool(1), worker, seconds=10.0)
    assert 10.0 <= clock.t <= 10.0 + 2 * POLL_SECONDS  # the limit ends it at its mark, on the clock
    assert worker.conn.polls <= clock.t / POLL_SECONDS + 2  # one wake-up per POLL_SECONDS, no more
    # the CPU time is read as the mark nears (half the CPU left each time, at 2 cores), not every wake-up
    assert worker.cpu_reads <= math.log2(10.0 / POLL_SECONDS) + 6 < worker.conn.polls / 5
    assert worker.rss_reads <= worker.conn.polls  # memory: once a wake-up


def test_a_worker_that_waits_instead_of_computing_is_ended_by_the_wall_clock(clock):
    worker = FakeWorker(clock, rate=0.0)
    with pytest.raises(LimitError, match="after waiting"):
        _wait(WorkerPool(1), worker, seconds=2.0)
    assert WALL_CLOCK_FACTOR * 2.0 <= clock.t <= WALL_CLOCK_FACTOR * 2.0 + 2 * POLL_SECONDS
    assert worker.conn.polls <= clock.t / POLL_SECONDS + 2
    assert worker.cpu_reads <= clock.t / POLL_SECONDS / 5


def test_the_reply_is_returned_when_it_comes(clock):
    worker = FakeWorker(clock, rate=1.0, reply_at=3.0)
    assert _wait(WorkerPool(1), worker, seconds=30.0) == ("ok", "the answer")
    assert clock.t == 3.0 and worker.conn.polls <= 3.0 / POLL_SECONDS + 2


def test_a_cancelled_call_ends_within_one_wake_up(clock):
    worker = FakeWorker(clock, rate=1.0)
    with pytest.raises(Superseded):
        _wait(WorkerPool(1), worker, seconds=30.0, cancelled=lambda: clock.t >= 1.0)
    assert 1.0 <= clock.t <= 1.0 + POLL_SECONDS + 1e-9


def test_a_short_call_moves_to_the_long_lane_at_its_mark(clock):
    pool = WorkerPool(1, long_call_seconds=1.0)
    worker = FakeWorker(clock, rate=1.0, lane=SHORT, reply_at=5.0)
    pool._lanes.enter(worker.call)
    assert pool._lanes.admit(worker.call)
    moved_at = []
    worker.lower_priority = lambda: moved_at.append(clock.t)  # the move lowers the worker's priority
    assert _wait(pool, worker, seconds=30.0) == ("ok", "the answer")
    assert worker.call.lane == LONG and len(moved_at) == 1
    assert 1.0 <= moved_at[0] <= 1.0 + 2 * POLL_SECONDS


def test_a_warm_worker_is_kept_idle_and_a_fresh_one_ended_when_too_many_wait():
    """A worker that answered calls has warm caches; one started to replace a long call's worker has
    none (its first cheap call cost ~1 s more): over the pool's size the coldest idle one goes, and
    a call takes the warmest."""
    from gradlab.server.pool import WorkerPool
    from gradlab.server.worker_process import WorkerProcess

    pool, ended = WorkerPool(2), []
    pool._replace = ended.append  # noqa: SLF001 - no processes here: record what would be ended
    fresh = [WorkerProcess(None, None, served=0), WorkerProcess(None, None, served=0)]
    warm = WorkerProcess(None, None, served=6)
    pool._idle = list(fresh)  # noqa: SLF001
    pool._release(warm)  # noqa: SLF001
    assert warm in pool._idle and len(pool._idle) == 2 and ended in ([fresh[0]], [fresh[1]])  # noqa: SLF001
    long = WorkerProcess(None, None, served=9, long=True)
    pool._release(long)  # noqa: SLF001 - a long call's worker is ended whatever it served
    assert ended[-1] is long and warm in pool._idle  # noqa: SLF001
