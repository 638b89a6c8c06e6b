"""The catalogue: every entry parses, sweeps, has a note, and the notes tell the truth."""

from __future__ import annotations

import math
import re

import mpmath
import numpy as np
import pytest

from gradlab.teaching.catalogue import CATALOGUE, CatalogueEntry, entry
from gradlab.errors import GradLabError
from gradlab.numerics.expressions import parse
from gradlab.numerics.exact_derivatives import exact_derivatives
from gradlab.step_sweep.engine import SweepSettings, run_sweep

KEYS = sorted(CATALOGUE)
NO_DERIVATIVE = {"abs_kink"}  # the note says there is no derivative at the point


def test_a_dozen_entries_or_more():
    assert len(CATALOGUE) >= 12
    assert len({e.expression + repr(e.x) for e in CATALOGUE.values()}) == len(CATALOGUE)


@pytest.mark.parametrize("key", KEYS)
def test_entry_is_well_formed(key):
    e = CATALOGUE[key]
    assert isinstance(e, CatalogueEntry) and e.key == key and entry(key) is e
    assert e.title.strip() and e.note.strip() and len(e.note) > 20
    assert math.isfinite(e.x)
    assert parse(e.expression).text == e.expression


@pytest.mark.parametrize("key", KEYS)
def test_entry_sweeps_without_exception(key):
    e = CATALOGUE[key]
    result = run_sweep(SweepSettings(e.expression, e.x, points=9))
    assert len(result.table) > 0 and len(result.best) > 0 and len(result.autograd) == 4


@pytest.mark.parametrize("key", KEYS)
def test_reference_defined_unless_the_note_says_no_derivative(key):
    e = CATALOGUE[key]
    r = exact_derivatives(e.expression, e.x)
    if key in NO_DERIVATIVE:
        assert "no derivative" in e.note.lower() or "No derivative" in e.note
        assert not r.defined and r.reason
    else:
        assert r.defined, r.reason
        assert "no derivative" not in e.note.lower()


def test_unknown_entry_lists_the_keys():
    with pytest.raises(GradLabError) as info:
        entry("gamma")
    assert "gamma" in str(info.value) and "reciprocal" in str(info.value)


# ---------------------------------------------------------------- the notes' claims


def _sweep(key, **kw):
    e = CATALOGUE[key]
    return run_sweep(SweepSettings(e.expression, e.x, **kw))


def _rows(result, dtype, scheme):
    t = result.table
    return t[(t["dtype"] == dtype) & (t["scheme"] == scheme)]


def test_tanh_saturated_claims():
    # f'(8) = sech(8)^2 = 4.5e-7, and float32 forward differences are exactly 0 for most steps
    with mpmath.workdps(30):
        assert float(1 / mpmath.cosh(8) ** 2) == pytest.approx(4.5e-7, rel=0.01)
    rows = _rows(_sweep("tanh_saturated", dtypes=("float32",), schemes=("forward",)), "float32", "forward")
    assert (rows["estimate"] == 0).mean() > 0.5


def test_abs_kink_claims():
    # at 0: central gives 0, forward +1, backward -1, autograd 0
    result = _sweep("abs_kink", dtypes=("float64",), schemes=("forward", "backward", "central"), points=11)
    assert (_rows(result, "float64", "central")["estimate"] == 0).all()
    assert (_rows(result, "float64", "forward")["estimate"] == 1).all()
    assert (_rows(result, "float64", "backward")["estimate"] == -1).all()
    assert result.autograd.set_index("dtype").loc["float64", "value"] == 0


def test_sin_flat_claims():
    # at pi/2 (as a float) f' = cos(x) is about 6e-17: tiny, not zero
    d1 = float(exact_derivatives("sin(x)", CATALOGUE["sin_flat"].x).d1)
    with mpmath.workdps(40):
        assert d1 == pytest.approx(float(mpmath.cos(mpmath.mpf(CATALOGUE["sin_flat"].x))), rel=1e-15)
    assert 0 < d1 < 1e-16


def test_sqrt_near_zero_claims():
    rows = _rows(_sweep("sqrt_near_zero", dtypes=("float64",), schemes=("central",)), "float64", "central")
    assert rows[rows["eps"] > 1e-4 * 1.01]["estimate"].isna().all()  # x - h < 0: no real sqrt


def test_log_one_plus_claims():
    # 1 + x + h rounds to 1 in float32 for every step below ~6e-8: the difference is exactly 0
    rows = _rows(_sweep("log_one_plus", dtypes=("float32",), schemes=("central",)), "float32", "central")
    assert (rows[rows["eps"] < 1e-8]["estimate"] == 0).all()


def test_cubic_claims():
    # central truncation for x**3 is exactly h**2: (3x^2 h + h^3... ) -> error = h^2 at any x
    rows = _rows(_sweep("cubic", dtypes=("float64",), schemes=("central",), eps_min=1e-3, eps_max=1e-1,
                        points=5), "float64", "central")
    errors = (rows["estimate"] - rows["reference"]).to_numpy()
    np.testing.assert_allclose(errors, rows["eps"].to_numpy() ** 2, rtol=1e-6)


def test_large_x_claims():
    # e^10 = 22026 fits float16 (65504), but e^(10 + h) does not for h > log(65504) - 10 = 1.09
    result = _sweep("large_x", dtypes=("float16",), schemes=("forward",), eps_min=1e-3, eps_max=4.0, points=13)
    rows = _rows(result, "float16", "forward")
    assert not rows[rows["eps"] > 1.2]["finite"].any()
    assert rows[rows["eps"] < 1.0]["finite"].all()


@pytest.mark.parametrize("key", KEYS)
def test_words_shown_name_no_question_by_number(key):
    # The Explorer shows title and note; internal question numbers are our words, not the visitor's.
    e = CATALOGUE[key]
    assert not re.search(r"seed\s*_?0\d\d", f"{e.title} {e.note}", re.IGNORECASE), e.note
