"""The options of a gradient check and the one place their values are validated.

:func:`gradlab.check.api.gradcheck` and :class:`gradlab.check.lab.settings.CheckSettings`
both call these, so the page, the CLI and a Python caller see the same sentence
for the same mistake (a ``GradLabError``, or a ``LimitError`` for a limit). A ``validated_*``
function returns the value it accepts; a ``require_*`` one returns nothing and raises.

>>> choose("mode", "full", MODES)
'full'
>>> validated_step(1e-3), validated_step(None)
(0.001, None)
>>> require_full_check_in_limit(100, 100, "central")
>>> full_check_work(100, 100)
'200 evaluations of the function on all 100 elements (2e+04 element-operations)'
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

from gradlab.errors import GradLabError, LimitError
from gradlab.limits import LIMITS, within_limit
from gradlab.numerics.schemes import Scheme, get_scheme

__all__ = ["MODES", "REDUCTIONS", "GRAD_OUTPUTS", "choose", "require_callable", "validated_step", "validated_samples",
           "validated_seed", "require_valid_options", "resolve_workers", "full_check_work", "require_full_check_in_limit"]

#: The first is the default: it covers every element (gradlab.check.running.blocks).
MODES = ("blocks", "sampled", "full", "directional")
#: The first is the default of gradlab.gradcheck: the loss is the sum of fn's outputs, each
#: weighted by grad_outputs (gradlab.check.running.problem), so "sum" with "ones" is the plain sum.
REDUCTIONS = ("sum", "mean", "none")
#: The first is the default of gradlab.gradcheck (and so of assert_gradients and check_layers):
#: seeded random weights; the CLI and the Grad check page keep "ones", their questions' plain sum.
GRAD_OUTPUTS = ("random", "ones")


def choose(name: str, value: str, options: Sequence[str]) -> str:
    """``value`` when it is one of ``options``, else a GradLabError listing them."""
    if value not in options:
        raise GradLabError(f"Unknown {name} {value!r}; choose one of: {', '.join(options)}.")
    return value


def require_callable(fn, name: str = "fn") -> None:
    """Refuse an ``fn`` (or ``numeric_fn``) that cannot be called, in one sentence.

    >>> require_callable(42)
    Traceback (most recent call last):
    ...
    gradlab.errors.GradLabError: fn must be callable: a function or an nn.Module that takes the inputs; got int 42. ...
    """
    if callable(fn):
        return
    shown = repr(fn)
    shown = shown if len(shown) <= 40 else shown[:37] + "..."
    first = ("Pass the function first and its inputs after it: gradcheck(fn, x, ...)." if name == "fn" else
             f"{name} is fn's float64 twin, taking the same arguments, or None.")
    raise GradLabError(f"{name} must be callable: a function or an nn.Module that takes the inputs; got "
                       f"{type(fn).__name__} {shown}. {first}")


def validated_step(eps) -> float | None:
    """A positive finite step as a float, or None (the scheme's default step)."""
    if eps is None:
        return None
    if isinstance(eps, bool) or not (isinstance(eps, (int, float)) and math.isfinite(eps) and eps > 0):
        raise GradLabError(f"The step eps must be a positive finite number; got {eps!r}.")
    return float(eps)


def validated_samples(samples) -> int:
    """A whole number of elements or directions, at least 1."""
    if isinstance(samples, bool) or not (isinstance(samples, int) and samples >= 1):
        raise GradLabError(f"samples must be a whole number >= 1; got {samples!r}.")
    return samples


def validated_seed(seed) -> int:
    """A whole number from 0 to 2**63 - 1 (what torch's generators take).

    >>> validated_seed(7)
    7
    """
    if isinstance(seed, bool) or not (isinstance(seed, int) and 0 <= seed < 2**63):
        raise GradLabError(f"seed must be a whole number from 0 to 2**63 - 1; got {seed!r}.")
    return seed


def require_valid_options(options: Mapping[str, object]) -> None:
    """Refuse, in gradcheck's own sentence, a ``seed``, ``samples``, ``eps``, ``mode`` or
    ``reduction`` among ``options`` that a check would refuse (a caller running many checks
    with the same options refuses them once, before the first).

    >>> require_valid_options({"mode": "full", "seed": 3})
    >>> require_valid_options({"samples": 0})
    Traceback (most recent call last):
    ...
    gradlab.errors.GradLabError: samples must be a whole number >= 1; got 0.
    """
    checks = {"seed": validated_seed, "samples": validated_samples, "eps": validated_step,
              "mode": lambda v: choose("mode", v, MODES), "reduction": lambda v: choose("reduction", v, REDUCTIONS)}
    for name, check in checks.items():
        if name in options:
            check(options[name])


def resolve_workers(workers: int | None) -> int:
    """Worker threads for the finite differences: default and at most LIMITS.check_workers."""
    if workers is None:
        return LIMITS.check_workers
    if isinstance(workers, bool) or not (isinstance(workers, int) and workers >= 1):
        raise GradLabError(f"workers must be a whole number >= 1; got {workers!r}.")
    return int(within_limit("check worker threads", workers, LIMITS.check_workers))


def full_check_work(numel: int, output_numel: int, scheme: str | Scheme = "central") -> str:
    """The work a full check of ``numel`` elements costs, in words (for limit messages).

    >>> full_check_work(10, 1, "forward")
    '10 evaluations of the function on all 10 elements (1e+02 element-operations)'
    """
    points = max(1, len([c for c in get_scheme(scheme).offsets if c != 0]))
    evals = numel * points
    return (f"{evals:,} evaluations of the function on all {numel:,} elements "
            f"({evals * max(numel, output_numel):.0e} element-operations)")


def require_full_check_in_limit(numel: int, output_numel: int, scheme: str | Scheme) -> None:
    """Refuse a full check of more than LIMITS.full_check_elements input elements."""
    if numel > LIMITS.full_check_elements:
        raise LimitError(
            f"A full check of {numel:,} elements needs {full_check_work(numel, output_numel, scheme)}; "
            f"GradLab allows full checks of at most {LIMITS.full_check_elements:,} elements "
            "(LIMITS.full_check_elements). Pick mode 'blocks', 'sampled' or 'directional', or a smaller "
            "shape such as 200x300.")
