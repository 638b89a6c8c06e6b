"""Numbers inside LaTeX: a power of ten, never ``2.98e-08`` (KaTeX sets that as "2.98e − 08")."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gradlab.numerics.mp_format import latex_number
from hypothesis_profiles import engine_settings

#: The format specs pages use for numbers in ``$...$``, and a few more.
SPECS = (".4g", ".6g", ".9g", ".2g", "g", ".3e", ".17g", ".1e")

_POWER = re.compile(r"^(-?\d+(?:\.\d+)?) \\times 10\^\{(-?\d+)\}$")


def _back(tex: str) -> float:
    """The number a reader reads in ``tex``: ``m \\times 10^{e}`` or plain digits."""
    found = _POWER.match(tex)
    return float(f"{found.group(1)}e{found.group(2)}") if found else float(tex)


@engine_settings(max_examples=300)
@given(st.floats(allow_nan=False, allow_infinity=False), st.sampled_from(SPECS))
def test_latex_numbers_have_no_e_notation_and_read_back_as_the_formatted_value(value, spec):
    tex = latex_number(value, spec)
    assert "e-" not in tex and "e+" not in tex and not re.search(r"\de\d", tex), tex
    # Mantissa and exponent round-trip: the reader gets exactly what format(value, spec) printed.
    assert _back(tex) == float(format(value, spec))
    found = _POWER.match(tex)
    if found:  # the mantissa keeps its digits and sign, the exponent has no padding or '+'
        mantissa, exponent = format(value, spec).lower().split("e")
        assert found.group(1) == mantissa and int(found.group(2)) == int(exponent)
        assert not re.match(r"-?0\d", found.group(2).lstrip("-"))


@pytest.mark.parametrize("value,tex", [
    (2.98023223876953125e-08, r"2.98 \times 10^{-8}"),  # float32's ulp at y in [0.25, 0.5)
    (9.5367431640625e-07, r"9.537 \times 10^{-7}"),  # a float32 step of 2^-20
    (-0.014901161193847656, "-0.0149"),  # no exponent: plain digits
    (1e20, r"1 \times 10^{20}"),
])
def test_the_network_pages_numbers_typeset_as_powers_of_ten(value, tex):
    assert latex_number(value, ".4g") == tex


def test_nan_and_infinity_are_words_of_latex():
    assert latex_number(math.nan) == r"\mathrm{NaN}"
    assert latex_number(math.inf) == r"\infty" and latex_number(-math.inf) == r"-\infty"


_MATH = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$", re.S)
_E_NOTATION = re.compile(r"\d[eE][+-]?\d")


def test_the_network_page_puts_no_e_notation_into_latex():
    # The default view shows ulp(y) = 2^-25 ~ 2.98e-8 for y in [0.25, 0.5): the case that read
    # "2.98e − 08" on screen.
    from streamlit.testing.v1 import AppTest

    app = str(Path(__file__).resolve().parents[1] / "app.py")
    at = AppTest.from_file(app, default_timeout=120)
    at.run()
    at.switch_page("pages/network.py").run()
    assert not at.exception
    texts = [m.value for m in at.markdown] + [c.value for c in at.caption] + [e.value for e in at.latex]
    formulas = [a or b for t in texts for a, b in _MATH.findall(t)]
    assert any(r"\times 10^{" in f for f in formulas), formulas  # the small numbers are there ...
    assert not [f for f in formulas if _E_NOTATION.search(f)]  # ... as powers of ten
