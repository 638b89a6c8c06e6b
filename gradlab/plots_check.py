"""Pure plot functions for the grad-check page: tidy table -> Plotly figure (no streamlit).

Log axes use ``exponentformat="power"``; one colour per reduction; errors that
are exactly zero (or not finite) cannot sit on a log axis, so they become gaps
and the figure says how many.

>>> from gradlab.taylor import fit_taylor
>>> h = np.logspace(-6, 0, 13)
>>> taylor_figure(fit_taylor(h, h**2, 1e-20)).layout.xaxis.type
'log'
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from gradlab.taylor import TaylorResult

__all__ = ["REDUCTION_COLOURS", "eps_sweep_figure", "taylor_figure", "error_heatmap"]

REDUCTION_COLOURS = {"sum": "#1f77b4", "mean": "#d62728", "none": "#2ca02c"}
_LOG = dict(type="log", exponentformat="power", showexponent="all")
_HEIGHT = 420


def _positive(values) -> np.ndarray:
    """Values for a log axis: zero, negative and non-finite become NaN (gaps)."""
    v = np.asarray(values, dtype=np.float64)
    return np.where(np.isfinite(v) & (v > 0), v, np.nan)


def eps_sweep_figure(df: pd.DataFrame, rtol: float | None = None) -> go.Figure:
    """Relative error against eps, one panel per reduction (sum, mean, none), one line per element."""
    reductions = [r for r in REDUCTION_COLOURS if r in set(df["reduction"])]
    fig = make_subplots(rows=1, cols=len(reductions), shared_yaxes=True,
                        subplot_titles=[f"reduction = {r}" for r in reductions],
                        horizontal_spacing=0.04)
    gaps = 0
    for col, reduction in enumerate(reductions, start=1):
        part = df[df["reduction"] == reduction]
        for k, (element, rows) in enumerate(part.groupby("element", sort=False)):
            y = _positive(rows["rel_error"])
            gaps += int(np.isnan(y).sum())
            fig.add_trace(go.Scatter(
                x=rows["eps"], y=y, mode="lines+markers", name=reduction,
                legendgroup=reduction, showlegend=k == 0,
                line=dict(color=REDUCTION_COLOURS[reduction], width=1.5), marker=dict(size=4),
                customdata=np.stack([rows["estimate"], rows["autograd"]], axis=1),
                hovertemplate=(f"{element}<br>eps = %{{x:.2e}}<br>estimate = %{{customdata[0]:.6g}}"
                               "<br>autograd = %{customdata[1]:.6g}<br>relative error = %{y:.2e}"
                               "<extra>" + reduction + "</extra>"),
            ), row=1, col=col)
        if rtol is not None:
            fig.add_hline(y=rtol, line=dict(dash="dot", color="grey"), row=1, col=col)
    if rtol is not None:
        _log_label(fig, rtol, f"rtol = {rtol:g}", xref="x domain", yref="y")
    fig.update_xaxes(title_text="step eps", **_LOG)
    fig.update_yaxes(**_LOG)
    fig.update_yaxes(title_text="|finite difference − autograd| / |autograd|", row=1, col=1)
    title = "Error of the finite difference against the step, per reduction"
    if gaps:
        title += f"<br><sup>{gaps} points with zero or non-finite error are left out (gaps)</sup>"
    fig.update_layout(title=title, height=_HEIGHT, hovermode="closest",
                      legend=dict(title="reduction"))
    return fig


def taylor_figure(taylor: TaylorResult) -> go.Figure:
    """The Taylor remainder against h, the fitted points, the floor and h¹/h² guides."""
    t = taylor.table
    r = _positive(t["remainder"])
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=t["h"], y=r, mode="lines+markers", name="remainder",
                             line=dict(color="#444"), marker=dict(size=5),
                             hovertemplate="h = %{x:.2e}<br>remainder = %{y:.2e}<extra></extra>"))
    fitted = t[t["fitted"]]
    if len(fitted):
        fig.add_trace(go.Scatter(x=fitted["h"], y=fitted["remainder"], mode="markers",
                                 name=f"fitted: slope {taylor.slope:.2f}",
                                 marker=dict(size=10, color="#ff7f0e", symbol="circle-open"),
                                 hoverinfo="skip"))
        _guides(fig, fitted)
    if taylor.floor > 0:
        fig.add_hline(y=taylor.floor, line=dict(dash="dot", color="grey"))
        _log_label(fig, taylor.floor, "round-off floor ≈ 2u·|L|")
    fig.update_xaxes(title_text="h (step along a random direction)", **_LOG)
    fig.update_yaxes(title_text="|L(x+hv) − L(x) − h ∇L·v|", **_LOG)
    fig.update_layout(title="Taylor test: slope 2 = right gradient, slope 1 = wrong",
                      height=_HEIGHT, legend=dict(orientation="h", y=-0.25))
    return fig


def _log_label(fig: go.Figure, y: float, text: str, xref: str = "paper", yref: str = "y") -> None:
    """A label just above a horizontal line on a log y axis (annotations there take log10(y))."""
    fig.add_annotation(x=1, xref=xref, y=float(np.log10(y)), yref=yref, text=text,
                       showarrow=False, xanchor="right", yanchor="bottom",
                       font=dict(size=11, color="grey"))


def _guides(fig: go.Figure, fitted: pd.DataFrame) -> None:
    """Lines of slope 1 and 2 through the fitted point with the largest h."""
    h0, r0 = float(fitted["h"].max()), float(fitted.loc[fitted["h"].idxmax(), "remainder"])
    h = np.array([float(fitted["h"].min()), h0])
    for power, dash in ((1, "dash"), (2, "dot")):
        fig.add_trace(go.Scatter(x=h, y=r0 * (h / h0) ** power, mode="lines",
                                 name=f"∝ h^{power}", line=dict(dash=dash, color="#888"),
                                 hoverinfo="skip"))


def error_heatmap(error_map: np.ndarray) -> go.Figure:
    """log10 of the per-element relative error of a full check, in the input's 2-D layout."""
    values = np.asarray(error_map, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.where(values > 0, np.log10(values), np.nan)
    exact = int((values == 0).sum())
    fig = go.Figure(go.Heatmap(
        z=logs, colorscale="Viridis", colorbar=dict(title="log10 rel. error"),
        customdata=values,
        hovertemplate="x[%{y}, %{x}]<br>relative error = %{customdata:.2e}<extra></extra>",
    ))
    title = "Relative error of every element (full check)"
    if exact:
        title += f"<br><sup>{exact} elements agree exactly (blank)</sup>"
    fig.update_yaxes(autorange="reversed", title_text="row")
    fig.update_xaxes(title_text="column")
    fig.update_layout(title=title, height=_HEIGHT)
    return fig
