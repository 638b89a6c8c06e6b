"""One table of every dtype GradLab knows: what its grid is, and what that means for a difference.

Per dtype (native and emulated, in :data:`~gradlab.numerics.dtypes.ALL_DTYPE_NAMES`
order): its width in bits, its precision p (significand bits, the implicit 1
included), machine epsilon ``eps = 2**(1-p)`` (the gap after 1), the unit
round-off ``u = 2**-p = eps/2`` (the largest relative error of rounding one
number), the smallest normal number, the smallest subnormal ``tiny * eps``, the
largest finite number, and the central difference's best step ``~u**(1/3)`` and
best relative error ``~u**(2/3)`` (for |f|, |f'|, |f'''| of order 1).

>>> rows = {r.name: r for r in precision_rows()}
>>> rows["float32"].precision_bits, rows["float32"].unit_roundoff == 2.0 ** -24
(24, True)
>>> rows["float8_e4m3fn"].emulated, rows["float8_e4m3fn"].largest
(True, 448.0)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import pandas as pd

from gradlab.numerics.dtypes import ALL_DTYPE_NAMES, facts
from gradlab.numerics.ulp import bit_width

__all__ = ["PrecisionRow", "precision_rows", "precision_table", "COLUMNS"]


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
    best_central_step: float
    best_central_error: float
    emulated: bool


#: Column -> heading, in the table's order (the page and the CLI show these).
COLUMNS: dict[str, str] = {
    "name": "dtype", "bits": "bits", "precision_bits": "precision p", "eps": "eps = 2^(1−p)",
    "unit_roundoff": "u = 2^−p", "smallest_normal": "smallest normal",
    "smallest_subnormal": "smallest subnormal", "largest": "largest",
    "best_central_step": "central best step ~u^(1/3)", "best_central_error": "central best error ~u^(2/3)",
    "emulated": "emulated",
}


def precision_rows() -> list[PrecisionRow]:
    """One :class:`PrecisionRow` per dtype, native first, then the emulated 8-bit ones."""
    rows = []
    for name in ALL_DTYPE_NAMES:
        info = facts(name)
        p = info.mantissa_bits + 1
        u = 2.0 ** -p
        rows.append(PrecisionRow(
            name=name, bits=bit_width(name), precision_bits=p, eps=info.eps, unit_roundoff=u,
            smallest_normal=info.tiny, smallest_subnormal=info.tiny * info.eps, largest=info.max,
            best_central_step=u ** (1 / 3), best_central_error=u ** (2 / 3), emulated=info.emulated))
    return rows


def precision_table() -> pd.DataFrame:
    """:func:`precision_rows` as a DataFrame (column names as the fields; headings in :data:`COLUMNS`).

    >>> list(precision_table()["name"])[-2:]
    ['float8_e4m3fn', 'float8_e5m2']
    """
    return pd.DataFrame([asdict(r) for r in precision_rows()], columns=list(COLUMNS))
