"""A corpus of real PyTorch functions with correct gradients, to hold a gradient checker to.

Each :class:`Case` is a function as a user would write it and the inputs it is
checked at: seeded float64 tensors that require grad, plus whatever else the
function takes (integer indices, shapes, booleans, Python numbers), passed
through untouched. Autograd's gradient of every case is right, so a checker
must never call one wrong; with a deliberately corrupted backward it must.

The corpus spans what users check: elementwise functions near their
singularities, linear algebra (cholesky, solve, det, eigh, ...), losses, shape and
view operations (squeeze, reshape, permute, expand, indexing, as_strided),
reductions, convolutions, attention, normalisation layers and functions with
integer arguments.

>>> cases = corpus()
>>> len(cases) >= 100
True
>>> case = by_name("tan_near_pole")
>>> out = case.fn(*case.inputs())
>>> out.dtype
torch.float64
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F

__all__ = ["Case", "corpus", "by_name", "CATEGORIES"]

CATEGORIES = ("elementwise", "linalg", "loss", "shape", "reduction", "conv", "attention", "norm", "integer_args")


@dataclass(frozen=True)
class Case:
    """One function and how to build the inputs it is checked at."""

    name: str
    category: str
    fn: Callable[..., torch.Tensor]
    make: Callable[[torch.Generator], tuple]

    def inputs(self, seed: int = 0) -> tuple:
        """Fresh inputs (tensors that require grad, other arguments as they are)."""
        return self.make(torch.Generator().manual_seed(seed))


def _t(g: torch.Generator, *shape: int, low: float = -1.0, high: float = 1.0) -> torch.Tensor:
    """A float64 tensor uniform in [low, high) that requires grad."""
    x = torch.rand(*shape, generator=g, dtype=torch.float64) * (high - low) + low
    return x.requires_grad_()


def _spd(g: torch.Generator, n: int) -> torch.Tensor:
    a = torch.randn(n, n, generator=g, dtype=torch.float64)
    return (a @ a.T + n * torch.eye(n, dtype=torch.float64)).requires_grad_()


def _sym(x: torch.Tensor) -> torch.Tensor:
    # cholesky/eigh read one triangle only: symmetrising first makes fn depend on every entry
    # the way autograd's (symmetric) gradient assumes, as a user's a @ a.T + ... would.
    return (x + x.transpose(-1, -2)) / 2


def _elementwise() -> list[Case]:
    unary = [  # (name, fn, low, high): the interval keeps away from where fn is undefined
        ("sin", torch.sin, -3, 3), ("cos", torch.cos, -3, 3), ("exp", torch.exp, -5, 5),
        ("expm1_small", torch.expm1, -1e-6, 1e-6), ("log_near_zero", torch.log, 1e-4, 1e-2),
        ("log1p_small", torch.log1p, -1e-6, 1e-6), ("sqrt_near_zero", torch.sqrt, 1e-6, 1e-4),
        ("rsqrt", torch.rsqrt, 0.1, 2), ("reciprocal_near_zero", torch.reciprocal, 1e-3, 1e-2),
        ("tan_near_pole", torch.tan, math.pi / 2 - 0.02, math.pi / 2 - 0.01),
        ("atan", torch.atan, -10, 10), ("asin_near_one", torch.asin, 0.99, 0.999),
        ("acos_near_minus_one", torch.acos, -0.999, -0.99), ("sinh", torch.sinh, -5, 5),
        ("cosh", torch.cosh, -5, 5), ("tanh_saturated", torch.tanh, 3, 6),
        ("atanh_near_one", torch.atanh, 0.9, 0.99), ("asinh", torch.asinh, -5, 5),
        ("acosh_near_one", torch.acosh, 1.001, 1.01), ("sigmoid", torch.sigmoid, -8, 8),
        ("erf", torch.erf, -2, 2), ("erfc", torch.erfc, -2, 2), ("erfinv", torch.erfinv, -0.9, 0.9),
        ("lgamma", torch.lgamma, 0.1, 5), ("digamma", torch.digamma, 0.5, 5),
        ("softplus", F.softplus, -5, 5), ("gelu", F.gelu, -3, 3), ("silu", F.silu, -3, 3),
        ("elu", F.elu, 0.1, 3), ("mish", F.mish, -3, 3), ("logsigmoid", F.logsigmoid, -5, 5),
        ("square", torch.square, -3, 3), ("cube_root", lambda x: torch.sign(x) * x.abs() ** (1 / 3), 0.1, 2),
        ("xlogy", lambda x: torch.xlogy(x, x), 0.1, 2), ("sinc", torch.sinc, 0.1, 2),
        ("log_softmax_1d", lambda x: F.log_softmax(x, dim=0), -3, 3),
    ]
    cases = [Case(n, "elementwise", fn, lambda g, lo=lo, hi=hi: (_t(g, 5, 4, low=lo, high=hi),))
             for n, fn, lo, hi in unary]
    binary = [
        ("pow_tensor", lambda a, b: a ** b, (0.5, 2), (-2, 2)),
        ("atan2", torch.atan2, (-2, 2), (0.5, 2)),
        ("hypot", torch.hypot, (0.5, 2), (0.5, 2)),
        ("div", torch.div, (-2, 2), (0.5, 2)),
        ("mul", torch.mul, (-2, 2), (-2, 2)),
        ("maximum_no_ties", torch.maximum, (-2, -1), (0, 1)),
        ("logaddexp", torch.logaddexp, (-5, 5), (-5, 5)),
        ("fmod_smooth", lambda a, b: torch.fmod(a, 10.0) * b, (0.5, 2), (0.5, 2)),
    ]
    cases += [Case(n, "elementwise", fn, lambda g, ra=ra, rb=rb: (_t(g, 4, 3, low=ra[0], high=ra[1]),
                                                                   _t(g, 4, 3, low=rb[0], high=rb[1])))
              for n, fn, ra, rb in binary]
    return cases


def _linalg() -> list[Case]:
    return [
        Case("matmul", "linalg", torch.matmul, lambda g: (_t(g, 4, 5), _t(g, 5, 3))),
        Case("bmm", "linalg", torch.bmm, lambda g: (_t(g, 2, 3, 4), _t(g, 2, 4, 2))),
        Case("einsum_bilinear", "linalg", lambda a, x, y: torch.einsum("ij,i,j->", a, x, y),
             lambda g: (_t(g, 3, 4), _t(g, 3), _t(g, 4))),
        Case("cholesky", "linalg", lambda a: torch.linalg.cholesky(_sym(a)), lambda g: (_spd(g, 4),)),
        Case("cholesky_solve_spd", "linalg", lambda a, b: torch.cholesky_solve(b, torch.linalg.cholesky(_sym(a))),
             lambda g: (_spd(g, 3), _t(g, 3, 2))),
        Case("solve", "linalg", torch.linalg.solve, lambda g: (_spd(g, 4), _t(g, 4, 2))),
        Case("inv", "linalg", torch.linalg.inv, lambda g: (_spd(g, 3),)),
        Case("det", "linalg", torch.linalg.det, lambda g: (_t(g, 4, 4),)),
        Case("slogdet", "linalg", lambda a: torch.linalg.slogdet(a)[1], lambda g: (_spd(g, 4),)),
        Case("eigh_values", "linalg", lambda a: torch.linalg.eigvalsh(_sym(a)), lambda g: (_spd(g, 4),)),
        Case("eigh_vectors_gauge_invariant", "linalg",
             lambda a: (lambda w, v: (v * v) @ w)(*torch.linalg.eigh(_sym(a))), lambda g: (_spd(g, 3),)),
        Case("svd_values", "linalg", torch.linalg.svdvals, lambda g: (_t(g, 4, 3),)),
        Case("qr_r_abs", "linalg", lambda a: torch.linalg.qr(a)[1].abs(), lambda g: (_t(g, 4, 3),)),
        Case("matrix_exp", "linalg", torch.linalg.matrix_exp, lambda g: (_t(g, 3, 3, low=-0.5, high=0.5),)),
        Case("pinv", "linalg", torch.linalg.pinv, lambda g: (_t(g, 4, 3),)),
        Case("vector_norm", "linalg", lambda x: torch.linalg.vector_norm(x, ord=3), lambda g: (_t(g, 6),)),
        Case("matrix_norm_fro", "linalg", torch.linalg.matrix_norm, lambda g: (_t(g, 3, 4),)),
        Case("cross", "linalg", lambda a, b: torch.linalg.cross(a, b), lambda g: (_t(g, 4, 3), _t(g, 4, 3))),
        Case("triangular_solve", "linalg",
             lambda a, b: torch.linalg.solve_triangular(torch.tril(a) + 3 * torch.eye(3, dtype=a.dtype), b,
                                                        upper=False),
             lambda g: (_t(g, 3, 3), _t(g, 3, 2))),
        Case("lstsq", "linalg", lambda a, b: torch.linalg.lstsq(a, b).solution, lambda g: (_t(g, 5, 3), _t(g, 5, 2))),
    ]


def _losses() -> list[Case]:
    def target(g, *shape):
        return torch.rand(*shape, generator=g, dtype=torch.float64)

    return [
        Case("mse_sum", "loss", lambda x, t: F.mse_loss(x, t, reduction="sum"), lambda g: (_t(g, 6, 5), target(g, 6, 5))),
        Case("mse_mean", "loss", F.mse_loss, lambda g: (_t(g, 6, 5), target(g, 6, 5))),
        Case("l1_no_ties", "loss", F.l1_loss, lambda g: (_t(g, 6, low=2, high=3), target(g, 6))),
        Case("smooth_l1", "loss", F.smooth_l1_loss, lambda g: (_t(g, 6, 5, low=-3, high=3), target(g, 6, 5))),
        Case("huber", "loss", F.huber_loss, lambda g: (_t(g, 6, 5, low=-3, high=3), target(g, 6, 5))),
        Case("cross_entropy", "loss", lambda x, y: F.cross_entropy(x, y),
             lambda g: (_t(g, 5, 4, low=-2, high=2), torch.randint(0, 4, (5,), generator=g))),
        Case("nll_loss", "loss", lambda x, y: F.nll_loss(F.log_softmax(x, 1), y),
             lambda g: (_t(g, 5, 4), torch.randint(0, 4, (5,), generator=g))),
        Case("binary_cross_entropy", "loss", F.binary_cross_entropy,
             lambda g: (_t(g, 6, low=0.05, high=0.95), target(g, 6))),
        Case("bce_with_logits", "loss", F.binary_cross_entropy_with_logits, lambda g: (_t(g, 6, 3), target(g, 6, 3))),
        Case("kl_div", "loss", lambda x, t: F.kl_div(F.log_softmax(x, -1), t, reduction="batchmean"),
             lambda g: (_t(g, 4, 5), torch.softmax(torch.randn(4, 5, generator=g, dtype=torch.float64), -1))),
        Case("gaussian_nll", "loss", lambda mu, var, t: F.gaussian_nll_loss(mu, t, var),
             lambda g: (_t(g, 6), _t(g, 6, low=0.5, high=2), target(g, 6))),
        Case("poisson_nll", "loss", lambda x, t: F.poisson_nll_loss(x, t), lambda g: (_t(g, 6), target(g, 6))),
        Case("cosine_embedding", "loss", lambda a, b: F.cosine_similarity(a, b).sum(),
             lambda g: (_t(g, 4, 5), _t(g, 4, 5))),
        Case("margin_ranking_no_kink", "loss",
             lambda a, b: F.margin_ranking_loss(a, b, torch.ones(a.shape, dtype=a.dtype), margin=10.0),
             lambda g: (_t(g, 5), _t(g, 5))),
    ]


def _shapes() -> list[Case]:
    return [
        Case("squeeze", "shape", lambda x: torch.squeeze(x) * torch.arange(5.0, dtype=x.dtype),
             lambda g: (_t(g, 1, 5, 1),)),
        Case("squeeze_dim", "shape", lambda x: x.squeeze(0).sin(), lambda g: (_t(g, 1, 5, 5),)),
        Case("unsqueeze", "shape", lambda x: x.unsqueeze(1) * x.unsqueeze(0), lambda g: (_t(g, 4),)),
        Case("reshape", "shape", lambda x: x.reshape(3, 8).cumsum(1), lambda g: (_t(g, 4, 6),)),
        Case("view_flatten", "shape", lambda x: x.view(-1).cumprod(0), lambda g: (_t(g, 2, 3, low=0.5, high=1.5),)),
        Case("permute", "shape", lambda x: x.permute(2, 0, 1).cumsum(0), lambda g: (_t(g, 2, 3, 4),)),
        Case("transpose_matmul", "shape", lambda x: x.T @ x, lambda g: (_t(g, 4, 3),)),
        Case("expand", "shape", lambda x: x.expand(3, 4) * torch.arange(12.0, dtype=x.dtype).view(3, 4),
             lambda g: (_t(g, 1, 4),)),
        Case("repeat", "shape", lambda x: x.repeat(2, 3).sin(), lambda g: (_t(g, 2, 2),)),
        Case("indexing_slices", "shape", lambda x: x[1:, ::2] ** 2, lambda g: (_t(g, 4, 5),)),
        Case("indexing_tensor", "shape", lambda x, i: x[i] * 2, lambda g: (_t(g, 6), torch.tensor([0, 2, 2, 5]))),
        Case("index_select", "shape", lambda x, i: torch.index_select(x, 0, i).exp(),
             lambda g: (_t(g, 5, 3), torch.tensor([4, 0, 4]))),
        Case("gather", "shape", lambda x, i: torch.gather(x, 1, i),
             lambda g: (_t(g, 3, 4), torch.randint(0, 4, (3, 2), generator=g))),
        Case("scatter_add", "shape", lambda x, src, i: x.scatter_add(0, i, src),
             lambda g: (_t(g, 3, 4), _t(g, 2, 4), torch.randint(0, 3, (2, 4), generator=g))),
        Case("masked_fill", "shape", lambda x, m: x.masked_fill(m, 0.0).sin(),
             lambda g: (_t(g, 4, 4), torch.rand(4, 4, generator=g) > 0.5)),
        Case("where", "shape", lambda a, b, m: torch.where(m, a, b * b),
             lambda g: (_t(g, 5), _t(g, 5), torch.rand(5, generator=g) > 0.5)),
        Case("as_strided", "shape", lambda x: torch.as_strided(x, (3, 3), (1, 1)).exp(), lambda g: (_t(g, 5),)),
        Case("cat", "shape", lambda a, b: torch.cat([a, b * 2], 0).cumsum(0), lambda g: (_t(g, 2, 3), _t(g, 3, 3))),
        Case("stack", "shape", lambda a, b: torch.stack([a, b]).prod(0), lambda g: (_t(g, 4), _t(g, 4))),
        Case("split_chunks", "shape", lambda x: sum((c * (i + 1)).sum() for i, c in enumerate(x.split(2))),
             lambda g: (_t(g, 7),)),
        Case("flip_roll", "shape", lambda x: x.flip(0).roll(1, 1) * x, lambda g: (_t(g, 3, 4),)),
        Case("tril_diag", "shape", lambda x: torch.tril(x).diagonal().exp(), lambda g: (_t(g, 4, 4),)),
        Case("unfold", "shape", lambda x: x.unfold(0, 3, 1).prod(-1), lambda g: (_t(g, 7),)),
        Case("pad", "shape", lambda x: F.pad(x, (1, 2), mode="reflect").sin(), lambda g: (_t(g, 2, 5),)),
    ]


def _reductions() -> list[Case]:
    return [
        Case("sum", "reduction", lambda x: x.sum(1), lambda g: (_t(g, 4, 5),)),
        Case("mean", "reduction", lambda x: x.mean(), lambda g: (_t(g, 4, 5),)),
        Case("prod", "reduction", lambda x: x.prod(0), lambda g: (_t(g, 4, 3, low=0.5, high=1.5),)),
        Case("var", "reduction", lambda x: x.var(1), lambda g: (_t(g, 4, 5),)),
        Case("std", "reduction", lambda x: x.std(), lambda g: (_t(g, 4, 5),)),
        Case("logsumexp", "reduction", lambda x: torch.logsumexp(x, 1), lambda g: (_t(g, 4, 5, low=-3, high=3),)),
        Case("norm", "reduction", lambda x: x.norm(dim=0), lambda g: (_t(g, 4, 5),)),
        Case("amax_no_ties", "reduction", lambda x: x.amax(1),
             lambda g: ((torch.arange(20.0, dtype=torch.float64).view(4, 5) / 7).sin().requires_grad_(),)),
        Case("cumsum", "reduction", lambda x: x.cumsum(0), lambda g: (_t(g, 6),)),
        Case("cummax_values", "reduction", lambda x: x.cummax(0).values,
             lambda g: (torch.tensor([0.1, 0.5, 0.3, 0.9, 0.2], dtype=torch.float64).requires_grad_(),)),
        Case("softmax", "reduction", lambda x: torch.softmax(x, -1), lambda g: (_t(g, 3, 5, low=-3, high=3),)),
        Case("sort_values", "reduction", lambda x: x.sort().values * torch.arange(6.0, dtype=x.dtype),
             lambda g: (_t(g, 6),)),
        Case("topk", "reduction", lambda x: x.topk(2).values, lambda g: (_t(g, 3, 6),)),
    ]


def _convolutions() -> list[Case]:
    return [
        Case("conv1d", "conv", lambda x, w: F.conv1d(x, w, padding=1), lambda g: (_t(g, 2, 3, 8), _t(g, 4, 3, 3))),
        Case("conv2d", "conv", lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1),
             lambda g: (_t(g, 1, 2, 6, 6), _t(g, 3, 2, 3, 3), _t(g, 3))),
        Case("conv_transpose2d", "conv", lambda x, w: F.conv_transpose2d(x, w, stride=2),
             lambda g: (_t(g, 1, 2, 3, 3), _t(g, 2, 2, 2, 2))),
        Case("avg_pool2d", "conv", lambda x: F.avg_pool2d(x, 2), lambda g: (_t(g, 1, 2, 4, 4),)),
        Case("max_pool2d_distinct", "conv", lambda x: F.max_pool2d(x, 2),
             lambda g: ((torch.randperm(32, generator=g).double().view(1, 2, 4, 4) / 10).requires_grad_(),)),
        Case("interpolate_bilinear", "conv", lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"),
             lambda g: (_t(g, 1, 1, 3, 3),)),
    ]


def _attention() -> list[Case]:
    def attention(q, k, v):
        return torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]), -1) @ v

    def mha(x, w_in, w_out):
        return F.multi_head_attention_forward(
            x, x, x, 4, 2, w_in, None, None, None, False, 0.0, w_out, None,
            training=False, need_weights=False)[0]

    return [
        Case("attention_by_hand", "attention", attention, lambda g: (_t(g, 2, 4, 3), _t(g, 2, 5, 3), _t(g, 2, 5, 3))),
        Case("scaled_dot_product_attention", "attention", F.scaled_dot_product_attention,
             lambda g: (_t(g, 1, 2, 4, 3), _t(g, 1, 2, 5, 3), _t(g, 1, 2, 5, 3))),
        Case("sdpa_causal", "attention", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
             lambda g: (_t(g, 1, 4, 3), _t(g, 1, 4, 3), _t(g, 1, 4, 3))),
        Case("multi_head_attention", "attention", mha, lambda g: (_t(g, 3, 1, 4), _t(g, 12, 4), _t(g, 4, 4))),
    ]


def _normalisation() -> list[Case]:
    return [
        Case("layer_norm", "norm", lambda x, w, b: F.layer_norm(x, (5,), w, b),
             lambda g: (_t(g, 3, 5), _t(g, 5), _t(g, 5))),
        Case("batch_norm_training", "norm", lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
             lambda g: (_t(g, 6, 3), _t(g, 3), _t(g, 3))),
        Case("group_norm", "norm", lambda x: F.group_norm(x, 2), lambda g: (_t(g, 2, 4, 3),)),
        Case("instance_norm", "norm", lambda x: F.instance_norm(x), lambda g: (_t(g, 2, 3, 5),)),
        Case("rms_norm", "norm", lambda x, w: F.rms_norm(x, (4,), w), lambda g: (_t(g, 3, 4), _t(g, 4))),
        Case("normalize", "norm", lambda x: F.normalize(x, dim=1), lambda g: (_t(g, 3, 4),)),
    ]


def _integer_args() -> list[Case]:
    return [
        Case("pow_int_exponent", "integer_args", lambda x, n: x ** n, lambda g: (_t(g, 5), 3)),
        Case("sum_over_dim_arg", "integer_args", lambda x, dim, keep: x.sin().sum(dim, keepdim=keep),
             lambda g: (_t(g, 3, 4), 1, True)),
        Case("reshape_shape_arg", "integer_args", lambda x, shape: x.reshape(shape).cumsum(0),
             lambda g: (_t(g, 12), (3, 4))),
        Case("one_hot_weighted", "integer_args", lambda x, y: (x * F.one_hot(y, 4)).sum(1),
             lambda g: (_t(g, 5, 4), torch.randint(0, 4, (5,), generator=g))),
        Case("embedding", "integer_args", lambda w, i: F.embedding(i, w), lambda g: (_t(g, 6, 3), torch.tensor([[1, 5], [0, 1]]))),
        Case("scale_by_float_arg", "integer_args", lambda x, s: torch.tanh(s * x), lambda g: (_t(g, 4), 2.5)),
        Case("clamp_with_bounds", "integer_args", lambda x, lo, hi: x.clamp(lo, hi),
             lambda g: (_t(g, 6, low=-0.5, high=0.5), -1.0, 1.0)),
        Case("polynomial_with_int_degree", "integer_args",
             lambda x, deg: sum(x ** k / math.factorial(k) for k in range(deg + 1)), lambda g: (_t(g, 5), 6)),
    ]


def corpus() -> tuple[Case, ...]:
    """Every case, in category order."""
    return tuple(_elementwise() + _linalg() + _losses() + _shapes() + _reductions() + _convolutions()
                 + _attention() + _normalisation() + _integer_args())


def by_name(name: str) -> Case:
    """The case called ``name``."""
    for case in corpus():
        if case.name == name:
            return case
    raise KeyError(f"No corpus case {name!r}.")
