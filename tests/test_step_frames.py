"""The step slider's frames hold the numbers of the engine's single-step result at each step.

Explorer: each frame row of ``run_sweep`` (computed with the sweep's references) equals
:func:`step_frames` at that one step, and both equal a finite difference written out here in
numpy, in the dtype, against the exact derivative. Grid: each frame equals
``grid_difference`` at that step, and its step and secant follow from the dtype's grid.
"""

from __future__ import annotations

import base64
import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from gradlab.labs.grid.figures import grid_figure_with_slider
from gradlab.figures.spec import specs_only
from gradlab.labs.explorer.chart_play import PLAY_PREFIX
from gradlab.figures.step_slider import step_label
from gradlab.labs.explorer.chart_slider import error_vs_eps_with_slider
from gradlab.labs.grid.frames import grid_frames, grid_steps
from gradlab.labs.grid.representable import GridSettings, grid_difference
from gradlab.step_sweep.engine import SweepSettings, run_sweep
from gradlab.step_sweep.step_frames import slider_steps, step_frames

SWEEP = SweepSettings("sin(x)", 1.0, ("float32", "float64"), ("forward", "central"), 1e-9, 0.5, points=21, frames=True)


def test_slider_steps_are_the_1_2_5_decimals_covering_the_range():
    steps = slider_steps(3e-9, 0.5)
    assert steps[0] == 2e-9 and steps[-1] == 0.5  # rounded out to a stop on each side
    assert all(f"{s:.0e}" == f"{float(f'{s:.0e}'):.0e}" and float(f"{s:.0e}") == s for s in steps)
    ratios = [b / a for a, b in zip(steps, steps[1:])]
    assert all(r == pytest.approx(2) or r == pytest.approx(2.5) for r in ratios)


@pytest.fixture(scope="module")
def sweep():
    return run_sweep(SWEEP)


def test_every_frame_row_is_the_single_step_result(sweep):
    frames = sweep.frames.table()
    assert set(frames["h"]) == set(slider_steps(SWEEP.eps_min, SWEEP.eps_max))
    for h in (2e-9, 1e-6, 5e-4, 0.1, 0.5):
        single = step_frames(sweep.settings, (h,)).table()
        mine = frames[frames["h"] == h].reset_index(drop=True)
        assert len(mine) == len(single) == 4  # two dtypes, two schemes
        for column in ("estimate", "step", "abs_error", "rel_error"):
            np.testing.assert_array_equal(mine[column].to_numpy(), single[column].to_numpy())


def test_a_sweep_not_asked_for_frames_has_none_and_the_same_tables(sweep):
    """The CLI, the API and a notebook draw no slider: their sweep skips the frames, not its numbers."""
    import dataclasses

    import pandas as pd

    plain = run_sweep(dataclasses.replace(SWEEP, frames=False))
    assert len(plain.frames) == 0 and plain.frames.table().empty
    pd.testing.assert_frame_equal(plain.table, sweep.table, check_exact=True)
    pd.testing.assert_frame_equal(plain.best, sweep.best, check_exact=True)


@pytest.mark.parametrize("dtype, np_dtype", [("float32", np.float32), ("float64", np.float64)])
@pytest.mark.parametrize("h", [1e-6, 2e-3, 0.05])
def test_frame_estimates_are_the_finite_differences_in_the_dtype(sweep, dtype, np_dtype, h):
    """f at the stencil points in the dtype, the difference and the division in float64 (the
    sweep's convention), against cos(x) at x as the dtype holds it."""
    x = np_dtype(1.0)
    hd = np_dtype(h)
    f = lambda v: float(np.sin(np_dtype(v)))  # noqa: E731
    forward = (f(x + hd) - f(x)) / h
    central = (f(x + hd) - f(x - hd)) / (2 * h)
    exact = math.cos(float(x))
    frames = sweep.frames.table()
    rows = frames[(frames["h"] == h) & (frames["dtype"] == dtype)].set_index("scheme")
    for scheme, expected in (("forward", forward), ("central", central)):
        assert rows.loc[scheme, "estimate"] == pytest.approx(expected, rel=0, abs=4 * float(np.finfo(np_dtype).eps) / h)
        assert rows.loc[scheme, "abs_error"] == pytest.approx(abs(rows.loc[scheme, "estimate"] - exact), rel=1e-12)
    assert rows.loc["forward", "step"] == float((x + hd) - x)


def test_the_figure_holds_a_frame_per_step_with_the_frame_numbers(sweep):
    fig = error_vs_eps_with_slider(sweep, 1e-3)
    slider = [f.name for f in fig.frames if not f.name.startswith(PLAY_PREFIX)]  # the Play button has its own
    frames = sweep.frames.table()
    assert slider == [step_label(s) for s in sorted(set(frames["h"]))]
    slider = fig.layout.sliders[0]
    assert slider.steps[slider.active].value == "1e-03"
    frame = next(f for f in fig.frames if f.name == "5e-04")
    points = [t for t in frame.data if t.customdata is not None]
    rows = frames[frames["h"] == 5e-4]
    assert len(points) == 1  # every curve's point in one trace: a stop moves two traces, not five
    assert sorted(row[1] for row in points[0].customdata) == sorted(rows["estimate"])
    assert list(points[0].x) == [5e-4] * (len(rows) + 2)  # and the line at h: its two ends


def test_the_released_step_is_a_step_of_the_control():
    """The Explorer's control takes every stop the chart's slider can report."""
    from gradlab.labs.explorer.defaults import EPS_LARGEST, EPS_SMALLEST

    assert set(slider_steps(1e-17, 0.5)) <= set(slider_steps(EPS_SMALLEST, EPS_LARGEST))


# ------------------------------------------------------------------- the Grid


@pytest.mark.parametrize("dtype, x, expression", [("float32", 1.0, "sin(x)"), ("float16", 0.1, "exp(x)"),
                                                  ("float64", 3.0, "x**3")])
def test_grid_frames_are_the_single_step_differences(dtype, x, expression):
    frames = grid_frames(GridSettings(dtype, x, 1e-4, expression))
    for h in frames.steps[::7]:
        r, _ = frames.at(h)
        single = grid_difference(GridSettings(dtype, x, h, expression))
        assert (r.step_taken, r.secant, r.fx_plus_h, r.kept_bits, r.quantum) == \
               (single.step_taken, single.secant, single.fx_plus_h, single.kept_bits, single.quantum)
        assert r.tangent == single.tangent


@settings(max_examples=12, deadline=None)
@given(dtype=st.sampled_from(["float32", "float64", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2"]),
       x=st.floats(-300.0, 300.0), expression=st.sampled_from(["sin(x)", "exp(x)", "x**2", "1/x", "log(x)"]))
def test_every_stop_of_the_shared_differences_is_its_own_difference(dtype, x, expression):
    """Stops landing x + h on one grid number share one difference: each is, bits and sentence
    included, the difference computed for that step alone."""
    from gradlab.errors import GradLabError
    from gradlab.labs.grid.representable import grid_differences

    settings_ = GridSettings(dtype, x, 1.0, expression)
    for h, found in grid_differences(settings_, grid_steps()).items():
        try:
            single = grid_difference(GridSettings(dtype, x, h, expression))
        except GradLabError as err:
            assert found == str(err)
            continue
        assert found == single or (math.isnan(single.tangent) and found == replace(single, tangent=found.tangent))
        assert (found.x.bits, found.fx_plus_h.hex) == (single.x.bits, single.fx_plus_h.hex)
        assert found.settings.h == h


def test_grid_frame_steps_follow_the_float32_grid_at_one():
    """Above 1 float32's numbers are 2^-23 apart, below half of that x + h rounds back to 1."""
    frames = grid_frames(GridSettings("float32", 1.0, 1e-4, "x**2"))
    ulp = 2.0 ** -23
    for h in frames.steps:
        r, _ = frames.at(h)
        if h < ulp / 2:
            assert r.step_taken == 0
        else:
            n = round(float(np.float32(1.0) + np.float32(h)) / ulp - 2 ** 23)
            assert r.step_taken == n * ulp
            # (1 + s)^2 - 1 = 2s + s^2 on the grid: the slope is 2 + s up to float32's rounding of f
            assert r.secant == pytest.approx(2 + r.step_taken, abs=2 * ulp / r.step_taken + 1e-6)
    assert frames.steps == tuple(sorted(set(grid_steps()) | {1e-4}))


def test_grid_figure_has_a_frame_per_step_with_fixed_traces():
    frames = grid_frames(GridSettings("float32", 1.0, 1e-6, "sin(x)"))
    with specs_only():
        fig = grid_figure_with_slider(frames, 1e-6)
    assert len(fig.frames) == len(frames.steps)
    assert {len(f["data"]) for f in fig.frames} == {len(fig.data)}  # one trace list, animated in place
    r, _ = frames.at(1e-6)
    slider = fig.layout["sliders"][0]
    assert slider["steps"][slider["active"]]["value"] == "1e-06"
    # the slope is the slider's to say; the legend, the same at every stop, names the secant alone
    assert f"slope {r.secant:.6g}" in slider["steps"][slider["active"]]["label"]
    assert [t["name"] for t in fig.data if t["name"].startswith("secant")] == ["secant"]
    # so a stop only moves traces and sets the axes' ranges: no redraw of the chart
    assert all(set(f["layout"]) == {"xaxis", "yaxis"} and set(f["layout"]["xaxis"]) == {"range"} for f in fig.frames)
    assert {s["args"][1]["frame"]["redraw"] for s in slider["steps"]} == {False}
    assert all(set(t) <= {"x", "y", "text"} for f in fig.frames for t in f["data"])


def test_each_grid_frame_draws_what_the_single_step_figure_draws():
    """The frames' f at x + h as asked (computed for every stop in one float64 call) is what the
    single-step figure computes for its one h: the frames' figures equal the page's one-h figures."""
    from gradlab.labs.grid.figures import grid_figure
    from gradlab.labs.grid.story import window_points

    settings = GridSettings("float16", 0.1, 1e-3, "exp(x)")
    frames = grid_frames(settings)
    for h in frames.steps[::5]:
        single = grid_difference(GridSettings("float16", 0.1, h, "exp(x)"))
        with specs_only():
            mine = grid_figure(*frames.at(h), frames.asked_f[frames.steps.index(h)])
            expected = grid_figure(single, window_points(single))
        assert [t["name"] for t in mine.data] == [t["name"] for t in expected.data]
        for a, b in zip(mine.data, expected.data):
            np.testing.assert_array_equal(np.asarray(a["x"], dtype=float), np.asarray(b["x"], dtype=float))
            np.testing.assert_array_equal(np.asarray(a["y"], dtype=float), np.asarray(b["y"], dtype=float))
        assert mine.layout["xaxis"]["range"] == expected.layout["xaxis"]["range"]


def test_a_view_whose_unit_changes_between_stops_redraws_with_each_stops_titles():
    """At x = 0 an ulp of float32 is 2^-149, so the larger steps are counted in a coarser unit:
    the titles change from stop to stop, and only such a view's stops redraw the chart."""
    frames = grid_frames(GridSettings("float32", 0.0, 1e-4, "sin(x)"))
    with specs_only():
        fig = grid_figure_with_slider(frames, 1e-4)
    titles = {f["layout"]["xaxis"]["title"]["text"] for f in fig.frames}
    assert len(titles) > 1 and any("units" in t for t in titles)
    assert {s["args"][1]["frame"]["redraw"] for s in fig.layout["sliders"][0]["steps"]} == {True}


def test_the_slider_figure_shown_at_a_step_draws_that_steps_figure():
    """with_step puts a stop's frame into the figure built once per view: the traces' points are
    the one-step figure's at that h (to float32's precision, the frames' arrays)."""
    import base64

    from gradlab.labs.grid.figures import grid_figure

    def values(v):
        if isinstance(v, dict):
            return np.frombuffer(base64.b64decode(v["bdata"]), dtype=v["dtype"]).astype(float)
        return np.asarray(v, dtype=float)

    frames = grid_frames(GridSettings("float32", 1.0, 1.0, "x**2"))
    for h in (1e-7, 2e-5, 0.5):
        with specs_only():
            shown = grid_figure_with_slider(frames, h)
            single = grid_figure(*frames.at(h), frames.asked_f[frames.steps.index(h)])
        for a, b in zip(shown.data, single.data):
            np.testing.assert_allclose(values(a["x"]), values(b["x"]), rtol=1e-6)
            np.testing.assert_allclose(values(a["y"]), values(b["y"]), rtol=1e-6)
        assert shown.layout["xaxis"]["range"] == single.layout["xaxis"]["range"]


def test_the_explorer_figure_built_once_and_shown_at_h_is_the_figure_built_at_h(sweep):
    """The page caches one figure per view and shows it at h (with_step): the same traces, slider
    and frames as the figure built for that h, the marked points at the stop nearest h."""
    from gradlab.figures.step_slider import with_step
    from gradlab.ui.figures import prepare_figure

    once = prepare_figure(error_vs_eps_with_slider, sweep, 1e-3).to_dict()
    for h in (2e-9, 3e-6, 0.5):  # 3e-6: between stops, the nearer on a log scale is 2e-6
        built = prepare_figure(error_vs_eps_with_slider, sweep, h).to_dict()
        shown = with_step(once, h)
        assert shown["data"] == built["data"]
        assert shown["layout"]["sliders"] == built["layout"]["sliders"]
        assert shown["frames"] == built["frames"]
    at = with_step(once, 3e-6)["layout"]["sliders"][0]
    assert at["steps"][at["active"]]["value"] == "2e-06"


def test_the_explorer_legend_has_a_key_per_dtype_and_scheme_and_the_curves_keep_their_names(sweep):
    from gradlab.labs.explorer.chart_slider import legend_entries

    with specs_only():
        spec = error_vs_eps_with_slider(sweep, 1e-3)
    keys = legend_entries(spec)
    assert keys[:4] == ["float32", "float64", "forward", "central"]  # SWEEP's two dtypes and two schemes
    fig = error_vs_eps_with_slider(sweep, 1e-3)
    curves = [t for t in fig.data if t.meta and t.meta.get("kind") == "sweep"]
    assert len(curves) == 4 and all(" · " in t.name for t in curves)  # "float32 · forward": hover says it
    # a dtype's key and its curves share a legend group: clicking the key hides the dtype's curves
    assert {t.legendgroup for t in curves} == {"float32", "float64"}
    assert fig.layout.legend.groupclick == "togglegroup"


def test_the_explorer_readout_says_the_range_of_the_curves_estimates_at_each_stop(sweep):
    """Four curves (two dtypes, two schemes): each stop's readout is the step and the smallest and
    largest of the four estimates there (the frames' table, to 6 digits), one short line."""
    from gradlab.labs.explorer.chart_slider import READOUT_CHARS, READOUT_PREFIX

    fig = error_vs_eps_with_slider(sweep, 1e-3)
    steps = fig.layout.sliders[0].steps
    assert fig.layout.sliders[0].currentvalue.prefix == READOUT_PREFIX
    for step in steps:
        h = float(step.value)
        rows = sweep.frames.table()[sweep.frames.columns["h"] == h]
        finite = sorted({float(f"{v:.6g}") for v in rows["estimate"] if math.isfinite(v)})
        assert len(rows) == 4
        if len(finite) > 1:
            assert step.label == f"{step_label(h)}: f′ ≈ {finite[0]:.6g} to {finite[-1]:.6g}"
        assert len(READOUT_PREFIX + step.label) <= READOUT_CHARS
    # sin'(1) = cos(1) = 0.540302...: at 1e-3 every curve's estimate is within 1e-3 of it
    at = next(s for s in steps if s.value == "1e-03").label
    low, high = (float(v) for v in at.split("≈ ")[1].split(" to "))
    assert abs(low - math.cos(1.0)) < 1e-3 and abs(high - math.cos(1.0)) < 1e-3


@pytest.mark.parametrize("estimates", [[-1.23456789e-5, -0.000123456789], [-1.7e308, 5e-324], [1.0, 1.0, 1.0]])
def test_the_explorer_readout_is_one_short_line_whatever_the_estimates(estimates):
    from gradlab.labs.explorer.chart_slider import READOUT_CHARS, READOUT_PREFIX, _readout

    words = READOUT_PREFIX + _readout(1e-3, estimates)
    assert len(words) <= READOUT_CHARS, words
    assert (" to " in words) == (len(set(estimates)) > 1)


def _points(values) -> int:
    """How many points a trace's x holds: a list, or the frames' base64 typed array."""
    if isinstance(values, dict):
        return len(base64.b64decode(values["bdata"])) // np.dtype(values["dtype"]).itemsize
    return len(values)


def test_the_grid_legend_has_the_same_entries_at_every_stop():
    """At x = 1 in float32 the small steps draw every representable x near x (a few ulps wide)
    and the large ones too many to draw, and below half an ulp x + h rounds to x (no secant).
    Plotly leaves a trace with no point out of the legend, and the chart keeps the legend it
    opened with: whatever stop it opens at, every entry is there (a gap stands in for what a
    stop does not draw)."""
    frames = grid_frames(GridSettings("float32", 1.0, 1e-4, "sin(x)"))
    ulp = 2.0 ** -23
    with specs_only():
        opened = {h: grid_figure_with_slider(frames, h) for h in (1e-8, 2e-7, 1e-4, 0.5)}
    drawn_ticks, entries = {}, {}
    for h, fig in opened.items():
        entries[h] = [t["name"] for t in fig.data if t.get("showlegend") is not False and _points(t["x"]) > 0]
        ticks = next(t for t in fig.data if t["name"] == "x's grid")
        drawn_ticks[h] = _points(ticks["x"]) > 1
    assert 1e-8 < ulp / 2 and drawn_ticks[2e-7] and not drawn_ticks[1e-4]  # the view has all three kinds of stop
    assert len({tuple(e) for e in entries.values()}) == 1, entries
    assert {"x's grid", "secant", "f in float32"} <= set(entries[1e-4])


def test_the_explorer_slider_figure_has_a_trace_per_curve_and_line_and_each_stop_moves_one(sweep):
    """A browser sets up every trace of the chart again for each stop of the slider, redraw or not,
    so the figure holds no trace that draws nothing: per curve its line, per dtype its autograd
    line, per curve with theory one line for both terms, the stars, and one trace the stops move
    (every curve's point at h and the line at h). The legend's keys are layout shapes."""
    from gradlab.labs.explorer.figures import error_vs_eps_figure
    from gradlab.labs.explorer.chart_slider import add_step_slider, legend_entries

    with specs_only():
        fig = error_vs_eps_figure(sweep, focus_dtype="auto")
    add_step_slider(fig, sweep, 1e-3)
    kinds = [t["meta"]["kind"] for t in fig.data]
    # SWEEP: 2 dtypes x 2 schemes; an autograd line per dtype whose autograd error is not 0
    errors = sweep.autograd["rel_error"].to_numpy(dtype=float)
    lines = int(np.sum(np.isfinite(errors) & (errors > 0)))
    assert kinds.count("sweep") == 4 and kinds.count("autograd") == lines
    assert kinds.count("theory") == 4 and kinds.count("best") == 1 and kinds.count("at-h") == 1
    assert len(fig.data) == 10 + lines and "legend-key" not in kinds
    moving = kinds.index("at-h")
    stops = [f for f in fig.frames if not f["name"].startswith(PLAY_PREFIX)]
    assert all(f["traces"] == [moving] for f in stops) and all(len(f["data"]) == 1 for f in stops)
    # the Play button's frames draw each curve up to their step, its point there marked: the V as h sweeps
    played = [f for f in fig.frames if f["name"].startswith(PLAY_PREFIX)]
    curves = [i for i, t in enumerate(fig.data) if t["meta"]["kind"] == "sweep"]
    assert played and all(f["traces"] == [*curves, moving] for f in played)
    for f in played:
        h = float(f["name"].removeprefix(PLAY_PREFIX))
        for k, drawn in zip(curves, f["data"]):
            assert list(drawn["x"]) == [x for x in fig.data[k]["x"] if x <= h * (1 + 1e-9)]
    assert [list(d["y"]) for d in played[-1]["data"][:-1]] == [list(fig.data[k]["y"]) for k in curves]  # ends whole
    assert legend_entries(fig) == ["float32", "float64", "forward", "central", "autograd"]
    keys = [s for s in fig.layout["shapes"] if s.get("showlegend")]
    assert all(s["x0"] == s["x1"] and s["y0"] == s["y1"] for s in keys)  # entries that draw nothing
