"""mpmath's working precision, safe to use from several threads at once.

``mpmath.workdps`` changes the precision of mpmath's one global context,
``mpmath.mp``. The Streamlit server runs every visitor's script in its own
thread of one process, so two visitors computing exact references at once would
change each other's precision mid-computation (a 50-digit reference silently
computed at 15 digits; reproduced with two threads using workdps(65) and
workdps(15)). Two ways round it:

* :func:`private_digits` lends the caller an mpmath context of its own (a pool
  of ``mpmath.MPContext`` instances, one per concurrent caller): no lock, and
  nothing any other thread does to ``mpmath.mp`` (sympy's ``evalf`` sets its
  precision too) can change it. The reference's walker runs on these, so one
  visitor's slow reference does not hold up another's. Values leave it through
  :func:`to_shared`, which keeps every bit.
* :func:`working_digits` and :func:`working_precision` change ``mpmath.mp``
  itself under one re-entrant lock, for code that must use the global context
  (sympy's own evaluation, arithmetic on shared values); such sections take
  turns, so keep them short.

>>> with MP_LOCK:  # no other thread's working_digits section in between (the suite runs some)
...     before = mpmath.mp.dps
...     with private_digits(30) as ctx:
...         third = ctx.mpf(1) / 3
...     mpmath.nstr(to_shared(third), 30), mpmath.mp.dps == before
('0.333333333333333333333333333333', True)
>>> with working_digits(30):
...     print(mpmath.mp.dps)
30
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import mpmath
from mpmath.ctx_mp import MPContext

__all__ = ["MP_LOCK", "working_digits", "working_precision", "private_digits", "to_shared",
           "SPARE_CONTEXTS"]

#: Held while mpmath's global precision differs from the caller's; re-entrant for nested use.
MP_LOCK = threading.RLock()

#: Private contexts kept for reuse (one is created when none is free: ~1 ms, ~50 KiB).
SPARE_CONTEXTS = 16
_spare: list[MPContext] = []
_spare_lock = threading.Lock()


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


@contextmanager
def private_digits(dps: int) -> Iterator[MPContext]:
    """An mpmath context at ``dps`` digits that only the caller uses until the block ends.

    Use its functions (``ctx.sin``, ``ctx.mpf``, ...), not ``mpmath.sin``, which
    belong to the global context.
    """
    with _spare_lock:
        ctx = _spare.pop() if _spare else MPContext()
    ctx.dps = dps
    try:
        yield ctx
    finally:
        with _spare_lock:
            if len(_spare) < SPARE_CONTEXTS:
                _spare.append(ctx)


def to_shared(value) -> mpmath.mpf:
    """A real value of any mpmath context as ``mpmath.mp``'s mpf, exactly (no rounding).

    A private context's numbers keep pointing at that context, whose precision
    changes when it is lent again; the shared copy does not.
    """
    return mpmath.mp.make_mpf(value._mpf_)
