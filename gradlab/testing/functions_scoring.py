"""How a gradient check's answer on a hand-written Function is scored.

The truth is autograd's gradient of the case's plain-torch reference (its twin's, for a
buggy case) in float64, at the checked inputs cast up exactly, with the same output
weights. A bug's size is in the tolerances of the checked dtype
(``atol + rtol·|true gradient|``, :func:`gradlab.numerics.dtypes.resolve_tolerances`), at
its worst element, over three weightings of the output: all ones (a summed loss, what a
check with ``grad_outputs="ones"`` sees) and two seeded random ones, so a backward that
ignores grad_output, whose gradient of ``fn(x).sum()`` is right, has the size of its
wrong Jacobian. A check catches a bug when its verdict is ``fail`` and the element it names
is one where the Function's gradient, under the check's own weights, is really off by more
than that element's tolerance.

>>> from gradlab.testing.functions import by_name
>>> bug_size(by_name("mse_missing_mean"), torch.float64) > 1e6  # N = 30 times the gradient
True
>>> bug_size(by_name("sigmoid_halved_low_precision"), torch.float64) < 1
True
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from gradlab.check import random_weights, single_threaded_ops
from gradlab.numerics.dtypes import resolve_tolerances
from gradlab.testing.functions import FunctionCase, by_name

__all__ = ["Score", "flat_gradient", "true_gradient", "weight_sets", "bug_size", "wrong_elements", "named_element",
           "score"]


def flat_gradient(fn, inputs, weights: torch.Tensor) -> torch.Tensor:
    """The flat gradient of ``(fn(*inputs) * weights).sum()`` over ``inputs``, in their dtype, as float64
    (an input whose gradient the backward leaves out counts as zeros)."""
    leaves = [t.detach().clone().requires_grad_() for t in inputs]
    out = fn(*leaves)
    grads = torch.autograd.grad(out, leaves, grad_outputs=weights.to(out.dtype).expand(out.shape), allow_unused=True)
    return torch.cat([(g if g is not None else torch.zeros_like(t)).reshape(-1).double()
                      for g, t in zip(grads, leaves)])


def true_gradient(case: FunctionCase, inputs, weights: torch.Tensor) -> torch.Tensor:
    """autograd of the reference (the twin's, for a buggy case), in float64, at ``inputs`` cast up."""
    reference = case.reference if case.correct else by_name(case.twin).reference
    return flat_gradient(reference, [t.detach().double() for t in inputs], weights.double())


def weight_sets(case: FunctionCase, inputs, seed: int = 1) -> list[torch.Tensor]:
    """All ones, and two seeded standard-normal weightings of the output (float64)."""
    with torch.no_grad():
        shape = case.fn(*inputs).shape
    gen = torch.Generator().manual_seed(seed)
    return [torch.ones(shape, dtype=torch.float64)] + [torch.randn(shape, generator=gen, dtype=torch.float64)
                                                       for _ in range(2)]


def _excess(case: FunctionCase, inputs, weights: torch.Tensor) -> torch.Tensor:
    """|fn's gradient - the truth| per element, in tolerances of the inputs' dtype."""
    rtol, atol = resolve_tolerances(inputs[0].dtype)
    truth = true_gradient(case, inputs, weights)
    return (flat_gradient(case.fn, inputs, weights) - truth).abs() / (atol + rtol * truth.abs())


def bug_size(case: FunctionCase, dtype: torch.dtype, seed: int = 0) -> float:
    """The worst element's error in tolerances of ``dtype``, over :func:`weight_sets`
    (a correct case: its rounding, well under 1). Small ops: on one thread, as a check runs them."""
    with single_threaded_ops():
        inputs = case.inputs(dtype, seed)
        return max(float(_excess(case, inputs, w).max()) for w in weight_sets(case, inputs))


def wrong_elements(case: FunctionCase, inputs, reduction: str = "sum") -> torch.Tensor:
    """Boolean per flat input element: the gradient is off by more than its tolerance under the
    weights a default check with ``reduction`` used (gradlab.gradcheck's seeded random
    grad_outputs at seed 0, divided by N for "mean"; for "none", under any of
    :func:`weight_sets` and those)."""
    with single_threaded_ops():
        sets = weight_sets(case, inputs)
        own = random_weights(sets[0].numel(), 0).reshape(sets[0].shape)  # the check's default grad_outputs
        if reduction == "sum":
            sets = [own]
        elif reduction == "mean":
            sets = [own / own.numel()]
        else:
            sets = sets + [own]
        return torch.stack([_excess(case, inputs, w) > 1 for w in sets]).any(0)


def named_element(result) -> int:
    """The flat index (over all checked inputs) of the element a check names, or -1: the
    summary's located element (a failing direction narrowed to one element), else its worst
    element, else the first failing row of the table that is an element."""
    s = result.summary
    for e in (s.located, s.worst):
        if e is not None and e.flat_index >= 0:
            return int(e.flat_index)
    table = result.table
    rows = table[(table["state"] == "fail") & (table["flat"] >= 0)] if "state" in table else table.iloc[:0]
    return int(rows["flat"].iloc[0]) if len(rows) else -1


@dataclass(frozen=True)
class Score:
    verdict: str
    named: int  # flat index of the named element, -1 when none
    named_is_wrong: bool

    @property
    def caught(self) -> bool:
        """Failed, naming an element whose gradient really is wrong."""
        return self.verdict == "fail" and self.named_is_wrong


def score(case: FunctionCase, inputs, result) -> Score:
    """How ``result`` (a gradlab.gradcheck of ``case.fn`` at ``inputs``) answers on ``case``."""
    named = named_element(result) if result.verdict == "fail" else -1
    wrong = named >= 0 and bool(wrong_elements(case, inputs, result.summary.reduction)[named])
    return Score(result.verdict, named, wrong)
