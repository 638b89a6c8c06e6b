"""A failing check's message and table quote the failing element's own values (issue 35, item 7).

The default mode checks random-sign directions over blocks of elements; a failing direction
is narrowed to one element, which is checked on its own. The message must lead with that
element: its name, its own autograd value and its own finite difference (at the step used),
the difference, the tolerance and the error bound; the direction only after, as how the
element was found. The table must hold the element's row (kind "element", state "fail",
its tolerance and bound), the directions' rows kept. Sampled, full and directional modes
word a failure the same way.

The truth is computed here, independently of the check: fn is x·sin(x) elementwise with a
backward that adds a planted offset at one element, so the element's true derivative is
sin(x) + x·cos(x) (mpmath, 30 digits), autograd's is that plus the offset (torch.autograd.grad
of the wrong Function), and a central difference of fn's sum in float64 agrees with the first.
"""

from __future__ import annotations

import json
import re

import mpmath
import pytest
import torch

import gradlab
from gradlab.check.verdicts.results import GradcheckError
from gradlab.cli.check import result_json

OFFSET = 1e-3
SPOT = (41, 80)
LABEL = "t[41, 80]"


class WrongAtSpot(torch.autograd.Function):
    """x·sin(x), whose backward adds OFFSET at SPOT (the forward is right)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sin(x) * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * _off_at(x, SPOT, OFFSET)


def _off_at(x, spot, offset):
    """(x·sin x)' with ``offset`` added at ``spot``."""
    d = torch.cos(x) * x + torch.sin(x)
    d[spot] += offset
    return d


def fn(t):
    return WrongAtSpot.apply(t)


#: The check's loss is the plain sum of fn's outputs, whose derivative the truth below is
#: (the default weighting of the outputs may change; the message's wording must not).
ONES = {"grad_outputs": "ones"}


def _x(rows=140, cols=120):
    return torch.randn(rows, cols, generator=torch.Generator().manual_seed(0), dtype=torch.float64)


def _truth(x):
    """(autograd at SPOT, the true derivative there), independently of the check."""
    t = x.clone().requires_grad_(True)
    (g,) = torch.autograd.grad(fn(t).sum(), t)
    mpmath.mp.dps = 30
    v = mpmath.mpf(float(x[SPOT]))
    exact = float(mpmath.sin(v) + v * mpmath.cos(v))
    # a central difference of fn's sum at that element, in float64, agrees with it
    h = 1e-5
    up, down = x.clone(), x.clone()
    up[SPOT] += h
    down[SPOT] -= h
    with torch.no_grad():
        central = float((WrongAtSpot.apply(up).sum() - WrongAtSpot.apply(down).sum()) / (2 * h))
    assert abs(central - exact) < 1e-7 * max(1.0, abs(exact))
    return float(g[SPOT]), exact


_NUMBER = r"(-?\d[\d.e+-]*)"


def _lead(message: str, label: str = LABEL):
    """The two numbers the message opens with; it must open with the element's name."""
    m = re.match(rf"Gradient check failed at {re.escape(label)}: autograd {_NUMBER}, "
                 rf"finite difference {_NUMBER}( at h = [\d.e+-]+)?; difference {_NUMBER}, "
                 rf"tolerance {_NUMBER} .*?error bound of the finite difference {_NUMBER}", message)
    assert m, message
    return float(m[1]), float(m[2]), float(m[4]), float(m[5]), float(m[6])


def _same_to_printed_digits(printed: float, truth: float, digits: int = 6):
    """``printed`` is ``truth`` as %.{digits}g prints it (half a unit of its last digit, plus slack)."""
    assert printed == pytest.approx(truth, rel=0.51 * 10.0 ** (1 - digits)), (printed, truth)


def _element_row(result, label=LABEL):
    rows = result.table[(result.table["element"] == label) & (result.table["kind"] == "element")]
    assert len(rows) == 1, result.table[result.table["state"] != "pass"]
    return rows.iloc[0]


@pytest.mark.parametrize("mode, found_by", [("blocks", "block"), ("dense", "dense")])
def test_default_mode_message_leads_with_the_elements_own_values(monkeypatch, mode, found_by):
    if mode == "blocks":  # the dense directions (gradlab.check.running.detector) would look first
        monkeypatch.setattr("gradlab.check.running.detector.DETECT_FROM", 10 ** 9)
    x = _x()
    autograd, exact = _truth(x)
    r = gradlab.gradcheck(fn, x, **ONES)
    s = r.summary
    assert r.verdict == "fail" and s.mode == mode
    a, n, difference, tolerance, bound = _lead(s.message)
    _same_to_printed_digits(a, autograd)
    _same_to_printed_digits(n, exact)
    _same_to_printed_digits(difference, OFFSET, 3)  # the planted offset, not the direction's 1e-5
    # the element's own tolerance and bound, as the located element and its table row have them
    row = _element_row(r)
    _same_to_printed_digits(tolerance, row["best_tolerance"], 3)
    _same_to_printed_digits(bound, row["error_bound"], 3)
    # the direction only after the element's values, as how it was found
    found = s.message.index("It was found along direction")
    assert "direction" not in s.message[:found]
    assert s.message.index("finite difference") < found
    assert s.headline.startswith(f"Gradient check failed at {LABEL} ")
    assert s.located.label == LABEL and s.located.state == "fail" and s.located.found_by == found_by
    assert "checked on its own" in s.message[found:]


def test_default_mode_table_holds_the_failing_elements_row_and_the_directions():
    x = _x()
    autograd, exact = _truth(x)
    r = gradlab.gradcheck(fn, x, **ONES)
    t, s = r.table, r.summary
    row = _element_row(r)
    assert row["state"] == "fail" and row["flat"] == SPOT[0] * 120 + SPOT[1] and row["index"] == SPOT
    assert row["autograd"] == pytest.approx(autograd, rel=1e-12)
    assert abs(row["best_numeric"] - exact) <= row["error_bound"]  # the bound holds the truth
    assert row["numeric"] == pytest.approx(exact, rel=1e-6)  # at the check's own step too
    assert row["best_abs_error"] > row["best_tolerance"] + row["error_bound"]
    assert 0 < row["error_bound"] < row["best_tolerance"]
    assert row["best_tolerance"] == pytest.approx(s.located.tolerance)
    assert row["error_bound"] == pytest.approx(s.located.error_bound)
    # the direction it was found along is a failing row of the table, and the message's
    direction = t[t["element"] == row["found_along"]]
    assert len(direction) == 1 and direction.iloc[0]["kind"] == "direction"
    assert direction.iloc[0]["state"] == "fail" and f"found along {row['found_along']} " in s.message
    # the directions are kept, first; the summary counts them (the check's own values)
    kinds = t["kind"].tolist()
    directions = kinds.count("direction")
    assert kinds == ["direction"] * directions + ["element"] * (len(t) - directions)
    assert s.checked == directions and s.failed == int((t["state"][t["kind"] == "direction"] == "fail").sum())
    assert set(t["found_along"][t["kind"] == "element"]) == {row["found_along"]}
    assert set(t["found_along"][t["kind"] == "direction"]) == {""}
    # the element is the one furthest out among the rows (what a page or notebook shows first)
    assert r.worst_rows(1)["element"].tolist() == [LABEL]


def test_default_options_message_quotes_the_elements_row():
    """With the default options (whatever the outputs' weighting), the numbers the message leads
    with are the failing element's row of the table, and the direction comes after."""
    r = gradlab.gradcheck(fn, _x())
    a, n, difference, tolerance, bound = _lead(r.summary.message)
    row = _element_row(r)
    assert row["state"] == "fail"
    _same_to_printed_digits(a, row["autograd"])
    _same_to_printed_digits(n, row["best_numeric"])
    _same_to_printed_digits(difference, row["best_abs_error"], 3)
    _same_to_printed_digits(tolerance, row["best_tolerance"], 3)
    _same_to_printed_digits(bound, row["error_bound"], 3)
    assert r.summary.message.index("direction") > r.summary.message.index("error bound")


def test_raise_on_fail_and_json_say_the_same():
    x = _x()
    with pytest.raises(GradcheckError, match=rf"^Gradient check failed at {re.escape(LABEL)}: autograd "):
        gradlab.gradcheck(fn, x, raise_on_fail=True)
    out = json.loads(json.dumps(result_json(gradlab.gradcheck(fn, x)), allow_nan=False))
    failing = [(row["element"], row["kind"]) for row in out["rows"] if row["state"] == "fail"]
    assert (LABEL, "element") in failing and any(kind == "direction" for _, kind in failing)
    assert out["located"]["label"] == LABEL and out["located"]["found_along"].startswith("direction ")
    assert out["message"].startswith(f"Gradient check failed at {LABEL}: autograd ")
    assert out["checked"] == sum(row["kind"] == "direction" for row in out["rows"])


@pytest.mark.parametrize("mode, options", [("sampled", {"samples": 600}), ("full", {})])
def test_elementwise_modes_word_the_element_the_same_way(mode, options):
    """sampled and full check each element on its own: its row is already the table's."""
    x = _x(30, 20)
    spot = (41 % 30, 80 % 20)
    label = f"t[{spot[0]}, {spot[1]}]"

    class Wrong(WrongAtSpot):
        @staticmethod
        def backward(ctx, grad):
            (t,) = ctx.saved_tensors
            return grad * _off_at(t, spot, OFFSET)

    r = gradlab.gradcheck(lambda t: Wrong.apply(t), x, mode=mode, **options, **ONES)
    assert r.verdict == "fail"
    a, n, difference, _, _ = _lead(r.summary.message, label)
    v = mpmath.mpf(float(x[spot]))
    exact = float(mpmath.sin(v) + v * mpmath.cos(v))
    _same_to_printed_digits(a, exact + OFFSET)
    _same_to_printed_digits(n, exact)
    _same_to_printed_digits(difference, OFFSET, 3)
    assert "direction" not in r.summary.message
    row = _element_row(r, label)
    assert row["state"] == "fail" and row["found_along"] == "" and row["error_bound"] > 0
    assert row["best_tolerance"] == pytest.approx(r.summary.worst.tolerance)
    assert set(r.table["kind"]) == {"element"} and r.summary.checked == len(r.table)


def test_directional_mode_names_the_bisected_element_first():
    x = _x(12, 10)
    spot, label = (4, 7), "t[4, 7]"

    class Wrong(WrongAtSpot):
        @staticmethod
        def backward(ctx, grad):
            (t,) = ctx.saved_tensors
            return grad * _off_at(t, spot, 0.1)

    r = gradlab.gradcheck(lambda t: Wrong.apply(t), x, mode="directional", samples=5, **ONES)
    s = r.summary
    assert r.verdict == "fail" and s.located.found_by == "bisection"
    a, n, difference, tolerance, bound = _lead(s.message, label)
    v = mpmath.mpf(float(x[spot]))
    exact = float(mpmath.sin(v) + v * mpmath.cos(v))
    _same_to_printed_digits(a, exact + 0.1)
    _same_to_printed_digits(n, exact)
    _same_to_printed_digits(difference, 0.1, 3)
    found = s.message.index("It was found along direction")
    assert "direction" not in s.message[:found] and "bisection" in s.message[found:]
    row = _element_row(r, label)
    assert row["state"] == "fail" and row["found_along"].startswith("direction ")
    _same_to_printed_digits(tolerance, row["best_tolerance"], 3)
    _same_to_printed_digits(bound, row["error_bound"], 3)
    assert s.checked == 5 and (r.table["kind"] == "direction").sum() == 5
