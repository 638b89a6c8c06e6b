"""A check's cost forecast, before its set-up: one timed evaluation of fn at x.

A time-limited caller (the pages and the CLI, through
:func:`gradlab.server.deadline.paced_progress`) projects a check's total time
from its pace, ``elapsed * total / done``; but the first ``done`` is reported
only after the set-up (two autograd passes, the batching strategy chosen for
the real and again for the complex dtype: a dozen evaluations of fn) and the
first chunk. On a 1M-element expression of 20 ``x**sin(x)`` terms that is
16-30 s of one core before the first report. Every checked perturbation needs ``points`` evaluations of fn on a
whole perturbed copy of x (one per moving stencil point), so one evaluation of
fn at x, timed, gives the check's least cost before any of that:

    seconds >= perturbations * points * t(fn at x) / workers

:func:`forecast_check` measures ``t`` (no autograd, torch on one thread, as the
chunks run) and hands that least cost to ``progress.forecast(seconds, detail)`` when
the progress callback has one (``paced_progress``'s does; it raises
LimitError over its limit, which stops the check). A complex-step check is
timed again in the complex dtype each of its perturbations is evaluated in
(several times the real cost), once the real forecast has passed; the costlier
forecast is told again after the set-up (:meth:`CheckForecast.after_setup`),
when the time the set-up took counts too. A callback without ``forecast`` (a
plain function, a library user's) costs nothing: no evaluation is added.

Times are CPU seconds of the evaluating thread: a busy machine stretches the wall
clock, not the work, and the limits count the work. An evaluation shorter than
:data:`TRUSTED_SECONDS` is not used: it may be mostly
per-call overhead (dispatch, Python), which batched chunks share between many
rows, so it would not be a row's least cost.

>>> seen = []
>>> def report(done, total): pass
>>> report.forecast = lambda seconds, detail: seen.append(seconds)
>>> def slow(x):  # computes for 0.06 s of CPU: the forecast counts CPU time, not sleep
...     end = time.thread_time() + 0.06
...     while time.thread_time() < end:
...         pass
...     return x
>>> pace = forecast_check(report, slow, [torch.ones(3)], None, perturbations=1000, points=2, workers=1,
...                       complex_step=False)
>>> seen[0] >= 120  # 1000 perturbations x 2 points x >= 0.06 s
True
"""

from __future__ import annotations

import time
from typing import Callable, Sequence

import torch

from gradlab.check.running.batching import single_threaded_ops
from gradlab.check.running.blocks import BLOCK, block_count, block_size
from gradlab.numerics.dtypes import facts

__all__ = ["forecast_check", "CheckForecast", "TRUSTED_SECONDS", "perturbation_count", "stencil_points"]

#: One evaluation must take at least this long for its time to be a row's least cost (see above).
TRUSTED_SECONDS = 0.05


def stencil_points(scheme) -> int:
    """Evaluations of fn per perturbation: one per moving stencil point (one for the complex step).

    >>> from gradlab.numerics.schemes import get_scheme
    >>> stencil_points(get_scheme("central")), stencil_points(get_scheme("complex_step"))
    (2, 1)
    """
    if scheme.complex_step:
        return 1
    return max(1, sum(c != 0 for c in scheme.offsets))


def perturbation_count(mode: str, numel: int, samples: int, dtype: torch.dtype | None = None) -> tuple[int, str]:
    """How many perturbations a check of ``mode`` evaluates, and what they are: every element
    (full), ``samples`` distinct elements (sampled), ``samples`` directions (directional), one
    direction per block of elements (blocks: of the size for ``dtype`` when given, else the
    float64 size).

    >>> perturbation_count("sampled", 12, 1000)
    (12, 'elements')
    >>> perturbation_count("blocks", 16, 5), perturbation_count("blocks", 16, 5, torch.bfloat16)
    ((2, 'directions'), (8, 'directions'))
    """
    if mode == "full":
        return numel, "elements"
    if mode == "sampled":
        return min(samples, numel), "elements"
    if mode == "blocks":
        return block_count(numel, BLOCK if dtype is None else block_size(dtype)), "directions"
    return samples, "directions"


class CheckForecast:
    """The least cost of a check's perturbations, from timed evaluations, told to ``forecast``."""

    def __init__(self, forecast: Callable[[float, str], None] | None, evaluations_per_worker: int):
        self._forecast = forecast
        self._evaluations = evaluations_per_worker
        self._least: tuple[float, str] | None = None  # (seconds, detail) of the costliest trusted timing

    def timed(self, seconds: float | None, detail: Callable[[float], str]) -> None:
        """One evaluation took ``seconds``: forecast the perturbations' least cost from it."""
        if self._forecast is None or seconds is None or seconds < TRUSTED_SECONDS:
            return
        least = self._evaluations * seconds
        if self._least is None or least > self._least[0]:
            self._least = (least, detail(seconds))
        self._forecast(*self._least)

    def after_setup(self) -> None:
        """Again, once the set-up ran: the time it took counts too (``forecast`` adds the time spent)."""
        if self._forecast is not None and self._least is not None:
            self._forecast(self._least[0], self._least[1] + ", after the set-up")


def forecast_check(progress, fn: Callable, xs: Sequence[torch.Tensor], numeric_dtype: torch.dtype | None, *,
                   perturbations: int, points: int, workers: int, complex_step: bool,
                   unit: str = "elements") -> CheckForecast:
    """Time fn at x and tell ``progress.forecast`` the check's least cost (see the module docstring).

    ``numeric_dtype``: the finite differences' dtype (None: each input's own);
    ``points``: evaluations per perturbation; ``workers``: threads sharing them.
    Raises what ``progress.forecast`` raises; an fn that fails here is left to the
    check, which says why in its own words. The returned :class:`CheckForecast`
    forecasts again after the set-up (:meth:`CheckForecast.after_setup`).
    """
    forecast = getattr(progress, "forecast", None)
    if forecast is None or perturbations < 1:
        return CheckForecast(None, 0)
    evaluations = perturbations * max(1, points)
    pace = CheckForecast(forecast, -(-evaluations // max(1, workers)))
    # copies: an fn that writes to its input changes them, not the check's x (first_call names it)
    real = [t.detach().clone() if numeric_dtype is None else t.detach().to(numeric_dtype, copy=True) for t in xs]
    pace.timed(_timed(fn, real), lambda t: _detail(perturbations, unit, points, workers, t, ""))
    partners = [facts(t.dtype).complex_partner for t in real]
    if complex_step and all(p is not None for p in partners):
        pace.timed(_timed(fn, [t.to(p) for t, p in zip(real, partners)]),
                   lambda t: _detail(perturbations, unit, points, workers, t, " in complex numbers"))
    return pace


def _timed(fn: Callable, inputs: list[torch.Tensor]) -> float | None:
    """CPU seconds of one evaluation of fn, as the chunks evaluate it (no autograd, one thread);
    None when fn fails (the check reports that itself). CPU time of this thread: a busy
    machine stretches the wall clock, not the work, and the limits count the work."""
    start = time.thread_time()
    try:
        with torch.no_grad(), single_threaded_ops():
            fn(*inputs)
    except Exception:  # noqa: BLE001 - any failure: no forecast, the check names it
        return None
    return time.thread_time() - start


def _detail(perturbations: int, unit: str, points: int, workers: int, seconds: float, how: str) -> str:
    """What the forecast is made of, for the sentence that stops the check.

    >>> print(_detail(1000, "elements", 1, 1, 0.8123, " in complex numbers"))
    1,000 elements x 1 evaluation of the function on the whole input; one evaluation in complex numbers took 0.81 s
    """
    shared = f", shared by {workers} threads" if workers > 1 else ""
    return (f"{perturbations:,} {unit} x {points} evaluation{'s' if points != 1 else ''} of the function "
            f"on the whole input{shared}; one evaluation{how} took {seconds:.2f} s")
