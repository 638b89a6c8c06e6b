"""What a hand-written finite-difference check prints: the float32 grad-check question's own arithmetic.

The question's check reduces fn's output with torch, in fn's dtype, moves one element by
eps, in that dtype, and divides the difference of the two losses by eps, in that dtype::

    loss = loss_fn(model(x)); x[i] = x[i] + eps; (loss_fn(model(x)) - loss) / eps

:func:`hand_written_differences` does exactly that, op for op, so its values are the ones
that code prints: in float32, with a summed loss of 16,800 elements, multiples of ulp(L)/eps
(0 or 1.953125 at eps = 1e-3), however close the true derivative is to either.

GradLab's own finite differences (the ``numeric`` column) are computed differently on
purpose: each perturbed loss is reduced in a batch, every point is moved back to where the
stencil meant it (the step taken, (x + h) − x, is not h in float32), and the stencil is
combined in float64. Their error is then the loss's rounding alone, which the check
measures and bounds; a hand-written check adds its own roundings and has no bound.

>>> import torch
>>> x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
>>> hand_written_differences(lambda t: t ** 2, (x,), [(0, (0,)), (0, (2,))], "sum", "central", 1e-3).round(9).tolist()
[2.0, 6.0]
"""

from __future__ import annotations

from typing import Callable, Iterable

import numpy as np
import torch

from gradlab.numerics.schemes import get_scheme

__all__ = ["hand_written_differences", "hand_writable", "HAND_WRITTEN_MODES", "COLUMN_WORDS", "NUMERIC_DIFFERS"]

#: What the two columns at the check's step are, for a table's reader (the page, the CLI), by column:
#: GradLab's own differs on purpose, for the reason NUMERIC_DIFFERS gives.
NUMERIC_DIFFERS = ("the loss's change over the step actually taken ((x + h) − x is not h in float32), "
                   "combined in float64, so its only error is the loss's rounding, which GradLab "
                   "measures and bounds.")
COLUMN_WORDS = {
    "hand_written": "what a hand-written check prints at the step h: fn's output reduced by torch in its "
                    "dtype, one element moved by h in that dtype, the difference of the two losses divided "
                    "by h in that dtype.",
    "numeric": "GradLab's own finite difference at h, computed differently on purpose: " + NUMERIC_DIFFERS,
}

#: The check modes whose rows are single elements a hand-written check would move one at a
#: time: sampled (the question's "some random points"). A full check's tens of thousands of
#: elements would cost one unbatched call of fn each.
HAND_WRITTEN_MODES = ("sampled",)


def hand_writable(mode: str, reduction: str, grad_outputs, scheme, numeric_float64: bool, skipped,
                  output) -> bool:
    """Whether a check's rows are what a hand-written check prints beside them: single elements
    (:data:`HAND_WRITTEN_MODES`) of fn's one real output tensor ``output`` summed or averaged
    (grad_outputs "ones": a random weighting is a loss nobody writes by hand), moved in the
    inputs' own dtype (not ``numeric_float64``), no element skipped (NaN or inf), a real step.

    >>> from gradlab.numerics.schemes import get_scheme
    >>> hand_writable("sampled", "sum", "ones", get_scheme("forward"), False, None, torch.ones(2))
    True
    >>> hand_writable("full", "sum", "ones", get_scheme("forward"), False, None, torch.ones(2))
    False
    """
    return (mode in HAND_WRITTEN_MODES and reduction in ("sum", "mean") and not scheme.complex_step
            and isinstance(grad_outputs, str) and grad_outputs == "ones"
            and not numeric_float64 and skipped is None and torch.is_tensor(output)
            and not output.is_complex())


def hand_written_differences(call: Callable, xs: tuple[torch.Tensor, ...], located: Iterable[tuple[int, tuple]],
                             reduction: str, scheme: str, eps: float) -> np.ndarray:
    """The finite difference a hand-written check prints for each element ``located`` as (input,
    index), as a check's table locates them (its columns ``input`` and ``index``):
    ``call(*xs)`` reduced by torch (``sum`` or ``mean``) in its dtype, the element moved by
    ``c·eps`` for each point c of ``scheme`` in the inputs' dtype, the stencil's weighted
    losses added and divided by eps in that dtype (forward: ``(L(x + eps) − L(x)) / eps``).

    Returned in float64, holding the dtype's values exactly.

    A loss of 10,000 in float32 moves in steps of its ulp, 2⁻¹⁰: the derivative is 1, the
    check prints ulp/eps = 2⁻¹⁰ / float32(1e-3), rounded to float32.

    >>> x = torch.tensor([1e4], dtype=torch.float32)
    >>> hand_written_differences(lambda t: t, (x,), [(0, (0,))], "sum", "forward", 1e-3).tolist()
    [0.9765624403953552]
    """
    s = get_scheme(scheme)
    reduce = torch.sum if reduction == "sum" else torch.mean
    at_x = reduce(call(*xs)) if 0.0 in s.offsets else None
    values = []
    with torch.no_grad():
        for k, where in located:
            total = None
            for c, w in zip(s.offsets, s.weights):
                if w == 0:
                    continue
                if c == 0:
                    loss = at_x
                else:  # as the question moves it: x[i] = x[i] + eps, in the tensor's dtype
                    moved = list(xs)
                    moved[k] = xs[k].clone()
                    moved[k][where] = moved[k][where] + c * eps
                    loss = reduce(call(*moved))
                term = loss if w == 1 else -loss if w == -1 else w * loss
                total = term if total is None else total + term  # forward: −L(x) + L(x + eps)
            values.append(float(total / eps))
    return np.array(values, dtype=np.float64)
