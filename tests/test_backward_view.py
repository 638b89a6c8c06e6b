"""The Backward lab's views (gradlab.labs.backward: view, steps_view, matrix_view) and its prediction:
what each section prints is what the chain rule says, and the prediction's choices and reveal follow
from the lab's numbers for any v and dtype, not from the question's defaults."""

from __future__ import annotations

import re

import numpy as np
import pytest

from gradlab.labs.backward import BackwardSession, ExampleVJPSettings, VJPSettings, matrix_view, steps_view, view

A, B, C = (1.0, 2.0, 3.0), (3.0, 4.0, 5.0), (6.0, 7.0, 8.0)


def _vectors(text: str) -> dict[str, list[float]]:
    return {name: [float(v) for v in values.split(", ")]
            for name, values in re.findall(r"`?\b(\w)\.grad`? = \[([^\]]+)\]", text)}


@pytest.mark.parametrize("v", [(0.1, 1.0, 0.0001), (1.0, -2.0, 0.5), (0.0, 0.0, 0.0)])
def test_section_one_prints_3v_4bv_and_v_over_c(v):
    shown = view(VJPSettings(A, B, C, v, "float64"))
    expected = [3 * vi for vi in v] + [4 * b * vi for b, vi in zip(B, v)] + [vi / c for c, vi in zip(C, v)]
    assert shown.tables["grads"][".grad"].tolist() == [f"{e:.6g}" for e in expected]  # printed to 6 digits
    said = _vectors(shown.answer.text)
    assert said["a"] == pytest.approx(expected[:3], rel=5e-4, abs=0)  # the answer's 4 digits
    assert "v = torch.tensor([" + ", ".join(f"{x:g}" for x in v) + "])" in shown.texts["code"]
    assert "same" in shown.texts  # y.backward(v) and (v * y).sum().backward() agree bit for bit


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("v", [(0.1, 1.0, 0.0001), (0.0, 0.0, 0.0), (-1.0, 3.0, 2.0)])
def test_the_prediction_is_right_about_two_backwards_for_any_v(dtype, v):
    """∂yᵢ/∂aᵢ = 3, so one backward leaves 3v in a.grad and two leave 3v + 3v = 6v; a third fails,
    the second having freed the graph."""
    table = view(VJPSettings(A, B, C, v, dtype)).tables["prediction"]
    assert list(table.index) == ["3v", "6v", "an error"]
    assert table["right"].tolist() == [False, True, False]
    assert all(reveal.endswith(". .grad adds every backward's result to what is there; the first call kept the "
                               "graph, so the second may run. A third would fail. Try it in section 2.")
               for reveal in table["reveal"])
    assert table.loc["6v", "reveal"].startswith("Right: 6v") and table.loc["3v", "reveal"].startswith("Not quite: 6v")


def test_section_two_prints_each_step_and_the_answer_counts_the_backwards():
    v = np.array([0.1, 1.0, 0.0001], dtype=np.float32)
    shown = steps_view(BackwardSession.from_text("br,b,b,z,f,b"))
    steps = shown.tables["steps"]
    assert steps["code"].tolist() == ["y.backward(v, retain_graph=True)", "y.backward(v)", "y.backward(v)",
                                      "a.grad = b.grad = c.grad = None  # optimizer.zero_grad()",
                                      "y = 3*a + 2*b*b + torch.log(c)", "y.backward(v)"]
    a = [_vectors(line).get("a") for line in steps["grads"]]
    assert a[0] == pytest.approx(3 * v, rel=1e-6) and a[1] == pytest.approx(6 * v, rel=1e-6)
    assert "second time" in steps["refusal"][2] and steps["grads"][2] == ""  # PyTorch's own words
    assert steps["grads"][3] == "`a.grad` = None · `b.grad` = None · `c.grad` = None"
    assert a[5] == pytest.approx(3 * v, rel=1e-6)  # a new graph, zeroed grads: one backward's again
    assert "After the 6 steps of section 2, a.grad = [0.3, 3, 0.0003], one backward's vᵀJ." in shown.answer.text
    assert "Step 3 is refused" in shown.answer.text and shown.answer.level == "warning"


def test_section_three_prints_w_transposed_times_v():
    w = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    for v in ((1.0, 0.5), (0.0, 1.0), (-2.0, 3.0)):
        shown = matrix_view(ExampleVJPSettings("wx", v))
        grad, vjp = (list(map(float, g.split(", "))) for g in re.findall(r"\[([^\]]+)\]", shown.answer.text))
        assert grad == pytest.approx(w.T @ np.array(v)) and vjp == grad
        assert sorted(shown.charts) == ["jacobian", "weighted rows"]
