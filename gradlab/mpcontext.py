"""mpmath's working precision, safe to change from several threads at once.

``mpmath.workdps`` changes the precision of mpmath's one global context. The
Streamlit server runs every visitor's script in its own thread of one process,
so two visitors computing exact references at once would change each other's
precision mid-computation (a 50-digit reference silently computed at 15 digits;
reproduced with two threads using workdps(65) and workdps(15)). Every change of
precision in GradLab goes through :func:`working_digits` or
:func:`working_precision`, which hold one re-entrant lock while the precision is
changed, so such computations take turns (they hold the GIL anyway).

>>> with working_digits(30):
...     print(mpmath.mp.dps)
30
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import mpmath

__all__ = ["MP_LOCK", "working_digits", "working_precision"]

#: Held while mpmath's global precision differs from the caller's; re-entrant for nested use.
MP_LOCK = threading.RLock()


@contextmanager
def working_digits(dps: int) -> Iterator[None]:
    """``mpmath.workdps(dps)`` under :data:`MP_LOCK`."""
    with MP_LOCK, mpmath.workdps(dps):
        yield


@contextmanager
def working_precision(prec: int) -> Iterator[None]:
    """``mpmath.workprec(prec)`` (bits) under :data:`MP_LOCK`."""
    with MP_LOCK, mpmath.workprec(prec):
        yield
