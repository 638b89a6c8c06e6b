"""``assert_gradients``: a gradient check as a pytest assertion.

A pass returns silently (with the result, for a test that wants to look
closer). Anything else raises ``AssertionError`` whose text is the check
summary's ``text`` (the element, both values, the difference, the hint):

- ``fail``: always raises;
- ``inconclusive`` (the finite difference cannot tell at the tolerance asked)
  and ``not_differentiable`` (a kink at the point checked): raise too, because a
  test should not pass on "cannot tell"; pass ``allow_inconclusive=True`` or
  ``allow_not_differentiable=True`` to accept them.
- a gradient that is zero at every element by construction (a LayerNorm's with
  ``grad_outputs="ones"``: its outputs add up to a constant; a function flat at the
  input) tested nothing: the check says ``inconclusive`` with that reason, so this
  raises too rather than pass silently (``allow_inconclusive=True`` accepts it).

The check weights fn's outputs by seeded random values (gradcheck's default
``grad_outputs="random"``), so a backward that ignores, drops or mis-scales its
incoming gradient fails here even where a sum of the outputs would hide it.

``check_forward=True`` also checks forward-mode AD (JVPs) and ``order=2`` the
second derivatives (double backward); each check must pass on its own.

>>> import torch
>>> assert_gradients(torch.sin, torch.linspace(-1, 1, 4, dtype=torch.float64, requires_grad=True))
>>> assert_gradients(lambda t: t.detach() ** 2 + t, torch.ones(2, dtype=torch.float64, requires_grad=True))
Traceback (most recent call last):
...
AssertionError: Gradient check failed at t[...]: autograd ..., finite difference ...
"""

from __future__ import annotations

from typing import Callable

import torch

__all__ = ["assert_gradients", "assert_layers"]

#: Verdicts a test accepts, and the option that lets each one through.
_ALLOWED_BY = {"inconclusive": "allow_inconclusive", "not_differentiable": "allow_not_differentiable"}


def assert_gradients(fn: Callable, *inputs, allow_inconclusive: bool = False,
                     allow_not_differentiable: bool = False, check_forward: bool = False,
                     order: int = 1, **options) -> None:
    """Raise AssertionError unless ``gradlab.gradcheck(fn, *inputs, **options)`` passes.

    ``options`` are gradcheck's (``mode``, ``eps``, ``rtol``, ``atol``, ...).

    >>> import torch
    >>> x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    >>> assert_gradients(torch.matmul, x, torch.ones(4, 2, dtype=torch.float64), mode="full")
    """
    __tracebackhide__ = True  # pytest shows the caller's line, not this one
    if order not in (1, 2):
        raise ValueError(f"order must be 1 or 2; got {order!r}.")
    allowed = {"pass"}
    allowed |= {"inconclusive"} if allow_inconclusive else set()
    allowed |= {"not_differentiable"} if allow_not_differentiable else set()
    for what, result in _checks(fn, inputs, options, check_forward, order):
        if result.verdict not in allowed:
            raise AssertionError(_message(what, result))


def _message(what: str, result) -> str:
    text = result.summary.text
    option = _ALLOWED_BY.get(result.verdict)
    if option:
        text += f" (verdict {result.verdict}; pass {option}=True to accept it)"
    return text if what == "gradient" else f"[{what}] {text}"


def _checks(fn, inputs, options, check_forward: bool, order: int):
    """(what, CheckResult) of each check asked for: gradcheck runs them all in one call."""
    from gradlab.check import gradcheck

    result = gradcheck(fn, *inputs, check_forward=check_forward, order=order, **options)
    yield "gradient", result.first_order
    if result.forward is not None:
        yield "forward mode", result.forward
    if result.second_order is not None:
        yield "second order", result.second_order


def assert_layers(model, *inputs, allow_inconclusive: bool = False, allow_not_differentiable: bool = False,
                  **options):
    """Raise AssertionError unless every module of ``model`` passes
    ``gradlab.check_layers(model, *inputs, **options)``; the message is the check's answer
    (which module, over what, at which element) and each failing row. Returns the result.

    >>> import torch
    >>> torch.manual_seed(0) and None
    >>> net = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Tanh()).double()
    >>> assert_layers(net, torch.randn(4, 3, dtype=torch.float64)).verdict
    'pass'
    """
    __tracebackhide__ = True
    from gradlab.layers.check import check_layers

    result = check_layers(model, *inputs, **options)
    allowed = {"pass", "skipped"}
    allowed |= {"inconclusive"} if allow_inconclusive else set()
    allowed |= {"not_differentiable"} if allow_not_differentiable else set()
    bad = [r for r in result.rows if r.verdict not in allowed]
    if bad or result.verdict not in allowed:  # also when no module's check ran (all skipped)
        lines = [f"  {r.where} over {r.over}: {r.verdict}" + (f" ({r.note})" if r.note else "") for r in bad]
        hint = "" if all(r.verdict == "fail" for r in bad) else \
            " (pass allow_inconclusive=True or allow_not_differentiable=True to accept those verdicts)"
        raise AssertionError(result.answer + hint + "\n" + "\n".join(lines))
    return result
