"""The Explorer's answer sentence: which estimate comes closest to the exact derivative, and by how much."""

from __future__ import annotations

import pytest

from gradlab.step_sweep.engine import SweepSettings, run_sweep
from gradlab.step_sweep.regimes import regime_sentence
from gradlab.labs.explorer.answer import short_number, sweep_answer, ulps_off


def test_ulps_are_counted_in_the_dtypes_spacing():
    # Between 1 and 2, float32 numbers are 2^-23 apart and float64 numbers 2^-52.
    assert ulps_off(1.0 + 3 * 2.0**-23, 1.0, "float32") == pytest.approx(3)
    assert ulps_off(1.0, 1.0 + 2.0**-24, "float32") == pytest.approx(0.5)  # half a gap: exact in float64
    assert ulps_off(2.0 + 2.0**-51, 2.0, "float64") == pytest.approx(1)  # the gap doubles at 2


def test_x_cubed_in_float64_names_the_best_difference_and_autograd():
    # f = x³ at 2: the central difference's truncation is h²·f'''/6 = h², so it is tiny at the
    # best step; autograd computes 3·x² = 12 exactly.
    result = run_sweep(SweepSettings("x**3", 2.0, ("float64",), ("central",), 1e-12, 1e-2, points=41))
    note = sweep_answer(result)
    assert note.level == "info"
    assert "float64 central difference is within" in note.text
    assert "autograd is exact." in note.text


def test_two_dtypes_are_both_named_in_one_sentence_then_the_regimes_in_another():
    result = run_sweep(SweepSettings("exp(x)", 1.0, ("float32", "float64"), ("central",), 1e-17, 0.5, points=41))
    text = sweep_answer(result).text
    numbers, regimes = text.split(". ")
    # one scheme for both dtypes: named once, each dtype's bound after it
    assert re.match(r"At their best steps the central difference is within \S+ in float32 and within \S+ in float64 "
                    r"\(relative error against the exact derivative\); autograd", numbers), numbers
    assert regimes == regime_sentence(result)


def test_no_exact_derivative_is_a_warning_not_a_winner():
    result = run_sweep(SweepSettings("abs(x)", 0.0, ("float64",), ("central",), 1e-8, 1e-2, points=5))
    note = sweep_answer(result)
    assert note.is_warning and "no exact derivative" in note.text


def test_short_numbers_have_one_digit():
    assert [short_number(v) for v in (3.2e-6, 0.0039, 7.0, 1.2e-11)] == ["3e-6", "0.004", "7", "1e-11"]


# ------------------------------------------- never a lucky sample below the dtype's rounding

import math  # noqa: E402
import re  # noqa: E402

import mpmath  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

from gradlab.step_sweep.engine import robust_best  # noqa: E402
from gradlab.numerics.dtypes import ALL_DTYPE_NAMES, facts  # noqa: E402
from gradlab.numerics.schemes import SCHEME_NAMES  # noqa: E402
from gradlab.teaching.catalogue import CATALOGUE  # noqa: E402

# A dtype's rounding from torch's own format facts (eps = 2**(1-p), p significand bits with the
# implicit one), not from the code's table: u = 2**-p, the largest relative error of rounding one
# number to the dtype. Any dtype the table gains is covered without an edit here.
PRECISION_BITS = {name: 1 - round(math.log2(torch.finfo(getattr(torch, name)).eps)) for name in ALL_DTYPE_NAMES}


def _quoted(text: str, dtype: str) -> str | None:
    """What the answer says of ``dtype``'s best estimate: 'within 3e-6', 'exact', 'off by ...'."""
    found = re.search(rf"the {dtype} [\w\- ]+? (?:difference|estimate) (?:is )?"
                      rf"(within its rounding \([\d.e+-]+\)|within [\d.e+-]+|exact|"
                      rf"off by [^,(;]*[^,(; ](?: \(no closer than its rounding, [\d.]+ %\))?)", text)
    # one scheme for every dtype, named once: "the central difference is within 7e-6 in float32 and ..."
    shared = re.match(r"At their best steps the [\w\- ]+? (?:difference|estimate) is (.*?) \(relative error", text)
    if found is None and shared:
        found = re.search(rf"(within its rounding \([\d.e+-]+\)|within [\d.e+-]+) in {dtype}(?=,| and | \(|$)",
                          shared.group(1) + " (")
    return found.group(1) if found else None


def _never_below_rounding(claim: str, dtype: str, exact) -> None:
    u = 2.0 ** -PRECISION_BITS[dtype]
    if claim.startswith("within its rounding (") or "no closer than its rounding" in claim:
        named = claim[claim.index("rounding"):]  # the rounding's own number, after the word
        said = float(re.findall(r"[\d.]+(?:e[+-]?\d+)?", named)[0]) / (100 if "%" in named else 1)
        assert said == pytest.approx(u, rel=0.2), claim  # the rounding it names is the dtype's u
        return
    if claim == "exact":  # only where the exact derivative is itself a float64 number
        assert mpmath.mpf(float(exact)) == exact, claim
        return
    numbers = [float(n) for n in re.findall(r"\d+(?:\.\d+)?(?:e[+-]?\d+)?", claim)]
    lowest = numbers[0] / 100 if "%" in claim else numbers[0]
    assert lowest >= u, f"{dtype}: '{claim}' is below the dtype's rounding u = {u:.3g}"


@pytest.mark.parametrize("key", list(CATALOGUE))
def test_the_quoted_best_error_is_never_below_the_dtypes_rounding(key):
    """Over every built-in function, dtype and scheme: a relative error under the unit round-off
    only says the exact value happens to sit near a rounded one, so the answer never quotes one."""
    entry = CATALOGUE[key]
    for scheme in SCHEME_NAMES:
        result = run_sweep(SweepSettings(entry.expression, entry.x, ALL_DTYPE_NAMES, (scheme,), 1e-20, 1.0, 61))
        text = sweep_answer(result).text
        quoted = 0
        for dtype in ALL_DTYPE_NAMES:
            claim = _quoted(text, dtype)
            if claim is None:
                continue
            quoted += 1
            _never_below_rounding(claim, dtype, result.references[dtype].d1)
        finite = result.best[np.isfinite(result.best["robust_rel_error"].astype(float))]
        assert quoted == (len(set(finite["dtype"])) if result.reference.defined else 0), (scheme, text)


def test_the_complex_step_classic_says_float32s_rounding_not_its_luckiest_sample():
    # The Explorer's complex-step preset: one float32 step lands 7e-10 from the exact value,
    # a hundredth of float32's u = 6e-8; what float32 can promise is its rounding.
    result = run_sweep(SweepSettings("exp(x)/sqrt(sin(x)**3 + cos(x)**3)", 1.5, ("float32", "float64"),
                                     ("forward", "central", "complex_step"), 1e-20, 1.0, 61))
    lucky = result.best.set_index(["dtype", "scheme"]).loc[("float32", "complex_step"), "rel_error"]
    assert lucky < 2.0 ** -24 / 10  # the sample is there ...
    text = sweep_answer(result).text
    assert _quoted(text, "float32") == "within its rounding (6e-8)"  # ... not quoted
    assert short_number(lucky) not in text
    # exp(...)/sqrt(...) at 1.5 has no float64 derivative: an error of 0 is float64's rounding too.
    assert _quoted(text, "float64") == "within its rounding (1e-16)"
    assert "the complex step estimate is within its rounding (6e-8) in float32 and" in text  # the scheme named once


def test_the_robust_best_is_the_median_around_the_best_step_not_its_luckiest_sample():
    # A V sampled every factor 2 (so the neighbours within a factor 3 are one step either side):
    # |f'''| h² / 6 + u/h with one sample that landed, by luck, 1000 times below the curve.
    eps = 2.0 ** np.arange(-30, 0)
    errors = eps**2 / 6 + 2.0**-24 / eps
    lucky = int(np.argmin(errors)) + 2
    errors[lucky] /= 1000
    step, error = robust_best(eps, errors)
    window = [errors[i - 1:i + 2] for i in range(1, len(eps) - 1)]
    expected = min(sorted(w)[1] for w in window)  # the best median of three neighbours
    assert error == expected and error > errors[lucky] * 100
    assert step in eps and math.isclose(error, sorted(errors[list(eps).index(step) - 1:][:3])[1])


def test_within_is_rounded_up_so_the_bound_holds():
    # 1.12e-16 is above float64's u = 2**-53 = 1.11e-16: "within 1e-16" would read below it.
    from gradlab.labs.explorer.answer import best_error_words

    assert best_error_words(1.12e-16, "float64", 1.0 / 3) == "within 2e-16"  # not "1e-16"
    assert best_error_words(6.4e-6, "float32", 2.5) == "within 7e-6"
    assert best_error_words(2.0 ** -53 * 0.99, "float64", 2.5) == "within its rounding (1e-16)"
