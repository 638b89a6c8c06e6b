"""Significant digits of an mpmath number, in time that does not grow with its magnitude.

``mpmath.nstr`` finds the decimal exponent of a number by raising 10 to it:
for ``x**x**x**x**x**x`` at 2, whose derivative is about 2**(2**65536), that
power has a 65,537-bit exponent and the call ran for minutes (holding the
interpreter lock). Numbers that large have no use for their decimal exponent
written out (it alone would be 19,729 digits), so beyond :data:`NSTR_EXPONENT_BITS`
they are written as a power of ten, ``10^(1.9728e+19728)``, computed from the
logarithm in microseconds.

>>> format_mp(mpmath.mpf(1) / 3, 5)
'0.33333'
>>> format_mp(-mpmath.mpf(2) ** (2 ** 70), 5)
'-10^(3.5539e+20)'
"""

from __future__ import annotations

import math

import mpmath

from gradlab.numerics.mp_precision import private_digits

__all__ = ["format_mp", "latex_number", "NSTR_EXPONENT_BITS"]

#: Largest bit length of a binary exponent written out by mpmath.nstr (2**64 bits is about
#: 10**(5.6e18): nstr takes well under a millisecond there, and minutes at 65,537 bits).
NSTR_EXPONENT_BITS = 64


def format_mp(value, digits: int = 20) -> str:
    """``value`` (an mpf, float or int) to ``digits`` significant digits; huge ones as ``10^(L)``.

    An mpf is used as it is: ``mpmath.mpf(v)`` would round it to the global 53 bits first.

    >>> with mpmath.workdps(30):
    ...     third = mpmath.mpf(1) / 3
    >>> format_mp(third, 25)  # every digit kept, not only float64's 16
    '0.3333333333333333333333333'
    """
    v = value if isinstance(value, mpmath.mpf) else mpmath.mpf(value)
    if not v or not mpmath.isfinite(v):
        return mpmath.nstr(v, digits)
    sign, man, exp, bits = v._mpf_
    if int(exp + bits).bit_length() <= NSTR_EXPONENT_BITS:
        return mpmath.nstr(v, digits)
    with private_digits(digits + 5) as ctx:
        # log10|v| = (log2(man) + exp) * log10(2), the big integer exp multiplied once.
        log10 = (ctx.log(ctx.mpf(man), 2) + ctx.mpf(exp)) * ctx.log10(2)
        text = ctx.nstr(log10, digits)
    return f"{'-' if sign else ''}10^({text})"


def latex_number(value, spec: str = ".4g") -> str:
    r"""``value`` formatted by ``spec`` for ``$...$`` (KaTeX): an exponent as a power of ten.

    Written as ``2.98e-08`` inside ``$...$``, a number typesets as the subtraction
    "2.98e − 08"; every number a page puts into LaTeX goes through here instead.

    >>> print(latex_number(2.98023223876953e-08), latex_number(9.5367431640625e-07, ".4g"), sep="; ")
    2.98 \times 10^{-8}; 9.537 \times 10^{-7}
    >>> print(latex_number(-0.0149011611938477, ".9g"), latex_number(1e20, "g"), latex_number(-math.inf), sep="; ")
    -0.0149011612; 1 \times 10^{20}; -\infty
    """
    v = float(value)
    if math.isnan(v):
        return r"\mathrm{NaN}"
    if math.isinf(v):
        return r"\infty" if v > 0 else r"-\infty"
    text = format(v, spec).lower()
    if "e" not in text:
        return text
    mantissa, exponent = text.split("e")
    return rf"{mantissa} \times 10^{{{int(exponent)}}}"
