"""Buggy copies of the hand-written Functions of :mod:`gradlab.testing.functions_nonlinear` and
:mod:`gradlab.testing.functions_linear`.

Each class subclasses its correct twin (the forward is the twin's, untouched) and
overrides ``backward`` with one mistake engineers make, one of
:data:`~gradlab.testing.functions.BUG_KINDS`. :data:`BUGS` lists each as (name, kind, the
twin's case name, fn[, the dtypes it is wrong in: a ``low_precision_only`` bug is right in
float64]); :func:`gradlab.testing.functions.buggy_cases` makes them cases with the twin's inputs.

Some of these are invisible to a check whose grad_output is all ones: a backward that
ignores grad_output (``silu_ignores_grad_output``) returns exactly the right gradient of
``fn(x).sum()``; the Jacobian is wrong, and any other weighting of the output shows it.

>>> len(BUGS), sorted({kind for _, kind, *_ in BUGS})[:3]
(31, ['grad_output_ignored', 'grad_output_misscaled', 'low_precision_only'])
>>> x = torch.tensor([0.5], dtype=torch.float64, requires_grad=True)
>>> SigmoidInputForOutput.apply(x).backward()  # x(1 - x) = 0.25; the truth s(1 - s) = 0.235
>>> round(float(x.grad), 3)
0.25
"""

from __future__ import annotations

import torch

from gradlab.testing import functions_nonlinear as f
from gradlab.testing import functions_linear as fl

__all__ = ["BUGS"]


# --- missing transpose ----------------------------------------------------------------------------
class MatmulMissingTranspose(fl.Matmul):
    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return g @ b, a.T @ g  # g @ b.T


class LinearMissingTranspose(fl.Linear):
    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g @ w, x.T @ g, g.sum(0)  # the weight's gradient is g.T @ x


# --- wrong reduction dim ----------------------------------------------------------------------------
class SoftmaxWrongDim(f.Softmax):
    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return y * (g - (g * y).sum(0, keepdim=True))  # sum(-1)


class LayerNormWrongDim(f.LayerNorm):
    @staticmethod
    def backward(ctx, g):
        xhat, rstd, w = ctx.saved_tensors
        gy = g * w
        dx = rstd * (gy - gy.mean(0, keepdim=True) - xhat * (gy * xhat).mean(0, keepdim=True))  # mean(-1)
        return dx, (g * xhat).sum(f.lead(g)), g.sum(f.lead(g)), None


# --- missing 1/sqrt(d), missing 1/N ------------------------------------------------------------------
class AttentionMissingScale(fl.Attention):
    @staticmethod
    def backward(ctx, g):
        q, k, v, p, _ = ctx.saved_tensors
        dp = g @ v.transpose(-1, -2)
        ds = p * (dp - (dp * p).sum(-1, keepdim=True))
        return ds @ k, ds.transpose(-1, -2) @ q, p.transpose(-1, -2) @ g, None  # both * scale


class MSEMissingMean(f.MSE):
    @staticmethod
    def backward(ctx, g):
        (d,) = ctx.saved_tensors
        return g * 2 * d, -g * 2 * d  # / d.numel()


class NLLMissingMean(f.LogSoftmaxNLL):
    @staticmethod
    def backward(ctx, g):
        p, target = ctx.saved_tensors
        return g * (p - torch.nn.functional.one_hot(target, p.shape[-1]).to(p.dtype)), None  # / N


# --- sign ---------------------------------------------------------------------------------------------
class TanhSign(f.Tanh):
    @staticmethod
    def backward(ctx, g):
        _, y = ctx.saved_tensors
        return g * (1 + y * y)  # 1 - y*y


class HuberSign(f.Huber):
    @staticmethod
    def backward(ctx, g):
        (r,) = ctx.saved_tensors
        dr = g * torch.where(r.abs() <= ctx.delta, r, -ctx.delta * torch.sign(r)) / r.numel()  # +delta
        return dr, -dr, None


# --- output used for input ----------------------------------------------------------------------------
class SigmoidInputForOutput(f.Sigmoid):
    @staticmethod
    def backward(ctx, g):
        x, _ = ctx.saved_tensors
        return g * x * (1 - x)  # y * (1 - y)


class TanhInputForOutput(f.Tanh):
    @staticmethod
    def backward(ctx, g):
        x, _ = ctx.saved_tensors
        return g * (1 - x * x)  # 1 - y*y


class GeluOutputForInput(f.GeluTanh):
    @staticmethod
    def forward(ctx, x):
        y = f.GeluTanh.forward(ctx, x)
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        t = torch.tanh(f.GELU_C * (x + 0.044715 * x ** 3))
        return g * (0.5 * (1 + t) + 0.5 * y * (1 - t * t) * f.GELU_C * (1 + 3 * 0.044715 * x * x))  # 0.5 * x


# --- one row or one element off -------------------------------------------------------------------------
class CumsumOffByOne(fl.Cumsum):
    @staticmethod
    def backward(ctx, g):
        return g.flip(-1).cumsum(-1).flip(-1) - g  # the scan starts one element late


class EmbeddingBagSkipsLast(fl.EmbeddingBagSum):
    @staticmethod
    def backward(ctx, g):
        index, offsets = ctx.saved_tensors
        dw = g.new_zeros(ctx.rows, g.shape[1])
        ends = torch.cat([offsets[1:], torch.tensor([len(index)])])
        for b in range(len(offsets) - 1):  # range(len(offsets)): the last bag's rows get nothing
            rows = index[offsets[b]:ends[b]]
            dw.index_add_(0, rows, g[b].expand(len(rows), -1))
        return dw, None, None


class Conv1dSkipsFirstTap(fl.Conv1dUnfold):
    @staticmethod
    def backward(ctx, g):
        cols, w = ctx.saved_tensors
        dcols = torch.einsum("bol,ock->bclk", g, w)
        dx = g.new_zeros(cols.shape[0], cols.shape[1], ctx.length)
        for k in range(1, w.shape[-1]):  # range(K)
            dx[:, :, k:k + cols.shape[2]] += dcols[..., k]
        return dx, torch.einsum("bol,bclk->ock", g, cols)


class MatmulLastRowMissing(fl.Matmul):
    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        da = torch.zeros_like(a)
        da[:-1] = g[:-1] @ b.T  # a blocked loop that stops one row short
        return da, a.T @ g


# --- negatives only -----------------------------------------------------------------------------------
class LeakyReLUNegatives(f.LeakyReLU):
    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return torch.where(x > 0, g, g), None  # ctx.slope * g below 0


class SiLUNegatives(f.SiLU):
    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(x)
        return g * torch.where(x >= 0, s * (1 + x * (1 - s)), s), None  # a "cheap" branch drops x*s*(1-s)


# --- a missing input's gradient ---------------------------------------------------------------------------
class LayerNormNoBiasGrad(f.LayerNorm):
    @staticmethod
    def backward(ctx, g):
        dx, dw, _, _ = f.LayerNorm.backward(ctx, g)
        return dx, dw, None, None  # the bias needs g.sum over the leading dims


class LinearNoBiasGrad(fl.Linear):
    @staticmethod
    def backward(ctx, g):
        dx, dw, _ = fl.Linear.backward(ctx, g)
        return dx, dw, None


class SolveNoMatrixGrad(fl.LinearSolve):
    @staticmethod
    def backward(ctx, g):
        _, gb = fl.LinearSolve.backward(ctx, g)
        return None, gb  # "A is a constant" -- but it requires grad


# --- grad_output ignored or mis-scaled -------------------------------------------------------------------
class SiLUIgnoresGradOutput(f.SiLU):
    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(x)
        return s * (1 + x * (1 - s))  # forgot * g


class GeluIgnoresGradOutput(f.GeluTanh):
    @staticmethod
    def backward(ctx, g):
        return f.GeluTanh.backward(ctx, torch.ones_like(g))  # "g is ones for a loss"


class SoftplusFirstGradOutput(f.Softplus):
    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g.reshape(-1)[0] * torch.where(x > ctx.threshold, 1.0, torch.sigmoid(x)), None  # g as a scalar


class MSEMeanTwice(f.MSE):
    @staticmethod
    def backward(ctx, g):
        (d,) = ctx.saved_tensors
        dx = g / d.numel() * 2 * d / d.numel()  # the mean's 1/N applied to g and again
        return dx, -dx


# --- low-precision-only paths -----------------------------------------------------------------------------
class SigmoidHalvedLowPrecision(f.Sigmoid):
    @staticmethod
    def backward(ctx, g):
        _, y = ctx.saved_tensors
        grad = g * y * (1 - y)
        return grad if y.dtype == torch.float64 else grad / 2  # a loss scale undone twice


class LayerNormFastPath(f.LayerNorm):
    @staticmethod
    def backward(ctx, g):
        if g.dtype == torch.float64:
            return f.LayerNorm.backward(ctx, g)
        xhat, rstd, w = ctx.saved_tensors
        gy = g * w
        dx = rstd * (gy - gy.mean(-1, keepdim=True))  # the fast kernel drops - xhat * mean(gy * xhat)
        return dx, (g * xhat).sum(f.lead(g)), g.sum(f.lead(g)), None


class RMSNormFastPath(f.RMSNorm):
    @staticmethod
    def backward(ctx, g):
        if g.dtype == torch.float64:
            return f.RMSNorm.backward(ctx, g)
        xhat, rrms, w = ctx.saved_tensors
        return rrms * g * w, (g * xhat).sum(f.lead(g)), None  # drops the projection term


# --- masked attention ---------------------------------------------------------------------------------------
class CausalAttentionWrongDim(fl.Attention):
    @staticmethod
    def backward(ctx, g):
        q, k, v, p, _ = ctx.saved_tensors
        dp = g @ v.transpose(-1, -2)
        ds = p * (dp - (dp * p).sum(-2, keepdim=True))  # the softmax was over -1
        return ds @ k * ctx.scale, ds.transpose(-1, -2) @ q * ctx.scale, p.transpose(-1, -2) @ g, None


class CausalAttentionUnmasked(fl.Attention):
    @staticmethod
    def backward(ctx, g):
        q, k, v, _, _ = ctx.saved_tensors
        p = torch.softmax(q @ k.transpose(-1, -2) * ctx.scale, -1)  # recomputed without the mask
        dp = g @ v.transpose(-1, -2)
        ds = p * (dp - (dp * p).sum(-1, keepdim=True))
        return ds @ k * ctx.scale, ds.transpose(-1, -2) @ q * ctx.scale, p.transpose(-1, -2) @ g, None


_LOW = ("float32", "bfloat16")


def _attention(cls, causal):
    return lambda q, k, v: cls.apply(q, k, v, causal)


BUGS = (  # (name, kind, twin, fn, dtypes it is wrong in)
    ("matmul_missing_transpose", "missing_transpose", "matmul", MatmulMissingTranspose.apply),
    ("linear_missing_transpose", "missing_transpose", "linear", LinearMissingTranspose.apply),
    ("softmax_wrong_dim", "wrong_reduction_dim", "softmax", SoftmaxWrongDim.apply),
    ("layer_norm_wrong_dim", "wrong_reduction_dim", "layer_norm", LayerNormWrongDim.apply),
    ("attention_missing_scale", "missing_inv_sqrt_d", "attention", _attention(AttentionMissingScale, False)),
    ("causal_attention_missing_scale", "missing_inv_sqrt_d", "causal_attention",
     _attention(AttentionMissingScale, True)),
    ("mse_missing_mean", "missing_inv_n", "mse", MSEMissingMean.apply),
    ("nll_missing_mean", "missing_inv_n", "log_softmax_nll", lambda x: NLLMissingMean.apply(x, f.NLL_TARGET)),
    ("tanh_sign", "sign", "tanh", TanhSign.apply),
    ("huber_sign", "sign", "huber", HuberSign.apply),
    ("sigmoid_input_for_output", "output_for_input", "sigmoid", SigmoidInputForOutput.apply),
    ("tanh_input_for_output", "output_for_input", "tanh", TanhInputForOutput.apply),
    ("gelu_output_for_input", "output_for_input", "gelu_tanh", GeluOutputForInput.apply),
    ("cumsum_off_by_one", "one_off", "cumsum", CumsumOffByOne.apply),
    ("embedding_bag_skips_last", "one_off", "embedding_bag_sum",
     lambda w: EmbeddingBagSkipsLast.apply(w, fl.BAG_INDEX, fl.BAG_OFFSETS)),
    ("conv1d_skips_first_tap", "one_off", "conv1d_unfold", Conv1dSkipsFirstTap.apply),
    ("matmul_last_row_missing", "one_off", "matmul", MatmulLastRowMissing.apply),
    ("leaky_relu_negatives", "negatives_only", "leaky_relu", LeakyReLUNegatives.apply),
    ("silu_negatives", "negatives_only", "silu", SiLUNegatives.apply),
    ("layer_norm_no_bias_grad", "missing_input_grad", "layer_norm", LayerNormNoBiasGrad.apply),
    ("linear_no_bias_grad", "missing_input_grad", "linear", LinearNoBiasGrad.apply),
    ("solve_no_matrix_grad", "missing_input_grad", "linear_solve", SolveNoMatrixGrad.apply),
    ("silu_ignores_grad_output", "grad_output_ignored", "silu", SiLUIgnoresGradOutput.apply),
    ("gelu_ignores_grad_output", "grad_output_ignored", "gelu_tanh", GeluIgnoresGradOutput.apply),
    ("softplus_first_grad_output", "grad_output_misscaled", "softplus", SoftplusFirstGradOutput.apply),
    ("mse_mean_twice", "grad_output_misscaled", "mse", MSEMeanTwice.apply),
    ("sigmoid_halved_low_precision", "low_precision_only", "sigmoid", SigmoidHalvedLowPrecision.apply, _LOW),
    ("layer_norm_fast_path", "low_precision_only", "layer_norm", LayerNormFastPath.apply, _LOW),
    ("rms_norm_fast_path", "low_precision_only", "rms_norm", RMSNormFastPath.apply, _LOW),
    ("causal_attention_wrong_dim", "masked_attention", "causal_attention", _attention(CausalAttentionWrongDim, True)),
    ("causal_attention_unmasked", "masked_attention", "causal_attention", _attention(CausalAttentionUnmasked, True)),
)
