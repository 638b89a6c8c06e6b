"""Kahan–Neumaier's compensated sum in the terms' dtype, and the same run with one term changed.

:func:`neumaier_sum` adds the terms one by one, a second variable (the carry) catching what each
addition rounds away. :func:`neumaier_resume` answers "the sum with term j set to v" for many v
(a threshold search, :mod:`gradlab.labs.summed.loss`). Except in bfloat16 both run in numpy,
with no Python loop over the terms (:func:`_run_in_numpy`).

>>> terms = torch.tensor([2.0 ** 24, 1.0, 1.0, 3.0], dtype=torch.float32)
>>> neumaier_sum(terms)  # 2**24 + 5 is no float32: it ties, to the even neighbour
16777220.0
>>> with_value = neumaier_resume(terms, 1)
>>> with_value(1.0), with_value(5.0)
(16777220.0, 16777224.0)
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import torch

from gradlab.numerics.emulation import round_to_bfloat16

__all__ = ["neumaier_sum", "neumaier_resume"]

#: The dtypes whose numpy scalars and arrays round every operation (float16: computed in float32
#: and rounded once more, which gives the same sum, as 24 >= 2 * 11 + 2 bits).
_IN_NUMPY = (torch.float16, torch.float32, torch.float64)


def _scalar_rounding(dtype: torch.dtype) -> Callable[[float], float] | None:
    """How a loop rounds a Python float to ``dtype``; None where numpy's scalars of the dtype
    already round every operation (float32, float64: also the fastest loop)."""
    if dtype == torch.bfloat16:  # numpy has no bfloat16
        return round_to_bfloat16
    if dtype == torch.float16:  # numpy's float16 scalars work, at ~10 us an operation
        return lambda v: float(np.float16(v))
    return None


def _loop_values(terms: torch.Tensor):
    """The terms as a loop adds them: numpy scalars of their dtype, or Python floats."""
    return terms.tolist() if _scalar_rounding(terms.dtype) else terms.numpy()


def neumaier_sum(terms: torch.Tensor) -> float:
    """Kahan's compensated sum with Neumaier's fix, every operation in the terms' dtype.

    >>> neumaier_sum(torch.tensor([2.0 ** 24, 1.0, 1.0], dtype=torch.float32))
    16777218.0
    """
    if terms.dtype in _IN_NUMPY:
        zero = terms.new_zeros(()).numpy()[()]
        return _neumaier_finish(*_run_in_numpy(zero, zero, terms.numpy()), terms.dtype)
    return _neumaier_finish(*_neumaier_from(0.0, 0.0, _loop_values(terms), terms.dtype), terms.dtype)


def _neumaier_from(total, carry, values, dtype: torch.dtype, path=None, record: list | None = None):
    """The compensated loop from the state ``(total, carry)``; returns the state after ``values``.

    The error of each addition, ``(total - s) + t`` (or ``(t - s) + total``, the larger operand
    first), is exact in the dtype (Dekker's Fast2Sum), so only ``s`` and ``carry`` need rounding;
    numpy's scalars of the dtype round them themselves. With ``path`` (the states another run had
    before each value), returns None as soon as the state is that run's; ``record`` collects the
    state after each value."""
    rounded = _scalar_rounding(dtype)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow shows as inf or NaN in the result
        for t, was in zip(values, path) if path is not None else ((t, None) for t in values):
            if was is not None and total == was[0] and carry == was[1]:
                return None
            s = total + t if rounded is None else rounded(total + t)
            lost = (total - s) + t if abs(total) >= abs(t) else (t - s) + total
            carry = carry + lost if rounded is None else rounded(carry + lost)
            total = s
            if record is not None:
                record.append((total, carry))
    return total, carry


def _neumaier_finish(total, carry, dtype: torch.dtype) -> float:
    with np.errstate(over="ignore", invalid="ignore"):
        return float((_scalar_rounding(dtype) or (lambda v: v))(total + carry))


def neumaier_resume(terms: torch.Tensor, j: int) -> Callable[[float], float]:
    """value -> :func:`neumaier_sum` of ``terms`` with term ``j`` set to value (a number of the dtype).

    The run before j is done once. In float16, float32 and float64 the rest is run in numpy
    (:func:`_run_in_numpy`); in bfloat16 (Python floats, rounded by hand) the loop resumes at j
    and stops as soon as its state meets the unchanged run's again (from there on both runs are the
    same): a sum that has stalled swallows most trial changes within a few terms.

    >>> terms = torch.tensor([1.0, 2.0 ** 24, 1.0], dtype=torch.bfloat16)
    >>> with_value = neumaier_resume(terms, 2)
    >>> with_value(1.0) == neumaier_sum(terms), with_value(2.0 ** 17)
    (True, 16908288.0)
    """
    if terms.dtype in _IN_NUMPY:
        zero, rest = terms.new_zeros(()).numpy()[()], terms[j + 1:].numpy()
        before = _run_in_numpy(zero, zero, terms[:j].numpy())
        return lambda value: _neumaier_finish(
            *_run_in_numpy(*before, np.concatenate([np.asarray([value], dtype=rest.dtype), rest])), terms.dtype)
    before = _neumaier_from(0.0, 0.0, _loop_values(terms[:j]), terms.dtype)
    rest, path = _loop_values(terms[j + 1:]), []
    base = _neumaier_finish(*_neumaier_from(*before, _loop_values(terms[j:]), terms.dtype, record=path), terms.dtype)

    def with_value(value: float) -> float:
        state = _neumaier_from(*before, (float(value),), terms.dtype)
        state = _neumaier_from(*state, rest, terms.dtype, path=path)
        return base if state is None else _neumaier_finish(*state, terms.dtype)

    return with_value


def _run_in_numpy(total, carry, values: np.ndarray):
    """The compensated loop's state after ``values`` (an array of a dtype in :data:`_IN_NUMPY`) from
    ``(total, carry)``, every operation the loop's own, in numpy: its totals do not depend on the
    carry, so they are the running sums (numpy's accumulate rounds every partial sum, in order);
    each addition's error is Fast2Sum's of its total, term and sum, and the carry is the running
    sum of those errors.

    >>> values = np.array([2.0 ** 24, 1.0, 1.0, 3.0], dtype=np.float32)
    >>> zero = np.float32(0)
    >>> _run_in_numpy(zero, zero, values) == _neumaier_from(zero, zero, values, torch.float32)
    True
    """
    if not len(values):
        return total, carry
    with np.errstate(over="ignore", invalid="ignore"):
        totals = np.add.accumulate(np.concatenate([np.asarray([total], dtype=values.dtype), values]))
        before, after = totals[:-1], totals[1:]
        lost = np.where(np.abs(before) >= np.abs(values), (before - after) + values, (values - after) + before)
        carry = np.add.accumulate(np.concatenate([np.asarray([carry], dtype=values.dtype), lost]))[-1]
    return totals[-1], carry
