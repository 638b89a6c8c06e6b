"""Display tables of a sweep: the numbers beside the Explorer's chart, as strings to read or copy.

Pure functions from a :class:`~gradlab.step_sweep.engine.SweepResult` to small
``pandas.DataFrame`` s (no streamlit, no plotly); schemes are named by their
row's ``curve_label``, as in the figure's legend.

>>> from gradlab.step_sweep.engine import SweepSettings, run_sweep
>>> result = run_sweep(SweepSettings("exp(x)", 1.0, ("float32",), ("central",), points=9))
>>> list(best_step_table(result).columns)[:3]
['dtype', 'scheme', 'best h (observed)']
>>> best_step_table(result).loc[0, "scheme"]
'central'
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import mpmath  # noqa: F401 - the docstring examples use it
import numpy as np
import pandas as pd

from gradlab.numerics.dtypes import facts
from gradlab.numerics.mp_format import format_mp
from gradlab.numerics.schemes import get_scheme

if TYPE_CHECKING:  # the engine imports these figures (SweepResult.figure), never the reverse
    from gradlab.step_sweep.engine import SweepResult

__all__ = ["best_step_table", "autograd_table", "rounding_table", "format_sig", "exact_digits"]

_SIG_DIGITS = 3
_EXACT_DIGITS = 20


def format_sig(value: float, digits: int = _SIG_DIGITS) -> str:
    """A number to ``digits`` significant digits for a table; NaN/None become "—".

    >>> format_sig(0.000123456), format_sig(float("nan")), format_sig(0.0)
    ('1.23e-04', '—', '0')
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    value = float(value)
    if value == 0:
        return "0"
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    return f"{value:.{digits - 1}e}"


def exact_digits(value, digits: int = _EXACT_DIGITS) -> str:
    """An mpmath (or float) value to ``digits`` significant digits; None becomes "—".

    >>> exact_digits(mpmath.mpf(1) / 3, 5)
    '0.33333'
    """
    if value is None:
        return "—"
    return format_mp(value, digits)  # huge magnitudes from their logarithm, never their digits



def best_step_table(result: SweepResult) -> pd.DataFrame:
    """Observed and predicted best steps per (dtype, scheme), and autograd's error per dtype.

    Numbers are strings with 3 significant digits, ready to display or copy. The error at the
    best h is one sample's, partly luck; the robust best h is the step whose neighbours (within
    a factor 3) do best, with their median error: what the difference does there, "< u" where
    that is below the dtype's rounding.

    >>> from gradlab.step_sweep.engine import SweepSettings, run_sweep
    >>> r = run_sweep(SweepSettings("exp(x)", 0.0, ("float64",), ("central",), points=9))
    >>> best_step_table(r).loc[0, "h* (theory)"]  # (3u |f/f'''|)**(1/3), u = 2**-53
    '6.93e-06'
    """
    autograd = dict(zip(result.autograd["dtype"], result.autograd["rel_error"], strict=True))
    rows = []
    for row in result.best_rows:  # plain dicts, read once per result: a row of pandas costs more than the work
        rows.append({
            "dtype": row["dtype"],
            "scheme": get_scheme(row["scheme"]).curve_label,
            "best h (observed)": format_sig(row["eps"]),
            "rel. error at best h": format_sig(row["rel_error"]),
            "robust best h": format_sig(row["robust_eps"]),
            "median rel. error near it": _near_best(row["robust_rel_error"], row["dtype"]),
            "h* (theory)": format_sig(row["predicted_eps"]),
            "rel. error at h* (theory)": format_sig(row["predicted_rel_error"]),
            "autograd rel. error": format_sig(autograd.get(row["dtype"], math.nan)),
        })
    return pd.DataFrame(rows, columns=[
        "dtype", "scheme", "best h (observed)", "rel. error at best h", "robust best h",
        "median rel. error near it", "h* (theory)", "rel. error at h* (theory)", "autograd rel. error",
    ])


def _near_best(value: float, dtype: str) -> str:
    """The typical error around the best step; below the dtype's unit round-off u it is the rounding.

    >>> _near_best(1.3e-8, "float32"), _near_best(2e-5, "float32")
    ('< u = 5.96e-08', '2.00e-05')
    """
    u = facts(dtype).unit_roundoff
    return f"< u = {format_sig(u)}" if math.isfinite(value) and value < u else format_sig(value)


def autograd_table(result: SweepResult) -> pd.DataFrame:
    """Autograd's value of f'(x) per dtype, the exact value and both errors.

    >>> from gradlab.step_sweep.engine import SweepSettings, run_sweep
    >>> r = run_sweep(SweepSettings("x**3", 2.0, ("float32",), ("central",), points=5))
    >>> autograd_table(r).loc[0, "autograd f′(x)"]
    '12'
    """
    columns = ("dtype", "value", "reference", "abs_error", "rel_error")
    return pd.DataFrame(
        [{
            "dtype": dtype,
            "autograd f′(x)": f"{value:.17g}",
            "exact f′(x)": f"{reference:.17g}" if np.isfinite(reference) else "—",
            "abs. error": format_sig(abs_error),
            "rel. error": format_sig(rel_error),
        } for dtype, value, reference, abs_error, rel_error in zip(*(result.autograd[c].tolist() for c in columns))],
        columns=["dtype", "autograd f′(x)", "exact f′(x)", "abs. error", "rel. error"],
    )


def rounding_table(result: SweepResult) -> pd.DataFrame:
    """How x was rounded in each dtype, and the exact f'(x) at that rounded point.

    >>> from gradlab.step_sweep.engine import SweepSettings, run_sweep
    >>> r = run_sweep(SweepSettings("x**2", 0.1, ("float16",), ("central",), points=5))
    >>> rounding_table(r).loc[0, "x in dtype"]
    '0.0999755859375'
    """
    x = result.settings.x
    rows = []
    for dtype, xr in result.rounded_x.items():
        ref = result.references.get(dtype)
        rows.append({
            "dtype": dtype,
            "x in dtype": repr(float(xr)),  # shortest digits that give back the value
            "x in dtype − x": format_sig(xr - x) if xr != x else "0 (exact)",
            "exact f′(x in dtype)": exact_digits(ref.d1) if ref is not None and ref.defined else "—",
        })
    return pd.DataFrame(rows, columns=["dtype", "x in dtype", "x in dtype − x", "exact f′(x in dtype)"])
