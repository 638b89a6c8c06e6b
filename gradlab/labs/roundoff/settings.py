"""What the Round-off lab compares, in which dtype, on which seeded random inputs.

>>> sample_inputs(RoundoffSettings(samples=4, dtype="float64")).shape
torch.Size([4])
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import torch

from gradlab.errors import GradLabError
from gradlab.limits import LIMITS, within_limit
from gradlab.numerics.dtypes import facts

__all__ = ["DISTRIBUTIONS", "RoundoffSettings", "sample_inputs"]

DISTRIBUTIONS: tuple[str, ...] = ("normal", "uniform", "log-uniform")


@dataclass(frozen=True)
class RoundoffSettings:
    """What to compare, in which dtype, on which random inputs (plain values, cache-friendly).

    ``normal`` draws mean (low+high)/2 and standard deviation (high-low)/2, so the
    default [-1, 1] is the question's ``np.random.randn()``; ``log-uniform`` draws
    positive x with log x uniform in [log low, log high].
    """

    formula_a: str = "autograd"
    formula_b: str = "-1/x**2"
    dtype: str = "float32"
    distribution: str = "normal"
    low: float = -1.0
    high: float = 1.0
    samples: int = 10_000
    seed: int = 0

    def validated(self) -> "RoundoffSettings":
        """The same settings with the dtype name normalised; raise GradLabError for misuse."""
        name = facts(self.dtype).name
        if self.distribution not in DISTRIBUTIONS:
            raise GradLabError(
                f"Unknown distribution {self.distribution!r}; choose one of {', '.join(DISTRIBUTIONS)}."
            )
        if not (math.isfinite(self.low) and math.isfinite(self.high) and self.low < self.high):
            raise GradLabError(
                f"The range needs two finite numbers with low < high; got [{self.low:g}, {self.high:g}]."
            )
        if self.distribution == "log-uniform" and self.low <= 0:
            raise GradLabError(
                f"A log-uniform range must be positive; got low = {self.low:g}. Use e.g. [1e-6, 1]."
            )
        if int(self.samples) < 1:
            raise GradLabError(f"At least one sample is needed; got {self.samples}.")
        within_limit("samples", int(self.samples), LIMITS.roundoff_samples)
        if int(self.seed) < 0:
            raise GradLabError(f"The seed must be a whole number >= 0; got {self.seed}.")
        return replace(self, dtype=name, samples=int(self.samples), seed=int(self.seed))


def sample_inputs(settings: RoundoffSettings) -> torch.Tensor:
    """The seeded random inputs, rounded to the dtype.

    >>> sample_inputs(RoundoffSettings(samples=3, dtype="float16")).dtype
    torch.float16
    """
    s = settings.validated()
    gen = torch.Generator().manual_seed(s.seed)
    # Draw in float64, then round once to the dtype, so every dtype sees the same x.
    if s.distribution == "normal":
        raw = torch.randn(s.samples, generator=gen, dtype=torch.float64) * (s.high - s.low) / 2 + (s.low + s.high) / 2
    elif s.distribution == "uniform":
        raw = torch.rand(s.samples, generator=gen, dtype=torch.float64) * (s.high - s.low) + s.low
    else:
        lo, hi = math.log(s.low), math.log(s.high)
        raw = torch.exp(torch.rand(s.samples, generator=gen, dtype=torch.float64) * (hi - lo) + lo)
    return raw.to(facts(s.dtype).torch_dtype)
