"""The layout the Network and Backward pages' figures share: a main chart's height, the legend
below the plot, log ranges and labels placed where they are not clipped.

>>> LEGEND_BELOW["orientation"], MAIN_CHART_HEIGHT
('h', 370)
>>> beside(1e-2, [-6.0, 0.0], "top")
'top left'
"""

from __future__ import annotations

import copy
import re

import numpy as np
import pandas as pd

from gradlab.figures.spec import FigureOrSpec, FigureSpec
from gradlab.figures.style import FONT_SIZE, HEATMAP_COLOURSCALE

__all__ = ["MAIN_CHART_HEIGHT", "LEGEND_BELOW", "BLUES", "log_range", "beside", "as_array", "plain_layout",
           "layout_below", "for_presentation", "PRESENTED_FONT_SCALE", "PRESENTED_MIN_FONT"]

#: The height (px) of each page's main chart (the staircase, the .grad rows): all of it, legend
#: included, on a 1280x720 first screen under the title row, one row of controls and the answer.
MAIN_CHART_HEIGHT = 370

#: The one dark-safe sequential scale (gradlab.figures.style), as [position, colour] pairs.
BLUES = [list(stop) for stop in HEATMAP_COLOURSCALE]


def log_range(values: pd.Series) -> list[float]:
    """An explicit log-axis range over the data (annotations must not stretch it)."""
    return [float(np.log10(values.min())), float(np.log10(values.max()))]


def beside(x: float, x_range: list[float], vertical: str) -> str:
    """Label position for a vertical line at x: on the side with more room, so it is not clipped."""
    middle = (x_range[0] + x_range[1]) / 2
    return f"{vertical} {'left' if np.log10(x) > middle else 'right'}"


def as_array(values) -> np.ndarray:
    """Plain numpy for the unvalidated figure (plotly's JSON encoder takes numpy as is)."""
    return np.asarray(values)


def plain_layout(fig: FigureSpec, title: str, x_title: str, y_title: str) -> FigureOrSpec:
    """Title at the left, legend above the plot at the right, small margins."""
    fig.update_layout(
        title=dict(text=title, x=0, xanchor="left"),
        legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="right", x=1),
        margin=dict(l=10, r=10, t=70, b=10), hovermode="closest",
    )
    fig.update_xaxes(title=dict(text=x_title))
    fig.update_yaxes(title=dict(text=y_title))
    return fig.figure()


#: Legend under the plot, in rows: at 390 px a legend beside the plot leaves it no room. Anchored to the
#: figure's bottom edge (``yref="container"``), so the plot area makes room for it whatever the figure's
#: height and the rows it wraps into; a distance below the plot area (``y=-0.22``) would overlap the
#: x axis title in a chart short enough for a projector's first screen.
LEGEND_BELOW = dict(orientation="h", yref="container", yanchor="bottom", y=0, xanchor="left", x=0)


def layout_below(fig: FigureSpec, title: str, x_title: str, y_title: str, height: int,
                 inside_y_ticks: bool = False, y_nticks: int | None = 6) -> FigureOrSpec:
    """The Network and Backward figures' layout: legend below, few ticks, margins that grow to fit.

    ``inside_y_ticks`` writes the y tick labels inside the plot, above their grid lines:
    on a 390 px phone the 40 px they take outside are what keeps the plot 300 px wide.
    """
    fig.update_layout(
        title=dict(text=title, x=0, xanchor="left"), legend=LEGEND_BELOW, height=height,
        margin=dict(l=0, r=0, t=50, b=10), hovermode="closest",
    )
    fig.update_xaxes(title=dict(text=x_title), automargin=True, nticks=6)
    fig.update_yaxes(title=dict(text=y_title), automargin=True)
    if y_nticks:
        fig.update_yaxes(nticks=y_nticks)
    if inside_y_ticks:
        fig.update_yaxes(ticklabelposition="inside top")
    return fig.figure()


# ------------------------------------------------------------------ presentation mode

#: In presentation mode the page's type is 1.5 times larger (24 px against 16 px); chart text
#: grows with it, and nothing a room reads is under :data:`PRESENTED_MIN_FONT` px (Plotly's
#: 11-12 px annotations, a 14 px tick label).
PRESENTED_FONT_SCALE = 1.35
PRESENTED_MIN_FONT = 24  # the presented page's body text (html 24 px): a chart reads as large
#: The page's body text (.streamlit/config.toml baseFontSize): no chart text a reader needs is smaller.
BODY_TEXT_PX = 17
#: Annotations whose size is their band's (gradlab.labs.explorer.chart_marks.shading: a curve's name inside
#: its regime band, the body text's 17 px, six of them under an 8-bit preset, every other one at the
#: plot's left edge): grown in presentation beyond three bands, they overlapped.
BAND_SIZED = frozenset({"regime"})
#: Up to this many bands, a presented chart's band names grow with its text (its bands are ~25 px tall);
#: with more, a presented chart is short (its answer is large) and six bands ~10 px tall each hold
#: names this large at most (every other one at the plot's edge): the h* marks carry each dtype's
#: colour, and pointing at a band lights its curve (gradlab.ui.regime_links).
PRESENTED_LABELLED_BANDS = 3
PRESENTED_CROWDED_BAND_FONT = 12
#: Plotly draws a log axis's power-format tick label ("10" and its exponent) this many times its tick
#: font (measured in Chromium: a 14 px tick font draws 17.5 px labels).
POWER_TICK_SCALE = 1.25
#: A presented chart with more legend entries than this lists them in a column at the right:
#: a 1280x720 screen is wide and short, and rows of entries under the plot squeeze it flat.
PRESENTED_LEGEND_ROWS = 4

#: Room (px) between an axis's tick labels and its title: Plotly places the title from tick labels
#: measured before the page's web font has loaded, and the wider labels drawn in it came within
#: 2 px of the title at 12 px (the Grid's "−1000" against its y title).
PRESENTED_TITLE_STANDOFF = 20

_AXIS_KEY = re.compile(r"^[xy]axis\d*$")


def _legend_entries(data: list) -> int:
    """How many entries the legend lists: one per named trace not hidden from it (a legend group
    keeps each of its entries; it only toggles them together)."""
    return sum(1 for trace in data if trace.get("showlegend") is not False and trace.get("name"))


def for_presentation(spec: dict, base_size: float = FONT_SIZE) -> dict:
    """A copy of a figure's dict with its text large enough for a lecture room, the input untouched.

    Every font the layout names (title, legend, each axis's ticks and title, annotations, sliders,
    colour bars) and every trace's text is ``PRESENTED_FONT_SCALE`` times its size, at least
    ``PRESENTED_MIN_FONT`` px; a font with no size of its own scales the figure's base size, and
    one of 1 or 2 px (labels hidden on purpose, a slider's stops) stays as it is.
    Axes make room for their larger labels (``automargin``: an axis title never sits on its tick
    labels), and a legend of more than ``PRESENTED_LEGEND_ROWS`` entries moves to a column at the
    right. A step slider's frames, which replace the axes as it moves, get the same axes. Only the
    layouts and the traces with text are copied; data arrays are shared.

    >>> spec = {"data": [{"type": "scatter", "y": [1, 2], "name": "a", "textfont": {"size": 10}}],
    ...         "layout": {"font": {"size": 16}, "xaxis": {"title": {"text": "h"}},
    ...                    "annotations": [{"text": "best h", "font": {"size": 11}}]}}
    >>> big = for_presentation(spec)
    >>> big["layout"]["xaxis"]["tickfont"]["size"], big["layout"]["annotations"][0]["font"]["size"]
    (24, 24)
    >>> big["data"][0]["textfont"]["size"], big["data"][0]["y"] is spec["data"][0]["y"]
    (24, True)
    >>> spec["layout"]["annotations"][0]["font"], big["layout"]["xaxis"]["automargin"]
    ({'size': 11}, True)
    >>> framed = for_presentation({"data": [], "layout": {}, "frames": [{"layout": {"yaxis": {"title": {"text": "f"}}}}]})
    >>> framed["frames"][0]["layout"]["yaxis"]["tickfont"], framed["frames"][0]["layout"]["yaxis"]["title"]["standoff"]
    ({'size': 24}, 20)
    >>> slider = {"font": {"size": 1}, "currentvalue": {"prefix": "h = ", "font": {"size": 15}}}
    >>> for_presentation({"data": [], "layout": {"sliders": [slider]}})["layout"]["sliders"][0]
    {'font': {'size': 1}, 'currentvalue': {'prefix': 'h = ', 'font': {'size': 24}}}
    """
    base = ((spec.get("layout") or {}).get("font") or {}).get("size") or base_size

    def grown(font: dict | None) -> dict:
        font = dict(font or {})
        if font.get("size") is not None and font["size"] <= 2:  # text hidden on purpose stays hidden
            return font
        font["size"] = max(PRESENTED_MIN_FONT, round(PRESENTED_FONT_SCALE * (font.get("size") or base), 1))
        return font

    def axis_room(axis: dict) -> None:
        axis["automargin"] = True
        if isinstance(axis.get("title"), dict):
            axis["title"]["standoff"] = max(PRESENTED_TITLE_STANDOFF, axis["title"].get("standoff") or 0)

    out = _with_fonts(spec, grown, sliders=True, axis_room=axis_room)
    bands = [a for a in out["layout"].get("annotations", ()) if a.get("name") in BAND_SIZED]
    if len(bands) > PRESENTED_LABELLED_BANDS:  # many thin bands: names as small as fit, never overlapping
        for a in bands:
            a["font"] = {**a.get("font", {}), "size": PRESENTED_CROWDED_BAND_FONT}
    else:  # a few bands are tall enough for larger names
        for a in bands:
            a["font"] = {**a.get("font", {}),
                         "size": max(PRESENTED_MIN_FONT, round(PRESENTED_FONT_SCALE * (a.get("font", {}).get("size") or base), 1))}
    if _legend_entries(out["data"]) > PRESENTED_LEGEND_ROWS:
        out["layout"]["legend"].update(orientation="v", x=1.01, xanchor="left", y=1, yanchor="top", yref="paper")
    return out


def readable(spec: dict, least: float = None) -> dict:
    """A copy of a figure's dict whose every text a reader reads (ticks, legend, axis titles,
    annotations, a trace's text, colour bars) is at least ``least`` px: the page's body text
    (Streamlit's theme draws ticks and legends it is not told a size for at 0.75 of it, 12.75 px
    beside 17 px text). A step slider's labels keep their size (their readout must fit a phone's
    slider), and so does text hidden on purpose (1-2 px). Data arrays are shared.

    >>> spec = {"data": [], "layout": {"xaxis": {"tickfont": {"size": 20}}, "yaxis": {},
    ...                                "annotations": [{"text": "a", "font": {"size": 11}}]}}
    >>> out = readable(spec, 17)
    >>> out["layout"]["xaxis"]["tickfont"], out["layout"]["yaxis"]["tickfont"], out["layout"]["annotations"][0]["font"]
    ({'size': 20}, {'size': 17}, {'size': 17})
    >>> out["layout"]["legend"]["font"], spec["layout"]["yaxis"]
    ({'size': 17}, {})
    >>> readable({"data": [], "layout": {"xaxis": {"type": "log", "exponentformat": "power"}}}, 17)["layout"]["xaxis"]
    {'type': 'log', 'exponentformat': 'power', 'tickfont': {'size': 13.6}}
    """
    least = BODY_TEXT_PX if least is None else least

    def at_least(size: float):
        def grown(font: dict | None) -> dict:
            font = dict(font or {})
            if font.get("size") is not None and font["size"] <= 2:
                return font
            font["size"] = max(size, font.get("size") or 0)
            return font
        return grown

    def ticks(axis: dict, font: dict | None) -> dict:
        # Plotly draws a power-format label ("10" with a superscript) at 1.25 times its tick font
        power = axis.get("exponentformat") == "power" and axis.get("type") == "log"
        return at_least(round(least / POWER_TICK_SCALE, 2) if power else least)(font)

    return _with_fonts(spec, at_least(least), sliders=False, ticks=ticks)


def _slider_grown(slider: dict, grown) -> dict:
    slider = {**slider, "font": grown(slider.get("font"))}
    if isinstance(slider.get("currentvalue"), dict):
        slider["currentvalue"] = {**slider["currentvalue"], "font": grown(slider["currentvalue"].get("font"))}
    return slider


def _with_fonts(spec: dict, grown, *, sliders: bool, axis_room=None, ticks=None) -> dict:
    """``spec`` copied with ``grown(font)`` for every text's font (layout, title, legend, each
    axis's ticks and title, annotations, traces' text and colour bars, frames' axes; sliders'
    only when ``sliders``); ``ticks(axis, font)`` grows an axis's tick labels instead when given,
    and ``axis_room(axis)`` adjusts each axis too. Only layouts and traces with text are copied."""
    layout = dict(spec.get("layout", {}))  # what changes is copied below; the rest (template, shapes) shared
    layout["font"] = grown(layout.get("font"))
    title = layout.get("title")
    if isinstance(title, dict) and title.get("text"):
        layout["title"] = {**title, "font": grown(title.get("font"))}
    legend = layout["legend"] = dict(layout.get("legend") or {})
    legend["font"] = grown(legend.get("font"))

    def grown_axes(axes: dict) -> None:
        for key, axis in list(axes.items()):
            if _AXIS_KEY.match(key) and isinstance(axis, dict):
                axis = axes[key] = dict(axis)
                axis["tickfont"] = (ticks or (lambda _, font: grown(font)))(axis, axis.get("tickfont"))
                if isinstance(axis.get("title"), dict):
                    axis["title"] = {**axis["title"], "font": grown(axis["title"].get("font"))}
                if axis_room is not None:
                    axis_room(axis)

    grown_axes(layout)
    if "annotations" in layout:  # each one copied: a caller may size the bands' names after
        layout["annotations"] = [{**a} if a.get("name") in BAND_SIZED else {**a, "font": grown(a.get("font"))}
                                 for a in layout["annotations"]]
    if sliders and "sliders" in layout:  # a step slider's tick labels and its readout (its steps shared)
        layout["sliders"] = [_slider_grown(slider, grown) for slider in layout["sliders"]]
    data = []
    for trace in spec.get("data", ()):
        if "textfont" in trace or "colorbar" in trace or trace.get("text") is not None:
            trace = dict(trace)
            trace["textfont"] = grown(trace.get("textfont"))
            if isinstance(trace.get("colorbar"), dict):
                bar = trace["colorbar"] = copy.deepcopy(trace["colorbar"])
                bar["tickfont"] = grown(bar.get("tickfont"))
        data.append(trace)
    frames = []
    for frame in spec.get("frames", ()):  # a step slider's frames replace the axes: they grow alike
        if isinstance(frame.get("layout"), dict):
            frame = {**frame, "layout": dict(frame["layout"])}
            grown_axes(frame["layout"])
        frames.append(frame)
    return {**spec, "data": data, "layout": layout, **({"frames": frames} if frames else {})}
