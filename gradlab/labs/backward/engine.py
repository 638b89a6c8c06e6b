"""What ``y.backward(gradient=v)`` computes: vector-Jacobian products, accumulation, retain_graph.

The backward question asks what the ``gradient`` argument of ``backward()`` means, with
``y = 3a + 2b**2 + log(c)`` and ``v = [0.1, 1.0, 0.0001]``. For a vector output
``y`` autograd does not form the Jacobian J; it computes ``v^T J`` directly, the
gradient of the scalar ``sum(v * y)``. Here J is diagonal in each input
(3, 4b, 1/c), so ``a.grad = 3v``, ``b.grad = 4 b v`` and ``c.grad = v / c``.

>>> r = vector_jacobian(VJPSettings())
>>> [round(g, 6) for g in r.grads["a"]]  # 3v, as the question printed
[0.3, 3.0, 0.0003]
>>> r.backward_equals_weighted_sum
True

A Jacobian that is not diagonal (``z = W x``) is in :mod:`gradlab.labs.backward.matrix_vjp`, the
question's ``torch.empty`` example in :mod:`gradlab.labs.backward.empty_example`; their names are
importable from here too.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
import torch

from gradlab.errors import GradLabError
from gradlab.labs.backward.empty_example import (EMPTY_NOTE, QUESTION_CODE, QUESTION_PRINTOUT, EmptyDemo, EmptyExample,
                                        empty_demo, empty_example)
from gradlab.labs.backward.matrix_vjp import (MATRIX_EXAMPLES, ExampleVJPSettings, MatrixExample, MatrixVJP, example_vjp,
                                     matrix_vjp)
from gradlab.limits import LIMITS, within_limit
from gradlab.numerics.dtypes import facts

__all__ = [
    "parse_vector",
    "VJPSettings",
    "VJPResult",
    "vector_jacobian",
    "STEP_CODES",
    "StepRecord",
    "BackwardSession",
    "MatrixExample",
    "MATRIX_EXAMPLES",
    "MatrixVJP",
    "matrix_vjp",
    "ExampleVJPSettings",
    "example_vjp",
    "EmptyDemo",
    "empty_demo",
    "EmptyExample",
    "empty_example",
    "QUESTION_CODE",
    "QUESTION_PRINTOUT",
    "EMPTY_NOTE",
    "SEED_FUNCTION",
]

SEED_FUNCTION = "y = 3*a + 2*b*b + torch.log(c)"
INPUT_NAMES = ("a", "b", "c")


# ---------------------------------------------------------------- vectors typed by a person


def parse_vector(text: str, name: str = "vector") -> tuple[float, ...]:
    """Numbers separated by commas or spaces, optionally in brackets: ``"[1, 2, 3]"``.

    >>> parse_vector("[0.1, 1.0, 1e-4]")
    (0.1, 1.0, 0.0001)
    """
    if not isinstance(text, str):
        raise GradLabError(f"The {name} must be text such as '1, 2, 3'.")
    # Typed text, limited like any other typed text.
    if len(text) > LIMITS.expression_chars:
        raise GradLabError(f"The {name} is {len(text)} characters long; at most {LIMITS.expression_chars} are allowed.")
    parts = [p for p in re.split(r"[,\s]+", text.strip().strip("[]()").strip()) if p]
    if not parts:
        raise GradLabError(f"The {name} is empty; type numbers separated by commas, such as '1, 2, 3'.")
    values = []
    for part in parts:
        try:
            value = float(part)
        except ValueError:
            raise GradLabError(f"'{part}' in the {name} is not a number; type numbers such as '1, 2.5, -3'.") from None
        if not math.isfinite(value):
            raise GradLabError(f"The {name} must hold finite numbers; got '{part}'.")
        values.append(value)
    within_limit(f"entries in the {name}", len(values), LIMITS.backward_vector_entries)
    return tuple(values)


# ---------------------------------------------------------------- the question's function


@dataclass(frozen=True)
class VJPSettings:
    """The question's inputs (defaults) and the gradient vector v; plain values."""

    a: tuple[float, ...] = (1.0, 2.0, 3.0)
    b: tuple[float, ...] = (3.0, 4.0, 5.0)
    c: tuple[float, ...] = (6.0, 7.0, 8.0)
    v: tuple[float, ...] = (0.1, 1.0, 0.0001)
    dtype: str = "float32"

    def validated(self) -> "VJPSettings":
        """Same settings, normalised; GradLabError with the fix for misuse."""
        name = facts(self.dtype).name
        n = len(self.a)
        if n == 0:
            raise GradLabError("The inputs need at least one entry each.")
        within_limit("entries in a, b, c and v", n, LIMITS.backward_vector_entries)
        for label in ("b", "c", "v"):
            if len(getattr(self, label)) != n:
                raise GradLabError(
                    f"a, b, c and v must have the same length (y has one entry per entry of a); "
                    f"a has {n} but {label} has {len(getattr(self, label))}."
                )
        for i, value in enumerate(self.c):
            if value <= 0:
                raise GradLabError(f"log(c) needs every c > 0, but c[{i}] = {value:g}. Use a positive number.")
        return replace(self, dtype=name, **{k: tuple(float(x) for x in getattr(self, k)) for k in ("a", "b", "c", "v")})


def _leaves(s: VJPSettings) -> dict[str, torch.Tensor]:
    dt = facts(s.dtype).torch_dtype
    return {k: torch.tensor(getattr(s, k), dtype=dt, requires_grad=True) for k in INPUT_NAMES}


def _seed_function(t: dict[str, torch.Tensor]) -> torch.Tensor:
    # Written exactly as in the question so that autograd records the same operations.
    return 3 * t["a"] + 2 * t["b"] * t["b"] + torch.log(t["c"])


def _as_tuple(t: torch.Tensor | None) -> tuple[float, ...] | None:
    return None if t is None else tuple(float(x) for x in t.detach().to(torch.float64).tolist())


@dataclass(frozen=True, eq=False)
class VJPResult:
    """The Jacobian, v^T J, and what backward() actually put in .grad.

    ``table`` columns: input, i, value, jacobian (the diagonal entry dy_i/dinput_i),
    v, vjp (v_i times it, from the Jacobian), grad (from y.backward(v)).
    """

    settings: VJPSettings
    y: tuple[float, ...]
    jacobians: dict[str, np.ndarray]  # full J blocks dy/da, dy/db, dy/dc (diagonal)
    vjp: dict[str, tuple[float, ...]]  # v^T J from the Jacobian blocks, in the dtype
    grads: dict[str, tuple[float, ...]]  # from y.backward(v)
    backward_equals_weighted_sum: bool  # y.backward(v) == (v * y).sum().backward(), bit for bit
    table: pd.DataFrame


def vector_jacobian(settings: VJPSettings) -> VJPResult:
    """Run the question's example: Jacobian blocks, v^T J, and ``y.backward(v)``.

    >>> r = vector_jacobian(VJPSettings(a=(1.0,), b=(2.0,), c=(4.0,), v=(1.0,)))
    >>> r.grads["b"], r.grads["c"]
    ((8.0,), (0.25,))
    """
    s = settings.validated()
    dt = facts(s.dtype).torch_dtype
    v = torch.tensor(s.v, dtype=dt)
    t = _leaves(s)
    y = _seed_function(t)
    y.backward(v)
    grads = {k: _as_tuple(t[k].grad) for k in INPUT_NAMES}
    t2 = _leaves(s)
    (v * _seed_function(t2)).sum().backward()
    same = all(torch.equal(t[k].grad, t2[k].grad) for k in INPUT_NAMES)
    values = tuple(t[k].detach() for k in INPUT_NAMES)
    blocks = torch.autograd.functional.jacobian(lambda a, b, c: _seed_function({"a": a, "b": b, "c": c}), values)
    jacobians = {k: blocks[i].to(torch.float64).numpy() for i, k in enumerate(INPUT_NAMES)}
    vjp = {k: _as_tuple(v @ blocks[i]) for i, k in enumerate(INPUT_NAMES)}
    rows = [
        {"input": k, "i": i, "value": getattr(s, k)[i], "jacobian": float(jacobians[k][i, i]),
         "v": s.v[i], "vjp": vjp[k][i], "grad": grads[k][i]}
        for k in INPUT_NAMES for i in range(len(s.a))
    ]
    return VJPResult(s, _as_tuple(y), jacobians, vjp, grads, same, pd.DataFrame(rows))


# ---------------------------------------------------------------- accumulation, step by step


#: What each step code does, and the line of PyTorch it stands for.
STEP_CODES: dict[str, tuple[str, str]] = {
    "b": ("backward", "y.backward(v)"),
    "br": ("backward, keep the graph", "y.backward(v, retain_graph=True)"),
    "bn": ("backward without a gradient", "y.backward()"),
    "z": ("zero the gradients", "a.grad = b.grad = c.grad = None  # optimizer.zero_grad()"),
    "f": ("forward again (a new graph)", SEED_FUNCTION),
}


@dataclass(frozen=True)
class StepRecord:
    """One replayed step: its code, the PyTorch line, the outcome and the .grad values after it."""

    step: str
    code: str
    ok: bool
    message: str  # PyTorch's own error message when the step failed, else a short description
    grads: dict[str, tuple[float, ...] | None] = field(default_factory=dict)
    freed_graph: bool = False  # refused because an earlier backward freed the graph (no retain_graph)


def _run_step(step: str, t: dict[str, torch.Tensor], state: dict, v: torch.Tensor) -> str:
    """Do one step on live tensors; return a description. PyTorch errors propagate."""
    if step == "b":
        state["y"].backward(v)
    elif step == "br":
        state["y"].backward(v, retain_graph=True)
    elif step == "bn":
        state["y"].backward()
    elif step == "z":
        for k in INPUT_NAMES:
            t[k].grad = None
    elif step == "f":
        state["y"] = _seed_function(t)
    return STEP_CODES[step][0]


def _refuse_unknown_step(step: str) -> None:
    if step not in STEP_CODES:
        known = ", ".join(f"{k} ({v[0]})" for k, v in STEP_CODES.items())
        raise GradLabError(f"Unknown step {step!r}; the steps are {known}.")


@dataclass(frozen=True)
class BackwardSession:
    """An immutable list of steps on the question's function, replayed from scratch on fresh tensors.

    The state is plain values, so a page can keep it in ``st.session_state`` or the
    URL (``"br,b,b"``). Replaying is deterministic, and a step PyTorch refuses is
    recorded with PyTorch's real error message instead of raising.

    >>> records = BackwardSession().backward(retain_graph=True).backward().backward().replay()
    >>> [r.ok for r in records]
    [True, True, False]
    >>> [round(g, 6) for g in records[1].grads["a"]]  # accumulated: 3v + 3v
    [0.6, 6.0, 0.0006]
    >>> "second time" in records[2].message, records[2].freed_graph
    (True, True)
    """

    settings: VJPSettings = VJPSettings()
    steps: tuple[str, ...] = ()

    @classmethod
    def from_text(cls, text: str, settings: VJPSettings = VJPSettings()) -> "BackwardSession":
        """Read ``"b,br,z"`` (commas or spaces); refuse unknown steps with the list of known ones.

        >>> BackwardSession.from_text("br, b").steps
        ('br', 'b')
        """
        if len(text) > LIMITS.expression_chars:
            raise GradLabError(f"The list of steps is longer than {LIMITS.expression_chars} characters; start afresh.")
        steps = tuple(p for p in re.split(r"[,\s]+", text.strip().lower()) if p)
        within_limit("backward steps", len(steps), LIMITS.backward_steps)
        for step in steps:
            _refuse_unknown_step(step)
        return cls(settings, steps)

    def to_text(self) -> str:
        return ",".join(self.steps)

    def then(self, step: str) -> "BackwardSession":
        """This session with one more step, given by its code in :data:`STEP_CODES`.

        >>> BackwardSession().then("br").then("z").to_text()
        'br,z'
        """
        _refuse_unknown_step(step)
        within_limit("backward steps", len(self.steps) + 1, LIMITS.backward_steps)
        if len(self.to_text()) + len(step) + 1 > LIMITS.expression_chars:
            raise GradLabError("That is as many steps as one session keeps; zero the gradients and start afresh.")
        return replace(self, steps=self.steps + (step,))

    def backward(self, retain_graph: bool = False) -> "BackwardSession":
        return self.then("br" if retain_graph else "b")

    def backward_without_gradient(self) -> "BackwardSession":
        return self.then("bn")

    def zero_grad(self) -> "BackwardSession":
        return self.then("z")

    def forward(self) -> "BackwardSession":
        return self.then("f")

    def reset(self) -> "BackwardSession":
        return replace(self, steps=())

    def replay(self) -> tuple[StepRecord, ...]:
        """Run every step from scratch on fresh leaves; one record per step."""
        s = self.settings.validated()
        t = _leaves(s)
        v = torch.tensor(s.v, dtype=facts(s.dtype).torch_dtype)
        state = {"y": _seed_function(t)}
        records = []
        for step in self.steps:
            try:
                message, ok = _run_step(step, t, state, v), True
            except RuntimeError as err:  # PyTorch's refusal is the lesson: keep its words
                message, ok = str(err), False
            grads = {k: _as_tuple(t[k].grad) for k in INPUT_NAMES}
            # the one refusal the lesson is about, told once here from PyTorch's words
            freed = not ok and "backward through the graph a second time" in message
            records.append(StepRecord(step, STEP_CODES[step][1], ok, message, grads, freed))
        return tuple(records)

    def grads(self) -> dict[str, tuple[float, ...] | None]:
        """The .grad values after the last step (None where never computed or zeroed)."""
        records = self.replay()
        return records[-1].grads if records else {k: None for k in INPUT_NAMES}
