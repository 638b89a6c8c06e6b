"""The corpus of correct PyTorch functions is correct: torch's own gradcheck agrees on every case.

torch.autograd.gradcheck (float64 central differences, eps 1e-6) is an independent
oracle here: a case whose gradient it rejects would not belong in a corpus of
correct gradients.
"""

import pytest
import torch

from gradlab.testing.corpus import CATEGORIES, Case, corpus

CASES = corpus()


def _differentiable(args: tuple) -> tuple[torch.Tensor, ...]:
    return tuple(a for a in args if isinstance(a, torch.Tensor) and a.requires_grad)


def _with(case: Case, args: tuple):
    def fn(*tensors):
        it = iter(tensors)
        return case.fn(*(next(it) if isinstance(a, torch.Tensor) and a.requires_grad else a for a in args))
    return fn


def test_the_corpus_is_large_and_covers_every_category():
    assert len(CASES) >= 100
    assert {c.category for c in CASES} == set(CATEGORIES)
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_torch_gradcheck_accepts_every_case(case):
    args = case.inputs()
    tensors = _differentiable(args)
    assert tensors and all(t.dtype == torch.float64 for t in tensors)
    assert torch.autograd.gradcheck(_with(case, args), tensors, eps=1e-6, atol=1e-5, rtol=1e-3)
