"""Top-level functions for tests/test_pool.py to run in worker processes (they must be importable there)."""

from __future__ import annotations

import time

from gradlab.numerics.expression_syntax import ExpressionError
from gradlab.server.deadline import run_within


def echo(value):
    return value


def niceness() -> int:
    import os

    return os.nice(0)


def raise_gradlab(text: str):
    raise ExpressionError(text)


def raise_bug():
    return {}["missing"]


def c_power(exponent: int = 10**8) -> int:
    """One C call that holds the interpreter for a minute or more (3**(10**8), a big-integer power)."""
    return pow(3, exponent).bit_length()


def c_power_in_block(seconds: float) -> int:
    """The big-integer power inside a run_within block: its asynchronous exception cannot stop it."""
    return run_within(seconds, "a big power", c_power, limit_name="LIMITS.evaluation_seconds")


def allocate(megabytes_per_step: int = 64, steps: int = 200) -> int:
    """Touch ``megabytes_per_step`` more memory every 10 ms (12.8 GB if nothing stops it)."""
    held = []
    for _ in range(steps):
        held.append(bytearray(megabytes_per_step * 2**20))
        time.sleep(0.01)
    return len(held)


def sleep(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


def sleep_then_niceness(seconds: float) -> int:
    """The worker's niceness at the end of a call: the pool may have changed it meanwhile."""
    time.sleep(seconds)
    return niceness()


def counted(total: int, progress=None) -> int:
    for done in range(1, total + 1):
        time.sleep(0.01)
        progress(done, total)
    return total


def spin(cpu_seconds: float) -> float:
    """Compute (a busy loop) until this process has used ``cpu_seconds`` more of CPU time: the
    pool's lanes count computing, not waiting."""
    end = time.process_time() + cpu_seconds
    while time.process_time() < end:
        pass
    return cpu_seconds


def spin_then_niceness(cpu_seconds: float) -> int:
    """The worker's niceness after computing ``cpu_seconds``: the pool may have changed it meanwhile."""
    spin(cpu_seconds)
    return niceness()


def started_then_spin(path: str, cpu_seconds: float) -> float:
    """Append this worker's niceness to ``path`` as the call starts (one line per start: a call
    ended and started again writes two), then compute."""
    with open(path, "a") as f:
        f.write(f"{niceness()}\n")
    return spin(cpu_seconds)


def pid() -> int:
    import os

    return os.getpid()


def matmul(n: int) -> float:
    """A parallel torch op (a forked child runs it after its parent's OpenMP threads are gone)."""
    import torch

    a = torch.ones(n, n)
    return float((a @ a)[0, 0])
