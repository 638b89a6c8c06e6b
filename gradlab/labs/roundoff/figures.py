"""The Round-off page's figures: pure functions, the engine's table -> a Plotly figure.

Built for a projector and a phone alike: short titles, the legend below the plot
(horizontal), few x ticks and margins that grow to fit (``automargin``). What the
browser draws stays small whatever the number of points: the histograms and the
error-by-x chart are binned here, over *every* compared point, so a 100,000-point
comparison draws a few hundred marks, not 200,000 SVG points (those would be most of the
1-1.6 s between an input and the updated chart on a classroom's projector).

>>> import pandas as pd
>>> fig = ulp_distance_bars(pd.DataFrame({"ulps": [0, 1], "count": [6, 4], "fraction": [0.6, 0.4]}), "A", "B")
>>> fig.data[0].type, fig.layout.legend.yref, fig.layout.legend.y
('bar', 'container', 0)
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from gradlab.figures.spec import LOG_AXIS, FigureOrSpec, FigureSpec, specs_only
from gradlab.figures.style import FORMULA_A, FORMULA_B, TRUTH
from gradlab.literal_text import plotly_literal

__all__ = ["ulp_distance_bars", "error_histogram", "error_by_x", "page_figures", "sent_figure", "x_bins",
           "MAIN_CHART_HEIGHT"]

#: Bins of the ulp-error histograms: a twentieth of an ulp resolves the 0.5-ulp line.
ERROR_BIN_ULP = 0.05
#: Above this many ulps an error axis becomes logarithmic (cancellation gives millions).
LINEAR_ULP_AXIS_MAX = 4.0
#: Bin width of the error histogram on its log axis, in decades.
LOG_ERROR_BIN = 0.1
#: More distinct ulp distances than this are grouped by decade, from FIRST_GROUPED up.
MAX_BARS = 12
FIRST_GROUPED = 3
#: Bins along x of the error-by-x chart: enough to show where errors grow, few enough to draw at once.
X_BINS = 80
#: Heights (px): the main chart fits the first screen at 1280x720 under the controls and the answer.
MAIN_CHART_HEIGHT = 335
SIDE_CHART_HEIGHT = 340
#: At most this many x ticks: labels stay apart on a 390 px phone.
X_TICKS = 6
#: How far (px) the title sits below the top: under the row of the modebar's buttons.
TITLE_DROP = 30


def _array(values) -> np.ndarray:
    """Plain numpy for the unvalidated figure (plotly's JSON encoder takes numpy as is)."""
    return np.asarray(values)


def _layout(fig: FigureSpec, title: str, x_title: str, height: int) -> FigureOrSpec:
    """Title top left, legend below the plot, few ticks: the same at 1280 px and at 390 px.

    No y-axis title: the title says what y is ("% of points", "error in ulp"), and an axis
    title would cost a phone's plot 25 px of its width (it must keep 300 of 356).
    """
    fig.update_layout(
        # The title sits under the modebar's row, so the buttons never cover it on a narrow phone.
        title=dict(text=title, x=0, xanchor="left", xref="paper", y=1, yref="container", yanchor="top",
                   pad=dict(t=TITLE_DROP)),
        # The legend at the figure's bottom edge: the plot area makes room for it and the x title.
        height=height, legend=dict(orientation="h", yref="container", yanchor="bottom", y=0, xanchor="left", x=0),
        margin=dict(l=4, r=4, t=TITLE_DROP + 32, b=10), hovermode="closest",
    )
    fig.update_xaxes(title=dict(text=x_title), nticks=X_TICKS, automargin=True)
    fig.update_yaxes(automargin=True)
    return fig.figure()


def _faint(colour: str, alpha: float = 0.25) -> str:
    """A "#rrggbb" colour as a see-through fill: the other formula's outline shows through it.

    >>> _faint("#1f5fbf")
    'rgba(31, 95, 191, 0.25)'
    """
    r, g, b = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r}, {g}, {b}, {alpha})"


def _decade_bins(hist: pd.DataFrame) -> pd.DataFrame:
    """0, 1, 2 ulps as they are, larger distances grouped by decade (3–9, 10–99, ...).

    Grouped with numpy over the group numbers, and a label written once per group: a cancellation
    has tens of thousands of distinct distances, and a label per distance (then a pandas groupby
    over the strings) costs 40-50 ms per figure.

    >>> _decade_bins(pd.DataFrame({"ulps": [0, 2, 3, 9, 10, 250], "count": [1, 1, 1, 1, 1, 5],
    ...                            "fraction": [.1, .1, .1, .1, .1, .5]}))[["ulps", "count"]].values.tolist()
    [['0', 1], ['2', 1], ['3–9', 2], ['1e1–1e2', 1], ['1e2–1e3', 5]]
    """
    ulps = hist["ulps"].to_numpy()
    decade = np.floor(np.log10(np.maximum(ulps, 1))).astype(int)
    order = np.where(ulps < FIRST_GROUPED, ulps, FIRST_GROUPED + decade)
    groups, index = np.unique(order, return_inverse=True)
    labels = [str(g) if g < FIRST_GROUPED else f"{FIRST_GROUPED}–9" if g == FIRST_GROUPED
              else f"1e{g - FIRST_GROUPED}–1e{g - FIRST_GROUPED + 1}" for g in groups.tolist()]
    return pd.DataFrame({
        "order": groups, "ulps": labels,
        "count": np.bincount(index, weights=hist["count"].to_numpy(), minlength=len(groups)).astype("int64"),
        "fraction": np.bincount(index, weights=hist["fraction"].to_numpy(), minlength=len(groups)),
    })


def ulp_distance_bars(hist: pd.DataFrame, label_a: str, label_b: str) -> FigureOrSpec:
    """Bars: how often the two formulas are 0, 1, 2, ... floats apart (from ``ulp_histogram``): a count
    of floats, which is a distance in ulps only within one binade.

    Many distinct distances (a cancellation gives millions) are grouped by decade,
    so the chart never has more than a few dozen bars.
    """
    if len(hist) > MAX_BARS:
        hist = _decade_bins(hist)
    fig = FigureSpec()
    fig.add_trace(dict(
        type="bar", x=_array(hist["ulps"].astype(str)), y=_array(hist["fraction"]), marker=dict(color=FORMULA_A),
        text=[f"{f:.1%}" for f in hist["fraction"]], textposition="outside", cliponaxis=False,
        customdata=_array(hist["count"]), name="A–B distance", showlegend=False,
        hovertemplate="%{x} floats apart: %{customdata:,} points (%{y:.1%})<extra></extra>",
    ))
    fig.update_yaxes(tickformat=".0%", rangemode="tozero")
    fig.update_xaxes(type="category")
    return _layout(fig, "A–B distance (% of points)", "floats apart (0 = same bits, 1 = neighbours)",
                   SIDE_CHART_HEIGHT)


def _used(table: pd.DataFrame, *more: str) -> tuple[dict[str, np.ndarray], float]:
    """Both errors and the columns ``more`` at the compared points (numpy, the rows where both
    errors are known) and the worst error of either formula (1 when there is none). Masked column
    by column: copying the whole table without its NaN rows (``dropna``) cost more than the chart.

    >>> used, top = _used(pd.DataFrame({"x": [1.0, 2.0, 3.0], "ulps_a_exact": [0.5, np.nan, 2.0],
    ...                                 "ulps_b_exact": [0.25, 1.0, 0.0]}), "x")
    >>> used["x"].tolist(), top
    ([1.0, 3.0], 2.0)
    """
    a, b = table["ulps_a_exact"].to_numpy(), table["ulps_b_exact"].to_numpy()
    keep = ~(np.isnan(a) | np.isnan(b))
    used = {"ulps_a_exact": a[keep], "ulps_b_exact": b[keep]} | {c: table[c].to_numpy()[keep] for c in more}
    top = float(max(used["ulps_a_exact"].max(), used["ulps_b_exact"].max())) if keep.any() else 1.0
    return used, top


def error_histogram(table: pd.DataFrame, label_a: str, label_b: str) -> FigureOrSpec:
    """Each formula's histogram of its distance from the exact value, in ulps, as a step outline; 0.5 ulp marked.

    Binned here, not in the browser: 100,000 raw values would be megabytes of JSON
    per view; the outline is a few hundred numbers. Trace ``i`` holds the bin edges
    as x and each bin's fraction of the points as y (a final 0 closes the outline).
    """
    label_a, label_b = plotly_literal(label_a), plotly_literal(label_b)  # formulas a visitor typed
    used, top = _used(table)
    log_errors = top > LINEAR_ULP_AXIS_MAX
    columns = {label_a: used["ulps_a_exact"], label_b: used["ulps_b_exact"]}
    if log_errors:
        columns = {k: np.log10(np.maximum(v, ERROR_BIN_ULP)) for k, v in columns.items()}
    edges = _error_bin_edges(columns.values(), log_errors, top)
    fig = FigureSpec()
    for (label, values), color, side in zip(columns.items(), (FORMULA_A, FORMULA_B), ("A", "B")):
        counts, _ = np.histogram(values, bins=edges)
        # A step outline over the bin edges (each bin's fraction held from its left edge, 0 after the
        # last): two paths for the browser to draw instead of a rectangle per bin, and the two
        # formulas stay apart where they overlap.
        fig.add_trace(dict(
            type="scatter", mode="lines", x=edges, y=np.append(counts / max(len(values), 1), 0.0),
            line=dict(color=color, shape="hv", width=2.5), fill="tozeroy", fillcolor=_faint(color),
            name=f"{side}: {label}",
            customdata=np.stack([edges, np.append(edges[1:], edges[-1]), np.append(counts, 0)], axis=1),
            hovertemplate="%{customdata[0]:.3g} to %{customdata[1]:.3g}: %{customdata[2]:,} points "
                          "(%{y:.1%})<extra>" + label + "</extra>",
        ))
    fig.update_yaxes(tickformat=".0%")
    if log_errors:  # the values are log10 already: a linear axis
        x_title = "log10 of the error in ulp (below 0.05 counted at 0.05)"
        half_ulp = float(np.log10(0.5))
    else:
        x_title = "error in ulp (distance from the exact value)"
        half_ulp = 0.5
    fig.add_vline(half_ulp, text="≤ 0.5 ulp: correctly rounded", position="top right", dash="dot", color=TRUTH,
                  width=2)
    return _layout(fig, "How far from exact? (% of points)", x_title, MAIN_CHART_HEIGHT)


def _error_bin_edges(columns, log_errors: bool, top: float) -> np.ndarray:
    """Bins of ERROR_BIN_ULP from 0 (linear), or of LOG_ERROR_BIN decades over the data (log10 values)."""
    if not log_errors:
        return np.arange(0.0, top + 2 * ERROR_BIN_ULP, ERROR_BIN_ULP)
    values = np.concatenate([np.asarray(v) for v in columns])
    low = np.floor(values.min() / LOG_ERROR_BIN) * LOG_ERROR_BIN if values.size else 0.0
    high = np.ceil(values.max() / LOG_ERROR_BIN) * LOG_ERROR_BIN if values.size else 1.0
    return np.arange(low, high + 1.5 * LOG_ERROR_BIN, LOG_ERROR_BIN)


def x_bins(x: np.ndarray, bins: int = X_BINS) -> tuple[np.ndarray, np.ndarray, bool]:
    """Bin edges over x (log-spaced when every x is positive), each point's bin index, and whether log.

    >>> edges, index, log = x_bins(np.array([1.0, 10.0, 100.0]), bins=2)
    >>> edges.tolist(), index.tolist(), log
    ([1.0, 10.0, 100.0], [0, 1, 1], True)
    """
    log = bool(x.size) and bool((x > 0).all())
    low, high = (float(x.min()), float(x.max())) if x.size else (0.0, 1.0)
    if high <= low:  # one distinct x: one bin around it
        low, high = (low / 2, low * 2) if log else (low - 0.5, high + 0.5)
    edges = np.geomspace(low, high, bins + 1) if log else np.linspace(low, high, bins + 1)
    index = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, bins - 1)
    return edges, index, log


def _per_bin(index: np.ndarray, values: np.ndarray, bins: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Worst and mean value, and the count, of each bin (NaN where a bin is empty).

    >>> worst, mean, count = _per_bin(np.array([0, 2, 0, 2]), np.array([1.0, 5.0, 3.0, 4.0]), 3)
    >>> worst.tolist(), mean.tolist(), count.tolist()
    ([3.0, nan, 5.0], [2.0, nan, 4.5], [2, 0, 2])
    """
    count = np.bincount(index, minlength=bins)
    worst = np.full(bins, -np.inf)
    np.maximum.at(worst, index, values)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.bincount(index, weights=values, minlength=bins) / count
    empty = count == 0
    worst[empty], mean[empty] = np.nan, np.nan
    return worst, mean, count


def error_by_x(table: pd.DataFrame, label_a: str, label_b: str) -> FigureOrSpec:
    """Each formula's worst and mean error in ulps over bins of x: where along x the errors grow.

    Every compared point counts: the lines are statistics of all of them, drawn as
    X_BINS points per line (log x when every x is positive).
    """
    label_a, label_b = plotly_literal(label_a), plotly_literal(label_b)  # formulas a visitor typed
    used, top = _used(table, "x")
    x = used["x"]
    edges, index, log_x = x_bins(x, X_BINS)
    centres = np.sqrt(edges[:-1] * edges[1:]) if log_x else (edges[:-1] + edges[1:]) / 2
    log_y = top > LINEAR_ULP_AXIS_MAX
    fig = FigureSpec()
    for column, label, color, side in (("ulps_a_exact", label_a, FORMULA_A, "A"),
                                       ("ulps_b_exact", label_b, FORMULA_B, "B")):
        worst, mean, count = _per_bin(index, used[column], len(centres))
        info = np.stack([edges[:-1], edges[1:], worst, mean, count], axis=1)
        for stat, values, dash in (("worst", worst, "solid"), ("mean", mean, "dot")):
            shown = np.where(values > 0, values, np.nan) if log_y else values  # exact zeros: gaps on a log axis
            fig.add_trace(dict(
                type="scatter", x=centres, y=shown, mode="lines", name=f"{side} {stat}",
                line=dict(color=color, dash=dash, width=2.5), legendgroup=side, connectgaps=False,
                customdata=info,
                hovertemplate=("x in [%{customdata[0]:.4g}, %{customdata[1]:.4g}]: %{customdata[4]:,} points<br>"
                               "worst %{customdata[2]:.3g} ulp, mean %{customdata[3]:.3g} ulp<extra>"
                               + label + "</extra>"),
            ))
    if log_x:
        fig.update_xaxes(**LOG_AXIS)
    if log_y:
        fig.update_yaxes(**LOG_AXIS)
    return _layout(fig, "Error (ulp) along x" + (", 0 not drawn" if log_y else ""), "x", SIDE_CHART_HEIGHT)


def page_figures(result) -> tuple[dict, dict, dict]:
    """The Round-off page's figures of a comparison result (``gradlab.labs.roundoff.engine.RoundoffResult``):
    the error histogram (its main chart), the A–B distance bars and the error along x, each as the
    dict a chart sends (``FigureSpec.to_dict``; no ``go.Figure`` is built). Plain, picklable values:
    the page's view builds them in its worker from every point, and only they cross the pipe, not
    the table (6.6 MB at 100,000 points); :func:`sent_figure` draws one.

    >>> from gradlab.labs.roundoff.engine import RoundoffSettings, compare
    >>> main, bars, by_x = page_figures(compare(RoundoffSettings(samples=200)))
    >>> main["data"][0]["type"], bars["data"][0]["type"], len(by_x["data"])
    ('scatter', 'bar', 4)
    """
    a, b = result.label_a, result.label_b
    with specs_only():
        figures = (error_histogram(result.table, a, b), ulp_distance_bars(result.distance_histogram(), a, b),
                   error_by_x(result.table, a, b))
    return tuple(fig.to_dict() for fig in figures)


def sent_figure(sent: dict) -> FigureOrSpec:
    """A figure of :func:`page_figures` (the dict a chart sends) as a plot function returns it: inside
    :func:`~gradlab.figures.spec.specs_only` a spec holding that dict's own lists (no copy), else a
    ``go.Figure`` (a notebook's). The builder of the page's charts (:class:`gradlab.view.Chart`).

    >>> from gradlab.labs.roundoff.engine import RoundoffSettings, compare
    >>> main = page_figures(compare(RoundoffSettings(samples=200)))[0]
    >>> sent_figure(main).layout.title.text
    'How far from exact? (% of points)'
    >>> with specs_only():
    ...     sent_figure(main).to_dict(consume=True) == main
    True
    """
    fig = FigureSpec()
    fig.data, fig.layout = sent["data"], {k: v for k, v in sent["layout"].items() if k != "template"}
    return fig.figure()
