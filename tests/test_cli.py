"""``python -m gradlab sweep``: table, csv and json output, and one-line errors with exit status 2.

Most tests call ``gradlab.cli.main.main`` in-process (fast); two run the real
``python -m gradlab`` in subprocesses, started together so they share the two cores.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import mpmath
import pandas as pd
import pytest

from gradlab.cli.main import main
from gradlab.limits import LIMITS
from gradlab.numerics.dtypes import DTYPE_NAMES
from gradlab.step_sweep.engine import TABLE_COLUMNS

REPO = Path(__file__).resolve().parents[1]
CLASSIC = "exp(x)/sqrt(sin(x)**3 + cos(x)**3)"


def _classic_d1(x):
    with mpmath.workdps(40):
        x = mpmath.mpf(x)
        s, c = mpmath.sin(x), mpmath.cos(x)
        g = s**3 + c**3
        return mpmath.exp(x) / mpmath.sqrt(g) * (1 - (3 * s**2 * c - 3 * c**2 * s) / (2 * g))


def _no_nan(token):
    raise ValueError(f"JSON must not contain {token}")


def _run(argv, capsys):
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse's own errors exit through the parser
        code = exit_.code
    out, err = capsys.readouterr()
    return code, out, err


def _assert_one_line_error(code, out, err):
    assert code == 2
    assert "Traceback" not in err and "Traceback" not in out
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ") and len(lines[0]) > len("error: ")


# ---------------------------------------------------------------- subprocesses


@pytest.fixture(scope="module")
def processes():
    """The real entry point, twice, in parallel: a json sweep and a refused expression."""
    runs = {
        "ok": [sys.executable, "-m", "gradlab", "sweep", "1/x", "--at", "0.3", "--dtype", "float32",
               "--scheme", "central", "--points", "9", "--format", "json"],
        "bad": [sys.executable, "-m", "gradlab", "sweep", "__import__('os')", "--at", "1"],
    }
    started = {k: subprocess.Popen(v, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for k, v in runs.items()}
    return {k: (p.wait(timeout=120), p.stdout.read(), p.stderr.read()) for k, p in started.items()}


@pytest.mark.server  # starts a process
def test_subprocess_json_sweep(processes):
    code, out, err = processes["ok"]
    assert code == 0, err
    data = json.loads(out, parse_constant=_no_nan)
    assert data["expression"] == "1/x" and data["x"] == 0.3
    assert data["reference"] == pytest.approx(-1 / 0.3**2, rel=1e-15)
    assert len(data["rows"]) == 9


@pytest.mark.server  # starts a process
def test_subprocess_refusal_is_one_line_exit_2(processes):
    code, out, err = processes["bad"]
    _assert_one_line_error(code, out, err)
    assert "__import__" in err


# ---------------------------------------------------------------- table


def test_table_output(capsys):
    code, out, err = _run(["sweep", CLASSIC, "--at", "1.5", "--points", "21"], capsys)
    assert code == 0 and err == "", err
    assert f"f(x)  = {CLASSIC}" in out
    assert "best step per dtype and scheme" in out
    assert "autograd" in out
    for dtype in DTYPE_NAMES:
        assert dtype in out
    # the exact derivative is printed to 30 significant digits
    line = next(l for l in out.splitlines() if l.startswith("exact f'(x) = "))
    digits = line.split("= ")[1]
    with mpmath.workdps(40):
        assert abs(mpmath.mpf(digits) - _classic_d1(1.5)) <= 1e-28 * abs(_classic_d1(1.5))
    assert "not applicable" in out  # the notes: no complex step in float16/bfloat16


def test_table_output_with_undefined_reference(capsys):
    code, out, _ = _run(["sweep", "abs(x)", "--at", "0", "--points", "5"], capsys)
    assert code == 0
    assert "exact f'(x) = undefined" in out and "kink" in out


# ---------------------------------------------------------------- csv


def test_csv_output_has_the_table_columns(capsys):
    code, out, err = _run(["sweep", "sin(x)", "--at", "0.5", "--dtype", "float32", "--dtype", "float64",
                           "--scheme", "forward", "--scheme", "complex_step", "--points", "11",
                           "--format", "csv"], capsys)
    assert code == 0 and err == ""
    frame = pd.read_csv(io.StringIO(out))
    assert list(frame.columns) == list(TABLE_COLUMNS)
    assert len(frame) == 2 * 2 * 11
    assert set(frame["dtype"]) == {"float32", "float64"}
    assert set(frame["scheme"]) == {"forward", "complex_step"}


# ---------------------------------------------------------------- json


@pytest.fixture(scope="module")
def sweep_json():
    # module-scoped: run main once, capturing stdout by hand
    import contextlib

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        assert main(["sweep", "sqrt(x)", "--at", "1e-4", "--points", "13", "--format", "json"]) == 0
    return buffer.getvalue()


def test_json_is_strict_json(sweep_json):
    # sqrt at 1e-4 with steps up to 1 leaves the domain: NaN estimates must become null
    data = json.loads(sweep_json, parse_constant=_no_nan)
    assert any(row["estimate"] is None for row in data["rows"])


def test_json_keys(sweep_json):
    data = json.loads(sweep_json, parse_constant=_no_nan)
    assert {"expression", "derivative", "x", "reference", "rows", "autograd", "best"} <= set(data)
    assert data["expression"] == "sqrt(x)" and data["x"] == 1e-4
    assert data["derivative"] == "1/(2*sqrt(x))"
    assert data["reference"] == pytest.approx(1 / (2 * 1e-2), rel=1e-15)  # 1/(2 sqrt(1e-4)) = 50
    for row in data["rows"]:
        assert list(row) == list(TABLE_COLUMNS)
    assert [a["dtype"] for a in data["autograd"]] == list(DTYPE_NAMES)
    for a in data["autograd"]:
        assert set(a) == {"dtype", "value", "abs_error", "rel_error"}
    assert data["best"]
    for b in data["best"]:
        assert set(b) == {"dtype", "scheme", "eps", "rel_error", "robust_eps", "robust_rel_error",
                          "predicted_eps", "predicted_rel_error"}


def test_json_reference_is_the_exact_derivative(capsys):
    code, out, _ = _run(["sweep", CLASSIC, "--at", "1.5", "--dtype", "float64", "--scheme", "complex_step",
                         "--points", "5", "--eps-min", "1e-200", "--eps-max", "1e-20", "--format", "json"], capsys)
    assert code == 0
    data = json.loads(out, parse_constant=_no_nan)
    exact = float(_classic_d1(1.5))
    assert data["reference"] == exact
    # complex step at tiny steps: round-off only
    assert all(abs(row["estimate"] - exact) <= 4 * 2.0**-52 * abs(exact) for row in data["rows"])


def test_x_over_zero_is_handled(capsys):
    # regression: the reference raised an internal exception (traceback) for x/0
    code, out, err = _run(["sweep", "x/0", "--at", "1", "--points", "5", "--format", "json"], capsys)
    assert code == 0, err
    assert json.loads(out, parse_constant=_no_nan)["reference"] is None


# ---------------------------------------------------------------- errors

BAD = [
    (["sweep", "x^2", "--at", "1"], "**"),
    (["sweep", "foo(x)", "--at", "1"], "foo"),
    (["sweep", "", "--at", "1"], "empty"),
    (["sweep", "sin(x)", "--at", "1", "--dtype", "float128"], "float128"),
    (["sweep", "sin(x)", "--at", "1", "--scheme", "secant"], "secant"),
    (["sweep", "sin(x)", "--at", "1", "--eps-min", "1e-3", "--eps-max", "1e-3"], "eps-min"),
    (["sweep", "sin(x)", "--at", "1", "--eps-min", "1", "--eps-max", "1e-3"], "eps-min"),
    (["sweep", "sin(x)", "--at", "nan"], "nan"),
    (["sweep", "sin(x)", "--at", "inf"], "inf"),
    (["sweep", "sin(x)", "--at=-inf"], "inf"),
    (["sweep", "sin(x)", "--at", "one"], "one"),
    (["sweep", "sin(x)", "--at", "1", "--eps-min", "nan"], "nan"),
    (["sweep", "sin(x)", "--at", "1", "--eps-max", "inf"], "inf"),
    (["sweep", "sin(x)", "--at", "1", "--points", str(LIMITS.sweep_points + 1)], str(LIMITS.sweep_points)),
    (["sweep", "sin(x)", "--at", "1", "--points", "0"], "points"),
    (["sweep", "sin(x)", "--at", "1", "--points", "many"], "many"),
    (["sweep", "sin(x)", "--at", "1", "--format", "xml"], "xml"),
    (["sweep", "sin(x)"], "--at"),
    (["sweep"], "expression"),
    (["frobnicate"], "frobnicate"),
    ([], "command"),
]


@pytest.mark.parametrize("argv,word", BAD, ids=[" ".join(a) or "(none)" for a, _ in BAD])
def test_bad_input_exits_2_with_one_error_line(argv, word, capsys):
    code, out, err = _run(argv, capsys)
    _assert_one_line_error(code, out, err)
    assert word in err
    assert out == ""


def test_negative_point_with_equals_sign(capsys):
    code, out, err = _run(["sweep", "sin(x)", "--at=-1e-3", "--dtype", "float64", "--scheme", "central",
                           "--points", "3", "--format", "json"], capsys)
    assert code == 0, err
    assert json.loads(out, parse_constant=_no_nan)["x"] == -1e-3


# argparse (Python 3.11) alone takes '-1e-3' for an option flag; the CLI joins it to its option.
@pytest.mark.parametrize("value", ["-1e-3", "-2E5"])
def test_negative_point_in_scientific_notation(value, capsys):
    code, out, err = _run(["sweep", "sin(x)", "--at", value, "--dtype", "float64", "--scheme", "central",
                           "--points", "3", "--format", "json"], capsys)
    assert code == 0, err
    assert json.loads(out, parse_constant=_no_nan)["x"] == float(value)


def test_negative_point_in_plain_notation(capsys):
    code, out, err = _run(["sweep", "sin(x)", "--at", "-0.001", "--dtype", "float64", "--scheme", "central",
                           "--points", "3", "--format", "json"], capsys)
    assert code == 0, err


def test_help_exits_0(capsys):
    code, out, _ = _run(["sweep", "--help"], capsys)
    assert code == 0 and "--eps-min" in out


@pytest.mark.parametrize("dtype", ["float8_e4m3fn", "float8_e5m2"])
def test_sweep_takes_the_emulated_8_bit_dtypes(capsys, dtype):
    import math

    import torch

    code = main(["sweep", "sin(x)", "--at", "1", "--dtype", dtype, "--scheme", "central",
                 "--points", "9", "--format", "json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    (autograd,) = [r for r in out["autograd"] if r["dtype"] == dtype]
    # autograd's cos(1) comes out rounded to the format: the nearest 8-bit number, by torch's cast.
    nearest = float(torch.tensor(math.cos(1.0)).to(getattr(torch, dtype)).float())
    assert autograd["value"] == nearest != math.cos(1.0)
    assert {r["dtype"] for r in out["rows"]} == {dtype}


def test_a_reader_that_stops_early_gets_no_traceback():
    """``python -m gradlab sum --format json | head -c 100``: the pipe closes while the CLI writes."""
    shell = subprocess.run(f"{sys.executable} -m gradlab sum --shape 4x5 --format json | head -c 100",
                           shell=True, capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1])
    assert shell.stdout.startswith("{") and len(shell.stdout) == 100
    assert "Traceback" not in shell.stderr and "BrokenPipe" not in shell.stderr, shell.stderr
