"""``gradlab.sweep``: the Explorer's error-vs-step sweep from Python.

``sweep(expression, at=x, dtypes=..., schemes=...)`` runs
:func:`gradlab.step_sweep.engine.run_sweep` and returns its
:class:`~gradlab.step_sweep.engine.SweepResult`, whose ``_repr_html_`` (the best step per
dtype and scheme, the notes, and the error-vs-eps figure) and ``figure()``
(:func:`gradlab.labs.explorer.figures.error_vs_eps_figure`) are :mod:`gradlab.step_sweep.display`'s.

>>> r = sweep("exp(x)", at=1.0, dtypes="float64", schemes=("forward", "central"), points=9)
>>> r.best[["dtype", "scheme"]].values.tolist()
[['float64', 'forward'], ['float64', 'central']]
>>> [t.name for t in r.figure().data if t.meta and t.meta.get("kind") == "sweep"]
['float64 · forward', 'float64 · central']
"""

from __future__ import annotations

from gradlab.numerics.dtypes import DTYPE_NAMES
from gradlab.numerics.schemes import SCHEME_NAMES
from gradlab.step_sweep.engine import SweepResult, SweepSettings, run_sweep

__all__ = ["sweep"]


def sweep(expression: str, at: float, *, dtypes: str | tuple[str, ...] = DTYPE_NAMES,
          schemes: str | tuple[str, ...] = SCHEME_NAMES, eps_min: float = 1e-16, eps_max: float = 1.0,
          points: int = 61) -> SweepResult:
    """Every finite-difference estimate of f'(at) over ``points`` log-spaced steps, per dtype and scheme.

    ``expression`` is GradLab's expression language (parsed, never evaluated as
    Python); a single dtype or scheme may be given as a string. Bad settings
    raise ``GradLabError`` naming what to fix.

    >>> float(sweep("x**2", at=3.0, dtypes="float64", schemes="central", points=5).autograd.loc[0, "value"])
    6.0
    """
    return run_sweep(SweepSettings(expression, at, dtypes=_names(dtypes), schemes=_names(schemes),
                                   eps_min=eps_min, eps_max=eps_max, points=points))


def _names(value) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else tuple(value)

