"""check_layers checks every module that does work of its own, not only leaves (issue 35, item 4).

A custom ``torch.autograd.Function`` applied inline in a module with children (an attention
between its ``qkv`` and ``proj`` Linears, an activation between a block's convolutions) was
never checked: check_layers said "Every module's gradient is right" while
``gradlab.gradcheck(model, x, wrt="parameters")`` failed. Now a module whose own forward does
differentiable work between its children's calls (gradlab.layers.record: the autograd nodes
its call creates outside its children's calls) is checked whole, and the answer names the
innermost failing module: a parent whose children pass while it fails is wrong in its own code.

The models: a causal-masked attention (hand-written forward and backward, masked_fill(-inf)
and softmax inside; the wrong one forgets the 1/sqrt(d) scale in its backward), a 2-layer
GPT-like stack (d = 32, 4 heads, LayerNorm, an MLP with a hand-written GELU applied inline)
and a small CNN with a hand-written swish between a block's convolutions. All in float64.
"""

from __future__ import annotations

import functools
import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import gradlab
from gradlab.errors import LimitError
from gradlab.limits import LIMITS

#: Sizes of the GPT-like stack.
VOCAB, D, HEADS, LAYERS, T = 16, 32, 4, 2, 6


# --- hand-written Functions: right and wrong --------------------------------------------------

def _attention_forward(ctx, q, k, v):
    """softmax(q kᵀ / sqrt(d), causal mask of -inf above the diagonal) v, over (B, H, T, d)."""
    s = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    mask = torch.ones(s.shape[-2:], dtype=torch.bool).triu(1)
    p = torch.softmax(s.masked_fill(mask, float("-inf")), -1)
    ctx.save_for_backward(q, k, v, p)
    return p @ v


def _attention_backward(ctx, g, scaled: bool):
    q, k, v, p = ctx.saved_tensors
    gp = g @ v.transpose(-2, -1)
    gs = p * (gp - (gp * p).sum(-1, keepdim=True))  # softmax's backward; masked entries have p = 0
    if scaled:
        gs = gs / math.sqrt(q.shape[-1])
    return gs @ k, gs.transpose(-2, -1) @ q, p.transpose(-2, -1) @ g


class CausalAttentionFn(torch.autograd.Function):
    forward = staticmethod(_attention_forward)

    @staticmethod
    def backward(ctx, g):
        return _attention_backward(ctx, g, scaled=True)


class AttnNoScale(torch.autograd.Function):
    """The issue's reproducer: its backward forgets the 1/sqrt(d) of the scores."""

    forward = staticmethod(_attention_forward)

    @staticmethod
    def backward(ctx, g):
        return _attention_backward(ctx, g, scaled=False)


_C = math.sqrt(2 / math.pi)


def _gelu_forward(ctx, x):
    ctx.save_for_backward(x)
    return 0.5 * x * (1 + torch.tanh(_C * (x + 0.044715 * x ** 3)))


def _gelu_backward(ctx, g, product_rule: bool):
    (x,) = ctx.saved_tensors
    t = torch.tanh(_C * (x + 0.044715 * x ** 3))
    d = 0.5 * (1 + t)
    if product_rule:
        d = d + 0.5 * x * (1 - t * t) * _C * (1 + 3 * 0.044715 * x ** 2)
    return g * d


class TanhGelu(torch.autograd.Function):
    forward = staticmethod(_gelu_forward)

    @staticmethod
    def backward(ctx, g):
        return _gelu_backward(ctx, g, product_rule=True)


class GeluNoProduct(torch.autograd.Function):
    """A GELU whose backward forgets the product rule (the tanh's own derivative)."""

    forward = staticmethod(_gelu_forward)

    @staticmethod
    def backward(ctx, g):
        return _gelu_backward(ctx, g, product_rule=False)


class InlineSwish(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * torch.sigmoid(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(x)
        return g * s * (1 + x * (1 - s))


class SwishNoProduct(InlineSwish):
    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * torch.sigmoid(x)


class LayerNormFn(torch.autograd.Function):
    """LayerNorm over the last dimension, hand-written; ``sign=-1`` flips the sign of the
    x̂·mean(g·x̂) term of the input's gradient (the issue's 'LayerNorm sign error')."""

    @staticmethod
    def forward(ctx, x, w, b, sign):
        mu = x.mean(-1, keepdim=True)
        sigma = torch.sqrt(x.var(-1, unbiased=False, keepdim=True) + 1e-5)
        xhat = (x - mu) / sigma
        ctx.save_for_backward(xhat, sigma, w)
        ctx.sign = sign
        return xhat * w + b

    @staticmethod
    def backward(ctx, g):
        xhat, sigma, w = ctx.saved_tensors
        gx = g * w
        dx = (gx - gx.mean(-1, keepdim=True) - ctx.sign * xhat * (gx * xhat).mean(-1, keepdim=True)) / sigma
        dims = tuple(range(g.dim() - 1))
        return dx, (g * xhat).sum(dims), g.sum(dims), None


class HandLayerNorm(nn.Module):
    """A fresh LayerNorm (w = 1, b = 0) through LayerNormFn: a leaf returning a Function's output."""

    def __init__(self, d: int, sign: int = 1):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.bias = nn.Parameter(torch.zeros(d))
        self.sign = sign

    def forward(self, x):
        return LayerNormFn.apply(x, self.weight, self.bias, self.sign)


# --- the models -------------------------------------------------------------------------------

class CausalSelfAttention(nn.Module):
    """Child Linears qkv and proj; the attention itself is a Function applied inline between them."""

    def __init__(self, d: int = D, heads: int = HEADS, function=CausalAttentionFn):
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.heads, self.function = heads, function

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in self.qkv(x).split(c, -1))
        y = self.function.apply(q, k, v)
        return self.proj(y.transpose(1, 2).reshape(b, t, c))


class MLP(nn.Module):
    def __init__(self, d: int = D, activation=TanhGelu):
        super().__init__()
        self.fc = nn.Linear(d, 4 * d)
        self.proj = nn.Linear(4 * d, d)
        self.activation = activation

    def forward(self, x):
        return self.proj(self.activation.apply(self.fc(x)))


class Block(nn.Module):
    def __init__(self, attention=CausalAttentionFn, activation=TanhGelu, d: int = D, heads: int = HEADS):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = CausalSelfAttention(d, heads, function=attention)
        self.mlp = MLP(d, activation=activation)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    """Token and position embeddings, LAYERS blocks, a final LayerNorm and the head."""

    def __init__(self, attention=(CausalAttentionFn,) * LAYERS, activation=(TanhGelu,) * LAYERS, ln_f=None,
                 d: int = D, heads: int = HEADS):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, d)
        self.pos = nn.Parameter(0.1 * torch.randn(T, d))
        self.blocks = nn.ModuleList(Block(a, g, d, heads) for a, g in zip(attention, activation))
        self.ln_f = ln_f if ln_f is not None else nn.LayerNorm(d)
        self.head = nn.Linear(d, VOCAB)

    def forward(self, idx):
        x = self.tok(idx) + self.pos[: idx.shape[1]]
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


class ConvBlock(nn.Module):
    """Two convolutions, a hand-written swish applied inline between them, a residual add."""

    def __init__(self, channels: int = 4, activation=InlineSwish):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)
        self.activation = activation

    def forward(self, x):
        return x + self.conv2(self.activation.apply(self.conv1(x)))


class SmallCNN(nn.Module):
    def __init__(self, activation=InlineSwish):
        super().__init__()
        self.stem = nn.Conv2d(1, 4, 3, padding=1)
        self.block = ConvBlock(activation=activation)
        self.head = nn.Linear(4 * 3 * 3, 3)

    def forward(self, x):
        return self.head(F.avg_pool2d(self.block(self.stem(x)), 2).flatten(1))


def _seeded(build, seed: int = 0) -> nn.Module:
    torch.manual_seed(seed)
    return build().double()


def _x(*shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(1), dtype=torch.float64)


def _tokens() -> torch.Tensor:
    return torch.randint(0, VOCAB, (2, T), generator=torch.Generator().manual_seed(1))


#: The reproducer's attention: small, so that its tests stay in the fast tier.
SMALL, SMALL_HEADS = 8, 2


def _attention_model(function) -> nn.Module:
    return _seeded(lambda: nn.Sequential(nn.Linear(SMALL, SMALL),
                                         CausalSelfAttention(SMALL, SMALL_HEADS, function=function)))


# --- the reproducer ---------------------------------------------------------------------------

def test_a_right_inline_attention_function_passes():
    r = gradlab.check_layers(_attention_model(CausalAttentionFn), _x(2, T, SMALL))
    assert r.verdict == "pass" and r.failing_modules == ()
    (attention,) = {(row.module, row.kind, row.own_code, row.functions) for row in r.rows if row.own_code}
    assert attention == ("1", "CausalSelfAttention", True, "CausalAttentionFn")
    # checked whole over its parameters and its input, beside its two Linears and the first one
    assert [(row.module, row.over) for row in r.rows if row.module.startswith("1")] == [
        ("1", "parameters"), ("1", "inputs"), ("1.qkv", "parameters"), ("1.qkv", "inputs"),
        ("1.proj", "parameters"), ("1.proj", "inputs")]


def test_a_wrong_inline_attention_function_names_its_module_though_its_children_pass():
    model, x = _attention_model(AttnNoScale), _x(2, T, SMALL)
    assert gradlab.gradcheck(model, x, wrt="parameters").verdict == "fail"  # the issue: this failed, layers passed
    r = gradlab.check_layers(model, x)
    assert r.verdict == "fail" and r.failing_modules == ("1",) and r.failing_through == ()
    assert r.answer.startswith("1 (CausalSelfAttention, applying AttnNoScale, a custom autograd.Function): "
                               "wrong gradient with respect to its ")
    assert "in its own code between its children (they pass); every other module passes." in r.answer
    assert all(row.verdict == "pass" for row in r.rows if row.module != "1")


def test_the_attention_alone_as_the_model_is_named_the_model():
    r = gradlab.check_layers(_seeded(lambda: CausalSelfAttention(SMALL, SMALL_HEADS, AttnNoScale)),
                             _x(2, T, SMALL))
    assert r.failing_modules == ("",)
    assert r.answer.startswith("the model (CausalSelfAttention, applying AttnNoScale, a custom autograd.Function)")


# --- the GPT-like stack -----------------------------------------------------------------------

@pytest.mark.slow
def test_a_right_gpt_passes_with_every_module_doing_its_own_work_checked():
    r = gradlab.check_layers(_seeded(GPT), _tokens())
    assert r.verdict == "pass" and r.failing_modules == () and r.failing_through == ()
    own = {row.module for row in r.rows if row.own_code}
    # the model (its embeddings' add), the blocks (their residual adds), their attentions and MLPs
    # (their Functions); the ModuleList is a container, called by nobody: no row
    assert own == {"", "blocks.0", "blocks.0.attn", "blocks.0.mlp", "blocks.1", "blocks.1.attn", "blocks.1.mlp"}
    assert "blocks" not in r.modules
    assert {row.functions for row in r.rows if row.module.endswith(("attn", "mlp"))} == {"CausalAttentionFn",
                                                                                         "TanhGelu"}


@pytest.mark.slow
@pytest.mark.timeout(900)  # 40-130 s of CPU each on 2 cores (three failing Functions the most): the suite's
# 300 s default would end them on a busy machine, not a failure of theirs
@pytest.mark.parametrize("attention, activation, named", [
    ((CausalAttentionFn, AttnNoScale), (TanhGelu, TanhGelu), ("blocks.1.attn",)),
    ((AttnNoScale, CausalAttentionFn), (TanhGelu, GeluNoProduct), ("blocks.0.attn", "blocks.1.mlp")),
    ((AttnNoScale, AttnNoScale), (GeluNoProduct, TanhGelu), ("blocks.0.attn", "blocks.0.mlp", "blocks.1.attn")),
], ids=["one-attention", "attention-and-mlp", "three"])
def test_a_gpt_names_each_planted_function(attention, activation, named):
    model = _seeded(lambda: GPT(attention, activation))
    r = gradlab.check_layers(model, _tokens())
    assert r.verdict == "fail" and r.failing_modules == named
    # the blocks holding them, and the model, are not checked whole: they would fail through them
    holding = {"", *(m.rsplit(".", 1)[0] for m in named)}
    assert set(r.failing_through) == holding
    assert all(row.held and row.note.startswith("not checked whole: ") for row in r.rows if row.module in holding)
    planted = "AttnNoScale" if named[0].endswith("attn") else "GeluNoProduct"
    assert r.answer.startswith(f"{named[0]} ({'CausalSelfAttention' if planted == 'AttnNoScale' else 'MLP'}, "
                               f"applying {planted}, a custom autograd.Function): wrong gradient")
    assert "in its own code between its children (they pass); " in r.answer
    assert f"which hold {'it' if len(named) == 1 else 'them'}, are not checked whole" in r.answer
    # every module neither planted nor holding a planted one passes
    assert all(row.verdict == "pass" for row in r.rows if row.module not in (*named, *holding))


@functools.cache
def _layernorm_sign_error():
    # one block, small: the model's failing check names an element among all its parameters
    model = _seeded(lambda: GPT((CausalAttentionFn,), (TanhGelu,), HandLayerNorm(SMALL, sign=-1), SMALL, SMALL_HEADS))
    return gradlab.check_layers(model, _tokens())


@pytest.mark.slow
def test_a_layernorm_sign_error_at_a_fresh_ln_f_is_no_longer_every_module_right():
    # the model is checked whole (a parameter of its own, and its own add), where the head's
    # gradient reaching ln_f is not constant: the sign error shows, so the answer is no longer
    # "every module's gradient is right"
    r = _layernorm_sign_error()
    assert r.verdict == "fail" and not r.answer.startswith("Every module")


@pytest.mark.slow
def test_a_layernorm_sign_error_at_a_fresh_ln_f_is_named_at_ln_f():
    # ln_f's own check weights its outputs by random values (gradcheck's default grad_outputs): the
    # gradient reaching x̂ is not constant, so the sign-flipped x̂·mean(g·x̂) term shows at ln_f itself
    assert _layernorm_sign_error().failing_modules == ("ln_f",)


def test_a_right_hand_written_layernorm_passes_in_the_model():
    model = _seeded(lambda: GPT((CausalAttentionFn,), (TanhGelu,), HandLayerNorm(SMALL), SMALL, SMALL_HEADS))
    r = gradlab.check_layers(model, _tokens())
    assert r.verdict == "pass"


# --- a masked softmax as a child module: its input holds -inf ------------------------------------

class SoftmaxFn(torch.autograd.Function):
    """softmax over the last dimension, hand-written; the wrong one forgets the Jacobian's
    off-diagonal part (p·g instead of p·(g - Σ g·p))."""

    @staticmethod
    def forward(ctx, s, right):
        p = torch.softmax(s, -1)
        ctx.save_for_backward(p)
        ctx.right = right
        return p

    @staticmethod
    def backward(ctx, g):
        (p,) = ctx.saved_tensors
        return (p * (g - (g * p).sum(-1, keepdim=True)) if ctx.right else p * g), None


class HandSoftmax(nn.Module):
    def __init__(self, right: bool = True):
        super().__init__()
        self.right = right

    def forward(self, s):
        return SoftmaxFn.apply(s, self.right)


class MaskedAttention(nn.Module):
    """The causal mask filled in inline (-inf above the diagonal), the softmax a child leaf:
    that leaf is checked at scores holding -inf."""

    def __init__(self, right: bool = True):
        super().__init__()
        self.qkv = nn.Linear(SMALL, 3 * SMALL)
        self.proj = nn.Linear(SMALL, SMALL)
        self.softmax = HandSoftmax(right)

    def forward(self, x):
        q, k, v = self.qkv(x).split(x.shape[-1], -1)
        s = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
        s = s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool).triu(1), float("-inf"))
        return self.proj(self.softmax(s) @ v)


@functools.cache
def _masked(right: bool):
    return gradlab.check_layers(_seeded(lambda: MaskedAttention(right)), _x(2, T, SMALL))


def test_a_right_masked_softmax_child_is_no_false_alarm():
    r = _masked(True)
    assert r.failing_modules == () and "fail" not in {row.verdict for row in r.rows}
    assert all(row.verdict == "pass" for row in r.rows if row.module != "softmax")


def test_a_right_masked_softmax_child_passes():
    """The softmax's -inf inputs (the causal mask) are skipped, not perturbed (issue 35, item 3)."""
    assert _masked(True).verdict == "pass"


def test_a_wrong_masked_softmax_child_fails_the_attention():
    r = _masked(False)
    # the softmax's -inf inputs are skipped, so its own check decides: it is named, and the
    # attention holding it is not checked whole
    assert r.verdict == "fail" and r.failing_modules == ("softmax",)


def test_a_wrong_masked_softmax_child_is_named():
    assert _masked(False).failing_modules == ("softmax",)


# --- the CNN ----------------------------------------------------------------------------------

def test_a_right_cnn_with_an_inline_function_passes():
    r = gradlab.check_layers(_seeded(SmallCNN), _x(2, 1, 6, 6))
    assert r.verdict == "pass" and r.failing_modules == ()
    assert {(row.module, row.functions) for row in r.rows if row.own_code} == {("", ""), ("block", "InlineSwish")}


def test_a_wrong_cnn_names_the_block_holding_its_function():
    model, x = _seeded(lambda: SmallCNN(SwishNoProduct)), _x(2, 1, 6, 6)
    r = gradlab.check_layers(model, x)
    assert r.failing_modules == ("block",) and r.failing_through == ("",)
    assert r.answer.startswith("block (ConvBlock, applying SwishNoProduct, a custom autograd.Function): "
                               "wrong gradient with respect to its ")
    assert ("in its own code between its children (they pass); the model, which holds it, "
            "is not checked whole; every other module passes. At ") in r.answer
    (held,) = {row.note for row in r.rows if row.module == ""}
    assert held == "not checked whole: block inside it fails, and a check of it would run that backward again"


# --- what is not checked, and the limit ----------------------------------------------------------

class _Reshaping(nn.Module):
    """Calls its children and only reshapes between them: a container."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3)
        self.layers = nn.ModuleList([nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 2)])

    def forward(self, x):
        x = self.conv(x).flatten(1).view(x.shape[0], -1)
        for layer in self.layers:
            x = layer(x)
        return x.unsqueeze(0).transpose(0, 1).squeeze(1)


def test_a_module_that_only_calls_its_children_and_reshapes_is_not_checked_itself():
    r = gradlab.check_layers(_seeded(_Reshaping), _x(3, 1, 4, 4))
    assert r.modules == ("conv", "layers.0", "layers.1", "layers.2") and r.verdict == "pass"
    assert not any(row.own_code for row in r.rows)


class _Residual(nn.Module):
    def __init__(self):
        super().__init__()
        self.f = nn.Tanh()

    def forward(self, x):
        return x + self.f(x)


def test_own_code_checks_count_toward_the_limit_on_module_checks():
    # half the limit's blocks: their leaves alone fit, with the blocks' own adds they do not
    blocks = LIMITS.layer_checks // 2 + 1
    with pytest.raises(LimitError, match="module checks"):
        gradlab.check_layers(nn.Sequential(*[_Residual() for _ in range(blocks)]), _x(2, 2))
    r = gradlab.check_layers(nn.Sequential(*[_Residual() for _ in range(3)]), _x(2, 2))
    assert r.modules == ("0", "0.f", "1", "1.f", "2", "2.f") and r.verdict == "pass"


def test_the_table_figure_and_html_show_parent_modules_by_their_names():
    r = gradlab.check_layers(_seeded(lambda: SmallCNN(SwishNoProduct)), _x(2, 1, 6, 6))
    table = r.table
    own = table[table["own code"]]
    assert list(own["module"]) == ["", "", "block", "block"]
    assert list(own["verdict"]) == ["skipped", "skipped", "fail", "fail"]
    assert set(own["functions"]) == {"", "SwishNoProduct"}
    labels = [label for trace in r.figure().data for label in trace.y]
    assert {"block ConvBlock · parameters", "block ConvBlock · inputs", "block.conv1 Conv2d · inputs",
            "model SmallCNN · parameters"} <= set(labels), labels
    html = r._repr_html_()
    assert "block (ConvBlock, applying SwishNoProduct" in html


class _Cell(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, h, x):
        return torch.tanh(self.lin(h) + x)


class _Recurrent(nn.Module):
    """A cell called once per step, and arithmetic of its own at every step."""

    def __init__(self):
        super().__init__()
        self.cell = _Cell()

    def forward(self, xs):
        h = torch.zeros(xs.shape[1], 4, dtype=xs.dtype)
        for x in xs:
            h = 0.5 * self.cell(h, x)
        return h


def test_reading_each_calls_own_code_stays_linear_in_the_forward_pass():
    # a module's own nodes are told from its nested calls' by a binary search over their spans:
    # a scan of every span for every node was 3.6x the time here (4000 spans, 40000 nodes), growing with the square
    from cost import assert_costs_at_most

    from gradlab.layers.record import record_calls

    model, xs = _seeded(_Recurrent), _x(4000, 2, 4)
    calls = record_calls(model, (xs,), {})
    assert [(c.path, c.own_code) for c in calls[:3]] == [("", True), ("cell", True), ("cell.lin", False)]
    assert_costs_at_most(lambda: record_calls(model, (xs,), {}), 400, "recording a 4000-step loop", tries=2)
