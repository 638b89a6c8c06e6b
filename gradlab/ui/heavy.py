"""What a page's cached function calls to run heavy engine work in a worker process.

``heavy(fn, *args)`` runs one of :mod:`gradlab.server.heavy_work`'s functions
through :func:`gradlab.server.pool.run_bounded` with that function's bound
(:data:`gradlab.server.heavy_work.BOUNDS`), keyed by this Streamlit session,
so a newer rerun of the same session ends the older one's work, as does a
pending rerun or stop of this script run. Over a bound the worker is killed
and a LimitError names the bound: the page shows it like any other.

>>> from gradlab.server.heavy_work import sweep_formulas
>>> heavy(sweep_formulas, "sin(x)")
('\\\\sin{\\\\left(x \\\\right)}', '\\\\cos{\\\\left(x \\\\right)}')
"""

from __future__ import annotations

from typing import Callable

from gradlab.server.heavy_work import BOUNDS
from gradlab.server.pool import run_bounded
from gradlab.ui.compat import run_will_be_interrupted, session_id

__all__ = ["heavy"]


def heavy(fn: Callable, *args, progress: Callable[[int, int], None] | None = None, **kwargs):
    """``fn(*args, **kwargs)`` in a worker, within ``BOUNDS[fn]``; see the module docstring."""
    what, seconds, bound_name = BOUNDS[fn]
    session = session_id()
    return run_bounded(fn, *args, seconds=seconds(), what=what, bound_name=bound_name,
                       session=session, cancelled=run_will_be_interrupted if session else None,
                       progress=progress, **kwargs)
