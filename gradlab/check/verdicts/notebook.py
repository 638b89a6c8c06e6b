"""A check result in a notebook: its headline, its worst values as a table, and a figure.

``CheckResult._ipython_display_``, ``_repr_html_`` and ``figure`` delegate here (one-line
methods), so Jupyter shows a check as soon as it is the cell's value:

- :func:`figure_of`: the error heatmap (:func:`gradlab.figures.check.error_heatmap`)
  of a full check of a 1-D or 2-D input, otherwise the per-value chart
  (:func:`gradlab.figures.check_values.value_errors_figure`);
- :func:`block_of`: the summary (headline, message and hint, the settings),
  the values furthest over their tolerance, and the figure, as a notebook shows them
  (:class:`gradlab.notebook_html.NotebookBlock`: text escaped, the figure through Plotly's renderer).

>>> from gradlab.check.running.engine import check_gradient
>>> r = check_gradient(torch.sin, torch.ones(3, 2, dtype=torch.float64), mode="full")
>>> figure_of(r).data[0].type, "<table" in block_of(r).html()
('heatmap', True)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import pandas as pd
import torch  # noqa: F401 - the doctest

from gradlab.check.verdicts.columns import own_rows
from gradlab.notebook_html import MAX_TABLE_ROWS, NotebookBlock, plotted

if TYPE_CHECKING:
    from gradlab.figures.spec import FigureOrSpec


class CheckResult(Protocol):
    """What this module reads of a :class:`gradlab.check.verdicts.results.CheckResult`, whose own methods
    call this module (a protocol, not an import: the dependency runs one way)."""

    summary: Any
    table: pd.DataFrame
    columns: Any
    error_map: Any

    def worst_rows(self, rows: int) -> pd.DataFrame: ...

__all__ = ["figure_of", "table_of", "block_of"]

#: The columns a notebook table shows, when the result's table has them.
_COLUMNS = ("element", "state", "ok", "autograd", "numeric", "abs_error", "tolerance", "error_bound")


def figure_of(result: CheckResult) -> FigureOrSpec:
    """The heatmap of a full check with a 2-D layout, else |difference| per checked value (the
    check's own: a failing direction's elements, rows of the table after them, are not drawn).
    Plotly is imported here, when a figure is drawn: the checker runs without it."""
    def build() -> FigureOrSpec:
        from gradlab.figures.check import error_heatmap
        from gradlab.figures.check_values import value_errors_figure

        if result.error_map is not None:
            return error_heatmap(result.error_map)
        return value_errors_figure(result.table.head(len(own_rows(result.columns))))
    return plotted(build)


def table_of(result: CheckResult, rows: int = MAX_TABLE_ROWS) -> pd.DataFrame:
    """The ``rows`` values furthest over their tolerance (a NaN difference counts as furthest).

    >>> from gradlab.check.running.engine import check_gradient
    >>> r = check_gradient(lambda t: t.detach() * t, torch.tensor([1.0, 3.0], dtype=torch.float64),
    ...                    mode="full")
    >>> table_of(r)["element"].tolist()  # autograd says t, the truth is 2t: t[1] is further out
    ['t[1]', 't[0]']
    """
    table = result.worst_rows(rows)
    return table[[c for c in _COLUMNS if c in table]].reset_index(drop=True)


def block_of(result: CheckResult) -> NotebookBlock:
    """The summary, the worst values and the figure, as a notebook shows them."""
    s = result.summary
    settings = (f"{s.mode} mode, {s.scheme} differences, h = {s.step:.3g}, {s.dtype} autograd, "
                f"{s.numeric_dtype} finite differences, reduction {s.reduction}, "
                f"rtol {s.rtol:g}, atol {s.atol:g}; {s.checked} values checked.")
    table = table_of(result)
    note = (f"The {len(table)} values furthest over their tolerance, of {len(result.table)}."
            if len(table) < len(result.table) else "")
    return NotebookBlock(s.headline, [s.text, settings], table, lambda: figure_of(result), note)
