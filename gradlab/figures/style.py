"""How figures look: dtype colours and scheme dashes from their rows, one palette for the rest.

A dtype's colour lives in its row of :data:`gradlab.numerics.dtypes.DTYPES`, a
scheme's dash and marker in its row of :data:`gradlab.numerics.schemes.SCHEMES`;
the functions here read those rows when a figure is drawn, so a new row is
drawn without touching a figure. Everything else that has a colour (the
reductions of a gradient check, formulas A and B of the Round-off lab, the
shaded regimes, reference lines) takes it from :data:`PALETTE`, by role.

The palette is the app theme's ``chartCategoricalColors``
(``.streamlit/config.toml``; a test checks they agree), and every colour a line
or mark uses meets a contrast of 3:1 on the light and the dark background.

>>> dtype_colour("float32") == DTYPES["float32"].colour
True
>>> scheme_dash("central"), scheme_symbol("central")
('solid', 'circle')
>>> dtype_colour("float8"), scheme_dash("secant")  # unknown: neutral, solid
('#6b7280', 'solid')
>>> HEATMAP_COLOURSCALE[0], HEATMAP_COLOURSCALE[-1]
((0.0, '#3e6db0'), (1.0, '#f0e08a'))
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from gradlab.numerics.dtypes import DTYPES
from gradlab.numerics.schemes import SCHEMES

__all__ = [
    "PALETTE",
    "CATEGORICAL",
    "REDUCTION_COLOURS",
    "FORMULA_A",
    "FORMULA_B",
    "TRUTH",
    "MARK",
    "GUIDE",
    "NEUTRAL",
    "ROUNDOFF_SHADE",
    "TRUNCATION_SHADE",
    "MARKER_OUTLINE",
    "dtype_colour",
    "scheme_dash",
    "scheme_symbol",
    "FONT_SIZE",
    "AXIS_TITLE_SIZE",
    "LINE_WIDTH",
    "MARKER_SIZE",
    "HEATMAP_COLOURS",
    "HEATMAP_COLOURSCALE",
]

#: Colour by role, for everything that is not a dtype.
PALETTE: Mapping[str, str] = MappingProxyType({
    "blue": "#1f5fbf",
    "red": "#d1495b",
    "green": "#2a9d5c",
    "purple": "#8e44ad",
    "orange": "#d47500",
    "neutral": "#6b7280",  # data drawn in no category's colour (the Taylor remainder)
    "guide": "#8a94a6",  # guide and reference lines: quieter than data, still 3:1
})
#: The theme's categorical colours, in the order Streamlit cycles them.
CATEGORICAL: tuple[str, ...] = tuple(PALETTE[r] for r in ("blue", "red", "green", "purple", "orange", "neutral"))

# Roles (what a colour means in a figure) -> palette entries.
REDUCTION_COLOURS: Mapping[str, str] = MappingProxyType(
    {"sum": PALETTE["blue"], "mean": PALETTE["red"], "none": PALETTE["green"]})
FORMULA_A, FORMULA_B = PALETTE["blue"], PALETTE["red"]  # the Round-off lab's two formulas
TRUTH = PALETTE["green"]  # the exact value, a correctly rounded result, the predicted best step
MARK = PALETTE["orange"]  # the step the visitor chose
GUIDE = PALETTE["guide"]
NEUTRAL = PALETTE["neutral"]
ROUNDOFF_SHADE, TRUNCATION_SHADE = PALETTE["red"], PALETTE["blue"]  # regimes, drawn faint
MARKER_OUTLINE = "#ffffff"  # a white ring keeps a marker apart from the lines under it

#: A sequential heatmap scale readable in both themes (low -> high, lightness rising):
#: its low end has >= 3:1 against the light *and* the dark background, its high end
#: >= 3:1 against the dark one, so no cell glares white or sinks into black in the
#: dark theme (Blues starts at white, Viridis at near-black). Cell text keeps its
#: contrast too: Plotly picks dark or light text per cell.
HEATMAP_COLOURS: tuple[str, ...] = ("#3e6db0", "#3a8fb7", "#4bab9f", "#97c97f", "#f0e08a")
#: The same as a Plotly ``colorscale`` ([position, colour] pairs).
HEATMAP_COLOURSCALE: tuple[tuple[float, str], ...] = tuple(
    (i / (len(HEATMAP_COLOURS) - 1), colour) for i, colour in enumerate(HEATMAP_COLOURS))

FONT_SIZE = 16  # readable from the back of a lecture room
AXIS_TITLE_SIZE = 18
LINE_WIDTH = 2.5
MARKER_SIZE = 6


def dtype_colour(dtype: str) -> str:
    """The colour of a dtype's lines (its row's ``colour``); neutral for a name not in the table."""
    row = DTYPES.get(dtype)
    return row.colour if row is not None else NEUTRAL


def scheme_dash(scheme: str) -> str:
    """The dash of a scheme's lines (its row's ``dash``); solid for a name not in the table."""
    row = SCHEMES.get(scheme)
    return row.dash if row is not None else "solid"


def scheme_symbol(scheme: str) -> str:
    """The marker of a scheme's points (its row's ``symbol``); a circle for a name not in the table."""
    row = SCHEMES.get(scheme)
    return row.symbol if row is not None else "circle"
