"""gradlab.server.pool: heavy work in worker processes, ended (not waited for) at each bound.

The probes (tests/pool_probes.py) include a single C call that holds the
interpreter for minutes (a big-integer power) and steady allocation: the two
things a thread cannot be interrupted in. Time asserts carry generous slack
for a loaded 2-core machine; what they exclude is waiting for the work to finish.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import pool_probes as probes
from gradlab.errors import GradLabError, LimitError
from gradlab.numerics.expression_syntax import ExpressionError
from gradlab.server.pool import GRACE_SECONDS, Superseded, WorkerFailed, WorkerPool, run_in_child

REPO_ROOT = Path(__file__).resolve().parents[1]
SLACK = 3.0  # seconds past a bound a loaded machine may take to notice, kill and report


@pytest.fixture(scope="module")
def pool():
    pool = WorkerPool(2).start()
    yield pool
    pool.close()


def _timed(fn, *args, **kwargs):
    start = time.monotonic()
    try:
        return fn(*args, **kwargs), time.monotonic() - start
    except BaseException as err:  # noqa: BLE001 - returned for the test to inspect
        return err, time.monotonic() - start


def test_results_and_errors_come_back_as_themselves(pool):
    assert pool.run(probes.echo, {"a": [1, 2]}, seconds=30, what="an echo") == {"a": [1, 2]}
    with pytest.raises(ExpressionError, match="a sentence"):
        pool.run(probes.raise_gradlab, "a sentence", seconds=30, what="a refusal")
    with pytest.raises(WorkerFailed, match="KeyError") as info:
        pool.run(probes.raise_bug, seconds=30, what="a bug")
    assert not isinstance(info.value, GradLabError)  # pages show it generically


def test_a_worker_yields_the_cores_to_the_server_s_own_reruns(pool):
    from gradlab.server.worker import WORKER_NICENESS

    assert WORKER_NICENESS > 0
    assert pool.run(probes.niceness, seconds=30, what="a probe") >= WORKER_NICENESS > os.nice(0)


def test_a_c_call_past_the_bound_is_ended_and_the_worker_replaced(pool):
    err, elapsed = _timed(pool.run, probes.c_power, seconds=1.0, what="a big power",
                          bound_name="LIMITS.request_seconds")
    assert isinstance(err, LimitError), err
    assert "longer than 1 s" in str(err) and "LIMITS.request_seconds" in str(err)
    assert elapsed < 1.0 + SLACK
    assert pool.run(probes.echo, 7, seconds=30, what="an echo") == 7  # a fresh worker took its place


def test_a_run_within_block_is_enforced_by_the_parent(pool):
    err, elapsed = _timed(pool.run, probes.c_power_in_block, 0.5, seconds=60, what="the work")
    assert isinstance(err, LimitError), err
    assert "a big power took longer than 0.5 s" in str(err) and "LIMITS.evaluation_seconds" in str(err)
    assert elapsed < 0.5 + GRACE_SECONDS + SLACK  # not the call's 60 s


def test_memory_past_the_bound_is_ended_with_a_sentence():
    pool = WorkerPool(1, memory_mb=0).start()
    try:
        base = max(w.rss_mb() for w in pool._idle)
        pool.memory_mb = base + 300
        err, elapsed = _timed(pool.run, probes.allocate, seconds=60, what="the allocation")
    finally:
        pool.close()
    assert isinstance(err, LimitError), err
    assert "more than" in str(err) and "LIMITS.worker_memory_mb" in str(err)
    assert elapsed < 20


def test_a_newer_call_of_the_same_session_ends_the_older_one(pool):
    outcome = {}

    def older():
        outcome["older"] = _timed(pool.run, probes.sleep, 60, seconds=120, what="the older", session="s1")

    thread = threading.Thread(target=older)
    thread.start()
    time.sleep(1.0)
    assert pool.run(probes.echo, "newer", seconds=30, what="the newer", session="s1") == "newer"
    thread.join(30)
    err, elapsed = outcome["older"]
    assert isinstance(err, Superseded), err
    assert elapsed < 1.0 + SLACK


def test_cancelled_ends_the_call(pool):
    deadline = time.monotonic() + 0.5
    err, elapsed = _timed(pool.run, probes.sleep, 60, seconds=120, what="the work",
                          cancelled=lambda: time.monotonic() > deadline)
    assert isinstance(err, Superseded) and elapsed < 0.5 + SLACK


def test_progress_is_relayed_and_can_stop_the_work(pool):
    seen = []
    assert pool.run(probes.counted, 5, seconds=30, what="counting", progress=lambda d, t: seen.append((d, t))) == 5
    assert seen == [(i, 5) for i in range(1, 6)]

    def stop_at_3(done, total):
        if done == 3:
            raise LimitError("stopped at 3")

    with pytest.raises(LimitError, match="stopped at 3"):
        pool.run(probes.counted, 100, seconds=30, what="counting", progress=stop_at_3)


def test_another_call_stays_fast_while_one_worker_is_stuck_in_c(pool):
    """The server's other sessions: one visitor's runaway C call does not hold them up."""
    stuck = threading.Thread(target=_timed, args=(pool.run, probes.c_power),
                             kwargs={"seconds": 8, "what": "a big power"})
    stuck.start()
    time.sleep(0.5)
    latencies = [_timed(pool.run, probes.echo, i, seconds=30, what="an echo")[1] for i in range(10)]
    stuck.join(30)
    assert sorted(latencies)[5] < 0.5, latencies


def test_run_in_child_is_bounded_like_the_pool():
    """In a fresh single-threaded process, as the CLI is (this suite's process has threads)."""
    script = ("import time, pool_probes\n"
              "from gradlab.server.pool import run_in_child\n"
              "from gradlab.errors import LimitError\n"
              "assert run_in_child(pool_probes.echo, 5, seconds=30, what='an echo') == 5\n"
              "start = time.monotonic()\n"
              "try:\n"
              "    run_in_child(pool_probes.c_power, seconds=1.0, what='a big power')\n"
              "except LimitError as err:\n"
              "    print(round(time.monotonic() - start, 2), err)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), str(REPO_ROOT / "tests")])}
    run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    elapsed, message = run.stdout.split(" ", 1)
    assert float(elapsed) < 1.0 + SLACK and "a big power took longer than 1 s" in message, run.stdout


def test_long_calls_run_behind_and_leave_room_for_short_ones():
    """Every worker busy with a long call: a short call still starts at once, on a worker of
    its own, and the long calls run at LONG_CALL_NICENESS; once they end, the pool is back
    to its size at WORKER_NICENESS."""
    from gradlab.server.pool import LONG_CALL_SECONDS
    from gradlab.server.worker import LONG_CALL_NICENESS, WORKER_NICENESS

    pool = WorkerPool(1).start()
    results = []

    def long_call():
        results.append(pool.run(probes.sleep_then_niceness, LONG_CALL_SECONDS + 3, seconds=30, what="a sleep"))

    try:
        long_calls = [threading.Thread(target=long_call) for _ in range(2)]
        long_calls[0].start()
        time.sleep(LONG_CALL_SECONDS + 0.5)  # the first is long now: a second may start beside it
        long_calls[1].start()
        time.sleep(LONG_CALL_SECONDS + 0.5)
        nice, seconds = _timed(pool.run, probes.niceness, seconds=30, what="a probe")
        assert seconds < 1.5, seconds  # not after the sleeps (3 s more)
        assert nice == WORKER_NICENESS
        for t in long_calls:
            t.join(30)
        assert results == [LONG_CALL_NICENESS] * 2  # both ran behind once they were long
        time.sleep(0.5)  # the ended workers' replacement starts in the background
        with pool._lock:
            assert pool._workers() == 1 and pool._long == 0
        assert pool.run(probes.niceness, seconds=30, what="a probe") == WORKER_NICENESS
    finally:
        pool.close()


def test_an_allocation_refused_inside_the_worker_is_not_called_the_bound(pool):
    """Python's own MemoryError (here malloc refusing 4 EiB) is not the pool's kill at its bound:
    the sentence says the allocation was refused and what the worker held, not "needed more than"."""
    err, elapsed = _timed(pool.run, bytearray, 2**62, seconds=30, what="the allocation")
    assert isinstance(err, LimitError), err
    message = str(err)
    assert "needed more than" not in message and "refused" in message, message
    assert f"LIMITS.worker_memory_mb, is {pool.memory_mb:g} MB" in message, message
    held = float(message.split("held ")[1].split(" MB")[0].replace(",", ""))
    assert 0 < held < pool.memory_mb, message  # the worker's own size, under the bound
    assert elapsed < SLACK
    assert pool.run(probes.echo, 8, seconds=30, what="an echo") == 8  # the pool carries on

