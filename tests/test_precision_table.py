"""The precision table against IEEE 754's definitions and torch.finfo (and the 8-bit formats'
documented numbers): u = 2**-p, eps = 2**(1-p), subnormal = tiny * eps."""

import math
import re

import mpmath
import numpy as np
import pytest
import torch

from gradlab.cli.main import main
from gradlab.numerics.dtypes import ALL_DTYPE_NAMES, EMULATED_DTYPES
from gradlab.numerics.precision_table import CENTRAL_THEORY, precision_rows, precision_table

# IEEE 754 / OCP FP8 formats: (bits, precision incl. implicit 1, emax, largest finite)
FORMATS = {
    "float16": (16, 11, 15, 65504.0),
    "bfloat16": (16, 8, 127, (2 - 2 ** -7) * 2.0 ** 127),
    "float32": (32, 24, 127, float(np.finfo(np.float32).max)),
    "float64": (64, 53, 1023, float(np.finfo(np.float64).max)),
    "float8_e4m3fn": (8, 4, 8, 448.0),  # no infinities: the top exponent holds numbers up to 1.75 * 2**8
    "float8_e5m2": (8, 3, 15, 57344.0),
}
ROWS = {r.name: r for r in precision_rows()}


def test_every_dtype_has_one_row_native_then_emulated():
    assert [r.name for r in precision_rows()] == list(ALL_DTYPE_NAMES)
    assert {n for n, r in ROWS.items() if r.emulated} == set(EMULATED_DTYPES) >= {"float8_e4m3fn", "float8_e5m2"}


@pytest.mark.parametrize("name", list(FORMATS))
def test_columns_from_the_definitions(name):
    bits, p, emax, largest = FORMATS[name]
    r, info = ROWS[name], torch.finfo(getattr(torch, name))
    emin = 1 - (15 if name == "float16" else 127 if name in ("bfloat16", "float32") else
                1023 if name == "float64" else 7 if name == "float8_e4m3fn" else 15)
    assert (r.bits, r.precision_bits) == (bits, p) == (info.bits, p)
    assert r.eps == 2.0 ** (1 - p) == info.eps
    assert r.unit_roundoff == 2.0 ** -p
    assert r.smallest_normal == 2.0 ** emin == info.tiny
    assert r.smallest_subnormal == 2.0 ** (emin - p + 1)
    assert r.largest == largest == info.max
    assert r.best_central_step == pytest.approx(2.0 ** ((1 - p) / 3), rel=1e-12)  # eps^(1/3)
    assert r.best_central_error == pytest.approx(2.0 ** (2 * (1 - p) / 3), rel=1e-12)  # eps^(2/3)


def test_subnormals_by_torch_and_numpy():
    assert ROWS["float32"].smallest_subnormal == float(np.nextafter(np.float32(0), np.float32(1)))
    assert ROWS["float64"].smallest_subnormal == math.ulp(0.0)
    assert ROWS["float16"].smallest_subnormal == float(np.nextafter(np.float16(0), np.float16(1)))
    for name in ("float8_e4m3fn", "float8_e5m2"):  # the smallest positive bit pattern 0x01
        assert ROWS[name].smallest_subnormal == float(torch.tensor(1, dtype=torch.uint8).view(getattr(torch, name)))


def _best_central_error(u, s, f3, f1):
    """The least relative error of the central difference over every step h, and that h: its
    error bound |f'''| h^2/6 (truncation) + u S/h (f's values and x ± h rounded), minimised
    numerically (mpmath, 40 digits), plus the final division's u. No closed form is used."""
    with mpmath.workdps(40):
        def bound(h):
            return f3 * h ** 2 / 6 + u * s / h

        # the bound's slope is negative at 1e-9 and positive at 10 in every case below: one root between
        h = mpmath.findroot(lambda h: mpmath.diff(bound, h), (mpmath.mpf("1e-9"), mpmath.mpf(10)),
                            solver="anderson")
        return bound(h) / f1 + u, h


def test_the_central_theory_s_numbers_are_the_minimised_error_bound_s():
    # CENTRAL_THEORY states E*/|f'| = eps^(2/3) k, k = C S^(2/3) |f'''|^(1/3)/|f'| + eps^(1/3)/2, at
    # h* = eps^(1/3) (3S/(2|f'''|))^(1/3): its C and its worked example are read from the text and
    # checked against the bound minimised over h (S = |f| + |x f'|, u = eps/2).
    stated_k = re.search(r"k = (\d\.\d+) · S\^\(2/3\)·\|f‴\|\^\(1/3\)/\|f′\| \+ ε\^\(1/3\)/2", CENTRAL_THEORY)
    assert stated_k is not None, CENTRAL_THEORY
    constant = float(stated_k.group(1))
    assert "h* = ε^(1/3) × (3S/(2|f‴|))^(1/3)" in CENTRAL_THEORY
    with mpmath.workdps(40):
        third = 1 / mpmath.mpf(3)
        sin_at_1 = (mpmath.sin(1) + mpmath.cos(1), mpmath.cos(1), mpmath.cos(1))  # S, |f'''|, |f'|
        exp_at_0 = (mpmath.mpf(1), mpmath.mpf(1), mpmath.mpf(1))
        cube_at_2 = (mpmath.mpf(8 + 2 * 12), mpmath.mpf(6), mpmath.mpf(12))  # x**3: f 8, f' 12, f''' 6
        for name in ("float8_e4m3fn", "float16", "float32", "float64"):
            eps = mpmath.mpf(ROWS[name].eps)
            for s, f3, f1 in (sin_at_1, exp_at_0, cube_at_2):
                best, h = _best_central_error(eps / 2, s, f3, f1)
                stated = constant * s ** (2 * third) * f3 ** third / f1 + eps ** third / 2
                # C is printed to 3 digits: its rounding (5e-4 of 0.655) is all that may differ
                assert float(stated) == pytest.approx(float(best / eps ** (2 * third)), rel=1e-3), (name, s)
                assert float(h) == pytest.approx(float(eps ** third * (3 * s / (2 * f3)) ** third), rel=1e-15)
        eps = mpmath.mpf(2) ** -3  # e4m3: 3 stored bits
        best, _ = _best_central_error(eps / 2, *sin_at_1)
        scale, k = eps ** (2 * third), best / eps ** (2 * third)
    assert ROWS["float8_e4m3fn"].best_central_error == pytest.approx(float(scale), rel=1e-15)
    example = re.search(r"sin at 1 in float8_e4m3fn: (\d+) % × (\d\.\d\d) = (\d+) %", CENTRAL_THEORY)
    assert example is not None, CENTRAL_THEORY
    assert example.groups() == (f"{float(scale) * 100:.0f}", f"{float(k):.2f}", f"{float(best) * 100:.0f}")


def test_cli_dtypes_table_and_json(capsys):
    assert main(["dtypes"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in ALL_DTYPE_NAMES) and "u = 2^−p" in out
    assert CENTRAL_THEORY in out  # what the two central columns mean
    assert main(["dtypes", "--format", "json"]) == 0
    import json

    rows = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in rows] == list(ALL_DTYPE_NAMES)
    assert rows[2]["unit_roundoff"] == 2.0 ** -24 and rows[2]["emulated"] is False
    assert len(precision_table().columns) == len(rows[0])
