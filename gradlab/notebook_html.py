"""HTML for Jupyter: a result's headline, its table and its Plotly figure as one block.

A result's ``_repr_html_`` returns :func:`result_html`: every piece of text is
HTML-escaped here (labels and names may come from the user: a dict output's
keys, a parameter's name, an expression), the table is ``DataFrame.to_html``
with escaping on, and the figure is a ``<div>`` that loads plotly.js from its
CDN (``include_plotlyjs="cdn"``), so the notebook file stays small and the
block looks the same in any Jupyter front end with a network connection.

>>> import pandas as pd, plotly.graph_objects as go
>>> page = result_html("<b>f</b>", ["ok"], pd.DataFrame({"a": [1]}), go.Figure())
>>> "&lt;b&gt;f&lt;/b&gt;" in page, "<table" in page, "plotly-graph-div" in page
(True, True, True)
"""

from __future__ import annotations

import html
from typing import Sequence

import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio

__all__ = ["MAX_TABLE_ROWS", "result_html", "figure_div", "table_html"]

#: Rows a notebook table shows; a full check has thousands (the caller picks which).
MAX_TABLE_ROWS = 20


def figure_div(fig: go.Figure) -> str:
    """The figure as an HTML fragment (a ``plotly-graph-div`` and the script that draws it)."""
    return pio.to_html(fig, full_html=False, include_plotlyjs="cdn", validate=False)


def table_html(table: pd.DataFrame, note: str = "") -> str:
    """The table with every cell escaped, and an optional escaped note under it."""
    body = table.to_html(index=False, escape=True, border=0, float_format=lambda v: f"{v:.6g}")
    return body + (f"<p><small>{html.escape(note)}</small></p>" if note else "")


def result_html(title: str, lines: Sequence[str], table: pd.DataFrame, fig: go.Figure,
                table_note: str = "") -> str:
    """Title, lines of text, table and figure: one ``<div>`` a notebook shows as the result."""
    text = "".join(f"<p>{html.escape(line)}</p>" for line in lines if line)
    return (f'<div class="gradlab-result"><h4>{html.escape(title)}</h4>{text}'
            f"{table_html(table, table_note)}{figure_div(fig)}</div>")
