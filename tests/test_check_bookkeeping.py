"""The check's bookkeeping shortcuts give what the general computation gives.

The summary's medians and ulp(L) skip numpy's and torch's dispatch, and judge fills an
all-pass table's states without state_of: each is held here to the computation it stands
for (np.nanmedian, torch.nextafter, state_of on the final table's own columns).
"""

import math
import warnings

import numpy as np
import pytest
import torch

from gradlab.check.verdicts.columns import Columns
from gradlab.check.running.engine import check_gradient
from gradlab.check.running.problem import numeric_problem
from gradlab.check.verdicts.report import _median, _refined, _ulp
from gradlab.check.verdicts.judging import state_of
from gradlab.numerics.schemes import get_scheme


def test_median_is_nanmedian():
    gen = np.random.default_rng(0)
    for size in range(0, 10):
        for _ in range(30):
            values = gen.standard_normal(size)
            values[gen.random(size) < 0.3] = np.nan
            values[gen.random(size) < 0.1] = np.inf
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN slice
                expected = float(np.nanmedian(values)) if size else math.nan
            got = _median(values)
            assert (math.isnan(got) and math.isnan(expected)) or got == expected, (values, got, expected)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.float16, torch.bfloat16])
def test_ulp_is_torch_nextafter(dtype):
    info = torch.finfo(dtype)
    for value in (0.0, info.tiny, 1.0, 3.5, 1e3, 123.456, float(info.max), float(info.max) / 3):
        x = torch.tensor(value, dtype=dtype)
        expected = float(torch.nextafter(x, torch.tensor(math.inf, dtype=dtype)) - x)
        got = _ulp(value, dtype)
        assert got == expected or (math.isinf(got) and math.isinf(expected)), (value, got, expected)


@pytest.mark.parametrize("fn, x", [
    (lambda t: (t ** 3).sum(), torch.linspace(-1, 1, 9, dtype=torch.float64)),  # every value passes
    (torch.relu, torch.tensor([-1.0, 0.0, 2.0], dtype=torch.float64)),  # a kink
    (lambda t: t.detach() * t, torch.tensor([1.0, 3.0], dtype=torch.float64)),  # a wrong gradient
    (lambda t: (t ** 3).sum(), torch.linspace(-1, 1, 9)),  # float32, judged on the float64 twin
])
def test_states_are_state_of_the_final_columns(fn, x):
    t = check_gradient(fn, x, mode="full").columns
    kink = t["state"] == "not_differentiable"
    expected = state_of(t["autograd"], t["best_numeric"], t["best_tolerance"], t["error_bound"],
                        t["autograd_rounding"], kink)
    assert t["state"].tolist() == expected.tolist()


def test_refined_counts_rows_moved_in_step_or_dtype():
    x = torch.ones(4, dtype=torch.float32)
    p = numeric_problem(torch.sin, [x], "sum", None, get_scheme("central"), 1e-2, torch.float32)

    def table(steps, dtypes):
        return Columns({"best_step": np.array(steps), "best_dtype": np.array(dtypes, dtype=object)})

    assert _refined(p, table([1e-2] * 4, ["float32"] * 4)) == 0
    assert _refined(p, table([1e-2, 2e-2, 1e-2, 1e-2], ["float32"] * 4)) == 1
    assert _refined(p, table([1e-2] * 4, ["float64"] * 4)) == 4
    assert _refined(p, table([2e-2, 2e-2, 1e-2, 1e-2], ["float64", "float32", "float64", "float32"])) == 3
