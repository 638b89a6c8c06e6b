"""The teaching pages' figures: valid Plotly, built from the engine's real results, labels in place.

The figures are assembled as plain dicts without Plotly's per-call validation
(gradlab/figures/spec.py), so every one is validated here.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
import pytest

from gradlab.labs.backward import figures as backward_plots
from gradlab.figures import layout
from gradlab.labs.network import figures as network_plots
from gradlab.labs.roundoff import figures as roundoff_plots
from gradlab.labs.backward.engine import MATRIX_EXAMPLES, VJPSettings, matrix_vjp, vector_jacobian
from gradlab.figures.spec import FigureSpec, specs_only
from gradlab.labs.network.engine import NetworkSettings, finite_difference, step_sweep
from gradlab.labs.roundoff.engine import RoundoffSettings, compare, ulp_histogram


@pytest.fixture(scope="module")
def roundoff_result():
    return compare(replace(RoundoffSettings(), samples=2000))


@pytest.fixture(scope="module")
def cancellation_result():  # errors of millions of ulps: the log axes
    return compare(RoundoffSettings("(1-cos(x))/x**2", "2*sin(x/2)**2/x**2", "float32", "log-uniform",
                                    1e-4, 1e-1, 2000, 0))


@pytest.fixture(scope="module")
def network():
    s = NetworkSettings()
    return finite_difference(s), step_sweep(s)


def _figures(roundoff_result, cancellation_result, network) -> dict[str, go.Figure]:
    fd, sweep = network
    vjp = vector_jacobian(VJPSettings())
    example = next(iter(MATRIX_EXAMPLES.values()))
    matrix = matrix_vjp(example.w, example.x, example.v)
    figures = {}
    for name, r in (("plain", roundoff_result), ("cancellation", cancellation_result)):
        figures[f"ulp bars ({name})"] = roundoff_plots.ulp_distance_bars(ulp_histogram(r.table), r.label_a, r.label_b)
        figures[f"error histogram ({name})"] = roundoff_plots.error_histogram(r.table, r.label_a, r.label_b)
        figures[f"error by x ({name})"] = roundoff_plots.error_by_x(r.table, r.label_a, r.label_b)
    figures["staircase"] = network_plots.staircase_figure(sweep.table, sweep.autograd, sweep.reference, fd.step,
                                                  fd.quantum, fd.dtype, fd.estimate)
    figures["step error"] = network_plots.step_error_figure(sweep, fd.step, fd.dtype)
    figures["jacobian"] = backward_plots.jacobian_heatmap(vjp.jacobians["b"], "∂y/∂b", "y", "b")
    figures["weighted rows"] = backward_plots.weighted_rows_figure(matrix.table, matrix.grad)
    figures["vjp rows"] = backward_plots.vjp_rows_figure(vjp.table)
    return figures


ROUNDOFF_FIGURES = ["ulp bars (plain)", "error histogram (plain)", "error by x (plain)", "ulp bars (cancellation)",
                    "error histogram (cancellation)", "error by x (cancellation)"]
FIGURES = [*ROUNDOFF_FIGURES, "staircase", "step error",
           "jacobian", "weighted rows", "vjp rows"]


@pytest.fixture(scope="module")
def figures(roundoff_result, cancellation_result, network):
    return _figures(roundoff_result, cancellation_result, network)


@pytest.fixture(scope="module")
def specs(roundoff_result, cancellation_result, network):
    with specs_only():
        return _figures(roundoff_result, cancellation_result, network)


@pytest.mark.parametrize("name", FIGURES)
def test_the_prepared_dict_is_what_the_figure_sends(figures, specs, name):
    # Pages send FigureSpec.to_dict() (no go.Figure built): it must be the figure's own dict.
    assert isinstance(specs[name], FigureSpec)
    sent = json.loads(pio.to_json(specs[name].to_dict(), validate=False))
    assert sent == json.loads(pio.to_json(figures[name], validate=False))


@pytest.mark.parametrize("name", FIGURES)
def test_each_teaching_figure_is_valid_plotly_with_a_title_and_data(figures, name):
    fig = figures[name]
    go.Figure(fig.to_plotly_json())  # validates every property (raises on a misspelt one)
    assert fig.layout.title.text
    assert len(fig.data) >= 1
    assert fig.to_json()  # what st.plotly_chart sends


@pytest.mark.parametrize("name", ["staircase", "step error"])
def test_labels_of_vertical_lines_on_a_log_step_axis_sit_on_their_line(figures, name):
    # On a log axis Plotly takes shapes in data units but annotations in log10 units.
    fig = figures[name]
    assert fig.layout.xaxis.type == "log"
    vertical = [s for s in fig.layout.shapes if s.yref == "y domain"]
    assert vertical
    labelled = {round(a.x, 9) for a in fig.layout.annotations if a.yref == "y domain"}
    assert {round(math.log10(s.x0), 9) for s in vertical} == labelled


def test_the_half_ulp_line_of_a_log_error_histogram_is_at_log10_of_one_half(figures):
    fig = figures["error histogram (cancellation)"]
    assert fig.layout.shapes[0].x0 == pytest.approx(math.log10(0.5))
    plain = figures["error histogram (plain)"]
    assert plain.layout.shapes[0].x0 == 0.5


@pytest.mark.parametrize(("position", "xanchor", "y", "yanchor"), [
    ("top right", "left", 1, "top"), ("top left", "right", 1, "top"),
    ("bottom left", "right", 0, "bottom"), ("bottom right", "left", 0, "bottom"),
])
def test_vline_labels_sit_where_plotly_puts_them(position, xanchor, y, yanchor):
    ours = FigureSpec()
    ours.add_vline(0.25, text="t", position=position, dash="dot", color="#123456")
    theirs = go.Figure()
    theirs.add_vline(x=0.25, line_dash="dot", line_color="#123456", annotation_text="t",
                     annotation_position=position)
    mine, plotly_own = ours.figure().layout, theirs.layout
    assert mine.shapes[0].to_plotly_json() == plotly_own.shapes[0].to_plotly_json()
    assert mine.annotations[0].to_plotly_json() == plotly_own.annotations[0].to_plotly_json()
    assert (mine.annotations[0].xanchor, mine.annotations[0].y, mine.annotations[0].yanchor) == (xanchor, y, yanchor)


def test_hline_label_sits_where_plotly_puts_it():
    ours = FigureSpec()
    ours.add_hline(2.0, text="a", position="bottom left", color="#123456", width=2)
    theirs = go.Figure()
    theirs.add_hline(y=2.0, line_color="#123456", line_width=2, annotation_text="a",
                     annotation_position="bottom left")
    assert ours.figure().layout.shapes[0].to_plotly_json() == theirs.layout.shapes[0].to_plotly_json()
    assert ours.figure().layout.annotations[0].to_plotly_json() == theirs.layout.annotations[0].to_plotly_json()


def test_heatmap_writes_every_entry_in_its_cell(figures):
    heat = figures["jacobian"].data[0]
    z = np.asarray(heat.z)
    written = np.array([[float(t) for t in row] for row in heat.text])
    assert written.shape == z.shape
    assert written.ravel().tolist() == pytest.approx(z.ravel().tolist(), rel=1e-3)


@pytest.mark.parametrize("name", ["staircase", "step error"])
def test_line_labels_point_into_the_plot(figures, name):
    """A label to the right of a line in the right half of the axis would be clipped at the edge."""
    fig = figures[name]
    low, high = fig.layout.xaxis.range
    for a in (a for a in fig.layout.annotations if a.yref == "y domain"):
        right_half = a.x > (low + high) / 2
        assert a.xanchor == ("right" if right_half else "left"), (a.text, a.x, low, high)


def test_heatmap_cells_brighten_with_size_and_stay_readable_in_both_themes(figures):
    # One dark-safe scale (gradlab.figures.style): lightness rises with the entry, and its
    # darkest colour still stands out on the dark theme's background (WCAG graphics: 3:1).
    scale = figures["jacobian"].data[0].colorscale

    def luminance(colour: str) -> float:
        rgb = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
        lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    levels = [luminance(stop[1]) for stop in scale]
    assert levels == sorted(levels)
    dark = luminance("#101418")
    assert (levels[0] + 0.05) / (dark + 0.05) >= 3


def test_error_histogram_bins_each_formula_into_fractions_that_sum_to_one():
    # errors in ulps: A at 0.12, 0.12, 0.37, 0.98; B at 0.02 four times
    table = pd.DataFrame({"ulps_a_exact": [0.12, 0.12, 0.37, 0.98], "ulps_b_exact": [0.02] * 4})
    fig = roundoff_plots.error_histogram(table, "A", "B")
    a, b = fig.data
    # a step outline: x the bin edges, y each bin's fraction from its left edge, a closing 0
    assert a.line.shape == "hv" and len(a.x) == len(a.y) and a.y[-1] == 0
    assert sum(a.y) == pytest.approx(1.0) and sum(b.y) == pytest.approx(1.0)
    # bins of 0.05 ulp from 0: 0.12 falls in [0.10, 0.15), 0.37 in [0.35, 0.40), 0.98 in [0.95, 1.00)
    by_bin = {round(x, 2): y for x, y in zip(a.x, a.y) if y}
    assert by_bin == {0.1: 0.5, 0.35: 0.25, 0.95: 0.25}
    assert [round(x, 3) for x, y in zip(b.x, b.y) if y] == [0.0]


def test_round_off_figures_draw_a_few_hundred_marks_for_100000_points():
    # What the browser draws must not grow with the points (6,000 SVG markers made
    # every Round-off interaction take 1-1.6 s); the statistics still cover every point.
    n = 100_000
    rng = np.random.default_rng(0)
    table = pd.DataFrame({"x": rng.uniform(-1, 1, n), "ulps_a_exact": rng.uniform(0, 1, n),
                          "ulps_b_exact": rng.uniform(0, 3, n)})
    for fig in (roundoff_plots.error_histogram(table, "A", "B"), roundoff_plots.error_by_x(table, "A", "B")):
        assert all(trace.type in ("bar", "scatter") and len(trace.x) <= 100 for trace in fig.data)


def test_error_by_x_gives_the_worst_and_mean_error_of_every_point_in_each_bin(monkeypatch):
    # x = 0, 0.1, ..., 0.9 in 2 linear bins [0, 0.45) and [0.45, 0.9]; A's errors are 4·x ulp:
    # bin 1 holds 0..1.6 (worst 1.6, mean 0.8), bin 2 holds 2..3.6 (worst 3.6, mean 2.8)
    x = np.arange(10) / 10
    table = pd.DataFrame({"x": x, "ulps_a_exact": 4 * x, "ulps_b_exact": np.ones(10)})
    edges, index, log = roundoff_plots.x_bins(x, bins=2)
    assert not log and edges.tolist() == pytest.approx([0, 0.45, 0.9]) and index.tolist() == [0] * 5 + [1] * 5
    monkeypatch.setattr(roundoff_plots, "X_BINS", 2)
    fig = roundoff_plots.error_by_x(table, "A", "B")
    worst_a, mean_a = (t for t in fig.data if t.name.startswith("A "))
    assert list(worst_a.y) == pytest.approx([1.6, 3.6]) and list(mean_a.y) == pytest.approx([0.8, 2.8])


def _legend_at_the_bottom_edge(layout) -> bool:
    """A horizontal legend anchored to the figure's bottom edge: below the plot and the x title (the
    plot area makes room for it), however short the chart and however many rows the legend wraps into."""
    legend = layout.legend
    return (legend.orientation == "h" and (legend.yref, legend.y, legend.yanchor) == ("container", 0, "bottom")
            and bool(layout.xaxis.automargin))


@pytest.mark.parametrize("name", ROUNDOFF_FIGURES)
def test_round_off_figures_keep_their_legend_below_and_few_ticks_for_a_phone(figures, name):
    layout = figures[name].layout
    assert _legend_at_the_bottom_edge(layout)
    assert layout.xaxis.nticks and layout.xaxis.nticks <= 6
    assert not layout.yaxis.title.text  # the title says what y is; an axis title costs a phone 25 px


# ---------------------------------------------------------------- classroom first: a projector and a phone


@pytest.mark.parametrize("name", ["staircase", "step error", "vjp rows", "weighted rows"])
def test_network_and_backward_legends_sit_below_the_plot(figures, name):
    # A legend beside the plot leaves a 390 px phone no plot; below it takes rows instead.
    assert _legend_at_the_bottom_edge(figures[name].layout)


def test_the_staircase_rings_the_questions_estimate_and_shows_autograd_between_the_steps(network):
    fd, sweep = network
    fig = network_plots.staircase_figure(sweep.table, sweep.autograd, sweep.reference, fd.step, fd.quantum, fd.dtype,
                                 fd.estimate)
    ringed = [t for t in fig.data if t.name == f"dx = {fd.step:g}"]
    assert ringed and ringed[0].x == (1e-6,) and ringed[0].y == (-2.0**-25 / 2e-6,)
    low, high = fig.layout.yaxis.range
    # the estimate (-1 quantum), autograd (between -1 and 0 quanta) and 0 are all on the chart
    assert low < -2.0**-25 / 2e-6 < fd.autograd < 0 < high


def test_vjp_rows_show_each_grad_as_v_times_the_derivative():
    r = vector_jacobian(VJPSettings())
    fig = backward_plots.vjp_rows_figure(r.table)
    grads = next(t for t in fig.data if t.name == ".grad from y.backward(v)")
    derivs = next(t for t in fig.data if t.name.startswith("∂yᵢ"))
    v = (0.1, 1.0, 0.0001) * 3
    # chain rule for y = 3a + 2b² + log c at a = [1,2,3], b = [3,4,5], c = [6,7,8]
    expected_derivs = [3, 3, 3, 12, 16, 20, 1 / 6, 1 / 7, 1 / 8]
    assert list(derivs.x) == pytest.approx(expected_derivs, rel=1e-6)
    assert list(grads.x) == pytest.approx([d * w for d, w in zip(expected_derivs, v)], rel=1e-6)
    assert list(grads.y) == ["a[0]", "a[1]", "a[2]", "b[0]", "b[1]", "b[2]", "c[0]", "c[1]", "c[2]"]
    assert fig.layout.xaxis.type == "log"
    # every value lies inside the x range, right of the room kept for the names
    low, high = fig.layout.xaxis.range
    assert low < math.log10(min(grads.x)) and math.log10(max(derivs.x)) < high
    negative = backward_plots.vjp_rows_figure(vector_jacobian(VJPSettings(v=(-1.0, 1.0, 0.5))).table)
    assert negative.layout.xaxis.type != "log"


#: The tallest main chart a 1280x720 first screen holds under the title row, one row of controls and
#: the answer (tests/browser/test_first_screen_browser.py measures the drawn page; this keeps a figure
#: from growing back past it unnoticed).
FIRST_SCREEN_CHART_PX = 370


def _main_charts(roundoff_result, network) -> dict[str, go.Figure]:
    """Each page's main chart (what it draws in main_chart_box) at the page's default view."""
    from gradlab.check.lab.reduction_sweep import reduction_sweep
    from gradlab.check.lab.settings import CheckSettings
    from gradlab.labs.gradcheck.figures import eps_sweep_figure
    from gradlab.labs.grid.figures import grid_figure
    from gradlab.labs.summed.figures import difference_staircase
    from gradlab.labs.grid.story import window_points
    from gradlab.labs.grid.representable import GridSettings, grid_difference

    fd, sweep = network
    grid = grid_difference(GridSettings("float32", 1.0, 1e-4, "sin(x)"))
    differences = pd.DataFrame({"element": [0, 9], "gradient": [0.8, -0.4], "difference": [0.0, -1.95],
                                "k": [0, -1]})
    return {
        "grid": grid_figure(grid, window_points(grid)),
        "gradcheck": eps_sweep_figure(reduction_sweep(CheckSettings(shape=(12, 10), samples=3)), rtol=1e-3,
                                      step=1e-3),
        "summed": difference_staircase(differences, 1.953125, 1e-3, "float32"),
        "roundoff": roundoff_plots.error_histogram(roundoff_result.table, roundoff_result.label_a,
                                                   roundoff_result.label_b),
        "network": network_plots.staircase_figure(sweep.table, sweep.autograd, sweep.reference, fd.step, fd.quantum,
                                          fd.dtype, fd.estimate),
        "backward": backward_plots.vjp_rows_figure(vector_jacobian(VJPSettings()).table),
    }


def test_every_main_chart_fits_the_projector_first_screen_with_its_legend_at_the_bottom_edge(
        roundoff_result, network):
    for page, fig in _main_charts(roundoff_result, network).items():
        assert 300 <= fig.layout.height <= FIRST_SCREEN_CHART_PX, (page, fig.layout.height)
        # A legend a fraction of the plot's height below it overlaps the x title on a chart this short.
        assert _legend_at_the_bottom_edge(fig.layout), page


def test_the_vjp_rows_chart_grows_only_past_the_questions_nine_entries():
    nine = backward_plots.vjp_rows_figure(vector_jacobian(VJPSettings()).table)
    assert nine.layout.height == layout.MAIN_CHART_HEIGHT
    grads = next(t for t in nine.data if t.name == ".grad from y.backward(v)")
    derivs = next(t for t in nine.data if t.name.startswith("∂yᵢ"))
    # each value beside its diamond, away from the circle: rows this close keep their labels apart
    assert list(grads.textposition) == ["middle left" if g < d else "middle right"
                                        for g, d in zip(grads.x, derivs.x)]
    assert "middle left" in grads.textposition and "middle right" in grads.textposition
    # four entries each (12 rows): three more rows, each its own height, below the first screen
    twelve = backward_plots.vjp_rows_figure(vector_jacobian(VJPSettings(a=(1.0, 2.0, 3.0, 4.0), b=(3.0, 4.0, 5.0, 6.0),
                                                               c=(6.0, 7.0, 8.0, 9.0),
                                                               v=(0.1, 1.0, 0.0001, 2.0))).table)
    assert twelve.layout.height == layout.MAIN_CHART_HEIGHT + 3 * backward_plots.ROW_HEIGHT
