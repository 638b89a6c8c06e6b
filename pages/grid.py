"""Representable grid: why (x+h) − x is not h. Layout only.

First screen (1280x720): the title with the presets in a popover, one row of controls,
the answer sentence and the whole chart of f on the dtype's grid. Below: the numbers
with their bits (the shared leading digits marked), the secant's slope as h shrinks,
the definitions (anchor ``#definitions``, linked from other pages) and the precision
table of every dtype.
"""

from __future__ import annotations

import streamlit as st

from gradlab.labs.grid import (ALL_DTYPE_NAMES, CATALOGUE, CUSTOM, EXPRESSION_CHARS, FUNCTION_OPTIONS, GRID_STEP_RANGE,
                               PAGE_DEFAULTS, X_MAGNITUDE, GridSettings, at_step, expression_from, function_label,
                               grid_steps, settings_from, view, view_of)
from gradlab.ui.bit_editor import bit_editor
from gradlab.ui.url_widgets import url_number, url_selectbox, url_text
from gradlab.ui.controls import dtype_label, eps_input, format_eps
from gradlab.ui.messages import show_answer, stop_with_error
from gradlab.ui.page_chrome import answer_box, main_chart_box, start_page, title_row
from gradlab.ui.presentation import is_presenting
from gradlab.ui.presets import presets_popover
from gradlab.ui.slider_release import follow_chart_slider
from gradlab.ui.term_links import definition, linked, term
from gradlab.ui.views import lab_view, replayed_section, show_chart

start_page("grid")

CHART_KEY = "grid_chart"
CONTROL_WIDTH = 120  # px: function, x, dtype, f(x) and the step's slider in one row at 1280 px


def _on_function_change() -> None:
    key = st.session_state.get("fn")
    if key in CATALOGUE:
        st.session_state["x"] = CATALOGUE[key].x


def _honour_a_linked_expression() -> None:
    """A link that carries an expression but no function meant "custom (type it)", the function
    box's default before it named sin(x): it opens the same view. Runs before the box is drawn."""
    if "fn" not in st.session_state and "expr" in st.query_params and "fn" not in st.query_params:
        st.session_state["fn"] = CUSTOM


def _controls() -> GridSettings:
    """The title row, then one row of controls; the one frozen settings object (or the page stops)."""
    _honour_a_linked_expression()
    with title_row("Representable grid: (x+h) − x ≠ h",
                   help="Why a finite difference's step is not the h you asked for: x + h is rounded "
                        "to the numbers the dtype can hold, and so is f."):
        presets_popover("grid")
    v, d = {}, PAGE_DEFAULTS
    with st.container(horizontal=True, vertical_alignment="bottom", gap="small"):
        v["fn"] = url_selectbox("function", "fn", FUNCTION_OPTIONS, index=FUNCTION_OPTIONS.index(d["fn"]),
                                  width=170, format_func=function_label, on_change=_on_function_change)
        v["x"] = url_number("point x", "x", value=d["x"], min_value=-X_MAGNITUDE,
                              max_value=X_MAGNITUDE, format="%.12g", width=CONTROL_WIDTH,
                              help="Any float, e.g. 1, 0.3 or 1e-3. It is rounded to the dtype first.")
        v["dtype"] = url_selectbox("dtype", "dtype", ALL_DTYPE_NAMES, index=ALL_DTYPE_NAMES.index(d["dtype"]),
                                     width=CONTROL_WIDTH, format_func=dtype_label,
                                     help="The 8-bit formats are emulated: arithmetic in float32, x, x+h and "
                                          "every value of f rounded to the 8-bit format. " + term("ulp"))
        if v["fn"] == CUSTOM:
            v["expr"] = url_text("f(x) =", "expr", value=d["expr"], max_chars=EXPRESSION_CHARS,
                                   width=CONTROL_WIDTH,
                                   help="Python syntax in x: + - * / **, exp, log, sin, sqrt, abs, ...")
        v["h"] = eps_input("step h", "h", default=d["h"], smallest=GRID_STEP_RANGE[0], largest=GRID_STEP_RANGE[1],
                           mantissas=(1, 2, 5), width="stretch",
                           help="The step you ask for. x + h is rounded to the grid, so the step taken "
                                "is a whole number of ulps of x (or none).")
    try:
        expression_from(v)
    except Exception as err:  # noqa: BLE001 - what to fix in the box just typed in
        stop_with_error(err, icon=":material/edit:")
    return settings_from(v)


#: The main chart's box: at 1280x720 all of it (step slider, plot, legend) on the first screen
#: under the controls and a three-line answer; on a phone taller, since its legend takes a row per
#: entry and only the plot's top has to be on the first screen. The chart stretches to the box.
_CHART_BOX_CSS = """<style>
[data-testid="stMain"] div.st-key-gl-main-chart.st-key-gl-main-chart { height: 365px !important;
  min-height: 0 !important; flex: 0 0 auto !important; }
@media (max-width: 640px) {
  [data-testid="stMain"] div.st-key-gl-main-chart.st-key-gl-main-chart { height: 480px !important; } }
.st-key-gl-main-chart [data-testid="stPlotlyChart"] { flex: 1 1 auto; min-height: 0; }
</style>"""


def _numbers_and_bits(settings: GridSettings, shown) -> None:
    """The facts beside the secant's slope against h, then the numbers and their bits."""
    left, right = st.columns([3, 2])
    with left:
        st.markdown(shown.texts["facts"])
    with right:  # drawn once per settings and replayed (a chart is encoded to JSON on every rerun it is drawn in)
        replayed_section(settings, "secant", lambda: _secant_chart(settings, shown))
    st.markdown(shown.texts["values"])
    st.caption("Marked: the leading digits and bits f(x) and f(x+h) share. The subtraction "
               "f(x+h) − f(x) cancels them; only the rest survives.")


def _secant_chart(settings: GridSettings, shown) -> None:
    """The secant's slope against h."""
    st.markdown("**The secant's slope as h shrinks**: near ulp(x) it can take only a few values.")
    show_chart(settings, shown, "secant", "gradlab-grid-secant-over-h")


def _definitions(shown) -> None:
    """The words and the precision table of every dtype: the same for every view (drawn once and replayed)."""
    st.subheader("Definitions", anchor="definitions")
    st.markdown(
        "- **grid**: the numbers a dtype can hold. Between powers of two they are evenly spaced; "
        "the spacing doubles at each power of two.\n"
        f"- **ulp**: {definition('ulp')}\n"
        "- **precision p**: significand bits, the implicit leading 1 included (float32: 24).\n"
        "- **machine epsilon** eps = 2^(1−p): the gap between 1 and the next number, ulp(1).\n"
        f"- **unit round-off**: {definition('unit round-off')} "
        "In symbols u = 2^−p = eps/2.\n"
        "- **subnormal**: the evenly spaced numbers below the smallest normal one, "
        "spacing smallest normal × eps.")
    st.markdown("**Precision table**: every dtype, native and emulated.")
    st.dataframe(shown.tables["dtypes"], hide_index=True, width="stretch")
    st.caption(shown.texts["central theory"])


# controls -> one frozen settings object -> one cached engine call (the view: every step of its
# slider) -> render at the page's step (a look-up in the view)
try:
    settings = _controls()
    chart_key = view_of(settings)  # one view, one worker call, whichever step the page shows
    shown = at_step(lab_view(view, chart_key), settings.h)
except Exception as err:  # noqa: BLE001 - every failure becomes a message
    stop_with_error(err)
with answer_box():
    # ulp, the answer's and the chart's unit, defined where the answer first says it (on hover;
    # the link goes to the Definitions below)
    show_answer(shown.answer, icon=":material/lightbulb:", links=lambda sentence: linked(sentence, "ulp", "#definitions"))
with main_chart_box():
    if not is_presenting():  # presentation mode sizes the box itself
        st.html(_CHART_BOX_CSS)
    # built once per view (every step's frame in it), recorded once per step and replayed; its
    # height the box's: this page's CSS sets it, or presentation mode
    show_chart(chart_key, shown, "grid", shown.texts["file name"], chart_key=CHART_KEY, height="stretch",
               step=settings.h)
follow_chart_slider(CHART_KEY, "h", format_eps(settings.h), grid_steps())
bit_editor(shown.result.difference.x, settings.dtype)  # click a bit of x: x, the grid and the step taken move
_numbers_and_bits(settings, shown)
replayed_section("grid", "definitions", lambda: _definitions(shown))
