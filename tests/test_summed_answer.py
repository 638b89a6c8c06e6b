"""The Summed-loss answer's level against the arithmetic it states: quantum = ulp(L)/h
(numpy.spacing of the exact sum rounded to the dtype) against a gradient element (the median
|dL/dx_i|, from calculus: for the affine model's MSE terms (y_i - t_i)**2, y_i = (x_i + 1)/2,
dL/dx_i = y_i - t_i, so |dL/dx_i| = sqrt(term_i), divided by n for the mean)."""

import math

import numpy as np
import pytest

from gradlab.labs.summed.loss import SummedLossSettings, summed_loss
from gradlab.labs.summed.answer import ROUNDOFF_RATIO, VISIBLE_RATIO, summed_answer


@pytest.mark.parametrize(("kwargs", "level"), [
    ({}, "warning"),  # 2**-9 / 1e-3 = 1.95 against ~0.8
    ({"reduction": "mean"}, "warning"),  # L and the gradient both divided by n: still round-off
    ({"dtype": "float64"}, "success"),  # 2**-38 / 1e-3 ≈ 4e-9
    ({"shape": (10, 10)}, "info"),  # L ≈ 163: ulp 2**-16, quantum 0.015 against ~0.9
    ({"h": 1.0}, "success"),  # the same grid, a step a thousand times larger
])
def test_the_level_follows_the_quantum_against_a_gradient_element(kwargs, level):
    r = summed_loss(SummedLossSettings(**kwargs))
    assert r.settings.loss == "mse"  # the calculus above (the lab's model is the affine one)
    n = r.terms.numel() if r.settings.reduction == "mean" else 1
    np_dtype = {"float32": np.float32, "float64": np.float64}[r.settings.dtype]
    quantum = float(np.spacing(np_dtype(math.fsum(r.terms.double().tolist()) / n))) / r.settings.h
    elements = np.sort(np.sqrt(r.terms.double().numpy()) / n)
    middle = elements[(elements.size - 1) // 2], elements[elements.size // 2]
    # the lab's gradient element is a median of |dL/dx_i| (either middle value for an even count;
    # the terms are rounded to the dtype, so sqrt(term) is |y - t| to a rounding of the dtype)
    rounding = np.finfo(np_dtype).eps
    assert middle[0] * (1 - rounding) <= r.gradient_size <= middle[1] * (1 + rounding)
    ratio = quantum / float(np.median(elements))
    expected = "warning" if ratio >= ROUNDOFF_RATIO else "info" if ratio >= VISIBLE_RATIO else "success"
    answer = summed_answer(r)
    assert answer.level == expected == level
    assert f"{quantum:.3g}" in answer.text
