"""The Explorer's answer sentence: which estimate comes closest to the exact derivative, and by how much."""

from __future__ import annotations

import pytest

from gradlab.error_sweep import SweepSettings, run_sweep
from gradlab.sweep_answer import short_number, sweep_answer, ulps_off


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
    assert note.text.endswith("autograd is exact.")


def test_two_dtypes_are_both_named_and_the_sentence_is_one_sentence():
    result = run_sweep(SweepSettings("exp(x)", 1.0, ("float32", "float64"), ("central",), 1e-17, 0.5, points=41))
    text = sweep_answer(result).text
    assert "float32 central difference" in text and "float64" in text
    assert text.count(". ") == 0 and text.endswith(".")


def test_no_exact_derivative_is_a_warning_not_a_winner():
    result = run_sweep(SweepSettings("abs(x)", 0.0, ("float64",), ("central",), 1e-8, 1e-2, points=5))
    note = sweep_answer(result)
    assert note.is_warning and "no exact derivative" in note.text


def test_short_numbers_have_one_digit():
    assert [short_number(v) for v in (3.2e-6, 0.0039, 7.0, 1.2e-11)] == ["3e-6", "0.004", "7", "1e-11"]
