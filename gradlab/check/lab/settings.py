"""The Grad check page's and CLI's settings (``CheckSettings``, ``parse_shape``) and ``run_check``.

A ``CheckSettings`` holds everything that defines a check of a built-in model and loss
(:mod:`gradlab.check.lab.builtin_models`) as plain values, checked once when it is made, so
the page can cache on it and a settings object that exists can be run; ``run_check``
builds the model's loss and checks it with :func:`gradlab.check.running.engine.check_gradient`.

>>> s = CheckSettings(shape=(4, 3), dtype="float64", scheme="central", eps=1e-3)
>>> run_check(s).verdict
'pass'
>>> parse_shape("140x120")
(140, 120)
"""

from __future__ import annotations

import math

from dataclasses import dataclass

from gradlab.check.inputs.validation import (GRAD_OUTPUTS, MODES, REDUCTIONS, choose, require_full_check_in_limit,
                                             validated_samples, validated_seed, validated_step)
from gradlab.check.lab.builtin_models import LOSSES, MODELS, build_model_loss
from gradlab.check.running.engine import check_gradient
from gradlab.check.verdicts.results import CheckResult
from gradlab.errors import GradLabError
from gradlab.limits import LIMITS, within_limit
from gradlab.numerics.dtypes import facts, resolve_tolerances
from gradlab.numerics.expressions import parse
from gradlab.numerics.schemes import get_scheme, not_applicable_reason

__all__ = ["CheckSettings", "parse_shape", "run_check"]

_MAX_DIMS = 4


@dataclass(frozen=True)
class CheckSettings:
    """Everything that defines a check, as plain values (hashable, cacheable)."""

    model: str = "affine"
    shape: tuple[int, ...] = (140, 120)
    loss: str = "mse"
    reduction: str = "sum"
    dtype: str = "float32"
    scheme: str = "central"
    eps: float | None = None  # None: the scheme's default step for the dtype
    mode: str = "blocks"  # covers every element; the page's question presets ask for "sampled"
    samples: int = 5  # elements (sampled) or directions (directional)
    seed: int = 0
    numeric_float64: bool = False
    expression: str = "sin(x)"
    # the weights v of the checked loss Σ v_j·y_j: "ones" (the questions' plain sum or mean) or
    # "random" (seeded, gradlab.gradcheck's default); the reduction takes it as for gradcheck
    grad_outputs: str = "ones"
    rtol: float | None = None
    atol: float | None = None

    def __post_init__(self) -> None:
        """Every rule a check's settings must meet, checked once: a CheckSettings that
        exists can be run. Raises GradLabError (LimitError for a limit) with the fix."""
        choose("model", self.model, MODELS)
        choose("loss", self.loss, LOSSES)
        choose("reduction", self.reduction, REDUCTIONS)
        choose("mode", self.mode, MODES)
        choose("grad_outputs", self.grad_outputs, GRAD_OUTPUTS)
        object.__setattr__(self, "dtype", facts(self.dtype).name)
        object.__setattr__(self, "scheme", get_scheme(self.scheme).name)
        object.__setattr__(self, "shape", _valid_shape(self.shape))
        object.__setattr__(self, "eps", validated_step(self.eps))
        validated_samples(self.samples)
        validated_seed(self.seed)
        resolve_tolerances(self.dtype, self.rtol, self.atol)  # names a bad rtol or atol
        if self.model == "expression":
            parse(self.expression)  # raises ExpressionError naming the bad part
        if self.mode == "full":  # the built-in models' output has the input's shape
            require_full_check_in_limit(self.numel, self.numel, self.scheme)
        reason = _complex_step_reason(self)
        if reason:
            raise GradLabError(reason)

    @property
    def numel(self) -> int:
        return math.prod(self.shape)


def parse_shape(text: str) -> tuple[int, ...]:
    """'140x120', '140,120' or '140 × 120' -> (140, 120).

    >>> parse_shape("5")
    (5,)
    """
    parts = str(text).lower().replace("×", "x").replace(",", "x").replace("*", "x").split("x")
    try:
        dims = tuple(int(p.strip()) for p in parts)
    except ValueError:
        raise GradLabError(f"The shape {text!r} is not a list of sizes; write it like 140x120.") from None
    return _valid_shape(dims)


def _valid_shape(shape) -> tuple[int, ...]:
    dims = tuple(int(d) for d in shape)
    if not dims or len(dims) > _MAX_DIMS or any(d < 1 for d in dims):
        raise GradLabError(f"The shape must have 1 to {_MAX_DIMS} sizes, each at least 1; "
                           f"got {dims}. Write it like 140x120.")
    # Python ints: torch.Size.numel() overflows int64 and can wrap to 0 past the limit.
    within_limit("tensor elements", math.prod(dims), LIMITS.tensor_elements)
    return dims


def _complex_step_reason(settings: CheckSettings) -> str | None:
    dtype = "float64" if settings.numeric_float64 else settings.dtype
    expression = parse(settings.expression) if settings.model == "expression" else None
    reason = not_applicable_reason(settings.scheme, dtype, expression)
    if reason is None and get_scheme(settings.scheme).complex_step and settings.loss == "l1":
        reason = "The complex step needs a holomorphic function; the l1 loss uses abs, which is not."
    return reason


def run_check(settings: CheckSettings, progress=None, taylor: bool = True,
              workers: int | None = None) -> CheckResult:
    """Build the settings' model loss and check it; the page and the CLI both call this.

    ``workers``: threads for the finite differences (default LIMITS.check_workers;
    the page passes :data:`gradlab.ui.runtime.CHECK_WORKERS`). The results do not
    depend on it.
    """
    p = build_model_loss(settings)
    return check_gradient(
        p.fn, p.x, mode=settings.mode, samples=settings.samples, seed=settings.seed,
        scheme=settings.scheme, eps=settings.eps, rtol=settings.rtol, atol=settings.atol,
        reduction=settings.reduction, grad_outputs=settings.grad_outputs,
        numeric_float64=settings.numeric_float64, numeric_fn=p.fn64, taylor=taylor,
        progress=progress, workers=workers,
    )

