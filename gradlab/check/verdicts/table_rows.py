"""A checked value read out of a check's per-value table: the row's :class:`Element`, and the worst row.

:func:`worst_position` is the row furthest over its tolerance (among the values in the
check's verdict state, once the table has states); :func:`element` reads one row as an
:class:`~gradlab.check.verdicts.element.Element`, its best estimate once judged.

>>> from gradlab.check.verdicts.columns import Columns
>>> table = Columns({"element": np.array(["x[0]", "x[1]"]), "autograd": np.array([1.0, 2.0]),
...                  "numeric": np.array([1.0, 2.5]), "abs_error": np.array([0.0, 0.5]),
...                  "rel_error": np.array([0.0, 0.2]), "tolerance": np.array([0.1, 0.1]),
...                  "ok": np.array([True, False])})
>>> element(table, worst_position(table)).label
'x[1]'
"""

from __future__ import annotations

import numpy as np

from gradlab.check.verdicts.columns import Columns, own_rows
from gradlab.check.verdicts.element import Element
from gradlab.check.verdicts.states import overall

__all__ = ["worst_position", "worst_position_in", "element"]


def worst_position(table: Columns) -> int:
    """Row of the value furthest over its tolerance (a NaN error counts as furthest), among
    the values in the check's verdict state when the table has states; among the check's own
    values (:func:`own_rows`)."""
    table = own_rows(table)
    return worst_position_in(table, overall(table["state"]) if "state" in table else None)


def worst_position_in(table: Columns, verdict: str | None) -> int:
    """worst_position, given the verdict of the table's states (None: it has none)."""
    if len(table) == 1:  # a single module parameter's block, a one-element check
        return 0
    if verdict is not None and verdict != "pass":
        best = _excess(table["best_abs_error"], table["best_tolerance"], np.inf)
        return int(np.argmax(np.where(table["state"] == verdict, best, -1.0)))
    ok = table["ok"]
    return int(np.argmax(_excess(table["abs_error"], table["tolerance"], nan=0.0 if ok.all() else np.inf)))


def _excess(error: np.ndarray, tolerance: np.ndarray, nan: float) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = error / np.where(tolerance > 0, tolerance, np.inf)
    ratio[np.isnan(ratio)] = nan
    return ratio


def element(table: Columns, pos: int) -> Element:
    """The checked value in row ``pos``: its best estimate when the table has states."""
    row = _Row(table, pos)
    flat = int(row.get("flat", -1))
    if "state" not in table:
        return Element(str(row["element"]), float(row["autograd"]), float(row["numeric"]),
                       float(row["abs_error"]), float(row["rel_error"]), float(row["tolerance"]),
                       flat_index=flat)
    a, n = float(row["autograd"]), float(row["best_numeric"])
    big = max(abs(a), abs(n))
    rel = float(row["best_abs_error"]) / big if big > 0 else 0.0
    return Element(str(row["element"]), a, n, float(row["best_abs_error"]), rel,
                   float(row["best_tolerance"]), error_bound=float(row["error_bound"]),
                   state=str(row["state"]), left_slope=float(row["left_slope"]),
                   right_slope=float(row["right_slope"]), autograd_side=str(row["autograd_side"]),
                   flat_index=flat, bound_source=str(row.get("bound_source", "")),
                   step=float(row["best_step"]), numeric_dtype=str(row["best_dtype"]),
                   found_along=str(row.get("found_along", "")))


class _Row:
    """Row ``pos`` of a table, read column by column as asked (a table has twenty columns;
    an element needs a dozen of them)."""

    def __init__(self, table: Columns, pos: int):
        self._table, self._pos = table, pos

    def __getitem__(self, name: str):
        return self._table[name][self._pos]

    def get(self, name: str, default):
        return self[name] if name in self._table else default
