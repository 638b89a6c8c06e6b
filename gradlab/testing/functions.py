"""Hand-written ``torch.autograd.Function``s, right and wrong, to hold a gradient checker to.

Issue 35 ("the checker on the code users write"): the stock-function corpus
(:mod:`gradlab.testing.corpus`) has autograd's own backwards; users check the
backwards they write by hand. Each Function here is written as an engineer writes
one: a forward, ``ctx.save_for_backward``, a backward by hand. The correct ones are in
:mod:`gradlab.testing.functions_nonlinear` (activations, normalisations, softmax, losses) and
:mod:`gradlab.testing.functions_linear` (matmul, linear, cumsum, solve, conv1d, embedding bag,
attention); here each gets a plain-torch ``reference`` (autograd's gradient of it is the truth,
in float64). The buggy copies, each a correct one with one mistake people make in its
backward (the forward is the twin's), are in :mod:`gradlab.testing.functions_buggy`;
models to plant them in are in :mod:`gradlab.testing.functions_models`, and how a check's
answer is scored in :mod:`gradlab.testing.functions_scoring`.

A :class:`FunctionCase` is a Function's ``.apply`` as a plain callable of the checked
tensors (integer targets, bag offsets and masks live inside it) and a seeded builder of
those tensors; :meth:`FunctionCase.inputs` gives the same float64 numbers rounded to
float64, float32 or bfloat16. Shapes are small (tens to a few hundred elements).

>>> cases = function_corpus()
>>> sum(c.correct for c in cases) >= 18, sum(not c.correct for c in cases) >= 17
(True, True)
>>> case = by_name("layer_norm")
>>> x, w, b = case.inputs(torch.float32)
>>> out = case.fn(x, w, b)
>>> out.dtype, torch.allclose(out, case.reference(x, w, b), atol=1e-5)
(torch.float32, True)
>>> by_name("sigmoid_input_for_output").bug, by_name("sigmoid_input_for_output").twin
('output_for_input', 'sigmoid')
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from gradlab.testing.functions_buggy import BUGS
from gradlab.testing.functions_linear import (BAG_INDEX, BAG_OFFSETS, Attention, Conv1dUnfold, Cumsum,
                                              EmbeddingBagSum, Linear, LinearSolve, Matmul, attention_reference)
from gradlab.testing.functions_nonlinear import (MSE, NLL_TARGET, GeluTanh, Huber, LayerNorm, LeakyReLU,
                                                 LogSoftmaxNLL, RMSNorm, SiLU, Sigmoid, Softmax, Softplus, Tanh)

__all__ = ["FunctionCase", "DTYPES", "BUG_KINDS", "correct_cases", "buggy_cases", "function_corpus", "by_name"]

#: The dtypes every case is checked in.
DTYPES = (torch.float64, torch.float32, torch.bfloat16)

#: The kinds of bug the buggy copies carry.
BUG_KINDS = ("missing_transpose", "wrong_reduction_dim", "missing_inv_sqrt_d", "missing_inv_n", "sign",
             "output_for_input", "one_off", "negatives_only", "missing_input_grad", "grad_output_ignored",
             "grad_output_misscaled", "low_precision_only", "masked_attention")


@dataclass(frozen=True)
class FunctionCase:
    """One hand-written Function, as ``fn(*checked tensors)``, and how to build its inputs."""

    name: str
    fn: Callable[..., torch.Tensor]
    make: Callable[[torch.Generator], tuple[torch.Tensor, ...]]  # float64 values, seeded
    reference: Callable[..., torch.Tensor] | None = None  # plain torch (correct cases)
    bug: str = ""  # one of BUG_KINDS; "" for a correct Function
    twin: str = ""  # a buggy case: the correct case it copies (same forward, same inputs)
    wrong_in: tuple[str, ...] = ("float64", "float32", "bfloat16")  # dtypes whose backward is wrong

    @property
    def correct(self) -> bool:
        return not self.bug

    def inputs(self, dtype: torch.dtype = torch.float64, seed: int = 0) -> tuple[torch.Tensor, ...]:
        """Fresh leaves that require grad: the float64 values of ``make``, rounded to ``dtype``."""
        values = self.make(torch.Generator().manual_seed(seed))
        return tuple(v.to(dtype).requires_grad_() for v in values)


def _u(g, *shape, low=-1.0, high=1.0):
    return torch.rand(*shape, generator=g, dtype=torch.float64) * (high - low) + low


def _away(g, *shape, low, high, gap):
    """Uniform in [low, high] with magnitude at least ``gap`` (kinks at 0 stay out of reach)."""
    x = _u(g, *shape, low=low, high=high)
    return torch.where(x.abs() < gap, torch.copysign(x.abs() + gap, x), x)


def _embedding_bag_reference(w):
    return F.embedding_bag(BAG_INDEX, w, BAG_OFFSETS, mode="sum")


def _layer_norm_reference(x, w, b):
    return F.layer_norm(x, (x.shape[-1],), w, b, eps=1e-5)


def _huber_inputs(g):
    """y, and x = y + r with |r| in [0.05, 0.8] or [1.2, 3]: the kinks at |r| = 1 out of reach."""
    y, u = _u(g, 5, 6), _u(g, 5, 6, low=0, high=1)
    r = torch.where(u < 0.4, 0.05 + u / 0.4 * 0.75, 1.2 + (u - 0.4) / 0.6 * 1.8) * torch.sign(_u(g, 5, 6))
    return y + r, y


def correct_cases() -> tuple[FunctionCase, ...]:
    """The correct Functions, each with its plain-torch reference."""
    x48 = lambda g: (_u(g, 6, 8, low=-3, high=3),)  # noqa: E731
    c = FunctionCase
    return (
        c("gelu_tanh", GeluTanh.apply, x48, lambda x: F.gelu(x, approximate="tanh")),
        c("softplus", Softplus.apply,
          lambda g: (torch.where((x := _u(g, 6, 8, low=-6, high=6)) > 3, x + 2, x),),
          lambda x: F.softplus(x, threshold=4.0)),
        c("silu", SiLU.apply, x48, F.silu),
        c("tanh", Tanh.apply, x48, torch.tanh),
        c("sigmoid", Sigmoid.apply, lambda g: (_u(g, 6, 8, low=-4, high=4),), torch.sigmoid),
        c("leaky_relu", LeakyReLU.apply, lambda g: (_away(g, 6, 8, low=-3, high=3, gap=0.1),), F.leaky_relu),
        c("layer_norm", LayerNorm.apply, lambda g: (_u(g, 5, 8, low=-2, high=2), _u(g, 8, low=0.5, high=1.5),
                                                    _u(g, 8, low=-0.5, high=0.5)), _layer_norm_reference),
        c("rms_norm", RMSNorm.apply, lambda g: (_u(g, 5, 8, low=-2, high=2), _u(g, 8, low=0.5, high=1.5)),
          lambda x, w: F.rms_norm(x, (x.shape[-1],), w, eps=1e-6)),
        c("softmax", Softmax.apply, lambda g: (_u(g, 4, 6, low=-3, high=3),), lambda x: torch.softmax(x, -1)),
        c("log_softmax_nll", lambda x: LogSoftmaxNLL.apply(x, NLL_TARGET), lambda g: (_u(g, 6, 5, low=-3, high=3),),
          lambda x: F.cross_entropy(x, NLL_TARGET)),
        c("mse", MSE.apply, lambda g: (_u(g, 5, 6), _u(g, 5, 6)), F.mse_loss),
        c("huber", Huber.apply, _huber_inputs, lambda x, y: F.huber_loss(x, y, delta=1.0)),
        c("matmul", Matmul.apply, lambda g: (_u(g, 4, 5), _u(g, 5, 5)), torch.matmul),
        c("linear", Linear.apply, lambda g: (_u(g, 5, 6), _u(g, 6, 6), _u(g, 6)), F.linear),
        c("cumsum", Cumsum.apply, lambda g: (_u(g, 4, 8),), lambda x: x.cumsum(-1)),
        c("linear_solve", LinearSolve.apply,
          lambda g: (_u(g, 4, 4) + 3 * torch.eye(4, dtype=torch.float64), _u(g, 4, 3)), torch.linalg.solve),
        c("conv1d_unfold", Conv1dUnfold.apply, lambda g: (_u(g, 2, 3, 10), _u(g, 4, 3, 3)), F.conv1d),
        c("embedding_bag_sum", lambda w: EmbeddingBagSum.apply(w, BAG_INDEX, BAG_OFFSETS),
          lambda g: (_u(g, 10, 4),), _embedding_bag_reference),
        c("attention", lambda q, k, v: Attention.apply(q, k, v, False),
          lambda g: (_u(g, 2, 5, 8), _u(g, 2, 5, 8), _u(g, 2, 5, 8)), attention_reference),
        c("causal_attention", lambda q, k, v: Attention.apply(q, k, v, True),
          lambda g: (_u(g, 2, 6, 8), _u(g, 2, 6, 8), _u(g, 2, 6, 8)),
          lambda q, k, v: attention_reference(q, k, v, True)),
    )


def buggy_cases() -> tuple[FunctionCase, ...]:
    """Every buggy copy (:data:`gradlab.testing.functions_buggy.BUGS`): its twin's case with the buggy
    ``fn``, no reference, its bug and twin named."""
    twins = {c.name: c for c in correct_cases()}
    return tuple(dataclasses.replace(twins[twin], name=name, fn=fn, reference=None, bug=kind, twin=twin,
                                     wrong_in=wrong_in[0] if wrong_in else twins[twin].wrong_in)
                 for name, kind, twin, fn, *wrong_in in BUGS)


def function_corpus() -> tuple[FunctionCase, ...]:
    """The correct cases, then the buggy ones."""
    return correct_cases() + buggy_cases()


def by_name(name: str) -> FunctionCase:
    """The case called ``name``."""
    for case in function_corpus():
        if case.name == name:
            return case
    raise KeyError(f"No function case {name!r}.")
