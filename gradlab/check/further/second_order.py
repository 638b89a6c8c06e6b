"""Second order: the gradient's own gradient checked against finite differences of the gradient.

As ``torch.autograd.gradcheck``'s ``gradgradcheck`` does: :func:`gradient_function`
turns ``fn`` into ``g(x, w) = ∂⟨w, fn(x)⟩/∂x`` (all checked inputs' gradients,
flattened and concatenated; ``w`` weights over fn's output values, random and seeded
by default, so no summed output hides an error) computed by
``torch.autograd.grad(create_graph=True)``. Then :func:`gradlab.check.running.engine.check_gradient`
checks g over x *and* w with reduction ``none``: autograd's side is a double backward
(a Hessian-vector product uᵀH for x; for w, the first derivative again, through the
backward's own derivative in its grad_output), the numeric side the finite
differences of g, i.e. of fn's first backward. A backward that is right but not
differentiable (built from detached or ``no_grad`` ops) gives autograd a zero
Hessian, so the check fails wherever the true Hessian is not zero, as gradgradcheck
does.

fn takes what a first-order check takes (:mod:`gradlab.check.inputs.arguments`): pass-through
arguments, complex inputs (checked through their real views), and it may return a
tuple, list or dict of tensors, real or complex (:mod:`gradlab.check.inputs.outputs`: a
complex output is its real and imaginary parts, so ⟨w, ·⟩ is a real loss and g is
torch's conjugate-Wirtinger gradient, in real coordinates). Output parts that do not
require grad (indices, masks, detached statistics) are left out, as torch leaves them.

>>> x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)
>>> check_second_order(lambda t: t ** 3, x, mode="full", taylor=False).verdict
'pass'
>>> check_second_order(lambda t: t.max(dim=0), x.reshape(3, 1), mode="full", taylor=False).verdict
'pass'
"""

from __future__ import annotations

import inspect
from typing import Callable, Sequence

import torch

from gradlab.check.inputs.arguments import parse_arguments
from gradlab.check.inputs.outputs import OutputLayout, differentiable_only
from gradlab.check.running.engine import check_gradient
from gradlab.check.running.problem import validated_inputs
from gradlab.check.verdicts.results import CheckResult
from gradlab.errors import GradLabError

__all__ = ["gradient_function", "check_second_order", "checked_call", "named"]

#: The name the first backward's weights carry in a second-order check's table.
WEIGHTS = "grad_outputs"


def checked_call(fn: Callable, inputs, wrt=None, names: Sequence[str] | None = None):
    """(fn of the checked tensors as real tensors, those tensors, their names): the arguments
    read as a first-order check reads them (pass-through values fixed, complex ones as their
    real views), and fn's output parts that do not require grad left out."""
    args = parse_arguments(fn, (inputs,) if isinstance(inputs, torch.Tensor) else tuple(inputs), wrt)
    xs = validated_inputs(args.reals())
    call = differentiable_only(lambda *reals: args.call(fn, reals), xs)
    return call, xs, tuple(names) if names is not None else args.names


def named(fn: Callable, names: Sequence[str]) -> Callable:
    """fn with a signature whose parameters are ``names``, which a check's table reads
    (:func:`gradlab.check.inputs.arguments.parameter_names`); left as it is when a name is no
    Python identifier (``input 0``, ``layers.0.weight``): the table then says ``input k``."""
    if all(n.isidentifier() for n in names):
        fn.__signature__ = inspect.Signature(
            [inspect.Parameter(n, inspect.Parameter.POSITIONAL_ONLY) for n in names])
    return fn


def check_second_order(fn: Callable, inputs: torch.Tensor | Sequence, *, wrt=None,
                       first_grad_outputs: str = "random", seed: int = 0,
                       names: Sequence[str] | None = None, **options) -> CheckResult:
    """The first-order check's verdict on fn's second derivatives (double backward vs FD of the
    gradient).

    ``inputs`` and ``wrt`` are read as :func:`gradlab.check.running.engine.check_gradient` reads them
    (``names`` overrides the checked inputs' names); ``first_grad_outputs`` are the
    weights w of the first backward (``"random"`` or ``"ones"``), checked as the input
    ``grad_outputs``; ``options`` are check_gradient's, with reduction ``none`` and random
    ``grad_outputs`` by default (the u of uᵀH).

    >>> check_second_order(torch.exp, torch.ones(3, dtype=torch.float64), taylor=False).passed
    True
    """
    call, xs, arg_names = checked_call(fn, inputs, wrt, names)
    g, w = gradient_function(call, xs, grad_outputs=first_grad_outputs, seed=seed)
    named(g, (*arg_names, WEIGHTS))  # the table names x's elements as fn does, then w's
    options.setdefault("reduction", "none")
    options.setdefault("grad_outputs", "random")
    return check_gradient(g, [*xs, w], seed=seed, **options)


def gradient_function(fn: Callable, example: Sequence[torch.Tensor], *, grad_outputs: str = "random",
                      seed: int = 0) -> tuple[Callable[..., torch.Tensor], torch.Tensor]:
    """``(g, w)``: ``g(*xs, w)`` is the flat gradient of ⟨w, fn(*xs)⟩ (fn's output values as
    :class:`~gradlab.check.inputs.outputs.OutputLayout` flattens them), differentiable in xs and w
    when they require grad; w is the weights at which the check runs.

    ``example`` (the inputs at which the check runs) fixes w's size; w is ones or seeded
    normal numbers, in the output's dtype.

    >>> x = torch.tensor([1.0, 2.0], dtype=torch.float64)
    >>> g, w = gradient_function(lambda t: t ** 3, [x], grad_outputs="ones")
    >>> g(x, w).tolist()
    [3.0, 12.0]
    """
    with torch.no_grad():
        out = fn(*[t.detach() for t in example])
        layout = OutputLayout.of(out)
        dtype = layout.flatten(out).dtype
    if grad_outputs == "ones":
        w = torch.ones(layout.numel, dtype=torch.float64)
    elif grad_outputs == "random":
        w = torch.randn(layout.numel, generator=torch.Generator().manual_seed(seed + 2), dtype=torch.float64)
    else:
        raise GradLabError(f"Unknown first_grad_outputs {grad_outputs!r}; choose one of: ones, random.")
    count = len(example)

    def g(*args: torch.Tensor) -> torch.Tensor:
        xs, weights = args[:count], args[count]
        differentiable = torch.is_grad_enabled() and any(t.requires_grad for t in args)
        with torch.enable_grad():
            leaves = [t if t.requires_grad else t.detach().requires_grad_(True) for t in xs]
            y = layout.flatten(fn(*leaves))
            grads = [None] * count
            if y.requires_grad:
                # a copy: w may be a slice of the check's flat row at an odd offset, which the
                # backward of a complex output's real view (view_as_complex) cannot take
                grads = torch.autograd.grad(y, leaves, grad_outputs=weights.to(y.dtype, copy=True), allow_unused=True,
                                            create_graph=differentiable)
        flat = torch.cat([(d if d is not None else torch.zeros_like(t)).reshape(-1)
                          for d, t in zip(grads, leaves)])
        if differentiable and not flat.requires_grad:  # a backward autograd cannot differentiate:
            flat = flat + sum((t * 0).sum() for t in (*leaves, weights))  # its derivative is 0 to autograd
        return flat if differentiable else flat.detach()

    return g, w.to(dtype)
