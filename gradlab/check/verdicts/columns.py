"""A check's per-value table as numpy columns; the pandas DataFrame is built on first use.

A check makes, judges and summarises its table column by column, and most
callers (a pytest assertion, a script reading ``verdict``) never look at it
as a table. Building a DataFrame costs more than a small check itself, so it
is built only when asked for (:meth:`Columns.frame`, ``CheckResult.table``).

>>> t = Columns({"element": np.array(["x[0]", "x[1]"], dtype=object), "ok": np.array([True, False])})
>>> len(t), "ok" in t, t["ok"].tolist()
(2, True, [True, False])
>>> t.joined(state=np.array(["pass", "fail"], dtype=object)).frame()[["element", "state"]].values.tolist()
[['x[0]', 'pass'], ['x[1]', 'fail']]

A column only a reader needs (labels, ratios) can be given as :class:`Later`: computed
on first read, once for a table and every table joined from it.

>>> Columns({"x": np.array([2.0]), "half": Later(lambda: np.array([1.0]))})["half"].tolist()
[1.0]
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["Columns", "Later", "filled", "own_rows"]


class Later:
    """A column computed on its first read (then kept; shared by the tables joined from one)."""

    __slots__ = ("_make", "_column")

    def __init__(self, make):
        self._make, self._column = make, None

    def __call__(self) -> np.ndarray:
        if self._make is not None:
            with np.errstate(all="ignore"):  # read after the check: quiet as the check is (engine.first_order)
                self._column, self._make = self._make(), None
        return self._column


class Columns:
    """Named numpy columns of equal length; ``len()`` is the number of rows."""

    __slots__ = ("_data", "_rows", "_frame")

    def __init__(self, data: dict[str, np.ndarray | Later], rows: int | None = None):
        self._data = dict(data)
        lengths = {len(v) for v in self._data.values() if type(v) is not Later}
        if len(lengths) > 1:
            raise ValueError(f"columns of different lengths: {sorted(lengths)}")
        self._rows = rows if rows is not None else (lengths.pop() if lengths else 0)
        self._frame: pd.DataFrame | None = None

    def __getitem__(self, name: str) -> np.ndarray:
        column = self._data[name]
        if type(column) is Later:
            column = self._data[name] = column()
        return column

    def __reduce__(self):
        """Pickled with every column computed (a Later holds a function)."""
        return Columns, ({name: self[name] for name in self._data}, self._rows)

    def __contains__(self, name: object) -> bool:
        return name in self._data

    def __len__(self) -> int:
        return self._rows

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._data)

    def joined(self, **columns: np.ndarray) -> "Columns":
        """These columns with ``columns`` added (or replaced)."""
        return Columns({**self._data, **columns}, self._rows)

    def stacked(self, other: "Columns", **columns: np.ndarray) -> "Columns":
        """This table's rows, then ``other``'s (the same column names), with ``columns``
        (full length) added or replaced. A column is joined when first read.

        >>> a = Columns({"x": np.array([1.0]), "k": Later(lambda: np.array(["a"], dtype=object))})
        >>> b = Columns({"x": np.array([2.0, 3.0]), "k": np.array(["b", "b"], dtype=object)})
        >>> t = a.stacked(b)
        >>> len(t), t["x"].tolist(), t["k"].tolist()
        (3, [1.0, 2.0, 3.0], ['a', 'b', 'b'])
        """
        if set(self._data) != set(other._data):
            raise ValueError(f"different columns: {sorted(set(self._data) ^ set(other._data))}")
        joined = {name: Later(lambda name=name: _joined(self[name], other[name])) for name in self._data}
        return Columns({**joined, **columns}, self._rows + other._rows)

    def taken(self, rows: np.ndarray) -> "Columns":
        """The rows ``rows`` (integer positions, in that order; each column taken when first read).

        >>> Columns({"x": np.array([1.0, 2.0, 3.0])}).taken(np.array([2, 0]))["x"].tolist()
        [3.0, 1.0]
        """
        return Columns({name: Later(lambda name=name: self[name][rows]) for name in self._data}, len(rows))

    def head(self, rows: int) -> "Columns":
        """The first ``rows`` rows (each column cut when first read).

        >>> Columns({"x": np.array([1.0, 2.0, 3.0])}).head(2)["x"].tolist()
        [1.0, 2.0]
        """
        if rows >= self._rows:
            return self
        return Columns({name: Later(lambda name=name: self[name][:rows]) for name in self._data}, rows)

    def frame(self) -> pd.DataFrame:
        """The table as a DataFrame (built once, then shared: treat it as read-only)."""
        if self._frame is None:
            self._frame = pd.DataFrame({name: self[name] for name in self._data}, index=pd.RangeIndex(self._rows))
        return self._frame


def _joined(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a then b; an object column stays one (numpy would make tuples of an index column 2-D)."""
    if a.dtype == object or b.dtype == object:
        column = np.empty(len(a) + len(b), dtype=object)
        column[:len(a)], column[len(a):] = a, b
        return column
    return np.concatenate([a, b])


def filled(shape, value, dtype=object) -> np.ndarray:
    """np.full(shape, value, dtype) without its Python wrapper (a third of its cost on a small
    table), and for a str in an object column without its detour through a str array.

    >>> filled(2, "pass").tolist(), filled(1, 0.5, np.float64).dtype
    (['pass', 'pass'], dtype('float64'))
    """
    column = np.empty(shape, dtype=dtype)
    column.fill(value)
    return column


def own_rows(table: Columns) -> Columns:
    """The check's own values: ``table`` without the rows of the elements a failing
    direction was narrowed to (:func:`gradlab.check.verdicts.report.with_narrowed`), which follow them.
    Here, in the leaf module of tables, so the notebook view reads it without importing the
    report (report imports results, whose display imports the notebook view)."""
    if len(table) < 2 or "kind" not in table:
        return table
    kind = table["kind"]
    if kind[-1] == kind[0]:
        return table
    return table.head(int(np.count_nonzero(kind == kind[0])))
