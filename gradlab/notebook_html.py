"""HTML for Jupyter: a result's headline, its table and its Plotly figure as one block.

A result's ``_repr_html_`` returns :func:`result_html`: every piece of text is
HTML-escaped here (labels and names may come from the user: a dict output's
keys, a parameter's name, an expression), the table is ``DataFrame.to_html``
with escaping on, and the figure is a ``<div>`` drawn by the installed plotly.js,
with no network at all: the first figure of a process (a Jupyter kernel) carries
plotly.js itself, inline (about 5 MB, once), and every later one uses it from the
page. A CDN would draw nothing offline or where it is blocked, and served an older
plotly.js than the installed one. A later figure whose page has no plotly.js (the
first output was cleared) says so and names :func:`reset_plotlyjs`.

>>> import pandas as pd, plotly.graph_objects as go
>>> page = result_html("<b>f</b>", ["ok"], pd.DataFrame({"a": [1]}), go.Figure())
>>> "&lt;b&gt;f&lt;/b&gt;" in page, "<table" in page, "plotly-graph-div" in page
(True, True, True)
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Callable, Sequence, TypeVar

import pandas as pd

from gradlab.errors import GradLabError

if TYPE_CHECKING:  # Plotly is the web lab's: the checker installs without it (NO_PLOTLY)
    import plotly.graph_objects as go

__all__ = ["MAX_TABLE_ROWS", "NO_PLOTLY", "NoPlotly", "result_html", "figure_div", "table_html", "reset_plotlyjs", "plotted"]

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


#: Whether this process has handed out plotly.js already (in the first figure's HTML).
_PLOTLYJS = {"embedded": False}

#: Shown, instead of a blank figure, where a later figure finds no plotly.js on its page.
_NO_PLOTLYJS = (
    '<div class="gradlab-no-plotlyjs" style="display:none"><p><small>This figure needs plotly.js, '
    "which the first GradLab figure of this kernel carried; that output is gone. Run "
    "<code>gradlab.notebook_html.reset_plotlyjs()</code>, then this cell again.</small></p></div>"
    "<script>if (!window.Plotly && document.currentScript) "
    "{ document.currentScript.previousElementSibling.style.display = 'block'; }</script>")


def reset_plotlyjs() -> None:
    """Make the next figure carry plotly.js again (after the output that carried it was cleared).

    >>> import plotly.graph_objects as go
    >>> reset_plotlyjs(); "plotly.js v" in figure_div(go.Figure()), "plotly.js v" in figure_div(go.Figure())
    (True, False)
    """
    _PLOTLYJS["embedded"] = False


def figure_div(fig: go.Figure) -> str:
    """The figure as an HTML fragment (a ``plotly-graph-div`` and the script that draws it); the
    process's first also carries the installed plotly.js, inline (see the module docstring)."""
    import plotly.io as pio

    first = not _PLOTLYJS["embedded"]
    html = pio.to_html(fig, full_html=False, include_plotlyjs=first, validate=False)
    _PLOTLYJS["embedded"] = True
    return html if first else _NO_PLOTLYJS + html


def table_html(table: pd.DataFrame, note: str = "") -> str:
    """The table with every cell escaped, and an optional escaped note under it."""
    body = table.to_html(index=False, escape=True, border=0, float_format=lambda v: f"{v:.6g}")
    return body + (f"<p><small>{html.escape(note)}</small></p>" if note else "")


def result_html(title: str, lines: Sequence[str], table: pd.DataFrame, fig: Callable[[], go.Figure],
                table_note: str = "") -> str:
    """Title, lines of text, table and figure: one ``<div>`` a notebook shows as the result.
    ``fig`` builds the figure (a figure itself will do); without Plotly installed the block says
    :data:`NO_PLOTLY` where the figure would be, and shows the rest."""
    text = "".join(f"<p>{html.escape(line)}</p>" for line in lines if line)
    try:
        drawn = figure_div(plotted(fig if callable(fig) else lambda: fig))
    except NoPlotly:  # only that: any other failure of the figure is the caller's to see
        drawn = f"<p><small>{html.escape(NO_PLOTLY)}</small></p>"
    return (f'<div class="gradlab-result"><h4>{html.escape(title)}</h4>{text}'
            f"{table_html(table, table_note)}{drawn}</div>")
