"""What a test may assert about cost: CPU time, in units of a calibration measured in the same test.

A busy machine stretches wall-clock time but hardly the CPU time of the thread doing the
work, and a slower machine stretches the calibration (a fixed pure-Python loop) as much
as the work. So a limit that guards against a blow-up (a hostile expression parsed in
exponential time, a loop that runs 1e9 times) asserts a generous multiple of the
calibration in CPU time: it fails on a blow-up, not on a slow or loaded machine. Timings
as such belong in benchmarks/.
"""

from __future__ import annotations

import functools
import time
from typing import Callable

#: The fixed work whose CPU time is the unit (about 4 ms on the 2-core machines here).
CALIBRATION_TERMS = 100_000


def cpu_seconds(fn: Callable[[], object], tries: int = 5) -> float:
    """The least CPU time of this thread over ``tries`` calls of ``fn``, torch on one thread:
    its intra-op workers spin while they wait for a core, and on a machine shared with other
    test workers the calling thread's share of that spin was 16x the work (a 23-deep tan
    evaluated over a linspace, 61 ms against 3.8 ms alone)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        best = float("inf")
        for _ in range(tries):
            start = time.thread_time()
            fn()
            best = min(best, time.thread_time() - start)
        return best
    finally:
        torch.set_num_threads(threads)


def calibration_seconds() -> float:
    """CPU seconds of a fixed pure-Python loop on this machine, now."""
    return cpu_seconds(lambda: sum(i * i for i in range(CALIBRATION_TERMS)), tries=3)


@functools.cache
def calibration_seconds_once() -> float:
    """:func:`calibration_seconds`, measured once per test process (for property tests that
    check hundreds of examples)."""
    return calibration_seconds()


def assert_costs_at_most(fn: Callable[[], object], calibrations: float, what: str, tries: int = 5) -> None:
    """Fail when ``fn`` takes more CPU time than ``calibrations`` times the calibration loop."""
    unit = calibration_seconds()
    cost = cpu_seconds(fn, tries)
    assert cost <= calibrations * unit, (
        f"{what} took {cost * 1e3:.1f} ms of CPU: {cost / unit:.1f} calibrations, more than "
        f"the {calibrations:g} allowed (one calibration = {unit * 1e3:.1f} ms here)")


def stopped_within(seconds: float) -> float:
    """Wall-clock seconds that only work whose limit of ``seconds`` never fired can exceed.

    For tests that a limit stopped some work: they assert the LimitError saying so, and
    this generous limit only catches a limit that did not fire at all."""
    return 10 * seconds + 30


def waited_for_the_machine(message: str, what: str, seconds: float) -> bool:
    """Whether ``message`` is the wall-clock backstop's sentence for ``what`` under a limit of
    ``seconds``: on a machine busy enough that a worker gets under a fifth of a core (two CPU
    hogs beside the test workers; a niced long-lane worker gets less) the backstop ends work
    before it has computed its limit, and says it waited rather than took too long."""
    return (message.startswith(f"Computing {what} was stopped after waiting ")
            and f" of its {seconds:g} s limit): the server is busy" in message)
