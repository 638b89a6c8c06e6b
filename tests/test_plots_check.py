"""The Grad check page's figures: valid Plotly, built from real checks, reference labels in place.

The figures are assembled as plain dicts without Plotly's per-call validation
(gradlab/figures/spec.py), so every one is validated here.
"""

from __future__ import annotations

import json
import math

import numpy as np
import torch
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
import pytest
from plotly.subplots import make_subplots

from gradlab.check.lab.reduction_sweep import reduction_sweep
from gradlab.figures.spec import FigureSpec, specs_only
from gradlab.check.lab.settings import CheckSettings, run_check
from gradlab.figures.check import error_heatmap
from gradlab.figures.style import REDUCTION_COLOURS
from gradlab.labs.gradcheck.figures import eps_sweep_figure, taylor_figure

SMALL = CheckSettings(shape=(12, 10), samples=3)
MSE_SUM_CHECK = CheckSettings(shape=(12, 10), dtype="float32", scheme="forward", samples=3)  # the forum post's check
CENTRAL_64 = CheckSettings(shape=(12, 10), dtype="float64", scheme="central", samples=3)  # some errors exactly 0


def _figures() -> dict[str, go.Figure]:
    return {
        "eps sweep (float32, rtol)": eps_sweep_figure(reduction_sweep(MSE_SUM_CHECK), rtol=1e-3),
        "eps sweep (float64, gaps, no rtol)": eps_sweep_figure(reduction_sweep(CENTRAL_64)),
        "taylor": taylor_figure(run_check(SMALL).taylor),
        "heatmap": error_heatmap(run_check(CheckSettings(shape=(12, 10), mode="full")).error_map),
    }


@pytest.fixture(scope="module")
def figures() -> dict[str, go.Figure]:
    return _figures()


@pytest.fixture(scope="module")
def specs() -> dict[str, FigureSpec]:
    with specs_only():
        return _figures()


FIGURES = ["eps sweep (float32, rtol)", "eps sweep (float64, gaps, no rtol)", "taylor", "heatmap"]


def _content(fig: go.Figure) -> dict:
    """The figure as plotly.js receives it, without empty shape/annotation lists."""
    spec = json.loads(fig.to_json())
    spec["layout"] = {k: v for k, v in spec["layout"].items() if v != []}
    return spec


@pytest.mark.parametrize("name", FIGURES)
def test_each_check_figure_is_valid_plotly_with_a_title_and_data(figures, name):
    fig = figures[name]
    assert isinstance(fig, go.Figure)  # what show_figure takes
    validated = go.Figure(fig.to_plotly_json())  # validates every property (raises on a misspelt one)
    # Validation rewrites nothing: no shorthand (a bare string title) that only plotly.py understands.
    assert _content(validated) == _content(fig)
    assert fig.layout.title.text
    assert len(fig.data) >= 1


@pytest.mark.parametrize("name", ["eps sweep (float32, rtol)", "eps sweep (float64, gaps, no rtol)", "taylor"])
def test_every_axis_of_the_line_figures_is_log_with_powers_of_ten(figures, name):
    layout = figures[name].layout
    axes = [layout[k] for k in layout if k.startswith(("xaxis", "yaxis"))]
    assert len(axes) >= 2
    assert {(a.type, a.exponentformat) for a in axes} == {("log", "power")}


def test_the_rtol_label_on_the_log_error_axis_sits_at_log10_of_rtol():
    df = pd.DataFrame({"reduction": ["sum", "sum"], "element": ["x[0]", "x[0]"], "eps": [1e-6, 1e-3],
                       "estimate": [1.0, 1.1], "autograd": [1.0, 1.0], "rel_error": [1e-7, 0.1]})
    layout = eps_sweep_figure(df, rtol=1e-3).layout
    label = next(a for a in layout.annotations if a.text == "rtol = 0.001 (relative tolerance)")
    assert (label.yref, label.y) == ("y", -3.0)  # annotations on a log axis take log10(y)
    assert (layout.shapes[0].y0, layout.shapes[0].y1) == (1e-3, 1e-3)  # shapes take y itself


def test_the_round_off_floor_label_sits_at_log10_of_the_floor(figures):
    fig = figures["taylor"]
    (line,), (label,) = fig.layout.shapes, fig.layout.annotations
    assert line.y0 > 0 and line.yref == "y" and "floor" in label.text
    assert label.y == pytest.approx(math.log10(line.y0), abs=1e-12)


def test_the_reductions_share_one_panel_with_the_legend_below(figures):
    # One panel, not three side by side: nothing to squeeze or collide on a 390 px phone.
    fig = figures["eps sweep (float32, rtol)"]
    layout = fig.layout
    assert {t.xaxis for t in fig.data} == {"x"} and {t.yaxis for t in fig.data} == {"y"}
    assert "xaxis2" not in layout.to_plotly_json()  # no second panel
    assert layout.xaxis.domain is None or tuple(layout.xaxis.domain) == (0, 1)
    assert {t.name: t.line.color for t in fig.data} == REDUCTION_COLOURS
    assert [t.name for t in fig.data if t.showlegend] == ["sum", "mean", "none"]  # one entry each
    # mean lies on sum (it scales L and dL/dx alike): dashed, so both stay visible
    assert {t.line.dash for t in fig.data if t.name == "mean"} == {"dash"}
    assert {t.line.dash for t in fig.data if t.name != "mean"} == {"solid"}
    # the legend below the plot, in a row, at the figure's bottom edge: a phone keeps its width for the
    # plot, and however short the chart (the projector's first screen) it never overlaps the x title
    legend = layout.legend
    assert legend.orientation == "h" and (legend.yref, legend.y, legend.yanchor) == ("container", 0, "bottom")
    assert layout.xaxis.automargin  # the plot area makes room for the x title above the legend
    # y ticks at powers of ten only (an integer dtick), at most 6 over the data's decades
    errors = np.concatenate([np.asarray(t.y, dtype=float) for t in fig.data])
    errors = errors[np.isfinite(errors)]
    decades = math.ceil(math.log10(errors.max())) - math.floor(math.log10(errors.min()))
    assert isinstance(layout.yaxis.dtick, int) and decades / layout.yaxis.dtick <= 6
    # a title short enough for a phone (~35 characters), no panel titles
    assert len(layout.title.text) <= 35
    assert not [a for a in layout.annotations if a.yref == "paper"]


def test_the_checks_own_step_is_marked_and_the_x_range_is_the_sweeps():
    df = pd.DataFrame({"reduction": ["sum"] * 3, "element": ["x[0]"] * 3, "eps": [1e-8, 1e-4, 1.0],
                       "estimate": [0.0, 1.1, 1.5], "autograd": [1.0] * 3, "rel_error": [1.0, 0.1, 0.5]})
    layout = eps_sweep_figure(df, rtol=1e-3, step=1e-3).layout
    line = next(s for s in layout.shapes if s.xref == "x")
    assert (line.x0, line.x1, line.yref) == (1e-3, 1e-3, "y domain")  # shapes take eps itself
    label = next(a for a in layout.annotations if a.text.startswith("this check"))
    assert label.text == "this check: eps = 0.001"
    assert label.x == pytest.approx(-3.0)  # annotations on a log axis take log10(eps)
    assert (label.y, label.yanchor) == (1, "bottom")  # above the plot, over no curve
    # 1e-3 lies right of the middle (1e-4) of 1e-8..1: the label reads leftwards, inside the figure
    assert label.xanchor == "right"
    assert tuple(layout.xaxis.range) == pytest.approx((-8.2, 0.2))  # 1e-8..1, padded 0.2 decade
    left = eps_sweep_figure(df, step=1e-6).layout
    assert next(a for a in left.annotations if a.text.startswith("this check")).xanchor == "left"


def _luminance(colour: str) -> float:
    """WCAG relative luminance of '#rrggbb' or 'rgb(r, g, b)'."""
    if colour.startswith("#"):
        rgb = [int(colour[i:i + 2], 16) for i in (1, 3, 5)]
    else:
        rgb = [int(float(v)) for v in colour[colour.index("(") + 1:-1].split(",")]
    lin = [c / 255 / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def _contrast(a: str, b: str) -> float:
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


DARK_BACKGROUND = "#0e1117"  # Streamlit's dark theme


def test_the_error_heatmaps_colours_all_stand_off_the_dark_background():
    # Viridis starts at #440154, 1.2:1 on the dark theme: the best elements vanished into it.
    fig = error_heatmap(np.array([[1e-9, 1e-6], [1e-3, 1.0]]))
    scale = [c for _, c in fig.data[0].colorscale]
    assert fig.data[0].colorscale[0][0] == 0 and fig.data[0].colorscale[-1][0] == 1
    assert min(_contrast(c, DARK_BACKGROUND) for c in scale) >= 3.0
    # still one ordered sequence: darker (small error) to lighter (large error)
    lum = [_luminance(c) for c in scale]
    assert lum == sorted(lum)


def test_each_state_keeps_its_own_colour_and_stands_off_both_backgrounds():
    from gradlab.check.verdicts.states import STATES

    fig = error_heatmap(np.array([[1e-3, 1e-2]]), np.array([["pass", "fail"]]))
    bands = {c for _, c in fig.data[0].colorscale}
    assert bands == {s.colour for s in STATES.values()}
    for state in STATES.values():
        assert _contrast(state.colour, DARK_BACKGROUND) >= 3.0, state.name
        assert _contrast(state.colour, "#ffffff") >= 3.0, state.name


def test_panels_sit_where_make_subplots_puts_them():
    ours = FigureSpec()
    ids = ours.side_by_side(["a", "b", "c"], spacing=0.04)
    theirs = make_subplots(rows=1, cols=3, shared_yaxes=True, subplot_titles=["a", "b", "c"],
                           horizontal_spacing=0.04).layout
    mine = ours.figure().layout
    assert ids == ["x", "x2", "x3"]
    for key in ("xaxis", "xaxis2", "xaxis3"):
        assert mine[key].domain == theirs[key].domain
    assert [a.to_plotly_json() for a in mine.annotations] == [a.to_plotly_json() for a in theirs.annotations]


def test_gaps_are_counted_in_the_title(figures):
    fig = figures["eps sweep (float64, gaps, no rtol)"]
    gaps = sum(int(np.isnan(np.asarray(t.y, dtype=float)).sum()) for t in fig.data)
    assert gaps > 0
    # under the x axis, so the top holds only the title and the step's label
    assert f"{gaps} points with zero or non-finite error" in fig.layout.xaxis.title.text
    assert "points with zero" not in figures["eps sweep (float32, rtol)"].layout.xaxis.title.text


def test_heatmap_leaves_exact_elements_blank_and_says_how_many():
    fig = error_heatmap(np.array([[1e-3, 0.0], [0.0, 1e-2]]))
    assert np.isnan(np.asarray(fig.data[0].z, dtype=float)).sum() == 2
    assert "2 elements agree exactly" in fig.layout.title.text
    assert fig.layout.yaxis.autorange == "reversed"


def test_taylor_figure_when_signal_points_are_too_spread_to_fit():
    """Points above the floor exist but too few lie within the fitted decades: no slope, no crash."""
    from gradlab.check.further.taylor import FIT_DECADES, MIN_FIT_POINTS, fit_taylor

    h = np.logspace(-8, 0, 17)
    remainder = np.full_like(h, 1e-30)  # under the floor everywhere...
    remainder[0] = 1.0  # ...but the smallest h
    remainder[-(MIN_FIT_POINTS - 1):] = 1.0  # and a few far beyond FIT_DECADES of it
    assert h[-1] / h[0] > 10**FIT_DECADES
    taylor = fit_taylor(h, remainder, floor=1e-20)
    assert taylor.slope is None and not taylor.table["fitted"].any()
    go.Figure(taylor_figure(taylor).to_plotly_json())


@pytest.mark.parametrize("name", FIGURES)
def test_the_prepared_dict_is_what_the_figure_sends(figures, specs, name):
    # Pages send FigureSpec.to_dict() (no go.Figure built): it must be the figure's own dict.
    assert isinstance(specs[name], FigureSpec)
    sent = json.loads(pio.to_json(specs[name].to_dict(), validate=False))
    assert sent == json.loads(pio.to_json(figures[name], validate=False))


def test_heatmap_colours_each_element_by_its_state():
    # relu at an exact 0 is a kink (slopes 0 and 1); elsewhere it is differentiable
    from gradlab.check.api import gradcheck
    from gradlab.check.verdicts.states import STATE_NAMES, STATES

    x = torch.tensor([[0.0, 1.0], [-1.0, 2.0]], dtype=torch.float64)
    r = gradcheck(torch.relu, x, mode="full", taylor=False)
    assert r.state_map.tolist() == [["not_differentiable", "pass"], ["pass", "pass"]]
    fig = error_heatmap(r.error_map, r.state_map)
    code = STATE_NAMES.index
    assert [list(row) for row in fig.data[0].z] == [[code("not_differentiable"), code("pass")],
                                                    [code("pass"), code("pass")]]
    colours = {c for _, c in fig.data[0].colorscale}
    assert colours == {STATES[n].colour for n in STATE_NAMES}
