"""Telling truncation from a wrong gradient: re-estimate the worst failing values at h/2.

A scheme of order p has truncation error ∝ h^p, so halving h moves an
estimate dominated by truncation by (1 - 2^-p) of its error from autograd;
an estimate that stays put while autograd disagrees points at the gradient.
The measured share ``|D(h) - D(h/2)| / ((1 - 2^-p)|D(h) - a|)`` is the
diagnosis's evidence (:attr:`gradlab.check.diagnosis.Evidence.truncation_share`).

>>> from gradlab.check.problem import numeric_problem
>>> from gradlab.numerics.schemes import get_scheme
>>> from gradlab.check.stencil import onehot_maker
>>> x = torch.tensor([1.0], dtype=torch.float64)
>>> p = numeric_problem(lambda t: t ** 3, [x], "sum", None, get_scheme("forward"), 1e-2, torch.float64)
>>> from gradlab.check.columns import Columns
>>> table = Columns({"ok": np.array([False]), "abs_error": np.array([0.03])})
>>> share = truncation_share(p, table, lambda a, b: onehot_maker(p, torch.tensor([0])),
...                          torch.tensor([3.0301]), torch.tensor([3.0]))
>>> round(share, 2)  # pure truncation: 3h + h**2 halves to 3h/2 + h**2/4
1.0
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import torch

from gradlab.check.columns import Columns
from gradlab.check.problem import NumericProblem
from gradlab.check.stencil import RowMaker, estimates

__all__ = ["PROBE_ROWS", "truncation_share"]

# How many of the worst failing values are re-estimated at h/2.
PROBE_ROWS = 8


def truncation_share(p: NumericProblem, table: Columns, maker_for: Callable[[int, int], RowMaker],
                     numeric: torch.Tensor, autograd: torch.Tensor) -> float | None:
    """Median share over the worst failing values (None: nothing fails, or the complex step).

    ``maker_for(a, b)`` builds the rows of checked values a..b-1.
    """
    failing = np.flatnonzero(~table["ok"])
    if failing.size == 0 or p.scheme.complex_step:
        return None
    worst = failing[np.argsort(-table["abs_error"][failing])][:PROBE_ROWS]
    half = torch.tensor([p.step / 2], dtype=torch.float64)
    halves = [estimates(p, maker_for(int(i), int(i) + 1), half)[0] for i in worst]
    moved = np.abs(numeric.numpy()[worst] - torch.cat(halves).numpy())
    error = np.abs(numeric.numpy()[worst] - autograd.numpy()[worst])
    predicted = (1 - 2.0 ** -p.scheme.order) * error
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(predicted > 0, moved / predicted, np.nan)
    share = share[np.isfinite(share)]
    return float(np.median(share)) if share.size else None
