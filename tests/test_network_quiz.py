"""The Network lab's prediction: its choices and its reveal worked out from the network's own output,
not written in for the question's network (y ≈ 0.39) and wrong for any other."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app_text import shown
from gradlab.teaching.presets import presets_for, url_query
from gradlab.labs.network.quiz import network_guesses, network_reveal


def _float64_ulp(y: float) -> Fraction:
    """2^(e - 52) for |y| in [2^e, 2^(e+1)): float64's spacing at y, from its exponent alone."""
    e = math.frexp(abs(y))[1] - 1  # frexp: |y| = m·2^k, m in [0.5, 1)
    return Fraction(2) ** (e - 52)


@given(st.floats(min_value=1e-6, max_value=1e6), st.sampled_from([1e-6, 1e-4, 1e-3]))
def test_the_right_choice_is_float64s_quantum_for_any_output(y, step):
    quantum = float(_float64_ulp(y) / (2 * Fraction(step)))
    assert network_guesses(y, step)["float64"] == f"about {quantum:.1g}"
    reveal = network_reveal("float64", y, step, reference=1.0)
    assert reveal.level == "success" and f"that is {quantum:.2g}" in reveal.text
    assert network_reveal("step", y, step, reference=1.0).level == "info"


def test_the_reveal_counts_the_digits_autograd_can_be_matched_to():
    # the question's network: y ≈ 0.39, autograd ≈ -0.00952: q = 2^-54 / 2e-6 ≈ 2.8e-11, 0.00952 / q ≈ 3.4e8
    assert "to about 8 digits" in network_reveal("float64", 0.39, 1e-6, -0.00952).text
    assert "digits" not in network_reveal("float64", 0.39, 1e-6, 0.0).text  # a dead ReLU: nothing to match


@pytest.mark.parametrize("preset", presets_for("network"), ids=lambda p: p.key)
def test_each_presets_prediction_reveals_the_quantum_of_its_own_output(preset):
    from streamlit.testing.v1 import AppTest
    from pathlib import Path

    at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "app.py"), default_timeout=90)
    at.run()
    at.query_params.update(url_query(preset))
    at.switch_page("pages/network.py").run()
    assert not at.exception
    shown_choices = list(at.radio(key="network_guess").options)  # as the page labels them
    at.radio(key="network_guess").set_value("float64").run()
    (reveal,) = [shown(m.value) for m in at.success if "ulp(y) for y ≈" in shown(m.value)]
    y = float(reveal.split("y ≈ ")[1].split(" ")[0])
    twice_step = Fraction(reveal.split("2·dx = ")[1].split(" ")[0])
    assert f"about {float(_float64_ulp(y) / twice_step):.1g}" in shown_choices, (shown_choices, reveal)
    assert f"about {float(twice_step / 2):g}, the step itself" in shown_choices
