"""The representable grid in words and series: the answer sentence, the printed values with
the digits a subtraction cancels, and the secant's slope as h shrinks.

Plain values only (no streamlit): the Grid page and ``python -m gradlab grid`` show the same.

>>> from gradlab.labs.grid.representable import GridSettings, grid_difference
>>> r = grid_difference(GridSettings(dtype="float32", x=1.0, h=1e-8, expression="sin(x)"))
>>> grid_answer(r).text.startswith("x + h rounds back to x")
True
>>> printed_values(grid_difference(GridSettings("float32", 1.0, 1e-6, "sin(x)"))).shared_chars
7
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pandas as pd

from gradlab.view import Answer
from gradlab.labs.grid.representable import GridDifference, GridSettings, computing_in, shared_decimal_digits
from gradlab.numerics.dtypes import facts
from gradlab.numerics.emulation import to_dtype
from gradlab.numerics.expressions import parse
from gradlab.numerics.ulp import ulp

__all__ = ["GRID_ADVICE", "PrintedValues", "printed_values", "grid_answer", "distinct_digits", "slope_text", "steps_in_ulps", "ulps_of_x", "secant_series",
           "grid_fields", "window_points", "window_array"]

#: What ends the sentence of a difference over its time limit, on the page and in the CLI.
GRID_ADVICE = "Pick a simpler expression or another point x."


@dataclass(frozen=True)
class PrintedValues:
    """f(x) and f(x+h) printed to the dtype's digits, and how much of the text they share."""

    fx: str
    fx_plus_h: str
    shared_chars: int  # characters of the common prefix (the digits the subtraction cancels)
    shared_digits: int  # significant decimal digits in that prefix
    digits: int  # significant digits printed: enough to tell any two numbers of the dtype apart


def printed_values(r: GridDifference) -> PrintedValues:
    """The two function values as text, with the length of the prefix they share."""
    digits = math.ceil(r.precision_bits * math.log10(2)) + 1
    a, b = (_printed(v, r.settings.dtype) for v in (r.fx.value, r.fx_plus_h.value))
    prefix = len(os.path.commonprefix([a, b]))
    return PrintedValues(a, b, prefix, shared_decimal_digits(a[:prefix], a[:prefix]), digits)


def _printed(value: float, dtype: str) -> str:
    """The shortest decimal that reads back as this number of the dtype (exact for short formats).

    >>> _printed(0.8125, "float8_e4m3fn"), _printed(float(np.float32(0.1)), "float32")
    ('0.8125', '0.1')
    """
    if dtype == "float32":
        return str(np.float32(value))
    return repr(value)  # float64 round-trips; 8- and 16-bit values are short and exact in float64


def distinct_digits(value: float, other: float, least: int = 3) -> str:
    """``value`` with enough digits to tell it from ``other`` (``least`` at least): the step taken
    against the step asked, in the answer and on the chart's slider alike.

    >>> distinct_digits(0.00010002, 1e-4), distinct_digits(2 ** -23, 1e-7, least=4)
    ('0.00010002', '1.192e-07')
    """
    for k in range(least, 18):
        if f"{value:.{k}g}" != f"{other:.{k}g}":
            return f"{value:.{k}g}"
    return f"{value:.17g}"


def steps_in_ulps(r: GridDifference) -> int | float:
    """The step taken as a multiple of ulp(x): (x+h) - x = n ulp(x) (0: no step at all).

    Not the count of grid numbers from x to x + h: past x's binade they are 2, 4, ... ulp(x) apart.
    Exact, a Python int (at x = 0, ulp(x) is the smallest subnormal and n can pass float64's range),
    a float only where x + h lands in a finer binade nearer 0 (x < 0) and n is not whole.

    >>> from gradlab.labs.grid.representable import grid_difference
    >>> steps_in_ulps(grid_difference(GridSettings("float32", 0.75, 0.5, "x")))  # 0.5 / 2**-24
    8388608
    """
    n = Fraction(r.step_taken) / Fraction(r.x.ulp)
    return n.numerator if n.denominator == 1 else float(n)


def ulps_of_x(r: GridDifference) -> str:
    """:func:`steps_in_ulps` in words: digits grouped, in e-notation past 10**12.

    >>> from gradlab.labs.grid.representable import grid_difference
    >>> ulps_of_x(grid_difference(GridSettings("float32", 1.0, 1e-7, "x")))
    '1 ulp'
    >>> ulps_of_x(grid_difference(GridSettings("float64", 0.0, 1e-4, "x")))  # 1e-4 / 2**-1074
    '2.02e+319 ulps'
    """
    n = steps_in_ulps(r)
    text = f"{n:,}" if n < 10 ** 12 else f"{Decimal(n):.3g}"  # Decimal: n may be past float64
    return f"{text} ulp{'' if n == 1 else 's'}"


def slope_text(slope: float) -> str:
    """A slope as the answer and the chart's slider both print it: 4 significant digits.

    >>> slope_text(0.540524), slope_text(0.5)
    ('0.5405', '0.5')
    """
    return f"{slope:.4g}"


def grid_answer(r: GridDifference) -> Answer:
    """One plain sentence (or two) on what the grid did to this difference (an ``info``: it
    explains what is shown; nothing here is wrong)."""
    return Answer("info", _grid_sentence(r))


def _grid_sentence(r: GridDifference) -> str:
    s, dtype = r.settings, r.settings.dtype
    if r.step_taken == 0:
        return (f"x + h rounds back to x in {dtype}: h = {s.h:.3g} is less than half the spacing "
                f"ulp(x) = {r.x.ulp:.3g}, so no step is taken and the difference is 0/0.")
    where = f"{ulps_of_x(r)} above x"
    exact = "exactly h" if r.step_taken == s.h else f"{distinct_digits(r.step_taken, s.h)}, not {s.h:.3g}"
    first = f"x + h is {where}: the step taken is {exact}."
    if r.kept_bits == 0:
        return (f"{first} f(x) and f(x+h) round to the same {dtype} number, so the slope comes out 0 "
                f"(the tangent's is {r.tangent:.4g}).")
    tangent = "" if not math.isfinite(r.tangent) else f", where the tangent's slope is {r.tangent:.4g}"
    # no "so" between shared and kept bits: a borrow (0b0111 vs 0b1000) cancels more than the shared bits
    decimal = max(1, round(r.kept_bits * math.log10(2)))
    # as short as the chart's first screen allows (a longer answer pushed the chart below 720 px)
    return (f"{first} f(x) and f(x+h) agree in their first {r.shared_bits} of {r.precision_bits} binary "
            f"digits; their difference keeps {r.kept_bits} binary digit{'' if r.kept_bits == 1 else 's'} "
            f"(about {decimal} decimal), so the slope is a multiple of {r.quantum:.3g}: here "
            f"{slope_text(r.secant)}{tangent}.")


def secant_series(settings: GridSettings, per_decade: int = 10) -> pd.DataFrame:
    """The secant's slope in the dtype for h on a log grid (columns h, step, secant).

    From a decade below ulp(x)/2 (no step at all) up to about |x|/10 (at least 0.1 and 8 ulps), with
    the chosen h among them. NaN where no step is taken or f is not finite.

    >>> t = secant_series(GridSettings("float32", 1.0, 1e-7, "x**2"))
    >>> bool(t["secant"].isna().any()), float(t.loc[t["h"] == 1e-7, "step"].iloc[0]) == 2 ** -23
    (True, True)
    """
    dtype = settings.dtype
    x = to_dtype(settings.x, dtype)
    # log10(ulp) - log10(2), not log10(ulp / 2): float64's ulp(0) = 2**-1074 halves to 0
    low = math.floor(math.log10(ulp(float(x), dtype)) - math.log10(2)) - 1
    high = math.ceil(math.log10(max(abs(float(x)) / 10, 0.1, 8 * ulp(float(x), dtype))))
    low = min(low, math.floor(math.log10(settings.h)))
    hs = np.unique(np.append(np.logspace(low, high, (high - low) * per_decade + 1), settings.h))
    hs = hs[hs > 0]  # 1e-324 and below are 0 in float64 too
    with computing_in(dtype), np.errstate(all="ignore"):
        xh = x + to_dtype(hs, dtype)
        step = xh - x
        expr = parse(settings.expression)
        secant = (expr(xh) - expr(x)) / step
    step_f = step.double().numpy()
    secant_f = np.where((step_f == 0) | ~np.isfinite(secant.double().numpy()), np.nan,
                        secant.double().numpy())
    return pd.DataFrame({"h": hs, "step": step_f, "secant": secant_f})


def grid_fields(r: GridDifference) -> dict:
    """Every number the page shows, as plain values (the CLI's JSON)."""
    p = printed_values(r)
    s = r.settings
    return {
        "dtype": s.dtype, "emulated": facts(s.dtype).emulated, "expression": s.expression, "h": s.h,
        "x": r.x.value, "x_bits": r.x.bits, "x_hex": r.x.hex, "ulp_x": r.x.ulp,
        "x_plus_h": r.x_plus_h.value, "x_plus_h_bits": r.x_plus_h.bits, "x_plus_h_hex": r.x_plus_h.hex,
        "step_taken": r.step_taken, "steps_in_ulps": steps_in_ulps(r),
        "fx": r.fx.value, "fx_printed": p.fx, "fx_bits": r.fx.bits, "ulp_fx": r.fx.ulp,
        "fx_plus_h": r.fx_plus_h.value, "fx_plus_h_printed": p.fx_plus_h, "fx_plus_h_bits": r.fx_plus_h.bits,
        "shared_decimal_digits": p.shared_digits, "shared_bits": r.shared_bits, "kept_bits": r.kept_bits,
        "precision_bits": r.precision_bits, "secant": r.secant, "tangent": r.tangent,
        "relative_error": r.relative_error, "quantum": r.quantum, "answer": grid_answer(r).text,
    }


def window_points(r: GridDifference, samples: int = 121) -> pd.DataFrame:
    """f in the dtype at grid numbers around x and x + h (columns x, fx; every grid number of
    the window when there are at most ``samples``, else ``samples`` of them): :func:`window_array`
    as a table.

    >>> from gradlab.labs.grid.representable import grid_difference
    >>> w = window_points(grid_difference(GridSettings("float32", 1.0, 1e-7, "x")))
    >>> len(w), bool((w["x"] == w["fx"]).all())  # 4 ulps below 1 (8 half-ulps), 8 ulps above
    (17, True)
    """
    window = window_array(r, samples)
    return pd.DataFrame({"x": window[:, 0], "fx": window[:, 1]})


def window_array(r: GridDifference, samples: int = 121) -> np.ndarray:
    """:func:`window_points` as an array of rows (x, f(x)): what a slider's frames hold, one per
    stop (a table each cost more to build and to pickle than the numbers in it).

    >>> from gradlab.labs.grid.representable import grid_difference
    >>> window_array(grid_difference(GridSettings("float16", 1.0, 1e-3, "2*x")))[:2].tolist()
    [[0.99609375, 1.9921875], [0.99658203125, 1.9931640625]]
    """
    dtype, x = r.settings.dtype, r.x.value
    span = max(r.step_taken, 4 * r.x.ulp)
    largest = facts(dtype).max  # x ± span may pass it (x may be the largest): the window ends there
    low, high = max(x - span, -largest), min(x + span * (1 + (r.step_taken > 0)), largest)
    xs = np.unique(to_dtype(_evenly(low, high, 4 * samples), dtype).double().numpy())
    if len(xs) > samples:
        xs = np.unique(to_dtype(_evenly(xs[0], xs[-1], samples), dtype).double().numpy())
    with computing_in(dtype), np.errstate(all="ignore"):
        fx = parse(r.settings.expression)(to_dtype(xs, dtype)).double().numpy()
    return np.column_stack([xs, np.broadcast_to(fx, xs.shape)])


def _evenly(low: float, high: float, count: int) -> np.ndarray:
    """``count`` numbers evenly from ``low`` to ``high``, also when ``high - low`` is past float64's
    range (a window from near -max to near +max): then spaced in halves and doubled.

    >>> _evenly(-1.5e308, 1.5e308, 3).tolist()
    [-1.5e+308, 0.0, 1.5e+308]
    """
    with np.errstate(over="ignore"):
        if math.isfinite(high - low):
            return np.linspace(low, high, count)
    t = np.linspace(0.0, 1.0, count)  # each half-sized term and their sum stay within max / 2
    return 2 * (low / 2 * (1 - t) + high / 2 * t)
