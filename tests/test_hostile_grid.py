"""The Grid page's hostile requests: every x, h and dtype ends in a result or one sentence.

``/grid?x=3.1415927&h=1e-06`` (sin near π) and ``/grid?x=1e31`` once spun the server: the main
chart's loop over f's grid levels ran once per level, 4-5e8 of them (f(x₀) near 0 has a tiny
ulp, so f nearby is ~10⁸ of its ulps away), before it asked whether there were few enough to
draw. Here the chart is built under a step counter that stops it after a budget of its own
lines, and every engine step the page runs is held to a size that follows from float64's range,
not from the numbers typed. The page's engine call runs in the worker pool
(``gradlab.labs.grid.page_view.view``), where the exact derivative's one long C call (an integer
power of millions of digits) is killed at a limit, as is the CLI's.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from gradlab.errors import GradLabError, LimitError
from gradlab.labs.grid.figures import MAX_TICKS, grid_figure, secant_series_figure
from gradlab.labs.grid.page_view import at_step, view
from gradlab.labs.grid.representable import GridSettings
from gradlab.numerics.dtypes import ALL_DTYPE_NAMES, facts
from gradlab.server.pool import WorkerPool

REPO_ROOT = Path(__file__).resolve().parents[1]
FLOAT64_MAX = sys.float_info.max
SMALLEST_SUBNORMAL = 5e-324

#: The two URLs that spun the server, as the page reads them (float32, sin(x)).
URL_CASES = {"x=1e31": GridSettings("float32", 1e31, 1e-4), "x=3.1415927&h=1e-06": GridSettings("float32", 3.1415927, 1e-6)}
#: h at its extremes: the page's smallest and largest (1e-20, 1), float64's smallest and largest.
STEPS = (SMALLEST_SUBNORMAL, 1e-20, 1e-6, 1.0, FLOAT64_MAX)
#: Each dtype's largest finite number, both signs, and the page's own extremes of x.
EXTREMES = [GridSettings(dtype, sign * facts(dtype).max, h) for dtype in ALL_DTYPE_NAMES for sign in (1, -1)
            for h in STEPS] + [GridSettings("float64", x, h) for x in (0.0, 1e-300, 1e100, -1e100) for h in STEPS]
#: f = x - 1 at x₀ = 1 + 2^-36 in float64, h = one ulp of x (2^-52): the window, x₀ - 4 ulps to
#: x₀ + 8 ulps, holds 13 grid numbers (few enough for ticks and levels), while f(x₀) = 2^-36 has
#: ulp 2^-88, so f there spans 12 · 2^-52 / 2^-88 = 8e11 of them: under the chart's switch to
#: coarser units (past 1e12 on a side), and hours for the old loop.
WIDEST_LEVELS = GridSettings("float64", 1 + 2.0 ** -36, 2.0 ** -52, "x - 1")
#: Lines grid_figure itself may run: its body is ~60 lines and its one loop draws at most
#: MAX_TICKS + 1 levels (generous: a level is one line, its loop header another).
FIGURE_STEP_BUDGET = 1000
#: Points of the secant series: 10 per decade from float64's smallest subnormal to its largest
#: number (and one more for the chosen h), whatever x and h are.
SERIES_MOST = 10 * math.ceil(math.log10(FLOAT64_MAX) - math.log10(SMALLEST_SUBNORMAL) + 2) + 2


class _OverBudget(Exception):
    """Raised by the step counter: the function ran more lines than its budget."""


def _counting_lines(fn, *args, budget: int):
    """``fn(*args)`` and the number of its own lines that ran (callees not counted); over
    ``budget`` the count stops it with :class:`_OverBudget` rather than letting it spin."""
    code, steps = fn.__code__, 0

    def local(frame, event, arg):
        nonlocal steps
        if event == "line":
            steps += 1
            if steps > budget:
                raise _OverBudget(f"{fn.__name__} ran more than {budget} lines")
        return local

    previous = sys.gettrace()
    sys.settrace(lambda frame, event, arg: local if frame.f_code is code else None)
    try:
        return fn(*args), steps
    finally:
        sys.settrace(previous)


def _one_sentence(err: Exception) -> bool:
    text = str(err)
    return text.endswith(".") and "\n" not in text and "Traceback" not in text


def _page_work(settings: GridSettings):
    """What the page computes for ``settings`` in-process: the worker's call (the view, every step of
    its slider and ``settings.h``) at ``settings.h``, then both figures of that step (each stop's
    main chart is one of the slider's frames), the main one under the step counter."""
    try:
        steps = at_step(view(settings), settings.h).result
    except GradLabError as err:
        assert _one_sentence(err), err
        return None
    result, series = steps.difference, steps.series
    _, window = steps.frames.at(settings.h)
    figure, steps = _counting_lines(grid_figure, result, window, budget=FIGURE_STEP_BUDGET)
    secant_series_figure(series, result)
    assert len(window) <= 121  # window_points' sample limit
    assert len(series) <= SERIES_MOST
    (levels,) = [t for t in figure.data if t.name == "f's grid levels"]  # segments split by None
    assert len(levels.y) == 3 * sum(v is None for v in levels.y) <= 3 * (MAX_TICKS + 1)
    return result, figure, steps


@pytest.mark.parametrize("case", list(URL_CASES))
def test_the_urls_that_spun_the_server_draw_their_chart_within_its_step_budget(case):
    outcome = _page_work(URL_CASES[case])
    assert outcome is not None
    result, _, steps = outcome
    assert steps <= FIGURE_STEP_BUDGET


def test_sin_near_pi_in_float32_steps_four_ulps_and_keeps_every_bit():
    """sin(x) near π: f(x₀) ≈ -8.7e-8 and f(x₀ + 4 ulp) ≈ -1.04e-6 share no bit (different
    binades), so all 24 are kept and the slope is -1 (cos π), as the answer says."""
    result, _, _ = _page_work(URL_CASES["x=3.1415927&h=1e-06"])
    assert result.x.ulp == 2.0 ** -22 and abs(result.x.value - 3.1415927) <= 2.0 ** -23  # in [2, 4)
    assert result.step_taken == 4 * 2.0 ** -22  # 1e-6 / 2^-22 = 4.19: rounds to 4 ulps
    assert result.kept_bits == 24 and result.secant == pytest.approx(-1, abs=2 ** -20)


def test_x_1e31_in_float32_takes_no_step():
    """ulp(1e31) in float32 is 2^79 = 6.04e23, so h = 1e-4 is far under half of it: no step."""
    result, _, _ = _page_work(URL_CASES["x=1e31"])
    assert result.x.ulp == 2.0 ** 79 and result.step_taken == 0


def test_a_window_of_a_trillion_f_levels_is_drawn_without_them():
    outcome = _page_work(WIDEST_LEVELS)
    assert outcome is not None
    result, figure, steps = outcome
    assert result.fx.value == 2.0 ** -36 and result.fx.ulp == 2.0 ** -88 and result.step_taken == 2.0 ** -52
    assert len(figure.data[0].x) == 13  # the grid's ticks are drawn: the levels were the risk
    assert steps <= FIGURE_STEP_BUDGET


# h = float64's largest (the CLI's, not the page's: its h ends at 1) puts the chart's lines past float64
@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.parametrize("settings", EXTREMES, ids=lambda s: f"{s.dtype}-x{s.x:g}-h{s.h:g}")
def test_the_largest_numbers_and_extreme_steps_end_in_a_result_or_one_sentence(settings):
    _page_work(settings)


def test_x_plus_h_as_asked_is_marked_at_the_typed_x_plus_h():
    """x = 0.1 in float16 is held as 0.0999755859375 (ulp 2^-14 = 6.1e-5): the typed x + h lies
    0.1 - x₀ + h beyond x₀ (16.8 ulps), not h (16.4 ulps)."""
    settings = GridSettings("float16", 0.1, 1e-3, "x")
    steps = at_step(view(settings), settings.h).result
    result, (_, window) = steps.difference, steps.frames.at(settings.h)
    assert result.x.value == 0.0999755859375
    mark = next(t for t in grid_figure(result, window).data if t.name == "x + h asked")
    expected = (Fraction(0.1) - Fraction(result.x.value) + Fraction(1e-3)) / Fraction(result.x.ulp)
    assert mark.x[0] == pytest.approx(float(expected), rel=1e-12)
    assert mark.x[0] != pytest.approx(1e-3 / result.x.ulp, rel=1e-3)


# ------------------------------------------------------------------ the worker pool and the CLI

#: An expression whose float64 value is finite (1/inf = 0) but whose exact value needs an integer
#: power that held one C call for 23 s in the server's thread, which no in-thread limit interrupts.
HOLDING_C_CALL = GridSettings("float64", 1e9, 1e-4, "1/(x**x**x)")


@pytest.fixture(scope="module")
def pool():
    pool = WorkerPool(2).start()
    yield pool
    pool.close()


def _in_pool(pool, settings):
    entry = view.worker_entry
    try:
        return pool.run(view, settings, seconds=entry.seconds(), what=entry.what, limit_name=entry.limit_name)
    except GradLabError as err:
        return err


@pytest.mark.server
@pytest.mark.timeout(180)
def test_in_the_pool_the_urls_end_in_their_results(pool):
    for settings in URL_CASES.values():
        outcome = _in_pool(pool, settings)
        assert not isinstance(outcome, Exception), outcome
        assert outcome.result.difference.settings == settings


@pytest.mark.server
@pytest.mark.timeout(180)
def test_in_the_pool_an_exact_derivative_holding_one_c_call_ends_at_a_named_limit(pool):
    outcome = _in_pool(pool, HOLDING_C_CALL)
    assert isinstance(outcome, LimitError), outcome
    assert "LIMITS." in str(outcome) and "one request cannot slow the server" in str(outcome), outcome
    assert _one_sentence(outcome)


def _cli(*argv: str):
    run = subprocess.run([sys.executable, "-m", "gradlab", "grid", *argv], cwd=REPO_ROOT, env=dict(os.environ),
                         capture_output=True, text=True, timeout=170)
    return run.returncode, run.stdout, run.stderr


@pytest.mark.server
@pytest.mark.timeout(180)
@pytest.mark.parametrize("argv", [("--at", "1e31"), ("--at", "3.1415927", "--h", "1e-06"),
                                  ("--dtype", "float64", "--at", str(FLOAT64_MAX), "--h", "5e-324"),
                                  ("--dtype", "float64", "--at", "1e9", "--expression", "1/(x**x**x)")],
                         ids=["x=1e31", "sin-near-pi", "float64-max", "holding-c-call"])
def test_the_cli_ends_in_the_answer_or_one_sentence(argv):
    status, out, err = _cli(*argv)
    assert "Traceback" not in err, err
    if status == 2:
        assert err.startswith("error: ") and err.count("\n") == 1 and "LIMITS." in err, err
    else:
        assert status == 0, err
        assert out.rstrip().splitlines()[-1].startswith("x + h "), out
    if "1/(x**x**x)" in argv:
        assert status == 2
