"""The benchmarks' one timer: the median of ``repeat`` timed calls.

>>> import time
>>> median_seconds(lambda: None, 3, clock=time.process_time) >= 0
True
"""

from __future__ import annotations

import statistics
import time
from typing import Callable


def median_seconds(fn: Callable[[], object], repeat: int, clock: Callable[[], float] = time.perf_counter) -> float:
    """The median seconds of ``repeat`` calls of ``fn`` on ``clock`` (``time.process_time``: the
    process's CPU seconds, which a loaded shared machine disturbs less than the wall clock)."""
    times = []
    for _ in range(repeat):
        start = clock()
        fn()
        times.append(clock() - start)
    return statistics.median(times)
