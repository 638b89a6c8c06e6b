"""The Grid lab's view (gradlab.labs.grid.view, at_step): one view answers every step of its slider,
each step's numbers are the dtype's (numpy's float32 and float16 arithmetic, not the lab's), and a
step whose difference is not finite says why without costing the view its other steps."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from gradlab.errors import GradLabError
from gradlab.labs.grid import GridSettings, at_step, grid_steps, view, view_of


@pytest.fixture(scope="module")
def square_float32():
    return view(view_of(GridSettings("float32", 1.0, 1e-4, "x*x")))


@pytest.mark.parametrize("h", [1e-2, 1e-4, 2e-7, 1e-7, 5e-8, 1e-8])
def test_each_step_of_one_view_is_the_dtype_s_difference(square_float32, h):
    shown = at_step(square_float32, h)
    r = shown.result.difference
    x = np.float32(1.0)
    taken = float(np.float32(x + np.float32(h)) - x)  # x + h rounded to float32's grid, minus x
    assert r.settings.h == h and r.step_taken == taken
    ulps = round(taken / float(np.spacing(x)))
    if taken:
        assert f"x + h is {ulps:,} ulp{'s' if ulps != 1 else ''} above x" in shown.answer.text
        # the secant as float32 computes it: each product and the quotient rounded to float32
        xh = np.float32(x + np.float32(h))
        fx, fxh = x * x, xh * xh
        assert r.secant == float((fxh - fx) / np.float32(taken))
        assert f"**{taken!r}** = {ulps:,} ulp" in shown.texts["facts"]
    else:
        assert shown.answer.text.startswith("x + h rounds back to x in float32")
    assert shown.texts["file name"] == f"gradlab-grid-float32-x1-h{h:g}"


def test_one_view_holds_a_frame_at_every_stop(square_float32):
    assert square_float32.result.frames.steps == tuple(sorted(grid_steps()))
    assert len(square_float32.tables["dtypes"]) == 6


def test_a_step_that_overflows_says_why_and_the_others_still_answer():
    """exp(88 + 1) = 4.5e38 is past float32's largest number (3.4e38); exp(88 + 1e-4) is not."""
    assert math.exp(89) > float(np.finfo(np.float32).max) > math.exp(88 + 1e-4)
    shown = view(view_of(GridSettings("float32", 88.0, 1e-4, "exp(x)")))
    assert shown.answer.level == "error" and "not finite in float32" in shown.answer.text  # its own h, 1
    with pytest.raises(GradLabError, match="not finite in float32"):
        at_step(shown, 1.0)
    r = at_step(shown, 1e-4).result.difference
    x = np.float32(88.0)
    assert r.step_taken == float(np.float32(x + np.float32(1e-4)) - x)


def test_an_x_past_the_dtype_has_no_step_and_every_step_says_so():
    shown = view(view_of(GridSettings("float16", 1e5, 1e-4, "x")))  # float16's largest is 65504
    assert not shown.result.frames.steps
    with pytest.raises(GradLabError, match="beyond float16's largest number"):
        at_step(shown, 1e-4)


def test_the_bits_table_marks_the_shared_significand_bits():
    """1 and 1 + 2^-23 in float32: the sign, the exponent and 22 of the 23 fraction bits are shared
    (the implicit 1 counts as the 23rd): the marks end one bit before the last."""
    shown = at_step(view(view_of(GridSettings("float32", 1.0, 1e-7, "x"))), 1e-7)
    assert shown.result.difference.shared_bits == 23
    *_, row = (line for line in shown.texts["values"].splitlines() if line.startswith("| f(x+h) |"))  # its bits
    marked = "".join(re.findall(r":orange-background\[`([01]+)`\]", row))
    assert marked == "0" + "01111111" + "0" * 22 and row.endswith("`1` |")  # sign, exponent 127, 22 zeros
