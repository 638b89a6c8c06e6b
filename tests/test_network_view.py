"""The Network page's view: what the page shows of one settings object, read against arithmetic.

The estimate the table prints is k·q with q = ulp(y)/(2·dx) and ulp(y) float32's spacing at y from
numpy; the step that rounds away is said in words and by the answer alike; the prediction's right
choice is float64's quantum; everything crosses a worker's pipe.
"""

from __future__ import annotations

import pickle
import re

import numpy as np

from gradlab.labs.network import NetworkSettings, view


def test_the_question_s_view_prints_one_quantum_of_float32():
    shown = view(NetworkSettings(points=9))
    y, ulp_y, q = (float(v) for v in re.findall(r"= ([-\d.e+]+)", shown.texts["chart caption"].rstrip(".")))
    assert ulp_y == float(f"{float(np.spacing(np.float32(y))):.4g}") and 0.25 <= y < 0.5
    assert q == float(f"{float(np.spacing(np.float32(y))) / 2e-6:.6g}")
    values = shown.tables["values"].set_index("what")["value"]
    estimate = float(values["scipy-style difference, dx = 1e-06"])
    assert estimate == -0.014901161193847656 == -np.spacing(np.float32(y)) / 2e-6  # k = -1
    assert "k = -1" in shown.texts["quantisation"]
    choices = shown.tables["prediction"]
    assert list(choices.index[choices["right"]]) == ["float64"]
    spacing64 = float(np.spacing(np.float64(y)))
    assert choices.at["float64", "choice"] == f"about {spacing64 / 2e-6:.1g}"
    pickle.dumps(shown)  # what crosses the pipe from the worker


def test_a_step_that_rounds_away_is_said_once_and_warned_by_the_answer():
    shown = view(NetworkSettings(dtype="float16", step=1e-9, points=9))
    assert shown.answer.level == "warning" and "rounds back to x" in shown.answer.text
    assert "rounds back to x_i itself" in shown.texts["step vanished"]
    assert "step vanished" not in view(NetworkSettings(points=9)).texts


def test_the_charts_are_built_from_the_view_s_own_sweep():
    shown = view(NetworkSettings(points=9))
    sweep = shown.tables["sweep"]
    staircase = shown.charts["staircase"].figure()
    (estimates,) = [t for t in staircase.data if t.name == "central difference (float32)"]
    assert list(estimates.y) == list(sweep["estimate"])
    names = [t.name for t in shown.charts["step error"].figure().data]
    best = sweep.loc[sweep["ref_error"].idxmin(), "step"]
    assert f"best in this sweep: h = {best:.2g}" in names
    assert f"**h = {best:.2g}**" in shown.texts["best step"]
