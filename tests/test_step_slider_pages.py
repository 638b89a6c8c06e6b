"""The step slider on the Explorer's and the Grid's main chart, in AppTest: the URL's h is the
chart's active stop and the chart carries one frame per stop. (AppTest cannot send the release
listener's trigger: tests/browser/test_step_drag_browser.py drags and releases in Chromium.)

The frame's numbers themselves are tested against the engine in tests/test_step_frames.py.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

from gradlab.labs.explorer.chart_play import PLAY_PREFIX

REPO_ROOT = Path(__file__).resolve().parents[1]
TIMEOUT_S = 120


def _open(page: str, query: dict) -> AppTest:
    at = AppTest.from_file(str(REPO_ROOT / "app.py"), default_timeout=TIMEOUT_S)
    at.run()
    at.query_params.update(query)
    at.switch_page(page).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def _numbers(values) -> list[float]:
    """A trace's x or y as sent: a list, or Plotly's base64 typed array."""
    if isinstance(values, dict):
        return np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"]).tolist()
    return list(values)


def _chart(at: AppTest, key: str) -> dict:
    (chart,) = [c for c in at.get("plotly_chart") if c.proto.id.endswith(key)]
    return json.loads(chart.proto.spec)


def test_the_explorer_chart_starts_at_the_linked_step_with_a_frame_per_stop():
    at = _open("pages/explorer.py", {"h": "2e-05"})
    spec = _chart(at, "explorer_chart")
    slider = spec["layout"]["sliders"][0]
    assert slider["steps"][slider["active"]]["value"] == "2e-05"
    names = [f["name"] for f in spec["frames"] if not f["name"].startswith(PLAY_PREFIX)]  # the slider's
    assert names == [s["value"] for s in slider["steps"]]
    # the default view's steps, 1e-17 to 0.5 (tests/test_step_frames checks the stops' rule)
    assert names[0] == "1e-17" and names[-1] == "5e-01" and len(names) == 17 * 3
    assert at.select_slider(key="h").value == 2e-5


def test_the_grid_chart_starts_at_the_linked_step_and_its_frame_is_the_answer():
    at = _open("pages/grid.py", {"fn": "custom (type it)", "expr": "x**2", "h": "5e-07"})
    spec = _chart(at, "grid_chart")
    slider = spec["layout"]["sliders"][0]
    assert slider["steps"][slider["active"]]["value"] == "5e-07"
    # float32 at 1: 5e-7 / 2^-23 = 4.19 ulps, so x + h = 1 + 4u (u = 2^-23); (1 + 4u)^2 = 1 + 8u + 16u^2
    # rounds to 1 + 8u: the difference is 8 ulps of f(1) = 1 and the slope 8u / 4u = 2
    # the step taken in as many digits as tell it from h (3 at least), as the answer prints it
    assert slider["steps"][slider["active"]]["label"] == f"5e-07: step taken {4 * 2.0 ** -23:.3g}, slope 2"
    frame = next(f for f in spec["frames"] if f["name"] == "5e-07")
    # a frame carries each trace's data only, in the figure's trace order (names stay the figure's)
    traces = dict(zip((t["name"] for t in spec["data"]), frame["data"]))
    points = traces["x, x+h rounded"]
    assert _numbers(points["x"]) == [0, 4] and _numbers(points["y"]) == [0, 8]  # in ulps of x and of f
    secant = traces["secant"]  # through both points: slope 8/4 = 2 (in ulps of f per ulp of x)
    (x0, x1), (y0, y1) = _numbers(secant["x"]), _numbers(secant["y"])
    assert (y1 - y0) / (x1 - x0) == 2
