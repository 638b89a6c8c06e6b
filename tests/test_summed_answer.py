"""The Summed-loss answer's level against the arithmetic it states: quantum = ulp(L)/h
(numpy.spacing of the exact sum rounded to the dtype) against a gradient element."""

import math

import numpy as np
import pytest

from gradlab.labs.summed.loss import SummedLossSettings, summed_loss
from gradlab.answers.summed import ROUNDOFF_RATIO, VISIBLE_RATIO, summed_answer


@pytest.mark.parametrize(("kwargs", "level"), [
    ({}, "warning"),  # 2**-9 / 1e-3 = 1.95 against ~0.8
    ({"reduction": "mean"}, "warning"),  # L and the gradient both divided by n: still round-off
    ({"dtype": "float64"}, "success"),  # 2**-38 / 1e-3 ≈ 4e-9
    ({"shape": (10, 10)}, "info"),  # L ≈ 163: ulp 2**-16, quantum 0.015 against ~0.9
    ({"h": 1.0}, "success"),  # the same grid, a step a thousand times larger
])
def test_the_level_follows_the_quantum_against_a_gradient_element(kwargs, level):
    r = summed_loss(SummedLossSettings(**kwargs))
    np_dtype = {"float32": np.float32, "float64": np.float64}[r.settings.dtype]
    quantum = float(np.spacing(np_dtype(math.fsum(r.terms.double().tolist()) / (
        r.terms.numel() if r.settings.reduction == "mean" else 1)))) / r.settings.h
    ratio = quantum / r.gradient_size
    expected = "warning" if ratio >= ROUNDOFF_RATIO else "info" if ratio >= VISIBLE_RATIO else "success"
    answer = summed_answer(r)
    assert answer.level == expected == level
    assert f"{quantum:.3g}" in answer.text
