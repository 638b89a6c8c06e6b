"""The Grid page's x, bit by bit: click a bit to flip it, and x becomes the float those bits hold.

One row of pills per field (sign, exponent, fraction), each pill one bit showing its digit, the
1s selected. A click sets the page's x (``st.session_state["x"]``, the point-x URL control) to
:func:`gradlab.numerics.ulp.from_bits` of the new pattern, and the page reruns: the answer, the
chart's grid, the step taken and the neighbours move with it. A pattern that holds no finite
number (an all-ones exponent: inf or NaN) is refused in words, and x stays.
"""

from __future__ import annotations

import math

import streamlit as st

from gradlab.labs.grid.representable import GridPoint, grid_around
from gradlab.numerics.ulp import from_bits

__all__ = ["bit_editor", "FIELDS"]

FIELDS = ("sign", "exponent", "fraction")
_REFUSED = "_gl_bits_refused"


def _key(field: str, bits: str) -> str:
    # the pattern is in the key: a new x draws new pills, selected as its bits are
    return f"gl-bits-{field}-{bits.replace(' ', '')}"


def _label(digits: str, i: int) -> str:
    """Bit ``i``'s digit; zero-width spaces make each label unique (a pill's value is read back by
    its label, so sixteen "1"s would be one)."""
    return digits[i] + "\u200b" * i


def _flip(bits: str, dtype: str, x_key: str) -> None:
    """``on_change``: the pattern the pills now hold, as the page's x (or a refusal)."""
    fields = bits.split(" ")
    chosen = []
    for field, digits in zip(FIELDS, fields):
        on = set(st.session_state.get(_key(field, bits)) or ())
        chosen.append("".join("1" if i in on else "0" for i in range(len(digits))))
    value = from_bits(" ".join(chosen), dtype)
    if not math.isfinite(value):
        st.session_state[_REFUSED] = (f"Those bits hold {value} (an exponent of all ones), not a number x can be: "
                                      "x stays.")
        return
    st.session_state[x_key] = value


def bit_editor(point: GridPoint, dtype: str, x_key: str = "x") -> None:
    """x's bits as pills to click (see the module docstring), its value and its two neighbours."""
    with st.container(key="gl-bit-editor"):
        st.markdown(f"**x's {len(point.bits.replace(' ', ''))} bits in {dtype}**: click one to flip it.")
        for field, digits in zip(FIELDS, point.bits.split(" ")):  # a row each: a long fraction wraps
            st.pills(field, list(range(len(digits))), selection_mode="multi",
                     default=[i for i, d in enumerate(digits) if d == "1"],
                     format_func=lambda i, d=digits: _label(d, i), key=_key(field, point.bits),
                     on_change=_flip, args=(point.bits, dtype, x_key))
        below, _, above = grid_around(point.value, dtype, 1)
        st.caption(f"x = {point.value!r} ({point.hex}); its neighbours in {dtype}: {below!r} and {above!r}, "
                   f"1 ulp = {point.ulp:.3g} apart.")
        if _REFUSED in st.session_state:
            st.warning(st.session_state.pop(_REFUSED))
