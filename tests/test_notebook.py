"""A check result, a layer check and a sweep in a notebook: an escaped table, then the figure
through Plotly's own renderer (issue 38: no hand-embedded plotly.js)."""

import dataclasses

import numpy as np
import plotly.graph_objects as go
import pytest
import torch

import gradlab
from gradlab.check.verdicts.notebook import block_of, figure_of, table_of
from gradlab.figures.check_values import STATE_COLOURS, value_errors_figure

_HOSTILE = '<script>alert("x")</script>'


def _x(*shape):
    return torch.linspace(0.5, 2.0, int(torch.Size(shape).numel()), dtype=torch.float64).reshape(shape)


def _wrong(t):  # autograd sees t, the truth is 2t: every element fails
    return t.detach() * t


def test_a_full_check_of_a_matrix_shows_its_heatmap():
    x = _x(3, 4)
    result = gradlab.gradcheck(_wrong, x, mode="full", taylor=False)
    fig = figure_of(result)
    assert isinstance(fig, go.Figure) and [t.type for t in fig.data] == ["heatmap"]
    # |t - 2t| / max(|t|, |2t|) = 1/2 at every element, in the input's layout
    assert np.allclose(np.asarray(fig.data[0].z, dtype=float), np.log10(0.5), atol=1e-6)
    assert np.asarray(fig.data[0].z).shape == (3, 4)


@pytest.mark.parametrize("mode", ["sampled", "directional"])
def test_other_checks_show_one_marker_per_value_coloured_by_state(mode):
    result = gradlab.gradcheck(_wrong, _x(4, 5), mode=mode, samples=4, taylor=False)
    fig = figure_of(result)
    names = [t.name for t in fig.data]
    assert names == ["fail", "tolerance", "error bound"]  # every value is wrong (by 1/2 of the truth)
    assert len(fig.data[0].y) == 4 and fig.data[0].marker.color == STATE_COLOURS["fail"]
    assert fig.layout.yaxis.type == "log"


def test_the_chart_takes_the_state_and_error_bound_columns_when_a_table_has_them():
    result = gradlab.gradcheck(torch.sin, _x(6), mode="sampled", samples=3, taylor=False)
    table = result.table.assign(state=["pass", "inconclusive", "not_differentiable"],
                                error_bound=result.table["tolerance"] / 10)
    fig = value_errors_figure(table)
    assert [t.name for t in fig.data] == ["pass", "inconclusive", "not_differentiable", "tolerance",
                                          "error bound"]


def test_the_html_holds_the_summary_and_the_table():
    result = gradlab.gradcheck(_wrong, _x(30), mode="full", taylor=False)
    page = block_of(result).html()
    assert "<table" in page and "plotly" not in page  # the figure is Plotly's renderer's to draw
    assert "Gradient check failed" in page
    assert page.count("<tr") == 1 + 20  # header + the 20 values furthest over their tolerance
    assert "of 30." in page


def test_the_worst_values_come_first():
    x = _x(5)
    table = table_of(gradlab.gradcheck(_wrong, x, mode="full", taylor=False))
    # the error is |x| and the tolerance atol + rtol·2|x|: the largest x is furthest over it
    assert table["element"].tolist() == [f"t[{i}]" for i in range(4, -1, -1)]  # named as _wrong names it


def test_user_text_is_escaped_in_the_html_and_the_figure():
    result = gradlab.gradcheck(_wrong, _x(2, 2), mode="sampled", samples=2, taylor=False)
    columns = result.columns.joined(element=np.array([_HOSTILE, "x[1]"], dtype=object))
    hostile = dataclasses.replace(result, columns=columns, error_map=None)
    page = block_of(hostile).html()
    assert "<script>alert" not in page
    assert "&lt;script&gt;alert" in page
    hover = [str(c[0]) for t in figure_of(hostile).data if t.customdata is not None for c in t.customdata]
    assert any("&lt;script&gt;" in h for h in hover) and not any("<script>" in h for h in hover)


def test_a_sweep_is_shown_with_its_best_steps_and_its_figure():
    dtypes, schemes = ("float32", "float64"), ("forward", "central")
    result = gradlab.sweep("exp(x)", at=1.0, dtypes=dtypes, schemes=schemes, points=9)
    fig = result.figure()
    assert isinstance(fig, go.Figure)
    sweeps = [t.name for t in fig.data if t.meta and t.meta.get("kind") == "sweep"]
    assert sorted(sweeps) == sorted(f"{d} · {s}" for d in dtypes for s in schemes)
    page = result._repr_html_()
    assert "<table" in page
    assert page.count("<tr") == 1 + len(dtypes) * len(schemes)
    assert f"{np.e:.15g}"[:15] in page  # f'(1) = e, the exact reference


def test_sweep_refuses_what_run_sweep_refuses():
    from gradlab.errors import GradLabError

    with pytest.raises(GradLabError):
        gradlab.sweep("exp(x)", at=1.0, dtypes="float99")


# ------------------------------------------------------------- Plotly's renderer

from IPython import get_ipython  # noqa: E402
from notebook_kernel import notebook_kernel  # noqa: E402

from gradlab import notebook_html  # noqa: E402


def _results():
    sweep = gradlab.sweep("exp(x)", at=1.0, dtypes="float64", schemes="central", points=5)
    check = gradlab.gradcheck(_wrong, _x(3), mode="full", taylor=False)
    layers = gradlab.check_layers(torch.nn.Sequential(torch.nn.Linear(3, 2, dtype=torch.float64)),
                                  torch.ones(2, 3, dtype=torch.float64))
    return sweep, check, layers


def test_each_result_shows_its_table_then_its_figure_through_plotlys_renderer():
    for result in _results():
        with notebook_kernel() as shown:
            result._ipython_display_()
        text, *figures = shown.outputs
        assert "<table" in text.data["text/html"]
        assert "plotly" not in text.data["text/html"] and "<script" not in text.data["text/html"]
        bundle = figures[-1].data  # Plotly's own output: its mimetype (and the notebook's html)
        drawn = bundle["application/vnd.plotly.v1+json"]["data"]
        assert [t["type"] for t in drawn] == [t.type for t in result.figure().data]


def test_outside_a_kernel_only_the_text_and_table_are_shown():
    result = _results()[0]
    with notebook_kernel() as shown:
        del get_ipython().kernel  # a terminal IPython: no kernel
        try:
            result._ipython_display_()
        finally:
            get_ipython().kernel = object()
    assert len(shown.outputs) == 1 and "<table" in shown.outputs[0].data["text/html"]


def test_without_plotly_the_figure_is_a_sentence_saying_how_to_get_it():
    def missing():
        raise ModuleNotFoundError("No module named 'plotly'", name="plotly")

    block = notebook_html.NotebookBlock("t", ["a line"], _results()[0].best, missing)
    with notebook_kernel() as shown:
        block.display()
    assert [o.data["text/html"].count(notebook_html.NO_PLOTLY.split(":")[0]) for o in shown.outputs] == [0, 1]
