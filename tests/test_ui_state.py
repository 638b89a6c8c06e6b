"""The shared UI helpers: URL widgets, presets, error display, figure config."""

import re

import pytest
from hypothesis import given
from hypothesis.strategies import text as st_text
from streamlit.testing.v1 import AppTest

from gradlab.ui import controls as widgets
from gradlab.ui.figures import figure_config
from gradlab.ui.messages import GENERIC_ERROR
from app_text import shown


def _controls_script():
    import streamlit as st

    from gradlab.ui.presets import apply_preset

    from gradlab.ui.url_widgets import url_number, url_text
    from gradlab.ui.controls import dtype_multiselect, eps_input, scheme_multiselect

    st.button("preset", key="go", on_click=apply_preset,
              args=({"dtypes": ("float16", "float99"), "eps": 1e-3, "x": 2.5},))
    values = (
        dtype_multiselect(),
        scheme_multiselect(),
        eps_input(),
        url_number("x", "x", value=0.5, min_value=-10.0, max_value=10.0),
        url_text("f", "expr", value="sin(x)", max_chars=20),
    )
    st.session_state["_values"] = values


def _run(query=None) -> AppTest:
    at = AppTest.from_function(_controls_script, default_timeout=30)
    at.query_params.update(query or {})
    return at.run()


def test_defaults_without_query_parameters():
    at = _run()
    assert not at.exception
    assert at.session_state["_values"] == (
        ("float32", "float64"), ("forward", "central"), 1e-6, 0.5, "sin(x)",
    )


def test_valid_url_values_seed_the_widgets():
    at = _run({"dtypes": ["float16", "float64"], "schemes": ["Complex step", "5-point"],
               "eps": "1e-03", "x": "-2", "expr": "1/x"})
    assert at.session_state["_values"] == (
        ("float16", "float64"), ("complex_step", "five_point"), 1e-3, -2.0, "1/x",
    )


@pytest.mark.parametrize(
    ("query", "position", "expected"),
    [
        ({"dtypes": ["float8"]}, 0, ("float32", "float64")),          # not an option
        ({"dtypes": ["float8", "float16"]}, 0, ("float16",)),          # invalid entry dropped
        ({"schemes": ["central"]}, 1, ("forward", "central")),         # URL holds labels
        ({"eps": "3e-07"}, 2, 1e-6),                                    # not on the grid
        ({"x": "1e9"}, 3, 0.5),                                         # out of range
        ({"x": "nan"}, 3, 0.5),
        ({"x": "abc"}, 3, 0.5),
        ({"expr": "x" * 100}, 4, "x" * 20),                             # cut to max_chars
    ],
)
def test_invalid_url_values_fall_back_quietly(query, position, expected):
    at = _run(query)
    assert not at.exception and not at.error
    assert at.session_state["_values"][position] == expected


def test_preset_callback_sets_values_and_drops_invalid_ones():
    at = _run()
    at.button(key="go").click().run()
    assert not at.exception
    dtypes, _, eps, x, _ = at.session_state["_values"]
    assert dtypes == ("float16",)
    assert eps == 1e-3
    assert x == 2.5


def _error_script():
    import streamlit as st

    from gradlab.errors import GradLabError
    from gradlab.ui.messages import reported_errors

    with reported_errors():
        raise GradLabError("The step must be positive; got -1.")
    with reported_errors():
        raise RuntimeError("internal detail that must not be shown")
    st.write("after")


def test_errors_are_messages_not_tracebacks():
    at = AppTest.from_function(_error_script).run()
    assert not at.exception
    assert [shown(e.value) for e in at.error] == ["The step must be positive; got -1.", GENERIC_ERROR]
    assert at.markdown[0].value == "after"


def test_wrappers_refuse_a_second_key():
    from gradlab.ui.url_widgets import url_toggle

    with pytest.raises(TypeError):
        url_toggle("t", "t", key="other")


@given(st_text())
def test_a_figures_download_name_is_a_safe_file_name_whatever_its_title(title):
    # The title can carry what a visitor typed (an expression, a formula): the PNG's name must
    # still be one plain file name, never a path, never empty.
    name = figure_config(title)["toImageButtonOptions"]["filename"]
    assert re.fullmatch(r"[A-Za-z0-9._-]+", name) and name[0] not in "-." and name[-1] not in "-."


def test_a_figures_download_name_keeps_the_titles_words():
    assert figure_config("error vs eps / sin(x)")["toImageButtonOptions"]["filename"] == "error-vs-eps-sin-x"
    assert figure_config("../../etc/passwd")["toImageButtonOptions"]["filename"] == "etc-passwd"
    assert figure_config("<>")["toImageButtonOptions"]["filename"] == "gradlab-figure"


def test_eps_grid_is_exact_decimals():
    grid = widgets.eps_options(1e-8, 1e-6, mantissas=(1, 2, 5))
    assert grid == (1e-8, 2e-8, 5e-8, 1e-7, 2e-7, 5e-7, 1e-6)
    assert widgets.format_eps(1e-6) == "1e-06"


def test_widget_labels_and_help_come_from_the_rows():
    # The URL words of the schemes (shared links depend on them) and eps to two digits.
    assert widgets.scheme_param("five_point", "complex_step") == ("5-point", "Complex step")
    assert widgets.scheme_label("not_a_scheme") == "not_a_scheme"
    assert widgets.dtype_label("float16") == "float16"
    # eps = 2**-p for p = 10, 7, 23, 52 stored fraction bits
    assert widgets.dtype_help() == (
        f"Machine epsilon: float16 {2**-10:.1e}, bfloat16 {2**-7:.1e}, "
        f"float32 {2**-23:.1e}, float64 {2**-52:.1e}.".replace("e-0", "e-"))
    # One help line per scheme, in the widget's order, each under the label shared links use
    # and with its order of accuracy from Taylor's theorem: one-sided differences O(h), the
    # central difference O(h²), the 5-point stencil and Richardson's extrapolation of two
    # central differences O(h⁴); the complex step's line says what it needs instead.
    help_lines = widgets.scheme_help().split("  \n")
    assert widgets.SCHEME_OPTIONS == ("forward", "backward", "central", "five_point", "complex_step", "richardson")
    assert [line.split(" — ")[0] for line in help_lines] == [
        "Forward", "Backward", "Central", "5-point", "Complex step", "Richardson"]
    orders = [re.search(r"error ∝ (h[²⁴]?)[.,:]", line) for line in help_lines]
    assert [o and o.group(1) for o in orders] == ["h", "h", "h²", "h⁴", None, "h⁴"]
    assert "holomorphic" in help_lines[4]


def _two_charts_script():
    import numpy as np
    import plotly.graph_objects as go

    from gradlab.ui.figures import prepare_figure, show_figure

    fig = go.Figure(go.Scatter(x=np.arange(50.0), y=np.arange(50.0) ** 2, name="square"))
    fig.update_layout(title={"text": "a figure"}, yaxis={"type": "log"})
    show_figure(fig, "plain")
    show_figure(prepare_figure(lambda: fig), "prepared")


def test_a_prepared_figure_reaches_the_page_exactly_as_the_figure_does():
    # PreparedFigure (gradlab.ui.compat) relies on how st.plotly_chart consumes a Plotly figure
    # (its to_dict(), then plotly.io.to_json): if Streamlit changes that, this fails, not the pages.
    import json

    at = AppTest.from_function(_two_charts_script).run()
    assert not at.exception
    charts = [e.proto for e in at.get("plotly_chart")]
    assert len(charts) == 2
    plain, prepared = (json.loads(c.spec) for c in charts)
    assert prepared == plain and plain["data"][0]["name"] == "square"
    assert json.loads(charts[1].config)["toImageButtonOptions"]["filename"] == "prepared"
