"""A check result and a sweep in a notebook: an escaped table and a Plotly figure."""

import dataclasses

import numpy as np
import plotly.graph_objects as go
import pytest
import torch

import gradlab
from gradlab.check.verdicts.notebook import figure_of, html_of, table_of
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


def test_the_html_holds_the_summary_the_table_and_the_figure():
    result = gradlab.gradcheck(_wrong, _x(30), mode="full", taylor=False)
    page = html_of(result)
    assert "<table" in page and "plotly-graph-div" in page
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
    page = html_of(hostile)
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
    assert "<table" in page and "plotly-graph-div" in page
    assert page.count("<tr") == 1 + len(dtypes) * len(schemes)
    assert f"{np.e:.15g}"[:15] in page  # f'(1) = e, the exact reference


def test_sweep_refuses_what_run_sweep_refuses():
    from gradlab.errors import GradLabError

    with pytest.raises(GradLabError):
        gradlab.sweep("exp(x)", at=1.0, dtypes="float99")


# ------------------------------------------------------------- figures offline

import re  # noqa: E402

import plotly.offline  # noqa: E402

from gradlab.notebook_html import reset_plotlyjs  # noqa: E402

_SCRIPT_TAGS = re.compile(r"<script\b[^>]*>", re.IGNORECASE)


def _bundle_header() -> str:
    """The first line plotly.js's own bundle starts with, for the installed plotly."""
    return f"plotly.js v{plotly.offline.get_plotlyjs_version()}"


def _outside_bundle(page: str) -> str:
    """The page without the text of an inline plotly.js bundle (whose source names web sites)."""
    start = page.find("/**\n* plotly.js v")
    return page if start < 0 else page[:start] + page[page.index("</script>", start):]


def test_the_first_figure_carries_the_installed_plotlyjs_and_later_ones_reuse_it_with_no_network():
    reset_plotlyjs()  # as in a fresh kernel
    first = gradlab.sweep("exp(x)", at=1.0, dtypes="float64", schemes="central", points=5)._repr_html_()
    second = html_of(gradlab.gradcheck(_wrong, _x(3), mode="full", taylor=False))
    third = gradlab.sweep("sin(x)", at=1.0, dtypes="float32", schemes="forward", points=5)._repr_html_()
    assert first.count(_bundle_header()) == 1  # the installed version, inline, once
    assert len(first) > 1_000_000  # the whole library (about 5 MB), not a loader
    assert _bundle_header() not in second and _bundle_header() not in third
    assert "plotly.js v" not in second and len(second) < 200_000
    for page in (first, second, third):
        assert "Plotly.newPlot" in page
        tags = _SCRIPT_TAGS.findall(page)
        assert tags and not [t for t in tags if "src" in t.lower()]  # no script loaded from anywhere
        assert "cdn" not in _outside_bundle(page).lower() and "http" not in _outside_bundle(page)


def test_a_later_figure_says_what_to_do_when_its_page_has_no_plotlyjs():
    reset_plotlyjs()
    html_of(gradlab.gradcheck(_wrong, _x(3), mode="full", taylor=False))
    later = html_of(gradlab.gradcheck(_wrong, _x(3), mode="full", taylor=False))
    assert "if (!window.Plotly" in later and "reset_plotlyjs()" in later
    reset_plotlyjs()  # ... which makes the next figure carry plotly.js again
    again = html_of(gradlab.gradcheck(_wrong, _x(3), mode="full", taylor=False))
    assert again.count(_bundle_header()) == 1 and "reset_plotlyjs()" not in again
