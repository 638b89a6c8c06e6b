"""The Grid page's numbers from a terminal, and its story (answer, printed values, secant over h),
checked against IEEE arithmetic by numpy and against torch's own fp8 casts."""

import json
import math
import re
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest
import torch

from gradlab.cli.main import main
from gradlab.labs.grid.figures import _readout
from gradlab.teaching.presets import presets_for
from gradlab.labs.grid.story import grid_answer, printed_values, secant_series, steps_in_ulps, window_points
from gradlab.labs.grid.representable import GridSettings, grid_difference


def test_cli_grid_json_matches_numpy(capsys):
    assert main(["grid", "--dtype", "float32", "--at", "1", "--h", "1e-7", "--expression", "sin(x)",
                 "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    x, xh = np.float32(1), np.float32(1) + np.float32(1e-7)
    assert d["step_taken"] == float(xh - x) == 2.0 ** -23 and d["steps_in_ulps"] == 1
    assert d["x_plus_h_hex"] == f"0x{int(xh.view(np.uint32)):08x}"
    # torch's float32 sin (what the dtype computes) is faithful: within one ulp of the exact value
    fx, fxh = (np.float32(torch.sin(torch.tensor(float(v), dtype=torch.float32))) for v in (x, xh))
    assert d["fx"] == float(fx) and d["fx_plus_h"] == float(fxh)
    for got, v in ((fx, x), (fxh, xh)):
        assert abs(float(got) - math.sin(float(v))) < float(np.spacing(got))
    assert d["secant"] == float((fxh - fx) / (xh - x))
    assert d["quantum"] == float(np.spacing(fx)) / 2.0 ** -23 == 0.5
    assert d["tangent"] == pytest.approx(math.cos(1.0), rel=1e-15)
    assert "1 ulp above x" in d["answer"] and "multiple of 0.5" in d["answer"]


def test_cli_grid_table_and_one_line_errors(capsys):
    assert main(["grid", "--h", "1e-8"]) == 0
    out = capsys.readouterr().out
    assert "steps_in_ulps" in out and "rounds back to x" in out
    for argv in (["grid", "--h", "0"], ["grid", "--at", "-1", "--expression", "log(x)"],
                 ["grid", "--dtype", "float8_e4m3fn", "--at", "1000"], ["grid", "--expression", "x +"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and err.count("\n") == 1


@pytest.mark.server  # starts a process
def test_cli_grid_subprocess_bad_dtype_exit_2():
    p = subprocess.run([sys.executable, "-m", "gradlab", "grid", "--dtype", "float7"], capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "Traceback" not in p.stderr


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e5m2"])
def test_fp8_difference_rounds_like_torchs_casts(name):
    dt = getattr(torch, name)
    cast = lambda v: float(torch.tensor(v, dtype=torch.float32).to(dt).float())  # noqa: E731
    r = grid_difference(GridSettings(name, 1.0, 0.1, "sin(x)"))
    x = cast(1.0)
    xh = cast(x + cast(0.1))
    assert r.x_plus_h.value == xh and r.step_taken == cast(xh - x)
    assert r.fx.value == cast(math.sin(x)) and r.fx_plus_h.value == cast(math.sin(xh))


def test_e4m3_one_plus_a_tenth_is_one_and_an_eighth():
    r = grid_difference(GridSettings("float8_e4m3fn", 1.0, 0.1, "sin(x)"))
    assert r.x_plus_h.value == 1.125 and steps_in_ulps(r) == 1  # e4m3: 3 fraction bits, ulp(1) = 1/8
    assert "0.125, not 0.1" in grid_answer(r).text


def test_printed_values_share_the_prefix_of_their_text():
    r = grid_difference(GridSettings("float32", 1.0, 1e-6, "sin(x)"))
    p = printed_values(r)
    assert p.fx == str(np.float32(r.fx.value)) and p.fx_plus_h == str(np.float32(r.fx_plus_h.value))
    k = p.shared_chars
    assert p.fx[:k] == p.fx_plus_h[:k] and p.fx[k] != p.fx_plus_h[k]


def test_no_step_sentence_and_nan_secant():
    r = grid_difference(GridSettings("float32", 1.0, 1e-8, "sin(x)"))  # 1e-8 < ulp(1)/2 = 5.96e-8
    assert r.step_taken == 0 and math.isnan(r.secant)
    assert grid_answer(r).text.startswith("x + h rounds back to x in float32")


def test_secant_series_takes_few_values_near_one_ulp():
    t = secant_series(GridSettings("float32", 1.0, 1e-7, "x**2"))
    # at x = 1 in float32, every step of one to three ulps gives a slope that is a multiple of ulp(1)/step
    few = t[(t["step"] > 0) & (t["step"] <= 3 * 2.0 ** -23)]
    assert len(few) >= 3
    for step, secant in zip(few["step"], few["secant"]):
        fx, fxh = np.float32(1), np.float32(np.float32(1 + step) ** 2)
        assert secant == float((fxh - fx) / np.float32(step))
    assert t.loc[t["h"] < 2.0 ** -25, "secant"].isna().all()  # below half an ulp: no step


def test_window_points_lie_on_the_grid():
    r = grid_difference(GridSettings("float16", 1.5, 1e-3, "x"))
    w = window_points(r)
    assert (w["x"].to_numpy() == w["x"].to_numpy().astype(np.float16).astype(float)).all()
    assert (w["x"] == w["fx"]).all() and w["x"].min() < 1.5 < w["x"].max()


def test_the_step_in_ulps_of_x_is_a_multiple_of_ulp_x_not_a_count_of_grid_numbers():
    r = grid_difference(GridSettings("float32", 0.75, 0.5, "sin(x)"))
    spacing = float(np.spacing(np.float32(0.75)))  # 2**-24 in the binade [0.5, 1)
    assert r.step_taken == 0.5 and steps_in_ulps(r) == 0.5 / spacing == 2 ** 23
    assert "8,388,608 ulps above x" in grid_answer(r).text
    # the float32 numbers from 0.75 to 1.25 are fewer: 2**-23 apart above 1
    between = int(np.float32(1.25).view(np.int32)) - int(np.float32(0.75).view(np.int32))
    assert between == 6_291_456 and f"{between:,}" not in grid_answer(r).text


def test_cli_x_zero_float64_is_a_result(capsys):
    assert main(["grid", "--at", "0", "--h", "1e-4", "--dtype", "float64", "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["kept_bits"] == 53 == d["precision_bits"] and d["shared_bits"] == 0
    # 1e-4 in ulps of 0 (the smallest subnormal, 2**-1074): exact, past float64's range
    assert d["steps_in_ulps"] == Fraction(1e-4) / Fraction(2) ** -1074 and d["steps_in_ulps"] > 2 ** 1024
    assert main(["grid", "--at", "0", "--h", "1e-4", "--dtype", "float64"]) == 0
    out = capsys.readouterr().out
    assert "2.02e+319 ulps above x" in out and "keeps 53 binary digits" in out


def test_cli_x_zero_float32_keeps_at_most_24_bits(capsys):
    assert main(["grid", "--at", "0", "--h", "1e-4", "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["kept_bits"] == 24 and d["fx"] == 0.0
    h = np.float32(1e-4)
    assert d["quantum"] == float(np.spacing(np.float32(d["fx_plus_h"]))) / float(h)


@pytest.mark.parametrize("dtype,x", [("float16", "12"), ("float8_e4m3fn", "7"), ("float8_e5m2", "12")])
def test_cli_fp8_overflow_is_reported_like_float16s(capsys, dtype, x):
    assert main(["grid", "--dtype", dtype, "--at", x, "--h", "1", "--expression", "exp(x)"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: f(x) = exp(x) is not finite in {dtype}") and err.count("\n") == 1


def test_e4m3fn_secant_series_has_no_saturated_slopes():
    t = secant_series(GridSettings("float8_e4m3fn", 6.0, 0.25, "exp(x)"))
    # e4m3fn holds 6 and 6.5 (spacing 1/2 in [4, 8)); e**6.5 = 665 rounds past 448: overflow, no slope
    past = t[t["step"] >= 0.5]
    assert len(past) > 0 and past["secant"].isna().all()
    assert math.exp(6.5) > 448 + 16


@pytest.mark.parametrize("preset", presets_for("grid"), ids=lambda p: p.key)
def test_the_sliders_step_taken_reads_as_the_answers(preset):
    # issue 37: the chart's label said "h = 1e-04: step taken 0.0001" under the answer's "the step
    # taken is 0.00010002, not 0.0001". Both now print as many digits as tell it from h, and both
    # read back as the step the dtype takes, (x + h) - x.
    v = preset.values
    r = grid_difference(GridSettings(v["dtype"], v["x"], v["h"], "sin(x)"))
    answer, label = grid_answer(r).text, _readout(r)
    if not r.step_taken:
        assert "no step" in answer and "no step" in label
        return
    said = re.search(r"the step taken is (exactly h|\S+?),? ", answer).group(1)
    shown = re.search(r"step taken (\S+?),", label).group(1)
    assert said == shown or (said == "exactly h" and float(shown) == v["h"]), (answer, label)
    assert float(shown) == pytest.approx(r.step_taken, rel=1e-2)
    # the slope too: one number, printed alike in the answer ("here 0.5405") and on the slider
    slope_said = re.search(r"here (\S+?)[,.] where", answer)
    if slope_said:
        assert re.search(r"slope (\S+)$", label).group(1) == slope_said.group(1), (answer, label)
    step = float(np.array(v["x"], dtype=np.float32) + np.float32(v["h"])) - v["x"] if v["dtype"] == "float32" else None
    if step is not None:
        assert r.step_taken == step
