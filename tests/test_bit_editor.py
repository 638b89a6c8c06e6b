"""The Grid page's bit editor (gradlab.ui.bit_editor): a click on one of x's bits makes x the float
those bits hold, and the page's answer follows (issue 37)."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app_text import shown
from gradlab.numerics.ulp import float_bits, from_bits

APP = str(Path(__file__).resolve().parents[1] / "app.py")


def _open(query: dict) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    at.query_params.update(query)
    return at.switch_page("pages/grid.py").run()


def _pills(at: AppTest) -> dict:
    return {p.label: p for p in at.get("button_group")}


@pytest.mark.parametrize("value", [1.0, 0.1, -3.5, 2.0 ** -130, 6.0e37])
def test_from_bits_reads_back_float32s_own_pattern(value):
    # the oracle: IEEE 754 single precision as Python's struct packs it
    packed = struct.unpack(">I", struct.pack(">f", value))[0]
    pattern = f"{packed:032b}"
    assert float_bits(value, "float32").replace(" ", "") == pattern
    assert from_bits(pattern, "float32") == struct.unpack(">f", struct.pack(">f", value))[0]


def test_clicking_the_lowest_fraction_bit_moves_x_one_ulp_and_the_answer_follows():
    at = _open({"x": "1.0", "dtype": "float32", "h": "1e-07"})
    assert not at.exception
    before = shown(at.info[0].value)
    assert "x + h is 1 ulp above x" in before  # at x = 1 an ulp is 2^-23 ≈ 1.19e-7 > 1e-7 / 2
    fraction = _pills(at)["fraction"]
    fraction.set_value([22]).run()  # the fraction's last bit (index 22 of 23): 1 + 2^-23
    assert not at.exception
    assert at.number_input(key="x").value == 1.0 + 2.0 ** -23
    assert at.session_state["x"] == from_bits("0 01111111 00000000000000000000001", "float32")
    # the page follows: its neighbours line names the new x, one ulp above 1, between 1 and 1 + 2^-22
    said = " ".join(shown(c.value) for c in at.caption)
    assert f"x = {1.0 + 2.0 ** -23!r}" in said and f"{1.0!r} and {1.0 + 2.0 ** -22!r}" in said


def test_a_sign_click_negates_x_and_an_all_ones_exponent_is_refused():
    at = _open({"x": "1.0", "dtype": "float32"})
    _pills(at)["sign"].set_value([0]).run()
    assert at.number_input(key="x").value == -1.0
    exponent = _pills(at)["exponent"]
    exponent.set_value(list(range(8))).run()  # 11111111: inf, no number x can be
    assert at.number_input(key="x").value == -1.0
    assert any("x stays" in shown(w.value) for w in at.warning)
