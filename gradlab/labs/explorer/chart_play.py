"""The Explorer chart's Play button: h sweeps across the chart and the V is drawn as it goes.

Plotly's own animation, in the browser (no rerun): frames of their own (named
:data:`PLAY_PREFIX` + the step), each drawing every error curve up to its step and the
step slider's point at it, every :data:`PLAY_EVERY`-th stop and the last, so the play
ends with every curve whole and the slider then moves the point as before. The button
sits left of the slider's rail, whose start moves right to make room (over the plot,
Plotly's toolbar covered it on hover). :func:`gradlab.labs.explorer.chart_slider.add_step_slider`
adds it.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from gradlab.figures.spec import FigureSpec
from gradlab.figures.layout import BODY_TEXT_PX
from gradlab.figures.style import GUIDE

__all__ = ["PLAY_EVERY", "PLAY_MS", "PLAY_PREFIX", "add_play", "play_frames", "played"]

#: A play frame every this many stops (a frame holds every curve up to its step: all 61 of the
#: default sweep's would send ~250 kB more per chart), and the time each is shown, ms.
PLAY_EVERY, PLAY_MS = 2, 90
PLAY_PREFIX = "play "
PLAY_ROOM = 40  # px left of the slider's rail for the Play button
#: The button's font: its "▶" draws at about half its font's size, so this one makes a glyph as
#: tall as the body text's capitals (at the body text's 17 px it drew 8 px wide).
PLAY_GLYPH_PX = round(1.4 * BODY_TEXT_PX)
_COLOURS = {"bgcolor": "rgba(31, 95, 191, 0.12)", "bordercolor": GUIDE, "borderwidth": 1}


def played(count: int) -> list[int]:
    """The stops a play shows, of ``count``: every :data:`PLAY_EVERY`-th and the last.

    >>> played(5), played(6)
    ([0, 2, 4], [0, 2, 4, 5])
    """
    return sorted({*range(0, count, PLAY_EVERY), count - 1})


def play_frames(fig: FigureSpec, stops: list[float], label: Callable[[float], str]) -> list[dict]:
    """Frames that draw each error curve of ``fig`` (its traces of meta kind "sweep") up to a
    step, at each of :func:`played`'s ``stops``, named :data:`PLAY_PREFIX` + ``label(step)``.
    The frames hold every curve over and over, most of what the chart sends: each array of mostly
    numbers is a float array, which the figure's dict sends as base64 (under half the length of
    the numbers as text), one of mostly gaps a list (a gap, None, is shorter as text than as 8 bytes).

    >>> fig = FigureSpec(); fig.add_trace({"x": [1e-3, 1e-2, 1e-1], "y": [None, None, 1.0], "meta": {"kind": "sweep"}})
    >>> frames = play_frames(fig, [1e-3, 1e-2, 1e-1], lambda h: f"{h:.0e}")
    >>> [(f["name"], f["data"][0]["x"].tolist(), f["data"][0]["y"]) for f in frames]
    [('play 1e-03', [0.001], [None]), ('play 1e-01', [0.001, 0.01, 0.1], [None, None, 1.0])]
    """
    curves = [k for k, t in enumerate(fig.data) if t.get("meta", {}).get("kind") == "sweep"]
    points = [(np.array(fig.data[k]["x"], dtype=np.float64), np.array(fig.data[k]["y"], dtype=np.float64))
              for k in curves]
    frames = []
    for i in played(len(stops)):
        data = []
        for x, y in points:
            upto = int(np.count_nonzero(x <= stops[i] * (1 + 1e-9)))
            data.append({"x": _sent(x[:upto]), "y": _sent(y[:upto])})
        frames.append({"name": PLAY_PREFIX + label(stops[i]), "traces": curves, "data": data})
    return frames


def _sent(values: np.ndarray) -> np.ndarray | list:
    """``values`` as the shorter of the two ways a figure sends them: a float array (base64, 10.7
    characters a value) when at least half are numbers, else a list with None for each gap (NaN).

    >>> _sent(np.array([1.0, np.nan])).dtype, _sent(np.array([np.nan, np.nan, 2.0]))
    (dtype('float64'), [None, None, 2.0])
    """
    gaps = np.isnan(values)
    if 2 * np.count_nonzero(gaps) <= len(values):
        return values
    return [None if gap else v for gap, v in zip(gaps.tolist(), values.tolist())]


def add_play(fig: FigureSpec, stops: list[float], label: Callable[[float], str], marks_at: Callable[[int], dict],
             moved: int, rail_top: float) -> None:
    """The Play button and its frames (see the module docstring): ``marks_at(i)`` is the data of
    trace ``moved`` (the points at h) at stop i; ``rail_top`` the slider's top padding, px."""
    frames = play_frames(fig, stops, label)
    for frame, i in zip(frames, played(len(stops))):
        frame["traces"] = [*frame["traces"], moved]
        frame["data"].append(marks_at(i))
    fig.frames = [*fig.frames, *frames]
    fig.layout["sliders"][0]["pad"] = {**fig.layout["sliders"][0].get("pad", {}), "l": PLAY_ROOM}
    fig.update_layout(updatemenus=[{
        "type": "buttons", "showactive": False, "x": 0, "xanchor": "left", "y": 0, "yanchor": "top",
        "pad": {"t": rail_top + 20, "b": 0, "r": 0, "l": 0}, "font": {"size": PLAY_GLYPH_PX}, **_COLOURS,
        "buttons": [{"label": "▶", "method": "animate",
                     "args": [[f["name"] for f in frames],
                              {"mode": "immediate", "fromcurrent": False, "transition": {"duration": 0},
                               "frame": {"duration": PLAY_MS, "redraw": False}}]}]}])
