"""gradlab.labs.explorer.figures and tables: the error-vs-eps figure and the display tables.

Expected values come from the mathematics (Taylor remainders, IEEE formats),
not from the code's own output.
"""

from __future__ import annotations

import json
import math
import re

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest

from gradlab.labs.explorer.figures import drawable_errors, error_vs_eps_figure, estimate_vs_eps_figure
from gradlab.labs.explorer.tables import autograd_table, best_step_table, format_sig, rounding_table
from gradlab.figures.spec import FigureSpec, specs_only
from gradlab.numerics.dtypes import facts
from gradlab.numerics.schemes import get_scheme
from gradlab.step_sweep.engine import SweepSettings, run_sweep

DTYPES = ("float32", "float64")
SCHEMES = ("forward", "central", "complex_step")


@pytest.fixture(scope="module")
def classic():
    return run_sweep(SweepSettings("exp(x)/sqrt(sin(x)**3 + cos(x)**3)", 1.5, DTYPES, SCHEMES,
                                   eps_min=1e-20, eps_max=1.0, points=41))


@pytest.fixture(scope="module")
def exp0():
    # exp at 0: f = f' = f'' = f''' = 1, so the theory's terms are known in closed form.
    return run_sweep(SweepSettings("exp(x)", 0.0, ("float64",), ("central",),
                                   eps_min=1e-8, eps_max=1e-1, points=8))


@pytest.fixture(scope="module")
def sqrt_near_zero():
    # Steps larger than x leave the domain of sqrt for backward/central: NaN estimates.
    return run_sweep(SweepSettings("sqrt(x)", 1e-4, ("float64",), ("backward", "central"),
                                   eps_min=1e-10, eps_max=1e-1, points=19))


def _kind(fig, kind):
    return [t for t in fig.data if t.meta and t.meta.get("kind") == kind]


def test_one_trace_per_dtype_and_scheme_with_its_colour_and_dash(classic):
    fig = error_vs_eps_figure(classic)
    sweep = _kind(fig, "sweep")
    assert {(t.meta["dtype"], t.meta["scheme"]) for t in sweep} == {
        (d, s) for d in DTYPES for s in SCHEMES
    }
    for trace in sweep:
        assert trace.line.color == facts(trace.meta["dtype"]).colour
        assert trace.line.dash == get_scheme(trace.meta["scheme"]).dash
        assert trace.marker.symbol == get_scheme(trace.meta["scheme"]).symbol
        assert trace.meta["dtype"] in trace.name


def test_axes_are_log_with_power_of_ten_labels(classic):
    for error in ("relative", "absolute"):
        layout = error_vs_eps_figure(classic, error=error).layout
        for axis in (layout.xaxis, layout.yaxis):
            assert axis.type == "log"
            assert axis.exponentformat == "power"
        # The y title sits above the plot (beside it, it costs a phone's plot ~30 px of width).
        (title,) = [a for a in layout.annotations if a.name == "y-title"]
        assert error in title.text and title.yanchor == "bottom" and title.y == 1
        assert layout.xaxis.range == (-20, 0)  # log10 of eps_min, eps_max


def test_legend_below_the_plot_and_few_x_ticks(classic):
    # A phone has ~356 px: a legend beside the plot left it ~70 px; below, the plot keeps the width.
    layout = error_vs_eps_figure(classic).layout
    # At the container's bottom edge, under the x axis title however tall the plot is stretched.
    legend = layout.legend
    assert legend.orientation == "h" and (legend.yref, legend.y, legend.yanchor) == ("container", 0, "bottom")
    decades = 20  # eps from 1e-20 to 1
    assert decades / layout.xaxis.dtick + 1 <= 6  # at most six tick labels under a 300 px plot


def test_hover_shows_eps_step_estimate_and_error(classic):
    for trace in _kind(error_vs_eps_figure(classic), "sweep"):
        for word in ("eps", "step", "estimate", "error"):
            assert word in trace.hovertemplate
        assert np.asarray(trace.customdata).shape == (len(trace.x), 2)


def test_zero_and_non_finite_errors_are_gaps(sqrt_near_zero):
    fig = error_vs_eps_figure(sqrt_near_zero)
    gaps = 0
    for trace in _kind(fig, "sweep"):
        rows = sqrt_near_zero.table[sqrt_near_zero.table["scheme"] == trace.meta["scheme"]]
        for value, y in zip(rows["rel_error"], trace.y, strict=True):
            drawable = math.isfinite(value) and value > 0
            assert (y is None) == (not drawable)
            gaps += y is None
        assert trace.connectgaps is False
    # x - h < 0 once h > x = 1e-4: sqrt is NaN there, for backward and central alike.
    assert gaps >= 2 * int(np.sum(rows["eps"] > 1e-4))
    notes = [a.text for a in fig.layout.annotations if a.name == "gaps"]
    assert notes and f"{gaps} points are gaps" in notes[0]


def test_drawable_errors_spec():
    assert drawable_errors([2.0, 0.0, -1.0, math.inf, math.nan]) == [2.0, None, None, None, None]


def test_theory_lines_follow_the_taylor_remainder(exp0):
    # Central difference of exp at 0: truncation |f'''| h²/6 = h²/6, and |f'| = 1.
    fig = error_vs_eps_figure(exp0, error="relative")
    (line,) = _kind(fig, "theory")  # the two terms, one trace: a gap (None) between them
    assert line.meta["terms"] == ["truncation", "roundoff"]
    gap = list(line.x).index(None)
    assert line.y[gap] is None and len(line.x) == 2 * gap + 1
    truncation_x, truncation_y = line.x[:gap], line.y[:gap]
    assert set(line.text[:gap]) == {"truncation"} and set(line.text[gap + 1:]) == {"roundoff"}
    for h, y in zip(truncation_x, truncation_y, strict=True):
        assert y == pytest.approx(h**2 / 6, rel=1e-9)
    roundoff_x, roundoff_y = line.x[gap + 1:], line.y[gap + 1:]
    # Round-off ~ u|f|/h where it dominates (small h): slope -1 on log-log axes.
    slope = math.log10(roundoff_y[1] / roundoff_y[0]) / math.log10(roundoff_x[1] / roundoff_x[0])
    assert slope == pytest.approx(-1, abs=0.01)


def test_theory_and_autograd_lines_can_be_switched_off(classic):
    fig = error_vs_eps_figure(classic, show_theory=False, show_autograd=False)
    assert not _kind(fig, "theory") and not _kind(fig, "best") and not _kind(fig, "autograd")


def test_autograd_lines_sit_at_autograd_error(classic):
    fig = error_vs_eps_figure(classic, error="absolute")
    lines = {t.meta["dtype"]: t for t in _kind(fig, "autograd")}
    for row in classic.autograd.itertuples():
        if row.abs_error > 0:
            assert lines[row.dtype].y == (row.abs_error, row.abs_error)
            assert lines[row.dtype].line.dash == "dot"


def test_best_step_stars_for_the_focus_dtype(classic):
    fig = error_vs_eps_figure(classic, focus_dtype="float64")
    (stars,) = _kind(fig, "best")
    assert stars.meta["dtypes"] == ["float64"]
    best64 = classic.best[classic.best["dtype"] == "float64"]
    finite = best64[np.isfinite(best64["predicted_eps"].astype(float))]
    assert sorted(stars.x) == sorted(finite["predicted_eps"])
    assert {t.meta["dtype"] for t in _kind(fig, "theory")} == {"float64"}


def test_each_curve_has_its_own_regime_band_split_at_its_own_h_star(classic):
    # One background for every curve was wrong for all curves but one: each dtype and real
    # scheme gets a band, red (round-off) left of its h*, blue (truncation) right of it.
    fig = error_vs_eps_figure(classic)
    bands = [s for s in fig.layout.shapes if s.legendgroup == "regimes"]
    pairs = [(d, s) for d in DTYPES for s in SCHEMES if s != "complex_step"]
    assert len(bands) == 2 * len(pairs) and all(s.type == "rect" for s in bands)
    labels = [a for a in fig.layout.annotations if a.name == "regime"]
    for i, (dtype, scheme) in enumerate(pairs):
        roundoff, truncation = bands[2 * i], bands[2 * i + 1]
        rows = classic.best[(classic.best["dtype"] == dtype) & (classic.best["scheme"] == scheme)]
        h_star = float(rows["predicted_eps"].iloc[0])
        assert roundoff.x1 == truncation.x0 == pytest.approx(h_star)
        assert "round-off" in roundoff.name and "truncation" in truncation.name
        assert (roundoff.y0, roundoff.y1) == (truncation.y0, truncation.y1)  # one band
        # Plotly puts annotations on a log axis in log10 units (shapes in data units).
        (label,) = [a for a in labels if a.text == f"{dtype} {get_scheme(scheme).curve_label}"]
        # beside its h*, or with more than 3 bands every other one at the plot's left edge, so
        # names in neighbouring bands (thinner than a name is tall) never overlap
        at_edge = len(pairs) > 3 and i % 2 == 1
        assert label.x == pytest.approx(math.log10(fig.layout.xaxis.range and 10 ** fig.layout.xaxis.range[0]
                                                   if at_edge else h_star))
    assert len({b.y0 for b in bands}) == len(pairs)  # the bands do not overlap
    assert not any(s.showlegend for s in bands)  # the caption says what the colours mean


def test_theory_lines_are_wide_enough_for_a_projector(classic):
    theory = _kind(error_vs_eps_figure(classic, focus_dtype="float32"), "theory")
    assert theory and all(t.line.width >= 2 for t in theory)


def test_auto_theory_draws_every_dtype_when_few_curves_and_one_otherwise(classic):
    few = run_sweep(SweepSettings("exp(x)", 1.0, DTYPES, ("central",), 1e-12, 0.1, points=9))
    assert {t.meta["dtype"] for t in _kind(error_vs_eps_figure(few, focus_dtype="auto"), "theory")} == set(DTYPES)
    # classic: 2 dtypes x 2 real schemes = 4 curves -> still all; add a third real scheme -> first only.
    many = run_sweep(SweepSettings("exp(x)", 1.0, DTYPES, ("forward", "backward", "central"), 1e-12, 0.1,
                                   points=9))
    assert {t.meta["dtype"] for t in _kind(error_vs_eps_figure(many, focus_dtype="auto"), "theory")} == {"float32"}


def test_machine_epsilon_of_each_dtype_is_marked(classic):
    fig = error_vs_eps_figure(classic)
    lines = [s for s in fig.layout.shapes if s.name == "machine-eps"]
    assert sorted(s.x0 for s in lines) == sorted(facts(d).eps for d in DTYPES)
    labels = [a for a in fig.layout.annotations if a.name == "machine-eps"]
    assert sorted(a.x for a in labels) == pytest.approx(sorted(math.log10(facts(d).eps) for d in DTYPES))
    # each label says on hover what it marks: float32's epsilon is 2^-23
    (label,) = [a for a in labels if a.text == "ε float32"]
    assert label.hovertext.startswith(f"ε float32 = {2.0 ** -23:.3g}: float32's machine epsilon")


def test_a_figure_with_nothing_to_draw_still_renders_with_a_message():
    result = run_sweep(SweepSettings("abs(x)", 0.0, ("float32",), ("central",), points=5))
    fig = error_vs_eps_figure(result)
    messages = [a.text for a in fig.layout.annotations if a.name == "message"]
    assert messages and "kink" in messages[0]
    go.Figure(fig.to_plotly_json())  # valid for plotly


def test_estimates_at_a_kink_are_plus_minus_one_and_zero():
    result = run_sweep(SweepSettings("abs(x)", 0.0, ("float64",), ("forward", "backward", "central"),
                                     eps_min=1e-8, eps_max=1e-2, points=7))
    fig = estimate_vs_eps_figure(result)
    by_scheme = {t.meta["scheme"]: t.y for t in _kind(fig, "sweep")}
    assert by_scheme["forward"] == pytest.approx([1.0] * 7)
    assert by_scheme["backward"] == pytest.approx([-1.0] * 7)
    assert by_scheme["central"] == pytest.approx([0.0] * 7)


@pytest.mark.parametrize("error", ["relative", "absolute"])
@pytest.mark.parametrize("focus", [None, "auto", "float32", "float64", "float16"])
def test_every_figure_is_valid_plotly(classic, error, focus):
    # Figures are assembled without plotly's per-call validation; validate here.
    fig = error_vs_eps_figure(classic, error=error, focus_dtype=focus)
    go.Figure(fig.to_plotly_json())


SIG3 = re.compile(r"^(—|0|-?\d\.\d\de[+-]\d\d)$")


def test_best_step_table_has_the_numbers_to_copy(classic, exp0):
    table = best_step_table(classic)
    assert list(table.columns) == [
        "dtype", "scheme", "best h (observed)", "rel. error at best h", "robust best h",
        "median rel. error near it", "h* (theory)", "rel. error at h* (theory)", "autograd rel. error",
    ]
    assert len(table) == len(DTYPES) * len(SCHEMES)
    for column in table.columns[2:]:
        assert all(SIG3.match(v) or (column == "median rel. error near it" and v.startswith("< u = "))
                   for v in table[column]), column
    # Central difference in float64 at a point where |f/f'''| = 1: h* = (3u)^(1/3).
    u = facts("float64").unit_roundoff
    assert best_step_table(exp0).loc[0, "h* (theory)"] == f"{(3 * u) ** (1 / 3):.2e}"


def test_format_sig():
    assert [format_sig(v) for v in (123456.0, -0.000999949, math.nan, 0.0, math.inf)] == [
        "1.23e+05", "-1.00e-03", "—", "0", "∞",
    ]


def test_autograd_table_values(classic):
    table = autograd_table(classic)
    assert list(table["dtype"]) == list(DTYPES)
    assert float(table.loc[1, "rel. error"]) < 10 * facts("float64").eps


def test_rounding_table_shows_how_x_is_rounded():
    result = run_sweep(SweepSettings("x**2", 0.1, ("float16", "float64"), ("central",), points=5))
    table = rounding_table(result).set_index("dtype")
    # 0.1 in IEEE half precision: 1638 * 2**-14 = 0.0999755859375.
    assert table.loc["float16", "x in dtype"] == "0.0999755859375"
    assert table.loc["float16", "x in dtype − x"] == format_sig(0.0999755859375 - 0.1)
    assert table.loc["float64", "x in dtype − x"] == "0 (exact)"
    # f'(x) = 2x exactly at the rounded point.
    assert table.loc["float16", "exact f′(x in dtype)"] == "0.199951171875"


EXPLORER_FIGURES = {
    "errors (classic)": ("classic", lambda r: error_vs_eps_figure(r)),
    "errors, absolute, no theory (classic)": (
        "classic", lambda r: error_vs_eps_figure(r, "absolute", show_theory=False, show_autograd=False)),
    "errors with gaps (sqrt near 0)": ("sqrt_near_zero", lambda r: error_vs_eps_figure(r)),
    "estimates (exp at 0)": ("exp0", lambda r: estimate_vs_eps_figure(r)),
}


@pytest.mark.parametrize("name", EXPLORER_FIGURES)
def test_the_prepared_dict_is_what_the_figure_sends(request, name):
    # The Explorer sends FigureSpec.to_dict() (no go.Figure built): it must be the figure's own dict.
    fixture, build = EXPLORER_FIGURES[name]
    result = request.getfixturevalue(fixture)
    with specs_only():
        spec = build(result)
    assert isinstance(spec, FigureSpec)
    sent = json.loads(pio.to_json(spec.to_dict(), validate=False))
    assert sent == json.loads(pio.to_json(build(result), validate=False))


def test_every_curve_shown_gets_a_band_split_at_its_own_h_star():
    # Several schemes per dtype: each turns at its own best step, so each gets its own band
    # (one band per dtype, at central's h*, was wrong for the forward and 5-point curves).
    schemes = ("forward", "central", "five_point", "complex_step")
    r = run_sweep(SweepSettings("exp(x)", 1.0, ("float32", "float64"), schemes, 1e-17, 1.0, 41))
    fig = error_vs_eps_figure(r)
    cuts = sorted(s.x0 for s in fig.layout.shapes if s.legendgroup == "regimes" and "truncation" in s.name)
    real = r.best[r.best["scheme"] != "complex_step"]  # no round-off V: no band
    assert cuts == pytest.approx(sorted(real["predicted_eps"].astype(float)))
    labels = {a.text for a in fig.layout.annotations if a.name == "regime"}
    assert labels == {f"{d} {get_scheme(s).curve_label}" for d in ("float32", "float64") for s in schemes[:3]}
    bottoms = [s.y0 for s in fig.layout.shapes if s.legendgroup == "regimes"]
    assert 1 - min(bottoms) <= 0.3 + 1e-9  # six bands together keep to the top 30 % of the plot


def test_chart_text_is_sized_from_the_pages_body_text():
    """gradlab.figures.layout.readable raises chart text to the page's body text: the one number
    .streamlit/config.toml sets (baseFontSize), or charts and text drift apart again."""
    import tomllib
    from pathlib import Path

    from gradlab.figures.layout import BODY_TEXT_PX, readable

    config = tomllib.loads((Path(__file__).resolve().parents[1] / ".streamlit" / "config.toml").read_text())
    assert config["theme"]["baseFontSize"] == BODY_TEXT_PX
    spec = {"data": [{"type": "bar", "text": ["a"]}], "layout": {"xaxis": {}, "yaxis2": {"tickfont": {"size": 9}},
                                                                  "legend": {"font": {"size": 30}}}}
    out = readable(spec)["layout"]
    assert out["xaxis"]["tickfont"]["size"] == out["yaxis2"]["tickfont"]["size"] == BODY_TEXT_PX
    assert out["legend"]["font"]["size"] == 30  # larger text is left as it is
