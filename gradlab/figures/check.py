"""The check's error heatmap: a full check's per-element error (or state) in the input's 2-D layout.

The figure :func:`gradlab.check.verdicts.notebook.figure_of` draws for a full check with a
2-D layout (a notebook's ``result.figure()``), and the Grad check page's Heatmap tab. Its
figures are plain dicts (:class:`gradlab.figures.spec.FigureSpec`) turned into a ``go.Figure``
once; an element whose error is exactly 0 cannot sit on the log colour scale: it is blank and
the title counts it.
"""

from __future__ import annotations

import numpy as np

from gradlab.check import STATE_NAMES, STATES
from gradlab.figures.spec import FigureOrSpec, FigureSpec
from gradlab.figures.style import HEATMAP_COLOURSCALE

__all__ = ["ERROR_COLORSCALE", "error_heatmap"]

_HEIGHT = 420
#: The log-error heatmap's scale: the one dark-safe sequential scale (gradlab.figures.style).
ERROR_COLORSCALE = [list(stop) for stop in HEATMAP_COLOURSCALE]


def _title(text: str) -> dict:
    return {"text": text}


def error_heatmap(error_map: np.ndarray, states: np.ndarray | None = None) -> FigureOrSpec:
    """log10 of the per-element relative error of a full check, in the input's 2-D layout;
    with ``states`` (the same shape, names from :mod:`gradlab.check.verdicts.states`) each element is
    coloured by its state instead, the relative error in the hover.

    >>> fig = error_heatmap(np.array([[1e-3, 0.0], [1e-6, 1e-2]]))
    >>> fig.data[0].z.tolist(), fig.layout.yaxis.autorange
    ([[-3.0, nan], [-6.0, -2.0]], 'reversed')
    >>> fig = error_heatmap(np.array([[1e-3, 0.0]]), np.array([["pass", "fail"]]))
    >>> [list(row) for row in fig.data[0].z], fig.data[0].colorscale[2][1] == STATES["fail"].colour
    ([[0, 1]], True)
    """
    if states is not None:
        return _state_heatmap(np.asarray(error_map, dtype=np.float64), np.asarray(states))
    values = np.asarray(error_map, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.where(values > 0, np.log10(values), np.nan)
    exact = int((values == 0).sum())
    fig = FigureSpec()
    fig.add_trace(dict(
        type="heatmap", z=logs, colorscale=ERROR_COLORSCALE, colorbar=dict(title=_title("log10 rel. error")),
        customdata=values,
        hovertemplate="x[%{y}, %{x}]<br>relative error = %{customdata:.2e}<extra></extra>",
    ))
    title = "Relative error of every element (full check)"
    if exact:
        title += f"<br><sup>{exact} elements agree exactly (blank)</sup>"
    fig.update_yaxes(autorange="reversed", title=_title("row"))
    fig.update_xaxes(title=_title("column"))
    fig.update_layout(title=_title(title), height=_HEIGHT)
    return fig.figure()


def _state_heatmap(values: np.ndarray, states: np.ndarray) -> FigureOrSpec:
    """Each element in its state's colour (one band per state of STATE_NAMES)."""
    n = len(STATE_NAMES)
    code = {name: k for k, name in enumerate(STATE_NAMES)}
    z = np.vectorize(code.__getitem__, otypes=[int])(states)
    scale = [band for k, name in enumerate(STATE_NAMES)
             for band in ([k / n, STATES[name].colour], [(k + 1) / n, STATES[name].colour])]
    labels = np.vectorize(lambda s: STATES[s].label, otypes=[object])(states)
    fig = FigureSpec()
    fig.add_trace(dict(
        type="heatmap", z=z.tolist(), zmin=-0.5, zmax=n - 0.5, colorscale=scale,
        colorbar=dict(title=_title("state"), tickvals=list(range(n)),
                      ticktext=[STATES[name].label for name in STATE_NAMES]),
        customdata=np.dstack([values, labels]).tolist(),
        hovertemplate="x[%{y}, %{x}]<br>%{customdata[1]}<br>relative error at the check's step = "
                      "%{customdata[0]:.2e}<extra></extra>",
    ))
    counts = ", ".join(f"{int((states == name).sum())} {STATES[name].label}" for name in STATE_NAMES
                       if (states == name).any())
    fig.update_yaxes(autorange="reversed", title=_title("row"))
    fig.update_xaxes(title=_title("column"))
    fig.update_layout(title=_title(f"State of every element (full check)<br><sup>{counts}</sup>"),
                      height=_HEIGHT)
    return fig.figure()
