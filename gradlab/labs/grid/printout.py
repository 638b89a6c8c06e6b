"""What the Grid page prints under its chart, as Markdown: the facts of one difference, its numbers
and their bits with what f(x) and f(x+h) share marked, and the precision table of every dtype.

The marks are Streamlit's Markdown (``:orange-background[...]``): the leading digits and bits the
subtraction f(x+h) − f(x) cancels. Each field of a bit pattern (sign, exponent, the fraction in
bytes) is a code span of its own, so a phone can wrap them.

>>> from gradlab.labs.grid.representable import GridSettings, grid_difference
>>> r = grid_difference(GridSettings("float32", 1.0, 1e-7, "sin(x)"))
>>> print(facts_text(r).splitlines()[1])
- shared: 5 decimal digits, 23 of 24 bits; the difference keeps **1 significant bit**
>>> marked_bits("0 01111110 1010111011010101", 23)
':orange-background[`0`] :orange-background[`01111110`] :orange-background[`10101110`] :orange-background[`11010101`]'
"""

from __future__ import annotations

from functools import lru_cache

import pandas as pd

from gradlab.labs.grid.representable import GridDifference
from gradlab.labs.grid.story import printed_values, ulps_of_x
from gradlab.numerics.dtypes import ALL_DTYPE_NAMES
from gradlab.numerics.precision_table import COLUMNS, precision_table

__all__ = ["facts_text", "values_table", "marked", "marked_bits", "dtype_table"]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def facts_text(r: GridDifference) -> str:
    """The facts of ``r`` as a Markdown list: the step taken, the digits and bits shared and kept,
    the secant against the tangent, and the values the secant can take."""
    p = printed_values(r)
    return (f"- step taken (x+h) − x: **{r.step_taken!r}** = {ulps_of_x(r)} of x "
            f"(asked: h = {r.settings.h:g})\n"
            f"- shared: {_plural(p.shared_digits, 'decimal digit')}, "
            f"{r.shared_bits} of {r.precision_bits} bits; "
            f"the difference keeps **{_plural(r.kept_bits, 'significant bit')}**\n"
            f"- secant (f(x+h) − f(x)) / step: **{r.secant:.6g}**; tangent f′(x): **{r.tangent:.6g}**\n"
            f"- the secant can only be a multiple of ulp(f)/step = **{r.quantum:.4g}**")


def values_table(r: GridDifference) -> str:
    """Two Markdown tables: x, x + h, f(x) and f(x+h) with the spacing there, then their bits; the
    digits and bits f(x) and f(x+h) share marked."""
    p = printed_values(r)
    return "\n".join([
        "| | value | spacing (ulp) there |", "|---|---|---|",
        f"| x | `{r.x.value!r}` | {r.x.ulp:.3g} |",
        f"| x + h | `{r.x_plus_h.value!r}` | {r.x_plus_h.ulp:.3g} |",
        f"| f(x) | {marked(p.fx, p.shared_chars)} | {r.fx.ulp:.3g} |",
        f"| f(x+h) | {marked(p.fx_plus_h, p.shared_chars)} | {r.fx_plus_h.ulp:.3g} |",
        "", "| | bits: sign, exponent, fraction |", "|---|---|",
        f"| x | {marked_bits(r.x.bits, 0)} |",
        f"| x + h | {marked_bits(r.x_plus_h.bits, 0)} |",
        f"| f(x) | {marked_bits(r.fx.bits, r.shared_bits)} |",
        f"| f(x+h) | {marked_bits(r.fx_plus_h.bits, r.shared_bits)} |",
    ])


def marked(text: str, shared: int) -> str:
    """``text`` as code with its first ``shared`` characters marked (the digits the subtraction cancels).

    >>> marked("0.84147096", 7), marked("0.5", 0), marked("0.5", 3)
    (':orange-background[`0.84147`]`096`', '`0.5`', ':orange-background[`0.5`]')
    """
    if shared == 0:
        return f"`{text}`"
    return f":orange-background[`{text[:shared]}`]`{text[shared:]}`" if text[shared:] else \
        f":orange-background[`{text}`]"


def marked_bits(bits: str, shared_bits: int) -> str:
    """Sign, exponent and fraction (in bytes) as separate code spans; the sign, the exponent and the
    ``shared_bits`` leading significand bits marked (the implicit 1 counts as one)."""
    sign, exponent, fraction = bits.split(" ")
    groups = [sign, exponent] + [fraction[i:i + 8] for i in range(0, len(fraction), 8)]
    left = len(sign) + len(exponent) + shared_bits - 1 if shared_bits else 0
    out = []
    for group in groups:
        cut, left = min(max(left, 0), len(group)), left - len(group)
        out.append(marked(group, cut).replace("``", ""))
    return " ".join(out)


def dtype_table() -> pd.DataFrame:
    """The precision table of every dtype, native and emulated, as the page shows it: numbers to three
    digits, "emulated" in words, the columns named for a reader. A copy of one table: every view
    shows it and nothing in it depends on the view.

    >>> t = dtype_table()
    >>> len(t), t.loc[t["dtype"] == "float32", "emulated"].item()
    (6, 'no')
    """
    return _dtype_table().copy()


@lru_cache(maxsize=1)
def _dtype_table() -> pd.DataFrame:
    table = precision_table()
    table = table[table["name"].isin(ALL_DTYPE_NAMES)].reset_index(drop=True)
    for column in table.columns:
        if table[column].dtype == float:
            table[column] = table[column].map(lambda v: f"{v:.3g}")
    table["emulated"] = table["emulated"].map({True: "yes (in float32)", False: "no"})
    return table.rename(columns=COLUMNS)
