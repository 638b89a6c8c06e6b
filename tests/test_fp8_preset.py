"""The Explorer's "8-bit floats" preset against mathematics, and the pages that compute natively
refusing an 8-bit dtype from a URL without a traceback."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
import torch
from streamlit.testing.v1 import AppTest

from gradlab.error_sweep import EMULATION_NOTE, SweepSettings, run_sweep
from gradlab.numerics.dtypes import facts
from gradlab.sweep_answer import sweep_answer
from gradlab.teaching.explorer_controls import CUSTOM
from gradlab.teaching.presets import preset

P = preset("explorer", "fp8").values
FP8 = ("float8_e4m3fn", "float8_e5m2")


@pytest.fixture(scope="module")
def sweep():
    assert P["fn"] == CUSTOM and P["expr"] == "sin(x)" and P["x"] == 1.0
    return run_sweep(SweepSettings(P["expr"], P["x"], P["dtypes"], P["schemes"], *P["eps_range"]))


def _grid(name: str) -> np.ndarray:
    """Every finite value of the format, from its 256 bit patterns (torch's own decoding)."""
    values = torch.arange(256, dtype=torch.uint8).view(facts(name).torch_dtype).to(torch.float64).numpy()
    return np.unique(values[np.isfinite(values)])


@pytest.mark.parametrize("name", FP8)
def test_the_best_central_difference_is_off_by_about_eps_to_the_two_thirds(sweep, name):
    # Central difference: error ≈ u|f|/h + h²|f'''|/6, smallest near h* = (3u|f/f'''|)^(1/3), of
    # order eps^(2/3). The sweep's minimum is partly luck (x ± h lands on a few grid values);
    # the errors around h* scatter about the theory's size.
    theory = facts(name).eps ** (2 / 3)
    best = sweep.best[(sweep.best["dtype"] == name) & (sweep.best["scheme"] == "central")].iloc[0]
    assert theory / 20 <= best["rel_error"] <= 2 * theory  # the luckiest of 61 steps: a wide factor
    u, c = facts(name).eps / 2, math.cos(1.0)
    h_star = (3 * u * math.sin(1.0) / c) ** (1 / 3)
    t = sweep.table
    near = t[(t["dtype"] == name) & (t["scheme"] == "central") & (t["step"] != 0)
             & (t["eps"] >= h_star / 3) & (t["eps"] <= 3 * h_star)]
    assert len(near) >= 4
    assert theory / 3 <= float(np.median(near["rel_error"])) <= 3 * theory


@pytest.mark.parametrize("name", FP8)
def test_autograd_in_8_bits_is_far_from_exact(sweep, name):
    row = sweep.autograd[sweep.autograd["dtype"] == name].iloc[0]
    exact = math.cos(1.0)  # x = 1 is on every format's grid
    grid = _grid(name)
    assert row["value"] in grid  # autograd's answer is an 8-bit number ...
    nearest = grid[np.argmin(np.abs(grid - exact))]
    assert row["value"] == nearest  # ... at best the correctly rounded cos(1), and here it is
    assert abs(row["value"] - exact) / exact > 0.01  # still percents off: float32's is 1e-7
    assert f"({abs(row['value'] - exact) / exact * 100:.2g} % off) in {name}" in sweep_answer(sweep).text


def test_the_answer_names_the_theory_and_a_range_around_the_best_step(sweep):
    text = sweep_answer(sweep).text
    for name in FP8:
        theory = facts(name).eps ** (2 / 3) * 100
        assert re.search(rf"the {name} central difference (is )?off by [\d.]+–[\d.]+ % "
                         rf"\(theory: ε\^\(2/3\) = {theory:.2g} %\)", text), text
    assert "float32 central difference within" in text
    assert sweep.notes[0].text == EMULATION_NOTE and not sweep.notes[0].is_warning


def test_a_page_that_computes_natively_ignores_an_8_bit_dtype_in_its_url():
    at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "app.py"), default_timeout=90)
    at.run()
    at.query_params.update({"dtype": "float8_e4m3fn", "shape": "6x5"})
    at.switch_page("pages/gradcheck.py").run()
    assert not at.exception and not at.error
    assert at.session_state["dtype"] == "float32"
