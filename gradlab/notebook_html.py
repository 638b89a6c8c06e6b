"""A result in Jupyter: its headline and table as escaped HTML, its figure through Plotly's own renderer.

A result's ``_ipython_display_`` calls :meth:`NotebookBlock.display`: the headline, the lines and
the table as one HTML output (every piece of text HTML-escaped here: labels and names may come
from the user: a dict output's keys, a parameter's name, an expression; the table is
``DataFrame.to_html`` with escaping on), then the figure's ``show()``, so Plotly's renderer for the
notebook at hand draws it (``plotly.io.renderers.default``: JupyterLab's and VS Code's mimetype,
the classic notebook's offline plotly.js, Colab's), as any Plotly figure in that notebook. Outside
a Jupyter kernel (a terminal IPython) only the text and table are shown: ``figure()`` gives the
figure. ``_repr_html_`` (what a frontend without IPython's display asks) is the same text and table.

>>> import pandas as pd, plotly.graph_objects as go
>>> block = NotebookBlock("<b>f</b>", ["ok"], pd.DataFrame({"a": [1]}), go.Figure)
>>> page = block.html()
>>> "&lt;b&gt;f&lt;/b&gt;" in page, "<table" in page, "plotly" in page
(True, True, False)
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Sequence, TypeVar

import pandas as pd

from gradlab.errors import GradLabError

if TYPE_CHECKING:  # Plotly is the web lab's: the checker installs without it (NO_PLOTLY)
    import plotly.graph_objects as go

__all__ = ["MAX_TABLE_ROWS", "NO_PLOTLY", "NoPlotly", "NotebookBlock", "ShownInNotebook", "table_html", "plotted"]

#: Said where a figure would be when Plotly is not installed: ``pip install gradlab`` installs the
#: checker (torch, numpy, pandas, sympy, mpmath); ``gradlab[app]`` adds the web lab and its figures.
NO_PLOTLY = "Its figure needs Plotly, which the web lab installs: pip install \"gradlab[app]\"."

_T = TypeVar("_T")


class NoPlotly(GradLabError):
    """A figure was asked for where Plotly is not installed (its message: :data:`NO_PLOTLY`)."""


def plotted(build: Callable[[], _T]) -> _T:
    """``build()``, a figure; without Plotly installed a :class:`NoPlotly` saying how to get it."""
    try:
        return build()
    except ModuleNotFoundError as err:
        if (err.name or "").split(".")[0] != "plotly":
            raise
        raise NoPlotly(NO_PLOTLY) from err

#: Rows a notebook table shows; a full check has thousands (the caller picks which).
MAX_TABLE_ROWS = 20


def table_html(table: pd.DataFrame, note: str = "") -> str:
    """The table with every cell escaped, and an optional escaped note under it."""
    body = table.to_html(index=False, escape=True, border=0, float_format=lambda v: f"{v:.6g}")
    return body + (f"<p><small>{html.escape(note)}</small></p>" if note else "")


@dataclass(frozen=True)
class NotebookBlock:
    """What a result shows in a notebook: a title, lines of text, a table (with a note under it)
    and a figure, built only when it is drawn (``figure()``: Plotly is the web lab's)."""

    title: str
    lines: Sequence[str]
    table: pd.DataFrame
    figure: Callable[[], "go.Figure"]
    table_note: str = ""

    def html(self) -> str:
        """The title, the lines and the table as one escaped ``<div>``."""
        text = "".join(f"<p>{html.escape(line)}</p>" for line in self.lines if line)
        return (f'<div class="gradlab-result"><h4>{html.escape(self.title)}</h4>{text}'
                f"{table_html(self.table, self.table_note)}</div>")

    def display(self) -> None:
        """:meth:`html` as an output, then the figure through Plotly's renderer (module docstring);
        without Plotly, :data:`NO_PLOTLY` where the figure would be."""
        from IPython import get_ipython
        from IPython.display import HTML, display

        display(HTML(self.html()))
        if getattr(get_ipython(), "kernel", None) is None:
            return  # a terminal: Plotly's renderer there opens a web browser
        try:
            figure = plotted(self.figure)
        except NoPlotly:  # only that: any other failure of the figure is the caller's to see
            display(HTML(f"<p><small>{html.escape(NO_PLOTLY)}</small></p>"))
            return
        figure.show()


class ShownInNotebook:
    """A result Jupyter shows through its :class:`NotebookBlock` (``_notebook_block()``, the
    result's own): the block's display in a kernel, its HTML elsewhere."""

    def _notebook_block(self) -> NotebookBlock:
        raise NotImplementedError

    def _repr_html_(self) -> str:
        return self._notebook_block().html()

    def _ipython_display_(self) -> None:
        self._notebook_block().display()
