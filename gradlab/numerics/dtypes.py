"""One table of per-dtype facts; every other module takes its constants from here.

Machine epsilon, unit round-off, smallest normal, largest finite value, the
complex partner used by the complex-step scheme, default gradient-check
tolerances (kept as a table, like JAX's ``check_grads``, with a small resolver
that takes overrides), and how the dtype is shown: its label (what widgets show
and the URL carries) and its colour in every figure.

Adding a dtype is one row of :data:`DTYPE_TABLE` (the ``_facts(...)`` calls below),
native or emulated (``emulated=True``: an 8-bit float torch stores but cannot
compute in). Every other name is derived from that table: :data:`DTYPES` and
:data:`DTYPE_NAMES` (the native rows: what the widgets offer by default, and the
pages that compute natively accept), :data:`EMULATED_DTYPES` and
:data:`ALL_DTYPE_NAMES` (native, then emulated: the Explorer and the precision
table); ``DTYPES`` and ``EMULATED_DTYPES`` are live read-only views of it. The
widgets' options and help text (:mod:`gradlab.ui.controls`), the figures'
colours (:mod:`gradlab.figures.style`), the tables and the CLI's choices all read
these. ``tests/test_precision.py`` and ``tests/test_vocabulary.py`` check every
row has every field and a colour that reads on light and dark backgrounds.

>>> list(EMULATED_DTYPES), DTYPE_NAMES
(['float8_e4m3fn', 'float8_e5m2'], ('float16', 'bfloat16', 'float32', 'float64'))

>>> facts("float32").eps
1.1920928955078125e-07
>>> facts(torch.float64).unit_roundoff == facts("float64").eps / 2
True
>>> resolve_tolerances("float32", rtol=1e-1)
(0.1, 1e-05)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import torch

from gradlab.errors import GradLabError

__all__ = [
    "DtypeFacts",
    "DTYPE_TABLE",
    "DTYPES",
    "DTYPE_NAMES",
    "EMULATED_DTYPES",
    "ALL_DTYPE_NAMES",
    "facts",
    "resolve_tolerances",
]


@dataclass(frozen=True)
class DtypeFacts:
    """What GradLab needs to know about one floating-point dtype."""

    name: str
    torch_dtype: torch.dtype
    eps: float  # machine epsilon: gap between 1 and the next representable number
    tiny: float  # smallest positive normal number
    max: float  # largest finite number
    mantissa_bits: int  # stored fraction bits (eps == 2**-mantissa_bits)
    complex_partner: torch.dtype | None  # dtype for the complex step, if torch computes in it
    rtol: float  # default relative tolerance of a gradient check
    atol: float  # default absolute tolerance of a gradient check
    label: str  # what widgets show and the URL carries
    colour: str  # "#rrggbb": this dtype's lines and marks in every figure
    aliases: tuple[str, ...] = ()  # other spellings facts() accepts ("half", "f16")
    # An emulated format (8-bit floats): torch stores and casts it but has no arithmetic on
    # it, so GradLab computes in ``compute`` and rounds every result to it
    # (gradlab.numerics.emulation). Only the Explorer and the precision table offer these.
    emulated: bool = False
    compute: torch.dtype | None = None
    # False for a format without infinities (e4m3fn): torch's cast saturates at ``max`` there,
    # and gradlab.numerics.emulation turns an overflow into NaN, the format's only non-finite value.
    has_inf: bool = True

    @property
    def unit_roundoff(self) -> float:
        """u = eps/2: the largest relative error of one correctly rounded operation."""
        return self.eps / 2

    @property
    def sqrt_eps(self) -> float:
        return self.eps ** 0.5

    @property
    def cbrt_eps(self) -> float:
        return self.eps ** (1 / 3)


def _facts(
    name: str, complex_partner: torch.dtype | None, *, rtol: float, atol: float, colour: str,
    aliases: tuple[str, ...] = (), label: str | None = None, compute: torch.dtype | None = None,
) -> DtypeFacts:
    """One row: the format's numbers come from torch.finfo, the rest is given."""
    dtype = getattr(torch, name)
    info = torch.finfo(dtype)
    return DtypeFacts(
        name=name,
        torch_dtype=dtype,
        eps=float(info.eps),
        tiny=float(info.tiny),
        max=float(info.max),
        mantissa_bits=int(round(-torch.log2(torch.tensor(info.eps, dtype=torch.float64)).item())),
        complex_partner=complex_partner,
        rtol=rtol,
        atol=atol,
        label=name if label is None else label,
        colour=colour,
        aliases=aliases,
        emulated=compute is not None,
        compute=compute,
        has_inf=bool(torch.tensor(float("inf")).to(dtype).float().isinf()),
    )


# Tolerances: a central difference at its best step is good to about eps**(2/3)
# and a forward one to about sqrt(eps), times |f/f'''| or |f/f''|; the table
# leaves room for those factors (JAX uses the same orders of magnitude).
# torch.complex32 exists but has no elementary functions on the CPU, and
# bfloat16 has no complex type at all: neither can take a complex step.
# Colours: saturated mid-tones with contrast >= 3:1 on white and on a dark
# background (WCAG's figure for graphics), also through a projector.
# 8-bit floats (OCP FP8: e4m3 without infinities, and e5m2) are emulated in float32. Their eps
# is 2**-3 and 2**-2: a central difference is off by about eps**(2/3) (25 %, 40 %) times the
# function's factor at best (gradlab.numerics.precision_table).
DTYPE_TABLE: dict[str, DtypeFacts] = {
    f.name: f
    for f in (
        _facts("float16", None, rtol=5e-2, atol=1e-3, colour="#d47500", aliases=("half", "f16")),
        _facts("bfloat16", None, rtol=1e-1, atol=1e-2, colour="#8e44ad", aliases=("bf16",)),
        _facts("float32", torch.complex64, rtol=2e-3, atol=1e-5, colour="#2c6fd6",
               aliases=("float", "f32")),
        _facts("float64", torch.complex128, rtol=1e-5, atol=1e-8, colour="#d1495b",
               aliases=("double", "f64")),
        _facts("float8_e4m3fn", None, rtol=0.5, atol=0.1, colour="#00838f", aliases=("e4m3", "fp8_e4m3"),
               label="float8_e4m3fn (emulated)", compute=torch.float32),
        _facts("float8_e5m2", None, rtol=0.5, atol=0.1, colour="#a0522d", aliases=("e5m2", "fp8_e5m2"),
               label="float8_e5m2 (emulated)", compute=torch.float32),
    )
}


class _Rows(Mapping):
    """A read-only view of the rows of :data:`DTYPE_TABLE` that are (or are not) emulated: a row
    added to the table is in its view at once."""

    def __init__(self, emulated: bool):
        self._emulated = emulated

    def __getitem__(self, name: str) -> DtypeFacts:
        row = DTYPE_TABLE[name]
        if row.emulated != self._emulated:
            raise KeyError(name)
        return row

    def __iter__(self) -> Iterator[str]:
        return (n for n, row in DTYPE_TABLE.items() if row.emulated == self._emulated)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __repr__(self) -> str:
        return f"{'EMULATED_DTYPES' if self._emulated else 'DTYPES'}({list(self)})"


#: The native rows: dtypes torch computes in (what the widgets offer unless told otherwise).
DTYPES: Mapping[str, DtypeFacts] = _Rows(emulated=False)
DTYPE_NAMES: tuple[str, ...] = tuple(DTYPES)

#: The emulated rows (8-bit floats): only the Explorer and the precision table offer these.
EMULATED_DTYPES: Mapping[str, DtypeFacts] = _Rows(emulated=True)

#: Every dtype the Explorer and the precision table offer: the native ones, then the emulated.
ALL_DTYPE_NAMES: tuple[str, ...] = DTYPE_NAMES + tuple(EMULATED_DTYPES)


#: torch dtype -> its name (str(torch.float32) is "torch.float32"; a dtype's name never changes)
_TORCH_NAMES: dict[torch.dtype, str] = {}


def facts(dtype: str | torch.dtype) -> DtypeFacts:
    """Return the facts for a dtype given by name ("float32", "f32") or torch dtype.

    >>> facts("bf16").name
    'bfloat16'
    """
    rows = DTYPE_TABLE
    row = rows.get(dtype) if isinstance(dtype, str) else None  # a row's own name, as a check passes it
    if row is not None:
        return row
    if isinstance(dtype, torch.dtype):
        name = _TORCH_NAMES.get(dtype) or _TORCH_NAMES.setdefault(dtype, str(dtype).removeprefix("torch."))
    else:
        name = str(dtype).strip().lower().removeprefix("torch.")
        name = next((row.name for row in rows.values() if name in row.aliases), name)
    if name not in rows:
        known = ", ".join(rows)
        raise GradLabError(f"Unknown dtype {str(dtype)!r}; GradLab knows: {known}.")
    return rows[name]


def native_facts(dtype: str | torch.dtype, what: str = "This computation") -> DtypeFacts:
    """:func:`facts`, refusing an emulated 8-bit dtype with a sentence (torch has no arithmetic
    on it: only the Explorer and the precision table emulate it).

    >>> native_facts("float32").name
    'float32'
    """
    info = facts(dtype)
    if info.emulated:
        raise GradLabError(f"{what} needs a dtype torch computes in; {info.name} is emulated "
                           "(the Explorer and the precision table only). Pick one of: "
                           f"{', '.join(DTYPE_NAMES)}.")
    return info


def resolve_tolerances(
    dtype: str | torch.dtype, rtol: float | None = None, atol: float | None = None
) -> tuple[float, float]:
    """The dtype's default (rtol, atol), with any given override taking its place.

    >>> resolve_tolerances("float64")
    (1e-05, 1e-08)
    """
    info = facts(dtype)
    for label, value in (("rtol", rtol), ("atol", atol)):
        if value is not None and not (value >= 0 and value < float("inf")):
            raise GradLabError(f"The tolerance {label} must be a finite number >= 0; got {value!r}.")
    return (info.rtol if rtol is None else float(rtol), info.atol if atol is None else float(atol))

