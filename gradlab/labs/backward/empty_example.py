"""The backward question's ``torch.empty`` example (its Example 3), rebuilt so its printout reads the same.

The question ran, in a PyTorch of its time::

    a = torch.empty(1, requires_grad = True, pin_memory=True)   # b and c alike
    y = 3*a + 2*b*b + torch.log(c)
    y.backward(torch.FloatTensor([0.1, 1.0, 0.0001]))

and printed ``tensor([3.3003])``, ``tensor([0.])`` and ``tensor([inf])``. ``y`` has one
entry and the gradient three: that PyTorch broadcast ``y`` to the gradient's shape, so
every ``.grad`` is the sum over the three weights, Σv = 1.1001. Then
``a.grad = 3·Σv = 3.3003`` whatever ``a`` held, ``b.grad = 4·b·Σv = 0`` says ``b = 0``
and ``c.grad = Σv/c = inf`` says ``c = +0``. PyTorch 2 refuses the mismatched shapes;
``y.expand(3).backward(v)`` does what the old one did.

>>> ex = empty_example()
>>> ex.printed
{'a': 'tensor([3.3003])', 'b': 'tensor([0.])', 'c': 'tensor([inf])'}
>>> ex.printed == QUESTION_PRINTOUT
True
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from gradlab.errors import GradLabError

__all__ = ["QUESTION_CODE", "QUESTION_PRINTOUT", "EMPTY_NOTE", "EmptyExample", "empty_example", "EmptyDemo",
           "empty_demo"]

#: The question's Example 3, as it was posted.
QUESTION_CODE = """\
a = torch.empty(1, requires_grad = True, pin_memory=True)
b = torch.empty(1, requires_grad = True, pin_memory=True)
c = torch.empty(1, requires_grad = True, pin_memory=True)
y=3*a + 2*b*b + torch.log(c)
gradients = torch.FloatTensor([0.1, 1.0, 0.0001])
y.backward(gradients)
print(a.grad) # tensor([3.3003])
print(b.grad) # tensor([0.])
print(c.grad) # tensor([inf])"""

#: What it printed, input by input.
QUESTION_PRINTOUT = {"a": "tensor([3.3003])", "b": "tensor([0.])", "c": "tensor([inf])"}

#: The page's explanation; every number in it is checked against :func:`empty_example` by the tests.
EMPTY_NOTE = (
    "torch.empty allocates memory and does not write to it: the values are whatever bytes were there "
    "before (often zeros, sometimes leftovers of an earlier tensor) and can change from run to run. "
    "pin_memory=True changes none of that; it only speeds up copies to a GPU. "
    "The printout tells what the question's tensors held. y has one entry but gradients has three, so "
    "the PyTorch of the time added the three weights: Σv = 0.1 + 1 + 0.0001 = 1.1001. "
    "a.grad = 3·Σv = 3.3003 whatever a held, so a's value cannot be read off; "
    "b.grad = 4·b·Σv = 0 means b was 0; c.grad = Σv/c = inf means c was 0 (and y = log 0 = −inf). "
    "PyTorch 2 refuses the mismatched shapes; GradLab reproduces the old behaviour with "
    "y.expand(3).backward(gradients). The fix: say what you mean with torch.zeros, torch.ones or "
    "torch.tensor([...]), and pass a gradient of y's own shape."
)


@dataclass(frozen=True)
class EmptyExample:
    """The example rebuilt with chosen values of a, b and c, and what PyTorch prints for each ``.grad``."""

    values: dict[str, float]
    weight_sum: float  # Σv in float32: the weight each 1-entry input receives
    grads: dict[str, float]
    printed: dict[str, str]  # str(x.grad), as print() showed it
    y: float

    @property
    def matches_question(self) -> bool:
        """The printout is the question's, character for character."""
        return self.printed == QUESTION_PRINTOUT


def empty_example(a: float = 1.0, b: float = 0.0, c: float = 0.0,
                  v: tuple[float, ...] = (0.1, 1.0, 0.0001)) -> EmptyExample:
    """The question's Example 3 with ``a``, ``b``, ``c`` given instead of ``torch.empty``.

    >>> empty_example(a=-7.0).printed["a"], empty_example(b=1.0).printed["b"]
    ('tensor([3.3003])', 'tensor([4.4004])')
    """
    leaves = {k: torch.tensor([float(x)], requires_grad=True) for k, x in (("a", a), ("b", b), ("c", c))}
    y = 3 * leaves["a"] + 2 * leaves["b"] * leaves["b"] + torch.log(leaves["c"])
    gradients = torch.tensor(v, dtype=torch.float32)
    # The old PyTorch broadcast a 1-entry y to the gradient's shape; expand is that broadcast.
    y.expand(len(v)).backward(gradients)
    return EmptyExample(
        values={k: float(t.detach()) for k, t in leaves.items()},
        weight_sum=float(gradients.sum()),
        grads={k: float(t.grad) for k, t in leaves.items()},
        printed={k: str(t.grad) for k, t in leaves.items()},
        y=float(y.detach()),
    )


@dataclass(frozen=True)
class EmptyDemo:
    """Values torch.empty happened to return (display only) next to torch.zeros."""

    empty_calls: tuple[tuple[float, ...], ...]
    zeros: tuple[float, ...]


def empty_demo(size: int = 3, calls: int = 2) -> EmptyDemo:
    """A few torch.empty results (arbitrary; may even coincide) next to torch.zeros.

    >>> demo = empty_demo()
    >>> demo.zeros, len(demo.empty_calls)
    ((0.0, 0.0, 0.0), 2)
    """
    most = 3
    if not (1 <= size <= most and 1 <= calls <= most):
        raise GradLabError(f"Show between 1 and {most} values from between 1 and {most} calls of torch.empty.")
    # Uninitialised on purpose: whatever the allocator hands back. Never used in a computation.
    seen = tuple(tuple(float(x) for x in torch.empty(size).tolist()) for _ in range(calls))
    return EmptyDemo(empty_calls=seen, zeros=tuple(float(x) for x in torch.zeros(size).tolist()))
