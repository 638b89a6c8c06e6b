"""Models built from named layers: the layer check's CLI and page build their models here.

A stack is text, one layer per comma: ``linear:16, wrong_swish, layernorm, linear:1``.
Each name is a row of :data:`LAYERS` (what it builds, what it needs, its help), so the CLI's
help, the page's menu and the parser derive from one table. Shapes follow the input:
``linear:N`` maps the last dimension to N; ``conv2d:C`` needs (batch, channels, height,
width) and keeps height and width; ``attention:H`` is self-attention with H heads over
(batch, sequence, features); ``gru:N`` runs over (batch, sequence, features) and returns
its outputs.

Two layers take a text instead of a size: ``expr:x*tanh(x)`` is an elementwise activation
written in GradLab's expression language (parsed, never run as Python), ``fn:sigmoid_tanh`` one
of the function catalogue's (:data:`gradlab.teaching.catalogue.CATALOGUE`), both through
autograd. A comma inside an expression's parentheses does not end the layer.

``wrong_swish`` is GradLab's deliberately wrong layer, for teaching: its forward is
x·sigmoid(x), and its hand-written backward forgets the product rule (it returns
sigmoid(x), the derivative of x·s with s held constant). Everything else is stock
PyTorch (``swish`` is the correct custom one).

>>> model = build_model("linear:4, wrong_swish, layernorm, linear:1", (2, 3), "float64", seed=0)
>>> [type(m).__name__ for m in model]
['Linear', 'WrongSwish', 'LayerNorm', 'Linear']
>>> tuple(model(torch.ones(2, 3, dtype=torch.float64)).shape)
(2, 1)

Every limit is checked from the text and the input's shape alone, before a weight is drawn
(:func:`stack_parameters`): the stack's length, each size, the model's parameters, each
layer's output, attention's scores and a gru's steps.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import torch
from torch import nn

from gradlab.errors import GradLabError, LimitError
from gradlab.limits import LIMITS

__all__ = ["Layer", "LAYERS", "LAYER_NAMES", "parse_stack", "stack_parameters", "build_model", "WrongSwish", "Swish",
           "Expression"]


class _SwishFunction(torch.autograd.Function):
    """x·sigmoid(x) with its backward written by hand: s + x·s·(1 - s)."""

    @staticmethod
    def forward(ctx, x):
        s = torch.sigmoid(x)
        ctx.save_for_backward(x, s)
        return x * s

    @staticmethod
    def backward(ctx, grad):
        x, s = ctx.saved_tensors
        return grad * (s + x * s * (1 - s))


class _WrongSwishFunction(torch.autograd.Function):
    """x·sigmoid(x), whose backward forgets the product rule: it returns sigmoid(x) alone."""

    @staticmethod
    def forward(ctx, x):
        s = torch.sigmoid(x)
        ctx.save_for_backward(s)
        return x * s

    @staticmethod
    def backward(ctx, grad):
        (s,) = ctx.saved_tensors
        return grad * s  # wrong on purpose: d(x·s)/dx = s + x·s·(1 - s)


class Swish(nn.Module):
    """x·sigmoid(x) through a custom autograd.Function with the right backward."""

    def forward(self, x):
        return _SwishFunction.apply(x)


class WrongSwish(nn.Module):
    """x·sigmoid(x) through a custom autograd.Function whose backward is wrong (for teaching)."""

    def forward(self, x):
        return _WrongSwishFunction.apply(x)


class Expression(nn.Module):
    """An elementwise activation from GradLab's expression language (autograd through it)."""

    def __init__(self, text: str):
        super().__init__()
        from gradlab.numerics.expressions import parse

        self.text = text
        self._fn = parse(text)

    def forward(self, x):
        return self._fn(x)

    def extra_repr(self) -> str:
        return self.text


def _catalogue_expression(key: str) -> str:
    from gradlab.teaching.catalogue import CATALOGUE

    if key not in CATALOGUE:
        raise GradLabError(f"fn:{key} is not in the function catalogue: pick one of {', '.join(CATALOGUE)}.")
    return CATALOGUE[key].expression


class _SelfAttention(nn.Module):
    def __init__(self, features: int, heads: int):
        super().__init__()
        self.attention = nn.MultiheadAttention(features, heads, batch_first=True)

    def forward(self, x):
        return self.attention(x, x, x, need_weights=False)[0]


class _GRU(nn.Module):
    def __init__(self, features: int, hidden: int):
        super().__init__()
        self.gru = nn.GRU(features, hidden, batch_first=True)

    def forward(self, x):
        return self.gru(x)[0]


@dataclass(frozen=True)
class Layer:
    """One name of the stack language: how it builds from the input's shape and its number."""

    name: str
    build: Callable[[tuple[int, ...], int | str | None], nn.Module]  # (input shape, N or text) -> module
    needs_number: bool  # takes a size (linear:16)
    shape_after: Callable[[tuple[int, ...], int | None], tuple[int, ...]]
    min_dims: int  # dimensions the input needs (batch included)
    help: str
    needs_text: bool = False  # takes a text (expr:x*tanh(x), fn:sigmoid_tanh)
    # (input shape, N) -> how many parameters the module has (what nn.Module.parameters() holds)
    parameters: Callable[[tuple[int, ...], int | None], int] = lambda shape, n: 0


def _same(shape, n):
    return shape


def _last(shape, n):
    return (*shape[:-1], n)


def _channels(shape, n):
    return (shape[0], n, *shape[2:])


_ACTIVATIONS = {"tanh": nn.Tanh, "relu": nn.ReLU, "gelu": nn.GELU, "sigmoid": nn.Sigmoid, "swish": Swish,
                "wrong_swish": WrongSwish}
_ROWS = (
    Layer("linear", lambda s, n: nn.Linear(s[-1], n), True, _last, 2, "linear:N maps the last dimension to N",
          parameters=lambda s, n: s[-1] * n + n),
    Layer("conv2d", lambda s, n: nn.Conv2d(s[1], n, 3, padding=1), True, _channels, 4,
          "conv2d:C, 3x3 with padding 1, over (batch, channels, height, width)",
          parameters=lambda s, n: s[1] * n * 9 + n),
    Layer("layernorm", lambda s, n: nn.LayerNorm(s[-1]), False, _same, 2, "normalises the last dimension",
          parameters=lambda s, n: 2 * s[-1]),
    Layer("batchnorm", lambda s, n: (nn.BatchNorm2d(s[1]) if len(s) == 4 else nn.BatchNorm1d(s[1])), False,
          _same, 2, "normalises each channel over the batch (training mode: batch statistics)",
          parameters=lambda s, n: 2 * s[1]),
    Layer("attention", lambda s, n: _SelfAttention(s[-1], n), True, _same, 3,
          "attention:H, self-attention with H heads over (batch, sequence, features)",
          parameters=lambda s, n: 4 * s[-1] * s[-1] + 4 * s[-1]),  # in_proj (3F x F, 3F), out_proj (F x F, F)
    Layer("gru", lambda s, n: _GRU(s[-1], n), True, _last, 3, "gru:N, a GRU over (batch, sequence, features)",
          parameters=lambda s, n: 3 * n * (s[-1] + n) + 6 * n),  # weight_ih, weight_hh, two biases
    *(Layer(name, (lambda cls: lambda s, n: cls())(cls), False, _same, 1,
            "x·sigmoid(x) with a deliberately wrong hand-written backward (for teaching)" if name == "wrong_swish"
            else "x·sigmoid(x) with a hand-written backward" if name == "swish" else f"elementwise {name}")
      for name, cls in _ACTIVATIONS.items()),
    Layer("expr", lambda s, text: Expression(text), False, _same, 1,
          "expr:<f(x)>, an elementwise activation in GradLab's expression language, e.g. expr:x*tanh(x)",
          needs_text=True),
    Layer("fn", lambda s, key: Expression(_catalogue_expression(key)), False, _same, 1,
          "fn:<name>, a function of the catalogue as an activation, e.g. fn:sigmoid_tanh", needs_text=True),
)
LAYERS = {layer.name: layer for layer in _ROWS}
LAYER_NAMES = tuple(LAYERS)


def parse_stack(text: str) -> tuple[tuple[str, int | None], ...]:
    """``"linear:16, tanh"`` -> ``(("linear", 16), ("tanh", None))``, refused in one sentence
    when a name is unknown, a number is missing or not a whole number from 1 to
    LIMITS.network_width written in ASCII digits, or the stack is empty, longer than
    LIMITS.expression_chars characters or than LIMITS.network_depth x 4 layers.

    >>> parse_stack("linear:16, tanh, expr:x*tanh(x)")
    (('linear', 16), ('tanh', None), ('expr', 'x*tanh(x)'))
    >>> parse_stack("linear:²")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    gradlab.errors.GradLabError: 'linear:²': the size must be a whole number from 1 to ..., in the digits 0-9.
    """
    if not isinstance(text, str):
        raise GradLabError(f"The stack must be a text such as 'linear:16, tanh, linear:1'; got {type(text).__name__}.")
    if len(text) > LIMITS.expression_chars:
        # the page's text box and a URL are not cut short: a cut stack would read as another one
        raise LimitError(f"The stack is {len(text):,} characters long; GradLab allows at most "
                         f"{LIMITS.expression_chars} (LIMITS.expression_chars). Use fewer layers or shorter "
                         "expressions.")
    parts = [p.strip() for p in _top_level_commas(text) if p.strip()]
    if not parts:
        raise GradLabError("The stack has no layers: name them with commas, e.g. 'linear:16, tanh, linear:1'.")
    if len(parts) > 4 * LIMITS.network_depth:
        raise GradLabError(f"The stack has {len(parts)} layers; at most {4 * LIMITS.network_depth} are allowed.")
    out = []
    for part in parts:
        name, _, number = part.partition(":")
        name = name.strip().lower()
        if name not in LAYERS:
            raise GradLabError(f"Unknown layer {name!r}: the layers are {', '.join(LAYER_NAMES)}.")
        if LAYERS[name].needs_text:
            out.append((name, _activation_text(name, number.strip(), part)))
            continue
        if LAYERS[name].needs_number != bool(number.strip()):
            raise GradLabError(f"{name} {'needs a size, as in ' + name + ':16' if LAYERS[name].needs_number else 'takes no size'}"
                               f" (got {part!r}).")
        n = None
        if number.strip():
            n = _size(number.strip())
            if not 0 < n <= LIMITS.network_width:
                raise GradLabError(f"{part!r}: the size must be a whole number from 1 to {LIMITS.network_width}, "
                                   "in the digits 0-9.")
        out.append((name, n))
    return tuple(out)


def _size(text: str) -> int:
    """The size written in ``text``, or 0 when it is not ASCII digits: ``'²'.isdigit()`` and
    ``'٣'.isdigit()`` are True, and int() refuses the first and reads the second as 3.

    >>> _size("16"), _size("²"), _size("1.5"), _size("9" * 40)
    (16, 0, 0, 0)
    """
    if not (text.isascii() and text.isdigit()) or len(text) > 18:  # 18 digits: no size is that large
        return 0
    return int(text)


def _activation_text(name: str, text: str, part: str) -> str:
    """The text of an ``expr:``/``fn:`` layer, refused in one sentence when it does not parse."""
    if not text:
        raise GradLabError(f"{name} needs a text after the colon, as in {LAYERS[name].help.split(',')[0]} "
                           f"(got {part!r}).")
    expression = _catalogue_expression(text) if name == "fn" else text
    from gradlab.numerics.expressions import parse

    parse(expression)  # refuses in its own words what the expression language cannot read
    return text


def _top_level_commas(text: str) -> list[str]:
    """``text`` cut at the commas outside parentheses (an expression's own commas stay).

    >>> _top_level_commas("linear:4, expr:max(x, 0), tanh")
    ['linear:4', ' expr:max(x, 0)', ' tanh']
    """
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "," and depth <= 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def stack_parameters(stack: str, input_shape: tuple[int, ...]) -> int:
    """How many parameters the stack's model has for inputs of ``input_shape`` (batch first),
    worked out from the text and the shape alone, before any weight is drawn; refused in one
    sentence when a layer cannot take the shape it receives or the model is over a limit
    (:func:`build_model` refuses the same). The limits, each so that one request cannot slow
    the server for everyone:

    - the parameters, all of them, at most LIMITS.tensor_elements: the whole model's check
      perturbs them as one tensor;
    - each layer's output, at most LIMITS.tensor_elements elements: it is the next layer's input;
    - attention's scores, batch x heads x sequence², at most LIMITS.tensor_elements: its work
      and its memory grow as the sequence's square (over 1,048,576 tokens one forward pass
      takes minutes in one C call, which no time limit interrupts);
    - a gru's sequence, at most LIMITS.recurrent_steps steps: it runs them one after another.

    >>> stack_parameters("linear:4, tanh, linear:1", (2, 3))  # 3x4 + 4, then 4x1 + 1
    21
    >>> stack_parameters("attention:1", (1, 1_048_576, 1))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    gradlab.errors.LimitError: Module 0 (attention:1) over sequences of 1,048,576 computes 1,099,511,627,776 ...
    """
    return _walk(parse_stack(stack), tuple(int(n) for n in input_shape))


def _walk(layers, shape: tuple[int, ...]) -> int:
    """The parameter count of ``layers`` on inputs of ``shape``, every limit checked (see
    :func:`stack_parameters`)."""
    limit = LIMITS.tensor_elements
    why = "so that one request cannot slow the server for everyone"
    counts = []
    for k, (name, n) in enumerate(layers):
        layer = LAYERS[name]
        what = f"Module {k} ({name}:{n})" if layer.needs_number else f"Module {k} ({name})"
        if len(shape) < layer.min_dims:
            raise GradLabError(f"{name} needs an input of at least {layer.min_dims} dimensions "
                               f"(batch first); here it gets {len(shape)}: {_shape_text(shape)}.")
        if name == "attention":
            if shape[-1] % n:
                raise GradLabError(f"attention:{n} needs the features ({shape[-1]}) divisible by its {n} heads.")
            batch, sequence = math.prod(shape[:-2]), shape[-2]
            scores = batch * n * sequence ** 2
            if scores > limit:
                longest = math.isqrt(limit // (batch * n))
                heads = f"{n} head{'s' if n > 1 else ''}"
                raise LimitError(
                    f"{what} over sequences of {sequence:,} computes {scores:,} attention scores in each forward "
                    f"pass (batch {batch:,} x {heads} x {sequence:,}²); GradLab allows at most {limit:,} "
                    f"(LIMITS.tensor_elements), {why}. Use a shorter sequence"
                    + (f" (at most {longest:,} here)" if longest else "") + ", a smaller batch or fewer heads.")
        if name == "gru" and shape[-2] > LIMITS.recurrent_steps:
            raise LimitError(
                f"{what} runs over sequences of {shape[-2]:,} steps, one after another; GradLab allows at most "
                f"{LIMITS.recurrent_steps:,} (LIMITS.recurrent_steps), {why}. Use a shorter sequence.")
        counts.append((layer.parameters(shape, n), what))
        after = layer.shape_after(shape, n)
        if math.prod(after) > limit:
            raise LimitError(
                f"{what} would output {math.prod(after):,} elements ({_shape_text(after)}); GradLab allows at most "
                f"{limit:,} in one tensor (LIMITS.tensor_elements), {why}. Use narrower layers or a smaller input.")
        shape = after
    total = sum(c for c, _ in counts)
    if total > limit:
        most, where = max(counts, key=lambda c: c[0])  # the first of the largest
        raise LimitError(
            f"The model has {total:,} parameters, {most:,} of them in {where[:1].lower()}{where[1:]}; GradLab checks "
            f"at most {limit:,} parameters at once (LIMITS.tensor_elements), {why}. Use fewer or narrower layers, "
            "or fewer input features.")
    return total


def _shape_text(shape: tuple[int, ...]) -> str:
    return "x".join(map(str, shape))


def build_model(stack: str, input_shape: tuple[int, ...], dtype: str, seed: int = 0) -> nn.Sequential:
    """The stack as an ``nn.Sequential`` in ``dtype`` for inputs of ``input_shape`` (batch first),
    with weights drawn from ``seed``; a shape a layer cannot take, or a model over a limit
    (:func:`stack_parameters`), is refused in one sentence before any weight is drawn."""
    from gradlab.numerics.dtypes import facts

    layers = parse_stack(stack)
    torch_dtype = facts(dtype).torch_dtype
    shape = tuple(int(n) for n in input_shape)
    _walk(layers, shape)
    modules = []
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        for name, n in layers:
            layer = LAYERS[name]
            modules.append(layer.build(shape, n))
            shape = layer.shape_after(shape, n)
    return nn.Sequential(*modules).to(torch_dtype)
