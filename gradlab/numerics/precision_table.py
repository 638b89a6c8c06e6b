"""One table of every dtype GradLab knows: what its grid is, and what that means for a difference.

Per dtype (native and emulated, in :data:`~gradlab.numerics.dtypes.ALL_DTYPE_NAMES`
order): its width in bits, its precision p (significand bits, the implicit 1
included), machine epsilon ``eps = 2**(1-p)`` (the gap after 1), the unit
round-off ``u = 2**-p = eps/2`` (the largest relative error of rounding one
number), the smallest normal number, the smallest subnormal ``tiny * eps``, the
largest finite number, and the scales of the central difference's best step and
best relative error, ``eps**(1/3)`` and ``eps**(2/3)``.

One theory of the best central difference, everywhere: the error model of
:mod:`gradlab.numerics.schemes` (README, "The mathematics": truncation
``|f'''| h**2 / 6`` and round-off ``u |f| / h``, with ``S = |f| + |x f'|`` in
place of ``|f|`` because the points x ± h are rounded too, plus ``u |f'|`` for
the rounding of a result of size f'). Its minimum is at
``h* = (3 u S / |f'''|)**(1/3) = eps**(1/3) * (3 S / (2 |f'''|))**(1/3)``, where
the relative error is::

    E* / |f'| = (3 u S)**(2/3) |f'''|**(1/3) / (2 |f'|) + u  =  eps**(2/3) * k,
    k = (3/2)**(2/3) / 2 * S**(2/3) |f'''|**(1/3) / |f'|  +  eps**(1/3) / 2

So this table's ``eps**(2/3)`` is the scale (25 % for e4m3, whose eps is 2**-3),
the Explorer's answer says "ε^(2/3) = 25 %, times this f's factor k", and its
best-step table holds ``eps**(2/3) * k`` for f at x (sin at 1 in e4m3: k = 1.48,
37 %). k is of order 1 when |f|, |f'|, |f'''| and x are (0.66 + eps**(1/3)/2 for
exp at 0). :data:`CENTRAL_THEORY` says this under the table.

>>> rows = {r.name: r for r in precision_rows()}
>>> rows["float32"].precision_bits, rows["float32"].unit_roundoff == 2.0 ** -24
(24, True)
>>> rows["float8_e4m3fn"].emulated, rows["float8_e4m3fn"].largest, rows["float8_e4m3fn"].best_central_error
(True, 448.0, 0.25)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import pandas as pd

from gradlab.numerics.dtypes import ALL_DTYPE_NAMES, facts
from gradlab.numerics.ulp import bit_width

__all__ = ["PrecisionRow", "precision_rows", "precision_table", "COLUMNS", "CENTRAL_THEORY",
           "best_error_scale"]


@dataclass(frozen=True)
class PrecisionRow:
    """One dtype's grid in numbers (see the module docstring)."""

    name: str
    bits: int
    precision_bits: int
    eps: float
    unit_roundoff: float
    smallest_normal: float
    smallest_subnormal: float
    largest: float
    best_central_step: float  # eps**(1/3); for f at x, times (3 S / (2 |f'''|))**(1/3)
    best_central_error: float  # eps**(2/3); for f at x, times k
    emulated: bool


#: Column -> heading, in the table's order (the page and the CLI show these).
COLUMNS: dict[str, str] = {
    "name": "dtype", "bits": "bits", "precision_bits": "precision p", "eps": "eps = 2^(1−p)",
    "unit_roundoff": "u = 2^−p", "smallest_normal": "smallest normal",
    "smallest_subnormal": "smallest subnormal", "largest": "largest",
    "best_central_step": "central best step ~ε^(1/3)", "best_central_error": "central best error ~ε^(2/3)",
    "emulated": "emulated",
}

#: What the two central columns mean: the page and the CLI print it under the table.
CENTRAL_THEORY = (
    "Central difference at its best step h* = ε^(1/3) × (3S/(2|f‴|))^(1/3): relative error ε^(2/3) × k, "
    "k = 0.655 · S^(2/3)·|f‴|^(1/3)/|f′| + ε^(1/3)/2, S = |f| + |x·f′| (f's values and x ± h are rounded). "
    "The columns are the scales ε^(1/3) and ε^(2/3); the Explorer's best-step table gives ε^(2/3) × k for "
    "your f and x (sin at 1 in float8_e4m3fn: 25 % × 1.48 = 37 %).")


def best_error_scale(dtype, order: int = 2) -> float:
    """``eps**(p/(p+1))``: the scale of the best relative error of a difference of order p
    (``eps**(2/3)`` central, ``sqrt(eps)`` forward); for f at x it is multiplied by f's factor k.

    >>> best_error_scale("float8_e4m3fn"), best_error_scale("float8_e5m2", order=1)
    (0.25, 0.5)
    """
    return facts(dtype).eps ** (order / (order + 1))


def precision_rows() -> list[PrecisionRow]:
    """One :class:`PrecisionRow` per dtype, native first, then the emulated 8-bit ones."""
    rows = []
    for name in ALL_DTYPE_NAMES:
        info = facts(name)
        p = info.mantissa_bits + 1
        rows.append(PrecisionRow(
            name=name, bits=bit_width(name), precision_bits=p, eps=info.eps, unit_roundoff=2.0 ** -p,
            smallest_normal=info.tiny, smallest_subnormal=info.tiny * info.eps, largest=info.max,
            best_central_step=info.eps ** (1 / 3), best_central_error=best_error_scale(name),
            emulated=info.emulated))
    return rows


def precision_table() -> pd.DataFrame:
    """:func:`precision_rows` as a DataFrame (column names as the fields; headings in :data:`COLUMNS`).

    >>> list(precision_table()["name"])[-2:]
    ['float8_e4m3fn', 'float8_e5m2']
    """
    return pd.DataFrame([asdict(r) for r in precision_rows()], columns=list(COLUMNS))
