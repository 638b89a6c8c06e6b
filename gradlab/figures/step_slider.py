"""What every chart's step slider shares: a stop's label, the rail's colours, and a figure shown at a step.

A chart with a step slider (the Explorer's, :mod:`gradlab.labs.explorer.chart_slider`; the
Grid's, :mod:`gradlab.labs.grid.figures`) carries a Plotly frame per stop of the step h, named by
:func:`step_label`; dragging the slider switches frames in the browser. A page builds such a
figure once per view and shows it at the step a link or a widget names with :func:`with_step`.

>>> step_label(2e-3)
'2e-03'
"""

from __future__ import annotations

from gradlab.figures.style import GUIDE, MARK
from gradlab.step_sweep.step_frames import nearest_step

__all__ = ["SLIDER_COLOURS", "step_label", "with_step"]

#: The slider's rail and grip: mid greys that read on the light and the dark background (Plotly's
#: default rail is near white, a glare on the dark theme), the grip the marks' colour while dragged.
SLIDER_COLOURS = {"bgcolor": "#c9d1dc", "bordercolor": GUIDE, "borderwidth": 1, "tickcolor": GUIDE,
                  "activebgcolor": MARK}


def step_label(h: float) -> str:
    """A stop's name, label and URL text: ``2e-04`` (as the step sliders write a step).

    >>> step_label(0.0002), step_label(1.0)
    ('2e-04', '1e+00')
    """
    return f"{h:.0e}"


def with_step(spec: dict, h: float) -> dict:
    """A figure's dict with frames and a step slider (the Explorer's or the Grid's) shown at the
    stop nearest ``h``: the slider's active stop and that frame's traces and axis ranges. A copy
    of the top levels only (the frames and the data arrays are shared), so a page builds and
    caches its figure once per view and a new step costs a few dictionary copies, not a new figure.

    >>> spec = {"data": [{"name": "a", "x": [0]}, {"name": "at h", "x": [1e-3]}],
    ...         "layout": {"xaxis": {"title": "h"}, "sliders": [{"active": 0, "steps": [{"value": "1e-03"},
    ...                    {"value": "2e-03"}]}]},
    ...         "frames": [{"name": "1e-03", "traces": [1], "data": [{"x": [1e-3]}]},
    ...                    {"name": "2e-03", "traces": [1], "data": [{"x": [2e-3]}], "layout": {"xaxis": {"range": [0, 1]}}}]}
    >>> shown = with_step(spec, 2.2e-3)
    >>> shown["data"][1], shown["layout"]["sliders"][0]["active"], shown["layout"]["xaxis"]
    ({'name': 'at h', 'x': [0.002]}, 1, {'title': 'h', 'range': [0, 1]})
    >>> spec["layout"]["sliders"][0]["active"], shown["frames"] is spec["frames"]
    (0, True)
    """
    frames, sliders = spec.get("frames") or (), spec.get("layout", {}).get("sliders") or ()
    if not frames or not sliders:
        return spec
    values = [float(step["value"]) for step in sliders[0]["steps"]]
    active = values.index(nearest_step(values, h))
    name = sliders[0]["steps"][active]["value"]
    frame = next((f for f in frames if f.get("name") == name), None)
    data = list(spec["data"])
    layout = {**spec["layout"], "sliders": [{**sliders[0], "active": active}, *sliders[1:]]}
    if frame is not None:
        for index, trace in zip(frame.get("traces") or range(len(frame["data"])), frame["data"]):
            data[index] = {**data[index], **trace}
        for key, value in (frame.get("layout") or {}).items():
            layout[key] = {**layout.get(key, {}), **value} if isinstance(value, dict) else value
    return {**spec, "data": data, "layout": layout}
