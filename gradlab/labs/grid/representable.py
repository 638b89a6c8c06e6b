"""Why ``(x + h) - x`` is not ``h``: one finite difference on the dtype's grid of numbers.

A dtype holds only the numbers of its grid: near x they are ``ulp(x)`` apart.
A forward difference ``(f(x+h) - f(x)) / h`` in that dtype takes three
roundings before it divides: ``x + h`` lands on the grid (the step actually
taken is ``(x+h) - x``, a multiple of ulp(x), not h), and ``f(x)`` and
``f(x+h)`` each land on the grid near f(x). When h is small, ``f(x)`` and
``f(x+h)`` share their leading bits; the subtraction cancels those and keeps
only the bits in which they differ, so the quotient can take only a few
values: multiples of ``ulp(f(x)) / step``. :func:`grid_difference` gives every
one of those numbers, with the bits that show it.

>>> r = grid_difference(GridSettings(dtype="float32", x=1.0, h=1e-7, expression="x**2"))
>>> r.step_taken == 2 ** -23  # h = 1e-7 rounds to the nearest grid point above 1: one ulp(1)
True
>>> r.kept_bits, r.secant == (r.fx_plus_h.value - r.fx.value) / r.step_taken
(2, True)

Kept bits never exceed the precision p: at x = 0 nothing cancels (f(0) = 0) and the difference is
f(h), all p of its bits.

>>> grid_difference(GridSettings(dtype="float64", x=0.0, h=1e-4, expression="sin(x)")).kept_bits
53
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from functools import cached_property
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Iterator

import torch

from gradlab.errors import GradLabError, LimitError
from gradlab.numerics.dtypes import facts
from gradlab.numerics.emulation import emulated, to_dtype
from gradlab.numerics.exact_derivatives import exact_derivatives
from gradlab.numerics.expressions import parse
from gradlab.numerics.ulp import float_bits, float_hex, ulp

__all__ = ["GridSettings", "validated_expression", "GridPoint", "GridDifference", "grid_difference", "grid_differences", "shared_leading_bits",
           "kept_bits", "shared_decimal_digits", "grid_around", "computing_in"]


@dataclass(frozen=True)
class GridSettings:
    """One forward difference: the dtype, the point, the step and the function."""

    dtype: str = "float32"
    x: float = 1.0
    h: float = 1e-4
    expression: str = "sin(x)"

    def __post_init__(self) -> None:
        facts(self.dtype)  # a dtype GradLab knows, or its sentence
        if not (math.isfinite(self.x) and math.isfinite(self.h) and self.h > 0):
            raise GradLabError(f"x must be finite and h a positive finite step; got x={self.x!r}, h={self.h!r}.")


def validated_expression(text: str) -> str:
    """``text`` when it reads as a function of x (:func:`gradlab.numerics.expressions.parse`), else a
    GradLabError saying what to fix: a page checks what was typed before it asks for a view.

    >>> validated_expression("sin(x)")
    'sin(x)'
    """
    parse(text)
    return text


@dataclass(frozen=True)
class GridPoint:
    """A number as the dtype holds it: its value and the grid spacing there; its bit pattern and hex
    are written when read (a slider's frames hold 62 differences and show the bits of one).

    >>> p = GridPoint.of(1.0, "float16")
    >>> p.bits, p.hex, p.ulp
    ('0 01111 0000000000', '0x3c00', 0.0009765625)
    """

    value: float  # the dtype's value, exactly, as a float64
    ulp: float  # spacing of the dtype's numbers at this value
    dtype: str

    @classmethod
    def of(cls, value: float, dtype: str) -> "GridPoint":
        held = _rounded(value, dtype)
        return cls(held, ulp(held, dtype), dtype)

    @cached_property
    def bits(self) -> str:
        """Sign, exponent and fraction bits, space-separated."""
        return float_bits(self.value, self.dtype)

    @cached_property
    def hex(self) -> str:
        """The bit pattern in hex."""
        return float_hex(self.value, self.dtype)


@dataclass(frozen=True)
class GridDifference:
    """Every number of one forward difference in the dtype, next to the exact derivative."""

    settings: GridSettings
    x: GridPoint
    x_plus_h: GridPoint
    step_taken: float  # (x + h) - x as the dtype computes it: a multiple of ulp(x)
    fx: GridPoint
    fx_plus_h: GridPoint
    shared_bits: int  # leading significand bits f(x) and f(x+h) have in common (cancelled)
    kept_bits: int  # significant bits of the exact f(x+h) - f(x) the dtype's result keeps: 0 to p
    precision_bits: int  # significand bits of the dtype (stored fraction + the implicit 1)
    secant: float  # (f(x+h) - f(x)) / step_taken, as the dtype computes it
    tangent: float  # f'(x) exactly (x as the dtype holds it), NaN where it does not exist
    quantum: float  # spacing of the values f(x+h) - f(x) can take, over step_taken (see _resolution)

    @property
    def relative_error(self) -> float:
        """|secant - tangent| / |tangent| (NaN where the tangent is 0 or missing)."""
        if not math.isfinite(self.tangent) or self.tangent == 0:
            return math.nan
        return abs(self.secant - self.tangent) / abs(self.tangent)


def grid_difference(settings: GridSettings, tangent: float | None = None) -> GridDifference:
    """The forward difference of ``settings`` with every rounding it takes (see the module docstring).

    ``tangent``: f'(x) when already known (a slider's frames share the one x), else computed exactly.
    """
    start = _Start.of(settings)
    return start.difference(settings, start.step_to(settings.h), tangent)


def grid_differences(settings: GridSettings, steps, tangent: float | None = None) -> dict[float, GridDifference | str]:
    """:func:`grid_difference` of ``settings`` at each of ``steps`` (its own h aside): each step -> its
    difference, or the sentence saying why it has none. The steps that land x + h on one grid number
    share that difference (all but the smallest steps land on x itself), f(x) is computed once and
    f'(x) at most once. A limit's LimitError ends the whole call: the next step would wait as long.

    >>> found = grid_differences(GridSettings("float32", 1.0, 1.0, "x**2"), [1e-9, 1e-8, 1e-7])
    >>> [found[h].step_taken for h in (1e-9, 1e-8)], found[1e-7] == grid_difference(GridSettings("float32", 1.0, 1e-7, "x**2"))
    ([0.0, 0.0], True)
    """
    try:
        start = _Start.of(settings)
    except GradLabError as err:  # x beyond the dtype: no step has a difference
        return {h: str(err) for h in steps}
    found: dict[float, GridDifference | str] = {}
    landed: dict[float, GridDifference] = {}  # x + h on the grid -> its difference
    ends = start.step_to(list(steps))  # one sum per step, each rounded as alone
    for h, x_plus_h in zip(steps, ends):
        at = replace(settings, h=h)
        known = landed.get(float(x_plus_h))
        if known is not None:
            found[h] = replace(known, settings=at)
            continue
        try:
            found[h] = landed[float(x_plus_h)] = start.difference(at, x_plus_h, tangent)
        except LimitError:
            raise
        except GradLabError as err:
            found[h] = str(err)
            continue
        tangent = found[h].tangent
    return found


@dataclass(frozen=True)
class _Start:
    """What every step at one x shares: x on the grid and f(x), as the dtype computes them."""

    settings: GridSettings
    x: torch.Tensor
    fx: float

    @classmethod
    def of(cls, settings: GridSettings) -> "_Start":
        dtype, info = settings.dtype, facts(settings.dtype)
        x = _tensor(settings.x, dtype)
        if not math.isfinite(float(x)) or abs(settings.x) > info.max:  # torch's fp8 casts saturate
            raise GradLabError(f"x = {settings.x:g} is beyond {dtype}'s largest number ({info.max:g}): "
                               "pick a smaller x.")
        with computing_in(dtype):
            fx = float(parse(settings.expression)(x))
        return cls(settings, x, fx)

    def step_to(self, h) -> torch.Tensor:
        """x + h on the dtype's grid (each of them, for a list of steps)."""
        with computing_in(self.settings.dtype):
            return self.x + _tensor(h, self.settings.dtype)

    @cached_property
    def points(self) -> tuple[GridPoint, GridPoint]:
        """x and f(x) as grid points."""
        return GridPoint.of(float(self.x), self.settings.dtype), GridPoint.of(self.fx, self.settings.dtype)

    def difference(self, settings: GridSettings, x_plus_h: torch.Tensor, tangent: float | None) -> GridDifference:
        """The difference of ``settings`` (this x, any h) whose x + h lands on ``x_plus_h``."""
        dtype, info, x, fx = settings.dtype, facts(settings.dtype), self.x, self.fx
        with computing_in(dtype):
            step = float(x_plus_h - x)
            fxh = float(parse(settings.expression)(x_plus_h))
        if not math.isfinite(step):
            raise GradLabError(f"x + h = {settings.x:g} + {settings.h:g} is beyond {dtype}'s largest number "
                               f"({info.max:g}): pick a smaller x or h.")
        if not (math.isfinite(fx) and math.isfinite(fxh)):
            raise GradLabError(f"f(x) = {settings.expression} is not finite in {dtype} at x = {float(x):g} "
                               f"or x + h (past its largest number, {info.max:g}, or undefined): pick another point.")
        with computing_in(dtype):
            difference = float(_tensor(fxh, dtype) - _tensor(fx, dtype))
            secant = float(_tensor(difference, dtype) / _tensor(step, dtype)) if step else math.nan
        if not math.isfinite(difference):
            raise GradLabError(f"f(x+h) - f(x) = {fxh:g} - ({fx:g}) is beyond {dtype}'s largest number "
                               f"({info.max:g}): pick a smaller h.")
        x_point, fx_point = self.points
        return GridDifference(
            settings=settings, x=x_point, x_plus_h=GridPoint.of(float(x_plus_h), dtype),
            step_taken=step, fx=fx_point, fx_plus_h=GridPoint.of(fxh, dtype),
            shared_bits=shared_leading_bits(fx, fxh, dtype), kept_bits=kept_bits(fx, fxh, dtype),
            precision_bits=info.mantissa_bits + 1, secant=secant,
            tangent=_tangent(settings.expression, float(x)) if tangent is None else tangent,
            quantum=_resolution(fx, fxh, difference, dtype) / step if step else math.inf)


@contextmanager
def computing_in(dtype: str) -> Iterator[None]:
    """torch arithmetic (no gradients) as ``dtype`` does it: native, or an 8-bit format emulated
    (:func:`~gradlab.numerics.emulation.emulated`), overflow as IEEE 754 defines it there too
    (e4m3fn's result past 448 is NaN, not torch's saturated 448: see the emulation module).

    >>> x = to_dtype(7.0, "float8_e4m3fn")
    >>> with computing_in("float8_e4m3fn"):
    ...     past, kept = torch.exp(x), x * 64  # e**7 = 1096.6 overflows; 7 * 64 = 448 is the largest
    >>> float(past), float(kept)
    (nan, 448.0)
    """
    with torch.no_grad(), emulated(dtype):
        yield


def shared_leading_bits(a: float, b: float, dtype: str) -> int:
    """Leading significand bits (the implicit 1 included) two numbers of ``dtype`` share.

    Bits of equal weight: 0 when their signs or grid spacings differ (different binades, or one
    of them 0: the leading bit of one is a 0 of the other); the full precision when they are equal.

    >>> shared_leading_bits(1.0, 1.0 + 2 ** -23, "float32")  # they differ in the last of 24 bits
    23
    >>> shared_leading_bits(1.0, 2.0, "float32"), shared_leading_bits(0.0, 1e-4, "float64")
    (0, 0)
    """
    precision = facts(dtype).mantissa_bits + 1
    a, b = _rounded(a, dtype), _rounded(b, dtype)
    if a == b:
        return precision
    unit = ulp(a, dtype)
    if a == 0 or b == 0 or (a < 0) != (b < 0) or ulp(b, dtype) != unit:
        return 0
    # one spacing: the significands are integers of `precision` bits in units of ulp
    ma, mb = int(abs(a) / unit), int(abs(b) / unit)
    return precision - (ma ^ mb).bit_length()


def shared_decimal_digits(a: str, b: str) -> int:
    """How many leading significant digits two printed numbers share (the digits a subtraction
    cancels); leading zeros do not count.

    >>> shared_decimal_digits("0.84147096", "0.84147102")
    5
    """
    n, significant = 0, False
    for ca, cb in zip(a, b):
        if ca != cb:
            break
        significant = significant or ca in "123456789"
        n += ca.isdigit() and significant
    return n


def grid_around(value: float, dtype: str, count: int = 4) -> list[float]:
    """``count`` grid numbers on each side of ``value`` (rounded to ``dtype``), in order.

    >>> grid_around(1.0, "float16", 1)  # below 1 the spacing halves
    [0.99951171875, 1.0, 1.0009765625]
    """
    t = _tensor(value, dtype)
    below, above = [], []
    lo = hi = t
    for _ in range(count):
        lo, hi = _step(lo, -1, dtype), _step(hi, +1, dtype)
        below.append(float(lo))
        above.append(float(hi))
    return below[::-1] + [float(t)] + above


def _step(t: torch.Tensor, direction: int, dtype: str) -> torch.Tensor:
    """The neighbouring grid number of ``t`` in ``dtype`` (up for +1, down for -1)."""
    info = facts(dtype)
    if info.emulated:  # torch has no nextafter on 8-bit floats: look it up among all 256 of them
        grid = _all_values(dtype)
        value = float(t)
        beyond = grid[grid > value] if direction > 0 else grid[grid < value]
        if beyond.numel() == 0:
            return torch.tensor(math.inf * direction, dtype=t.dtype)
        return (beyond.min() if direction > 0 else beyond.max()).to(t.dtype)
    target = torch.tensor(math.inf * direction, dtype=t.dtype)
    return torch.nextafter(t, target)


def _all_values(dtype: str) -> torch.Tensor:
    """Every finite number of an 8-bit format, as float64 (from all 256 bit patterns)."""
    values = torch.arange(256, dtype=torch.int16).to(torch.uint8).view(facts(dtype).torch_dtype).to(torch.float64)
    return values[torch.isfinite(values)]


def kept_bits(a: float, b: float, dtype: str) -> int:
    """Significant bits of the exact difference ``b - a`` that the dtype's rounded ``b - a`` keeps: 0 to p.

    Two numbers of the dtype are whole multiples of the finer of their two ulps, u, so b - a = k u
    exactly, with bit_length(|k|) significant bits down to u, the last bit the operands hold. The
    result has p bits: it keeps min(bit_length(|k|), p). Cancellation leaves fewer; where nothing
    cancels (one of them 0, opposite signs, far-apart binades) it keeps all p.

    >>> kept_bits(1.0, 1.0 + 2 ** -22, "float32")  # 2 ulps apart: b - a = 0b10 ulps
    2
    >>> kept_bits(0.0, 1e-4, "float64"), kept_bits(-1.0, 1.0, "float16")
    (53, 11)
    """
    precision = facts(dtype).mantissa_bits + 1
    a, b = _rounded(a, dtype), _rounded(b, dtype)
    if not (math.isfinite(a) and math.isfinite(b)):
        raise GradLabError(f"Kept bits need two finite numbers of {dtype}; got {a!r} and {b!r}.")
    unit = Fraction(min(ulp(a, dtype), ulp(b, dtype)))
    k = (Fraction(b) - Fraction(a)) / unit  # exact, and whole: no float division to overflow
    return min(abs(k.numerator).bit_length(), precision)


def _resolution(a: float, b: float, difference: float, dtype: str) -> float:
    """Spacing of the values the computed b - a can take near this one: u (the operands' finer ulp)
    while the result holds the exact difference, its own coarser ulp once it has to round it."""
    return max(min(ulp(a, dtype), ulp(b, dtype)), ulp(difference, dtype))


def _tangent(expression: str, x: float) -> float:
    ref = exact_derivatives(expression, x)
    return float(ref.d1) if ref.defined and ref.d1 is not None else math.nan


def _tensor(value: float, dtype: str) -> torch.Tensor:
    """``value`` on the dtype's grid, in the dtype torch computes in (float32 for an 8-bit one)."""
    return to_dtype(value, dtype)


def _rounded(value: float, dtype: str) -> float:
    return float(_tensor(value, dtype))
