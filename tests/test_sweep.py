"""The error-vs-eps sweep: table shape, one torch call per dtype, steps, errors, theory, misuse.

Expected numbers are computed here independently: steps with numpy's float16 /
float32 arithmetic, exact derivatives from closed forms with mpmath, the theory
optimum from the formula in schemes.py's docstring written out by hand.
"""

from __future__ import annotations

import math
import signal

import mpmath
import numpy as np
import pandas as pd
import pytest
from cost import stopped_within

import gradlab.step_sweep.engine as sweep_module
from gradlab.errors import GradLabError, LimitError
from gradlab.numerics.expressions import ExpressionError, parse
from gradlab.limits import LIMITS
from gradlab.numerics.dtypes import DTYPE_NAMES, facts
from gradlab.numerics.schemes import SCHEME_NAMES, SCHEMES
from gradlab.step_sweep.engine import TABLE_COLUMNS, SweepSettings, autograd_derivative, run_sweep

DOCUMENTED = ["dtype", "scheme", "eps", "step", "estimate", "reference", "abs_error", "rel_error", "finite"]
REAL_SCHEMES = tuple(s for s in SCHEME_NAMES if not SCHEMES[s].complex_step)


def _applicable(dtype: str, holomorphic: bool = True) -> int:
    """Schemes usable in a dtype: the complex step needs a complex partner and a holomorphic f."""
    return len(REAL_SCHEMES) + (1 if holomorphic and dtype in ("float32", "float64") else 0)


@pytest.fixture(scope="module")
def classic():
    return run_sweep(SweepSettings("exp(x)/sqrt(sin(x)**3 + cos(x)**3)", 1.5, points=21))


def test_table_columns_and_row_count(classic):
    t = classic.table
    assert list(t.columns) == list(TABLE_COLUMNS)
    assert set(DOCUMENTED) <= set(t.columns)
    expected_rows = sum(_applicable(d) for d in DTYPE_NAMES) * 21  # (5 + 5 + 6 + 6) * 21 for the first six schemes
    assert len(t) == expected_rows
    counts = t.groupby(["dtype", "scheme"], observed=True).size()
    assert set(counts) == {21}
    assert set(t["dtype"].astype(str)) == set(DTYPE_NAMES)
    assert not ((t["dtype"] == "float16") & (t["scheme"] == "complex_step")).any()


@pytest.mark.parametrize("text,holomorphic", [("abs(x)", False), ("erf(x)", False), ("relu(x)*x", False)])
def test_row_count_without_complex_step(text, holomorphic):
    result = run_sweep(SweepSettings(text, 0.5, points=7))
    assert len(result.table) == sum(_applicable(d, holomorphic) for d in DTYPE_NAMES) * 7
    assert "complex_step" not in set(result.table["scheme"].astype(str))
    assert any("not applicable" in n.text and n.level == "info" for n in result.notes)


def test_eps_column_is_the_log_spaced_range():
    result = run_sweep(SweepSettings("sin(x)", 0.5, ("float64",), ("central",), 1e-12, 1e-2, 11))
    np.testing.assert_allclose(result.table["eps"], 10.0 ** np.arange(-12, -1), rtol=1e-12)


def test_best_and_autograd_tables(classic):
    assert list(classic.best.columns) == [
        "dtype", "scheme", "eps", "abs_error", "rel_error", "robust_eps", "robust_rel_error",
        "predicted_eps", "predicted_rel_error"]
    assert len(classic.best) == sum(_applicable(d) for d in DTYPE_NAMES)
    assert {"dtype", "value", "reference", "abs_error", "rel_error"} <= set(classic.autograd.columns)
    assert list(classic.autograd["dtype"]) == list(DTYPE_NAMES)


def test_error_columns_are_consistent(classic):
    t = classic.table
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(t["abs_error"], np.abs(t["estimate"] - t["reference"]))
        np.testing.assert_allclose(t["rel_error"], t["abs_error"] / np.abs(t["reference"]), rtol=1e-15)
    np.testing.assert_array_equal(t["finite"], np.isfinite(t["estimate"]))


# ---------------------------------------------------------------- one torch call per dtype


class CountingExpression:
    """An Expression that records each call: (shape, dtype, requires_grad)."""

    def __init__(self, expression):
        self._expression, self.calls = expression, []

    def __call__(self, t):
        self.calls.append((tuple(t.shape), t.dtype, t.requires_grad))
        return self._expression(t)

    def __getattr__(self, name):
        return getattr(self._expression, name)


@pytest.mark.parametrize("frames", [False, True])
def test_vectorised_over_eps_one_call_per_dtype(monkeypatch, frames):
    from gradlab.step_sweep.step_frames import slider_steps

    counted = {}

    def counting_parse(text):
        if text not in counted:
            counted[text] = CountingExpression(parse(text))
        return counted[text]

    monkeypatch.setattr(sweep_module, "parse", counting_parse)
    points = 31
    run_sweep(SweepSettings("sin(x)*exp(x)", 0.4, points=points, frames=frames))
    if frames:  # the step slider's stops ride in the same call; unasked, f never sees them
        points += len(slider_steps(1e-16, 1.0))
    (expr,) = counted.values()
    real_points = sum(len(SCHEMES[name].offsets) for name in REAL_SCHEMES)  # forward, backward, central: 2 each, ...
    expected = []
    for d in DTYPE_NAMES:
        info = facts(d)
        expected.append(((), info.torch_dtype, True))  # autograd at the rounded x
        expected.append(((real_points, points), info.torch_dtype, False))  # every real stencil point
        if info.complex_partner is not None:
            expected.append(((points,), info.complex_partner, False))  # the complex step
    assert sorted(expr.calls, key=str) == sorted(expected, key=str)


# ---------------------------------------------------------------- steps and rounded points


def _np_step(x, eps, np_dtype):
    with np.errstate(over="ignore"):
        xd = np_dtype(x)
        return ((xd + eps.astype(np_dtype)) - xd).astype(np.float64)


@pytest.mark.parametrize("x", [0.3, 1.0, -2.5, 100.0])
def test_step_column_is_the_step_taken_in_the_dtype(x):
    result = run_sweep(SweepSettings("sin(x)", x, ("float16", "float32", "float64"), ("central", "complex_step"),
                                     1e-12, 1.0, 25))
    t = result.table
    for name, np_dtype in (("float16", np.float16), ("float32", np.float32), ("float64", np.float64)):
        rows = t[(t["dtype"] == name) & (t["scheme"] == "central")]
        np.testing.assert_array_equal(rows["step"], _np_step(x, rows["eps"].to_numpy(), np_dtype))
    # the complex step is taken along the imaginary axis: the step is eps as the dtype holds it
    rows = t[(t["dtype"] == "float32") & (t["scheme"] == "complex_step")]
    np.testing.assert_array_equal(rows["step"], rows["eps"].to_numpy().astype(np.float32).astype(np.float64))


def test_float32_steps_below_half_an_ulp_are_zero():
    result = run_sweep(SweepSettings("x**2", 1.0, ("float32",), ("forward",), 1e-12, 1e-6, 13))
    t = result.table
    tiny = t[t["eps"] < 2**-24 * 0.99]  # below half an ulp of 1: x + eps rounds to x
    assert len(tiny) > 0 and (tiny["step"] == 0).all() and (tiny["estimate"] == 0).all()


@pytest.mark.parametrize("x", [0.1, 0.3, 1.7])
def test_rounded_x_and_reference_at_the_rounded_point(x):
    result = run_sweep(SweepSettings("x**2", x, ("float16", "float32", "float64"), ("central",), points=5))
    for name, np_dtype in (("float16", np.float16), ("float32", np.float32), ("float64", np.float64)):
        xr = float(np_dtype(x))
        assert result.rounded_x[name] == xr
        ref = result.table[result.table["dtype"] == name]["reference"]
        assert (ref == 2 * xr).all()  # d/dx x^2 = 2 x at the rounded x, exactly representable


# ---------------------------------------------------------------- autograd


def test_autograd_error_for_reciprocal_in_float32_and_float64():
    result = run_sweep(SweepSettings("1/x", 0.3, ("float32", "float64"), ("central",), points=5))
    rows = result.autograd.set_index("dtype")
    # float32: autograd computes -(1/x)*(1/x), two roundings (the 1/x question)
    x32 = np.float32(0.3)
    r = np.float32(1) / x32
    assert rows.loc["float32", "value"] == float(-(r * r))
    with mpmath.workdps(40):
        exact32 = -1 / mpmath.mpf(float(x32)) ** 2
        rel32 = float(abs(mpmath.mpf(float(-(r * r))) - exact32) / abs(exact32))
    assert rows.loc["float32", "rel_error"] == pytest.approx(rel32, rel=1e-9)
    assert 0 < rows.loc["float32", "rel_error"] <= 4 * facts("float32").eps
    assert rows.loc["float64", "rel_error"] <= 2 * facts("float64").eps


def test_autograd_derivative_values():
    assert autograd_derivative(parse("x**3"), 2.0, "float32") == 12.0
    assert autograd_derivative(parse("sin(x)"), 0.0, "bfloat16") == 1.0


# ---------------------------------------------------------------- non-finite values


def test_sqrt_near_zero_with_steps_larger_than_x_gives_nan_rows():
    result = run_sweep(SweepSettings("sqrt(x)", 1e-4, ("float64",), ("forward", "backward", "central"),
                                     1e-10, 1.0, 21))
    t = result.table
    crossing = t[(t["scheme"].isin(["backward", "central"])) & (t["eps"] > 1e-4 * 1.01)]
    assert len(crossing) > 0
    assert crossing["estimate"].isna().all() and (~crossing["finite"]).all()
    forward = t[t["scheme"] == "forward"]
    assert forward["finite"].all()  # x + h stays in the domain
    assert any("inf or NaN" in n.text and n.level == "info" for n in result.notes)


def test_exp_100_overflows_the_small_dtypes():
    result = run_sweep(SweepSettings("exp(x)", 100.0, DTYPE_NAMES, ("central",), 1e-6, 1e-1, 7))
    # e^100 = 2.7e43: beyond float16 (65504), bfloat16 and float32 (3.4e38), within float64
    for name in ("float16", "bfloat16", "float32"):
        overflow = [n for n in result.notes if n.text.startswith(f"{name}: f(x)") and "overflows" in n.text]
        assert [n.level for n in overflow] == ["warning"], name
        assert not result.table[result.table["dtype"] == name]["finite"].any()
    assert not any(n.text.startswith("float64: f(x)") for n in result.notes)
    assert result.table[result.table["dtype"] == "float64"]["finite"].all()


def test_x_beyond_the_dtype_is_skipped_with_a_note():
    result = run_sweep(SweepSettings("x", 1e5, ("float16", "float64"), ("central",), points=5))
    assert set(result.table["dtype"].astype(str)) == {"float64"}
    assert [n.level for n in result.notes if "float16" in n.text and "beyond" in n.text] == ["warning"]


def test_undefined_reference_gives_gaps_and_a_note():
    result = run_sweep(SweepSettings("abs(x)", 0.0, points=9))
    assert not result.reference.defined
    assert result.table["rel_error"].isna().all()
    assert result.notes[0].text.startswith("No exact reference")
    assert "kink" in result.notes[0].text and result.notes[0].level == "warning"


def test_x_that_rounds_into_a_singularity_is_a_warning():
    # 1e-50 is below float32's smallest subnormal (2**-149 ~ 1.4e-45): it rounds to 0, where log has no value.
    result = run_sweep(SweepSettings("log(x)", 1e-50, ("float32", "float64"), ("central",), 1e-60, 1e-55, 5))
    rounded = [n for n in result.notes if "rounds to 0" in n.text]
    assert [(n.level, n.text.split(":")[0]) for n in rounded] == [("warning", "float32")]


def test_steps_that_round_to_zero_are_counted_in_an_info_note():
    # float32 at x = 1: numbers are 2**-23 apart, so x + h rounds back to 1 when h < 2**-24 (~5.96e-8)
    # (and at h = 2**-24, a tie, to the even 1). Of 1e-10 ... 1e-6, the first three vanish.
    eps = 10.0 ** np.arange(-10, -5)
    vanishing = int(np.sum(eps <= 2.0**-24))
    result = run_sweep(SweepSettings("exp(x)", 1.0, ("float32",), ("central", "complex_step"), 1e-10, 1e-6, 5))
    notes = [n for n in result.notes if "rounds back to x" in n.text]
    assert len(notes) == 1 and notes[0].level == "info"
    assert notes[0].text.startswith(f"float32: {vanishing} of the 5 steps")
    central = result.table[result.table["scheme"] == "central"]
    assert int((central["step"] == 0).sum()) == vanishing == 3


def test_no_step_rounds_to_zero_no_note():
    # float64 at x = 1: h = 1e-6 ... 1e-2 are all far above 2**-53.
    result = run_sweep(SweepSettings("exp(x)", 1.0, ("float64",), ("central",), 1e-6, 1e-2, 5))
    assert not any("rounds back to x" in n.text for n in result.notes)


def test_exact_estimates_are_an_info_note():
    # x**2 at 3 with a central difference: ((3+h)**2 - (3-h)**2) / 2h = 6 exactly when every
    # operation is exact, e.g. h = 2**-k, a power of two, in float64.
    result = run_sweep(SweepSettings("x**2", 3.0, ("float64",), ("central",), 2.0**-20, 2.0**-10, 11))
    exact = [n for n in result.notes if "error exactly 0" in n.text]
    assert len(exact) == 1 and exact[0].level == "info"


def test_every_note_has_a_level_and_warnings_come_apart():
    result = run_sweep(SweepSettings("exp(x)", 100.0, DTYPE_NAMES, SCHEME_NAMES, 1e-6, 1e-1, 7))
    assert result.notes and all(n.level in ("info", "warning") for n in result.notes)
    assert result.warnings == tuple(n for n in result.notes if n.level == "warning")
    assert result.infos == tuple(n for n in result.notes if n.level == "info")
    assert len(result.warnings) == 3  # float16, bfloat16, float32 overflow; float64 holds e**100


def test_division_by_a_constant_zero_does_not_crash():
    # "x/0" is accepted by the parser; its reference is undefined, not an exception
    result = run_sweep(SweepSettings("x/0", 1.0, ("float64",), ("central",), points=5))
    assert not result.reference.defined


# ---------------------------------------------------------------- bad settings

BAD = [
    (dict(eps_min=1e-3, eps_max=1e-3), "eps-min"),
    (dict(eps_min=1e-2, eps_max=1e-3), "eps-min"),
    (dict(eps_min=0.0), "eps-min"),
    (dict(eps_min=-1e-8), "eps-min"),
    (dict(eps_max=math.inf), "eps-max"),
    (dict(eps_min=math.nan), "eps-min"),
    (dict(eps_min=1e-320), "eps range"),
    (dict(eps_max=1e7), "eps range"),
    (dict(x=math.nan), "x"),
    (dict(x=math.inf), "x"),
    (dict(x=-math.inf), "x"),
    (dict(points=LIMITS.sweep_points + 1), "sweep points"),
    (dict(points=1), "points"),
    (dict(points=2.5), "points"),
    (dict(dtypes=("float8",)), "float8"),
    (dict(dtypes=()), "dtype"),
    (dict(schemes=("secant",)), "secant"),
    (dict(schemes=()), "scheme"),
    (dict(expression="x^2"), "**"),
    (dict(expression=""), "empty"),
]


@pytest.mark.parametrize("change,word", BAD, ids=[str(c) for c, _ in BAD])
def test_bad_settings_raise_gradlab_error(change, word):
    settings = dict(expression="sin(x)", x=0.5, dtypes=("float64",), schemes=("central",), points=5)
    settings.update(change)
    with pytest.raises(GradLabError) as info:
        run_sweep(SweepSettings(**settings))
    assert word in str(info.value)


def test_too_many_points_is_a_limit_error_and_the_limit_itself_is_fine():
    with pytest.raises(LimitError):
        run_sweep(SweepSettings("sin(x)", 0.5, ("float64",), ("central",), points=LIMITS.sweep_points + 1))
    result = run_sweep(SweepSettings("sin(x)", 0.5, ("float64",), ("central",), points=LIMITS.sweep_points))
    assert len(result.table) == LIMITS.sweep_points


def test_refused_expression_is_an_expression_error():
    with pytest.raises(ExpressionError):
        run_sweep(SweepSettings("__import__('os')", 0.5))


def test_settings_normalise_names_and_drop_duplicates():
    s = SweepSettings(" sin(x) ", 1, ("f64", "float64", "half"), ("5-point", "central", "Central")).validated()
    assert s.expression == "sin(x)" and s.x == 1.0 and isinstance(s.x, float)
    assert s.dtypes == ("float64", "float16") and s.schemes == ("five_point", "central")


# ---------------------------------------------------------------- theory: best step


def test_predicted_best_for_central_float64_on_exp_at_1():
    """schemes.py: minimise C_t |f'''| h^2 + C_r u (|f| + |x f'|) / h (+ u |f'|).

    Central: C_t = 1/6, C_r = 1; at x = 1 for exp, f = f' = f''' = e, so
    h* = (3 u (e + e) / e)^(1/3) = (6u)^(1/3), and the relative error there is
    h*^2 / 6 + 2u / h* + u.
    """
    result = run_sweep(SweepSettings("exp(x)", 1.0, ("float64",), ("central",)))
    best = result.best.iloc[0]
    u = 2.0**-53
    h = (6 * u) ** (1 / 3)
    assert best["predicted_eps"] == pytest.approx(h, rel=1e-9)
    assert best["predicted_rel_error"] == pytest.approx(h**2 / 6 + 2 * u / h + u, rel=1e-9)


SMOOTH = [("exp(x)", 1.0), ("sin(x)", 0.7), ("1/x", 0.3), ("exp(x)/sqrt(sin(x)**3 + cos(x)**3)", 1.5),
          ("log(x)", 2.5), ("atan(x)", 0.4)]


@pytest.mark.parametrize("text,x", SMOOTH, ids=[s[0] for s in SMOOTH])
def test_observed_best_step_agrees_with_the_theory(text, x):
    """The observed optimum sits near the predicted one, for every real scheme in float32/float64.

    A 61-point sweep's raw minimum is partly luck (round-off errors can cancel), so the
    observed curve is smoothed with a running median over 5 points (~1.3 decades).
    The model adds worst-case round-off terms, so it is an upper estimate: the observed
    best error is at most the predicted one, and the observed best step sits at or a little
    below the predicted step (a factor 20 either way is allowed: about 1.3 decades).
    """
    result = run_sweep(SweepSettings(text, x, ("float32", "float64"), REAL_SCHEMES))
    t = result.table
    for _, best in result.best.iterrows():
        rows = t[(t["dtype"] == best["dtype"]) & (t["scheme"] == best["scheme"])]
        smooth = pd.Series(rows["rel_error"].to_numpy()).rolling(5, center=True, min_periods=3).median()
        i = int(np.nanargmin(smooth.to_numpy()))
        eps_obs, err_obs = rows["eps"].to_numpy()[i], smooth.to_numpy()[i]
        label = f"{best['dtype']} {best['scheme']}"
        assert best["predicted_eps"] / 20 <= eps_obs <= best["predicted_eps"] * 20, label
        assert best["predicted_rel_error"] / 10 <= err_obs <= best["predicted_rel_error"] * 2, label
        assert best["rel_error"] <= best["predicted_rel_error"], label


def test_polynomial_with_vanishing_truncation_derivative_has_no_predicted_step():
    # x**3 has f^(5) = 0: 4th-order schemes are exact but for round-off; no V, no optimum
    result = run_sweep(SweepSettings("x**3", 1.0, ("float64",), ("five_point", "central")))
    best = result.best.set_index("scheme")
    assert math.isnan(best.loc["five_point", "predicted_eps"])
    assert best.loc["central", "predicted_eps"] > 0


def test_complex_step_best_error_is_at_roundoff(classic):
    best = classic.best.set_index(["dtype", "scheme"])
    assert best.loc[("float64", "complex_step"), "rel_error"] <= 2 * facts("float64").eps
    for scheme in REAL_SCHEMES:
        assert best.loc[("float64", scheme), "rel_error"] > best.loc[("float64", "complex_step"), "rel_error"]


# ---------------------------------------------------------------- limited cost


class _Timeout(Exception):
    pass


def test_sweep_of_any_accepted_expression_is_limited_in_time():
    """A public link must not let one request tie up a core: a small accepted expression
    must be swept (or refused with a GradLabError) within a few seconds.

    (Found by this suite: the 5th derivative of tan^8(x) has ~48k nodes and took > 10 s;
    limited by LIMITS.evaluation_seconds and gradlab/server/deadline.py.)"""
    text = "tan(" * 8 + "x" + ")" * 8
    parse(text)  # accepted: 9 nodes, depth 9, 41 characters

    def alarm(signum, frame):
        raise _Timeout

    # f/f' and the higher orders may each use LIMITS.evaluation_seconds; the alarm only
    # catches a limit that never fired (a loaded machine stretches the rest)
    limit = stopped_within(3 * LIMITS.evaluation_seconds)
    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        run_sweep(SweepSettings(text, 0.7, ("float64",), ("central",), points=5))
    except GradLabError:
        pass
    except _Timeout:
        pytest.fail(f"the sweep of a 41-character expression took more than {limit:g} s")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# ------------------------------------------------- the step range fitted to a dtype's V

# Unit round-off from the IEEE formats (stored fraction bits), not from the code's table.
UNIT_ROUNDOFF = {"float16": 2.0**-11, "bfloat16": 2.0**-8, "float32": 2.0**-24, "float64": 2.0**-53}
ORDER = {"forward": 1, "central": 2}


@pytest.mark.parametrize("dtype", list(UNIT_ROUNDOFF))
@pytest.mark.parametrize("scheme", list(ORDER))
def test_the_fitted_step_range_holds_the_whole_v(dtype, scheme):
    from gradlab.step_sweep.step_range import step_range

    u, p = UNIT_ROUNDOFF[dtype], ORDER[scheme]
    low, high = step_range(dtype, scheme)
    # The bottom of the V, h* ~ u^(1/(p+1)) (sqrt(u) forward, cbrt(u) central), lies inside.
    assert low < u ** (1 / (p + 1)) < high
    # The left arm is there: round-off u/h reaches 100 % at h = u, and the range starts below it,
    # but not more than two decades below (a little plateau, not 13 decades of it).
    assert u / 100 <= low <= u
    # It does not end on the far plateau: truncation ~h^p is below 100 % at the large end.
    assert high**p < 1


def test_on_exp_at_0_the_fitted_range_shows_both_arms_and_its_best_step_inside():
    # exp at 0: f = f' = f''' = 1, so the error model u/h + h²/6 holds without constants.
    from gradlab.step_sweep.step_range import chart_step_range

    for dtype in ("float32", "float64"):
        low, high = chart_step_range((dtype,), ("central",))
        result = run_sweep(SweepSettings("exp(x)", 0.0, (dtype,), ("central",), low, high, points=61))
        errors = result.table["rel_error"].to_numpy(dtype=float)
        assert errors[-1] < 1  # the large end is on the truncation arm, below 100 %
        assert errors[0] >= 0.5  # the small end is where round-off has eaten every digit
        best = float(result.best.loc[0, "eps"])
        assert low < best < high  # the bottom of the V is inside, not at an edge
        # ... and within a decade of the theory's cbrt(3u) (h* for |f/f'''| = 1).
        assert abs(math.log10(best / (3 * UNIT_ROUNDOFF[dtype]) ** (1 / 3))) < 1


def test_the_chart_range_is_the_union_of_its_dtypes():
    from gradlab.step_sweep.step_range import chart_step_range, step_range

    r32, r64 = step_range("float32", "central"), step_range("float64", "central")
    assert chart_step_range(("float32", "float64"), ("central",)) == (min(r32[0], r64[0]), max(r32[1], r64[1]))
