"""gradlab.server.pool: heavy work in worker processes, ended (not waited for) at each limit.

The probes (tests/pool_probes.py) include a single C call that holds the
interpreter for minutes (a big-integer power) and steady allocation: the two
things a thread cannot be interrupted in. No assert reads a clock: a limit is
shown to stop the work by its sentence and by the worker it killed (the work
itself would run for minutes, or for ever); fairness by which calls run, wait
and start again, read from the pool's lanes while the calls are under way.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import pool_probes as probes
from cost import waited_for_the_machine
from gradlab.errors import GradLabError, LimitError
from gradlab.numerics.expression_syntax import ExpressionError
from gradlab.server.pool import Superseded, WorkerFailed, WorkerPool, run_in_child

pytestmark = pytest.mark.server  # every test starts worker processes

REPO_ROOT = Path(__file__).resolve().parents[1]
PATIENCE = 60.0  # seconds a test waits for a state it expects before it fails (not a budget)


@pytest.fixture(scope="module")
def pool():
    pool = WorkerPool(2).start()
    yield pool
    pool.close()


def _outcome(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except BaseException as err:  # noqa: BLE001 - returned for the test to inspect
        return err


def _until(condition, what: str):
    """Wait for ``condition()`` (a state the test expects the pool to reach), failing after PATIENCE."""
    deadline = time.monotonic() + PATIENCE
    while not condition():
        assert time.monotonic() < deadline, f"the pool never reached: {what}"
        time.sleep(0.02)


#: How a killed worker's end reads: SIGKILL, or 255 where the fork server's report of the status
#: was lost (multiprocessing's popen_forkserver says 255 when it reads no status; seen once on a
#: busy CI machine). A worker that ends by itself exits 0, or 1 on an exception.
_KILLED = (-signal.SIGKILL, 255)


def _killed(workers) -> list:
    """The workers (of those given) that ended by SIGKILL: the pool's kill at a limit.

    Waits (up to PATIENCE) for the first kill, then a moment for any other, and never joins
    a worker that lives on (that join waited PATIENCE for nothing: 60 s a test)."""
    deadline = time.monotonic() + PATIENCE
    while time.monotonic() < deadline:
        if any(w.process.exitcode in _KILLED for w in workers):
            time.sleep(0.2)
            break
        time.sleep(0.02)
    return [w for w in workers if w.process.exitcode in _KILLED]


def _in_thread(fn, *args, **kwargs) -> tuple[threading.Thread, dict]:
    box: dict = {}
    thread = threading.Thread(target=lambda: box.setdefault("outcome", _outcome(fn, *args, **kwargs)))
    thread.start()
    return thread, box


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


def test_a_c_call_past_the_limit_is_ended_and_the_worker_replaced(pool):
    """3**(10**8) holds its worker for minutes: the limit's sentence, and the worker it ran on
    killed, show the limit ended it."""
    workers = list(pool._idle)
    err = _outcome(pool.run, probes.c_power, seconds=1.0, what="a big power", limit_name="LIMITS.request_seconds")
    assert isinstance(err, LimitError), err
    assert waited_for_the_machine(str(err), "a big power", 1) or (
        "longer than 1 s" in str(err) and "LIMITS.request_seconds" in str(err)), err
    assert len(_killed(workers)) == 1
    assert pool.run(probes.echo, 7, seconds=30, what="an echo") == 7  # a fresh worker took its place


def test_a_run_within_block_is_enforced_by_the_parent(pool):
    """The block's own limit (0.5 s), not the call's (60 s), ended it: its sentence names the block."""
    workers = list(pool._idle)
    err = _outcome(pool.run, probes.c_power_in_block, 0.5, seconds=60, what="the work")
    assert isinstance(err, LimitError), err
    assert "a big power took longer than 0.5 s" in str(err) and "LIMITS.evaluation_seconds" in str(err)
    assert len(_killed(workers)) == 1


def test_memory_past_the_limit_is_ended_with_a_sentence():
    """allocate() would take 12.8 GB: the limit (300 MB over the worker's start) ends it first."""
    pool = WorkerPool(1, memory_mb=0).start()
    try:
        workers = list(pool._idle)
        pool.memory_mb = max(w.rss_mb() for w in workers) + 300
        err = _outcome(pool.run, probes.allocate, seconds=60, what="the allocation")
    finally:
        pool.close()
    assert isinstance(err, LimitError), err
    assert "more than" in str(err) and "LIMITS.worker_memory_mb" in str(err)
    assert len(_killed(workers)) == 1


def test_a_newer_call_of_the_same_session_ends_the_older_one(pool):
    workers = list(pool._idle)
    thread, older = _in_thread(pool.run, probes.sleep, 60, seconds=120, what="the older", session="s1")
    _until(lambda: pool.snapshot()["short"] + pool.snapshot()["long"] == ["s1"], "the older call running")
    assert pool.run(probes.echo, "newer", seconds=30, what="the newer", session="s1") == "newer"
    thread.join(PATIENCE)
    assert isinstance(older["outcome"], Superseded), older  # not its 60 s sleep's result
    assert len(_killed(workers)) == 1  # the older call's worker; the newer one's went back idle


def test_cancelled_ends_the_call(pool):
    stop = threading.Event()
    thread, box = _in_thread(pool.run, probes.sleep, 60, seconds=120, what="the work", cancelled=stop.is_set)
    _until(lambda: pool.snapshot()["workers"] and len(pool.snapshot()["short"] + pool.snapshot()["long"]) == 1,
           "the call running")
    stop.set()
    thread.join(PATIENCE)
    assert isinstance(box["outcome"], Superseded), box


def test_progress_is_relayed_and_can_stop_the_work(pool):
    seen = []
    assert pool.run(probes.counted, 5, seconds=30, what="counting", progress=lambda d, t: seen.append((d, t))) == 5
    assert seen == [(i, 5) for i in range(1, 6)]

    def stop_at_3(done, total):
        if done == 3:
            raise LimitError("stopped at 3")

    with pytest.raises(LimitError, match="stopped at 3"):
        pool.run(probes.counted, 100, seconds=30, what="counting", progress=stop_at_3)


def test_other_calls_are_answered_while_one_worker_is_stuck_in_c(pool):
    """The server's other sessions: one visitor's runaway C call does not hold them up. Ten calls
    are answered while the big power still runs (it would for minutes), then it is ended."""
    stop = threading.Event()
    stuck, box = _in_thread(pool.run, probes.c_power, seconds=600, what="a big power", session="runaway",
                            cancelled=stop.is_set)
    _until(lambda: "runaway" in pool.snapshot()["short"] + pool.snapshot()["long"], "the big power running")
    assert [pool.run(probes.echo, i, seconds=30, what="an echo", session="other") for i in range(10)] == list(range(10))
    assert stuck.is_alive() and "runaway" in pool.snapshot()["short"] + pool.snapshot()["long"]
    stop.set()
    stuck.join(PATIENCE)
    assert isinstance(box["outcome"], Superseded), box


def _fresh_process(script: str) -> subprocess.CompletedProcess:
    """``script`` run in a fresh single-threaded Python (gradlab and tests/ importable), asserted to exit 0."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), str(REPO_ROOT / "tests")])}
    run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    return run


def test_run_in_child_is_limited_like_the_pool():
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
    run = _fresh_process(script)
    assert "a big power took longer than 1 s" in run.stdout.split(" ", 1)[1], run.stdout


def test_run_in_child_runs_torch_ops_after_the_parent_used_its_threads():
    """libgomp's threads do not survive a fork: a child entering a parallel op waited for them
    forever (until its limit) when the parent had run one on two threads, as a test suite's
    worker or a notebook may have."""
    script = ("import torch, pool_probes\n"
              "torch.set_num_threads(2)\n"
              "torch.ones(1500, 1500) @ torch.ones(1500, 1500)  # the parent's OpenMP team, 2 threads\n"
              "from gradlab.server.pool import run_in_child\n"
              "print(run_in_child(pool_probes.matmul, 1000, seconds=10, what='a matmul'))\n")
    run = _fresh_process(script)
    assert run.stdout.strip() == "1000.0"  # a row of ones times a column of ones


def _lanes_of(pool: WorkerPool) -> tuple[list, list, int]:
    snap = pool.snapshot()
    return sorted(snap["long"]), sorted(snap["short"]), snap["waiting long"]


def test_five_heavy_sessions_take_turns_and_a_cheap_call_still_gets_a_worker():
    """Five sessions' long calls (forecast long) on a pool of one worker per lane: one runs, four
    wait in turn, none holds more than one call; a cheap call from another session is answered
    meanwhile, on the short lane; a heavy session's second call ends its first."""
    from gradlab.server.worker import LONG_CALL_NICENESS

    pool = WorkerPool(1).start()
    stop = threading.Event()
    again = None
    heavy = [_in_thread(pool.run, probes.sleep_then_niceness, 60, seconds=120, what="a sleep",
                        session=f"heavy {i}", cancelled=stop.is_set, long=True) for i in range(5)]
    try:
        _until(lambda: _lanes_of(pool)[2] == 4, "one long call running and four waiting")
        running, short, waiting = _lanes_of(pool)
        assert len(running) == 1 and short == [] and running[0].startswith("heavy")
        assert pool.run(probes.niceness, seconds=30, what="a probe", session="victim") < LONG_CALL_NICENESS
        assert _lanes_of(pool) == (running, [], 4)  # the heavy calls kept their places meanwhile
        holder = running[0]
        again = _in_thread(pool.run, probes.sleep, 60, seconds=120, what="a sleep", session=holder,
                           cancelled=stop.is_set, long=True)
        first = heavy[int(holder.split()[1])]
        first[0].join(PATIENCE)
        assert isinstance(first[1]["outcome"], Superseded), first[1]  # its own newer call ended it
        _until(lambda: len(_lanes_of(pool)[0]) == 1 and holder not in _lanes_of(pool)[0],
               "the next heavy session in line running")
        snap = pool.snapshot()
        assert snap["waiting long"] == 4 and snap["workers"] <= 2 * pool.size  # holder's new call: at the back
    finally:
        stop.set()
        calls = [*heavy, *([again] if again else [])]
        for thread, _ in calls:
            thread.join(PATIENCE)
        pool.close()
    assert all(isinstance(box.get("outcome"), Superseded) for _, box in calls)


def test_a_short_call_that_overruns_a_full_long_lane_starts_again_in_its_turn(tmp_path):
    """A call not forecast long starts on the short lane; once it has computed LONG_CALL_SECONDS,
    with the long lane held, its worker is ended and it waits its turn there, so the short lane is
    free for the next cheap call. Once its turn comes it starts again at LONG_CALL_NICENESS; the same call asked
    again (a reload) starts in the long lane at once."""
    from gradlab.server.worker import LONG_CALL_NICENESS, WORKER_NICENESS

    pool = WorkerPool(1).start()
    stop_holder, stop_overrun, stop_again = threading.Event(), threading.Event(), threading.Event()
    short_nice, long_nice = str(max(WORKER_NICENESS, os.nice(0))), str(LONG_CALL_NICENESS)
    starts = tmp_path / "starts.txt"
    holder = _in_thread(pool.run, probes.sleep, 60, seconds=120, what="a sleep", session="holder",
                        cancelled=stop_holder.is_set, long=True)
    try:
        _until(lambda: _lanes_of(pool)[0] == ["holder"], "the long lane held")
        overrun = _in_thread(pool.run, probes.started_then_spin, str(starts), 600, seconds=1200, what="a spin",
                             session="overrun", cancelled=stop_overrun.is_set)
        _until(lambda: _lanes_of(pool) == (["holder"], [], 1), "the overrunning call waiting in the long lane")
        assert starts.read_text().split() == [short_nice]  # it had started on the short lane
        assert pool.run(probes.echo, "cheap", seconds=30, what="an echo", session="victim") == "cheap"
        stop_holder.set()
        _until(lambda: _lanes_of(pool)[0] == ["overrun"], "the overrunning call's turn")
        _until(lambda: len(starts.read_text().split()) == 2, "its second start")
        assert starts.read_text().split() == [short_nice, long_nice]
        stop_overrun.set()
        overrun[0].join(PATIENCE)
        assert isinstance(overrun[1]["outcome"], Superseded), overrun[1]
        again = _in_thread(pool.run, probes.started_then_spin, str(starts), 600, seconds=1200, what="a spin",
                           session="reloaded", cancelled=stop_again.is_set)
        _until(lambda: len(starts.read_text().split()) == 3, "the same call's start")
        assert starts.read_text().split()[2:] == [long_nice]  # in the long lane at once
        assert _lanes_of(pool)[:2] == (["reloaded"], [])
    finally:
        for stop in (stop_holder, stop_overrun, stop_again):
            stop.set()
        holder[0].join(PATIENCE)
        pool.close()


def test_a_short_call_gives_up_its_turn_to_a_waiting_one():
    """A call not known to be long holds the only short slot; another call arrives: once the first
    has computed SHORT_TURN_SECONDS it leaves the short lane (the long lane is held, so it waits its
    turn there, not remembered as long) and the second is answered. (The long-call mark is out
    of reach here, so only the turn can have moved it.)"""
    pool = WorkerPool(1, long_call_seconds=600).start()
    stop = threading.Event()
    holder = _in_thread(pool.run, probes.sleep, 60, seconds=120, what="a sleep", session="holder",
                        cancelled=stop.is_set, long=True)
    medium = None
    try:
        _until(lambda: _lanes_of(pool)[0] == ["holder"], "the long lane held")
        medium = _in_thread(pool.run, probes.spin, 600, seconds=1200, what="a spin", session="medium",
                            cancelled=stop.is_set)
        _until(lambda: _lanes_of(pool)[1] == ["medium"], "the short slot held")
        assert pool.run(probes.echo, "cheap", seconds=30, what="an echo", session="victim") == "cheap"
        assert _lanes_of(pool) == (["holder"], [], 1)  # medium waits its turn in the long lane
        assert pool._lanes.known_long == {}
    finally:
        stop.set()
        for thread, _ in [holder, *([medium] if medium else [])]:
            thread.join(PATIENCE)
        pool.close()


def test_a_short_call_that_only_waits_for_a_core_keeps_its_turn():
    """Its turn counts computing: a call that sleeps (as one waiting for a busy machine's core
    does) keeps the short slot while another call waits, until WALL_CLOCK_FACTOR times
    long_call_seconds have passed on the wall clock."""
    pool = WorkerPool(1, long_call_seconds=600).start()
    stop = threading.Event()
    sleeper = _in_thread(pool.run, probes.sleep, 60, seconds=120, what="a sleep", session="sleeper",
                         cancelled=stop.is_set)
    waiter = None
    try:
        _until(lambda: _lanes_of(pool)[1] == ["sleeper"], "the short slot held")
        waiter = _in_thread(pool.run, probes.echo, "cheap", seconds=120, what="an echo", session="waiter")
        _until(lambda: pool.snapshot()["waiting short"] == 1, "the second call waiting for the short lane")
        calibration = _cpu_spin_wall_seconds(pool)  # wall time of computing SHORT_TURN_SECONDS here
        time.sleep(4 * calibration)  # the sleeper's turn would be over four times if it counted wall time
        assert _lanes_of(pool)[1] == ["sleeper"] and waiter[0].is_alive()
    finally:
        stop.set()
        for thread, _ in [sleeper, *([waiter] if waiter else [])]:
            thread.join(PATIENCE)
        pool.close()
    assert waiter[1]["outcome"] == "cheap"  # answered once the sleeper was ended


def _cpu_spin_wall_seconds(pool: WorkerPool) -> float:
    """How long, on the wall clock, this process takes to compute SHORT_TURN_SECONDS now."""
    from gradlab.server.pool import SHORT_TURN_SECONDS

    start = time.monotonic()
    probes.spin(SHORT_TURN_SECONDS)
    return time.monotonic() - start


def test_a_call_that_waits_instead_of_computing_is_told_it_waited(pool):
    """A worker that sleeps spends no CPU limit; the 5x wall-clock backstop ends it and says so."""
    err = _outcome(pool.run, probes.sleep, 60, seconds=0.2, what="a nap")
    assert isinstance(err, LimitError), err
    assert str(err).startswith("Computing a nap was stopped after waiting 1 s for the machine"), err
    assert "took longer" not in str(err)


def test_a_call_that_waits_its_whole_limit_for_a_turn_is_told_so():
    pool = WorkerPool(1).start()
    stop = threading.Event()
    holder = _in_thread(pool.run, probes.sleep, 60, seconds=120, what="a sleep", session="holder",
                        cancelled=stop.is_set, long=True)
    try:
        _until(lambda: _lanes_of(pool)[0] == ["holder"], "the long lane held")
        err = _outcome(pool.run, probes.echo, 1, seconds=0.5, what="the sum", limit_name="LIMITS.request_seconds",
                       session="late", long=True)
        assert isinstance(err, LimitError) and not isinstance(err, Superseded), err
        assert "Computing the sum waited 0.5 s (LIMITS.request_seconds) for one of the 1 worker processes " \
               "that run long requests" in str(err), err
        assert _lanes_of(pool) == (["holder"], [], 0)  # the holder runs on; the late call left the queue
    finally:
        stop.set()
        holder[0].join(PATIENCE)
        pool.close()


def test_a_long_call_runs_behind_and_the_pool_returns_to_its_size():
    """A call that has computed LONG_CALL_SECONDS, with the long lane free, keeps running there, at
    LONG_CALL_NICENESS; once it ends, its worker goes and the pool is back to its size."""
    from gradlab.server.pool import LONG_CALL_SECONDS
    from gradlab.server.worker import LONG_CALL_NICENESS, WORKER_NICENESS

    pool = WorkerPool(1).start()
    try:
        assert pool.run(probes.spin_then_niceness, 3 * LONG_CALL_SECONDS, seconds=60, what="a spin") \
            == LONG_CALL_NICENESS
        _until(lambda: pool.snapshot()["workers"] == 1 and len(pool._idle) == 1, "the pool back to one worker")
        assert pool.run(probes.niceness, seconds=30, what="a probe") == WORKER_NICENESS
    finally:
        pool.close()


def test_an_allocation_refused_inside_the_worker_is_not_called_the_limit(pool):
    """Python's own MemoryError (here malloc refusing 4 EiB) is not the pool's kill at its limit:
    the sentence says the allocation was refused and what the worker held, not "needed more than"."""
    err = _outcome(pool.run, bytearray, 2**62, seconds=30, what="the allocation")
    assert isinstance(err, LimitError), err
    message = str(err)
    assert "needed more than" not in message and "refused" in message, message
    assert f"LIMITS.worker_memory_mb, is {pool.memory_mb:g} MB" in message, message
    held = float(message.split("held ")[1].split(" MB")[0].replace(",", ""))
    assert 0 < held < pool.memory_mb, message  # the worker's own size, under the limit
    assert pool.run(probes.echo, 8, seconds=30, what="an echo") == 8  # the pool carries on

