"""Second order: the gradient's own gradient checked against finite differences of the gradient.

As ``torch.autograd.gradgradcheck`` does: :func:`gradient_function` turns ``fn``
into ``g(x) = ∂⟨w, fn(x)⟩/∂x`` (all checked inputs' gradients, flattened and
concatenated; ``w`` fixed random weights, seeded, so no summed output hides an
error) computed by ``torch.autograd.grad(create_graph=True)``. Then
:func:`gradlab.check.api.gradcheck` checks g with reduction ``none``: autograd's
side is a Hessian-vector product uᵀH (double backward), the numeric side the
finite differences of g, i.e. of fn's first backward. A backward that is right
but not differentiable (built from detached or ``no_grad`` ops) gives autograd a
zero Hessian, so the check fails wherever the true Hessian is not zero, as
gradgradcheck does.

>>> x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)
>>> check_second_order(lambda t: t ** 3, x, mode="full", taylor=False).verdict
'pass'
"""

from __future__ import annotations

from typing import Callable, Sequence

import torch

from gradlab.check.api import gradcheck
from gradlab.check.results import CheckResult
from gradlab.errors import GradLabError

__all__ = ["gradient_function", "check_second_order"]


def check_second_order(fn: Callable, inputs: torch.Tensor | Sequence[torch.Tensor], *,
                       first_grad_outputs: str = "random", seed: int = 0, **options) -> CheckResult:
    """gradcheck's verdict on fn's second derivatives (Hessian-vector products vs FD of the gradient).

    ``first_grad_outputs`` are the weights w of the first backward (``"random"``
    or ``"ones"``); ``options`` are gradcheck's, with reduction ``none`` and
    random ``grad_outputs`` by default (the u of uᵀH). The result's values are
    labelled by the input element perturbed, as in a first-order check.

    >>> check_second_order(torch.exp, torch.ones(3, dtype=torch.float64), taylor=False).passed
    True
    """
    xs = [inputs] if isinstance(inputs, torch.Tensor) else list(inputs)
    g = gradient_function(fn, xs, grad_outputs=first_grad_outputs, seed=seed)
    options.setdefault("reduction", "none")
    options.setdefault("grad_outputs", "random")
    return gradcheck(g, xs, seed=seed, **options)


def gradient_function(fn: Callable, example: Sequence[torch.Tensor], *, grad_outputs: str = "random",
                      seed: int = 0) -> Callable[..., torch.Tensor]:
    """``g(*xs)``: the flat gradient of ⟨w, fn(*xs)⟩, differentiable when the xs require grad.

    ``example`` (the inputs at which the check runs) fixes w's shape; w is
    float64 ones or seeded normal numbers, cast to the output's dtype per call.

    >>> x = torch.tensor([1.0, 2.0], dtype=torch.float64)
    >>> gradient_function(lambda t: t ** 3, [x], grad_outputs="ones")(x).tolist()
    [3.0, 12.0]
    """
    with torch.no_grad():
        shape = _output(fn(*[t.detach() for t in example])).shape
    if grad_outputs == "ones":
        w = torch.ones(shape, dtype=torch.float64)
    elif grad_outputs == "random":
        w = torch.randn(shape, generator=torch.Generator().manual_seed(seed + 2), dtype=torch.float64)
    else:
        raise GradLabError(f"Unknown first_grad_outputs {grad_outputs!r}; choose one of: ones, random.")

    def g(*xs: torch.Tensor) -> torch.Tensor:
        differentiable = torch.is_grad_enabled() and any(t.requires_grad for t in xs)
        with torch.enable_grad():
            leaves = [t if t.requires_grad else t.detach().requires_grad_(True) for t in xs]
            y = _output(fn(*leaves))
            grads = torch.autograd.grad(y, leaves, grad_outputs=w.to(y.dtype), allow_unused=True,
                                        create_graph=differentiable)
        flat = torch.cat([(d if d is not None else torch.zeros_like(t)).reshape(-1)
                          for d, t in zip(grads, leaves)])
        if differentiable and not flat.requires_grad:  # a backward autograd cannot differentiate:
            flat = flat + sum((t * 0).sum() for t in leaves)  # its Hessian is 0 to autograd
        return flat if differentiable else flat.detach()

    return g


def _output(y) -> torch.Tensor:
    if not isinstance(y, torch.Tensor) or not y.is_floating_point():
        raise GradLabError("A second-order check needs fn to return one real floating-point tensor.")
    return y
