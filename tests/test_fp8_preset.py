"""The Explorer's "8-bit floats" preset against mathematics, and the pages that compute natively
refusing an 8-bit dtype from a URL without a traceback."""

from __future__ import annotations

import math
import re
from pathlib import Path

import mpmath
import numpy as np
import pytest
import torch
from streamlit.testing.v1 import AppTest

from gradlab.step_sweep.engine import EMULATION_NOTE, SweepSettings, run_sweep
from gradlab.numerics.dtypes import facts
from gradlab.numerics.precision_table import precision_table
from gradlab.labs.explorer.answer import theory_words, percent, sweep_answer
from gradlab.teaching.catalogue import CATALOGUE
from gradlab.teaching.presets import preset

P = preset("explorer", "fp8").values
FP8 = ("float8_e4m3fn", "float8_e5m2")


@pytest.fixture(scope="module")
def sweep():
    assert CATALOGUE[P["fn"]].expression == "sin(x)" and P["x"] == 1.0
    return run_sweep(SweepSettings("sin(x)", P["x"], P["dtypes"], P["schemes"], *P["eps_range"]))


def _grid(name: str) -> np.ndarray:
    """Every finite value of the format, from its 256 bit patterns (torch's own decoding)."""
    values = torch.arange(256, dtype=torch.uint8).view(facts(name).torch_dtype).to(torch.float64).numpy()
    return np.unique(values[np.isfinite(values)])


def _central_theory(name: str) -> tuple[float, float]:
    """sin at 1 (on every format's grid), by hand in mpmath: h* = (3uS/|f'''|)^(1/3) and
    E*/|f'| = (uS/h* + |f'''| h*^2/6 + u|f'|)/|f'| with S = |f| + |x f'| (README's model with
    x ± h rounded too, and the result once: the precision table's theory)."""
    with mpmath.workdps(40):
        u, f, d1 = mpmath.mpf(facts(name).eps) / 2, mpmath.sin(1), mpmath.cos(1)
        s = f + d1
        h = mpmath.cbrt(3 * u * s / d1)
        return float(h), float((u * s / h + d1 * h ** 2 / 6 + u * d1) / d1)


@pytest.mark.parametrize("name", FP8)
def test_the_best_central_difference_is_near_its_theory(sweep, name):
    # The sweep's prediction is the closed form. Where x ± h lands on so coarse a grid is partly
    # luck, so the errors around h* are summed up by their root mean square: within a factor 3
    # of the prediction; and the best of the sweep is below it (the model adds worst cases).
    h_star, predicted = _central_theory(name)
    best = sweep.best[(sweep.best["dtype"] == name) & (sweep.best["scheme"] == "central")].iloc[0]
    assert best["predicted_eps"] == pytest.approx(h_star, rel=1e-12)
    assert best["predicted_rel_error"] == pytest.approx(predicted, rel=1e-12)
    assert best["rel_error"] <= predicted
    t = sweep.table
    near = t[(t["dtype"] == name) & (t["scheme"] == "central") & (t["step"] != 0)
             & (t["eps"] >= h_star / 3) & (t["eps"] <= 3 * h_star)]
    assert len(near) >= 4
    rms = float(np.sqrt(np.mean(np.square(near["rel_error"]))))
    assert predicted / 3 <= rms <= 3 * predicted


@pytest.mark.parametrize("name", FP8)
def test_autograd_in_8_bits_is_far_from_exact(sweep, name):
    row = sweep.autograd[sweep.autograd["dtype"] == name].iloc[0]
    exact = math.cos(1.0)  # x = 1 is on every format's grid
    grid = _grid(name)
    assert row["value"] in grid  # autograd's answer is an 8-bit number ...
    nearest = grid[np.argmin(np.abs(grid - exact))]
    assert row["value"] == nearest  # ... at best the correctly rounded cos(1), and here it is
    assert abs(row["value"] - exact) / exact > 0.01  # still percents off: float32's is 1e-7
    assert f"{abs(row['value'] - exact) / exact * 100:.2g} % off in {name}" in sweep_answer(sweep).text


def test_the_answer_names_the_theory_and_a_range_around_the_best_step(sweep):
    # One theory: the precision table's scale eps^(2/3), times this f's factor k, is the best-step
    # table's prediction for sin at 1 (the closed form above).
    # The measured range in the answer, the theory under the chart (in the answer it made five lines).
    text, theory = sweep_answer(sweep).text, theory_words(sweep)
    scales = precision_table().set_index("name")["best_central_error"]
    for name in FP8:
        scale, predicted = scales[name], _central_theory(name)[1]
        assert scale == facts(name).eps ** (2 / 3)
        # A range of the errors around h*, whose lower end is never below the format's rounding u.
        assert re.search(rf"the {name} central difference (is )?off by ([\d.]+–[\d.]+ %|up to [\d.]+ % "
                         rf"\(no closer than its rounding, {percent(facts(name).unit_roundoff)}\))", text), text
        assert (f"{name} central ε^(2/3) = {percent(scale)}, times this f's factor k = {predicted / scale:.2g}: "
                f"{percent(predicted)}") in theory, theory
    assert "float8_e4m3fn central ε^(2/3) = 25 %, times this f's factor k = 1.5: 37 %" in theory  # e4m3: eps = 2**-3
    assert "theory" not in text
    assert "float32 central difference within" in text
    assert sweep.notes[0].text == EMULATION_NOTE and not sweep.notes[0].is_warning


def test_a_page_that_computes_natively_ignores_an_8_bit_dtype_in_its_url():
    at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "app.py"), default_timeout=90)
    at.run()
    at.query_params.update({"dtype": "float8_e4m3fn", "shape": "6x5"})
    at.switch_page("pages/gradcheck.py").run()
    assert not at.exception and not at.error
    assert at.session_state["dtype"] == "float32"
