"""Explorer: error of finite differences and autograd against the step size. Layout only.

First screen (1280x720): a compact row of controls, the answer sentence, the chart.
Formulas, tables and the lesson sit below in expanders that draw their content only
when opened (KaTeX and data grids cost the browser seconds on a slow machine).
"""

from __future__ import annotations

import streamlit as st

from gradlab.labs.explorer import (ALL_DTYPE_NAMES, CUSTOM, DEFAULTS, EMULATED_HELP, EPS_LARGEST, EPS_SMALLEST,
                                   FUNCTION_OPTIONS, MAX_EXPRESSION_CHARS, MAX_POINTS, MAX_X, POINTS_MIN,
                                   POINTS_STEP, STEP_DEFAULT, STEPS, ChartOptions, ControlError, ExplorerView,
                                   ExpressionError, fitted_steps, formulas, function_label, main_chart, picked_point,
                                   settings_from, step_label, view)
from gradlab.ui.url_widgets import (url_number, url_radio, url_select_slider, url_selectbox, url_slider,
                                      url_text, url_toggle)
from gradlab.ui.controls import dtype_help, dtype_multiselect, eps_range_input, scheme_multiselect
from gradlab.ui.figures import cached_figure, replayed_chart
from gradlab.ui.messages import show_answer, show_error, stop_with_error
from gradlab.ui.page_chrome import answer_box, details, main_chart_box, quiz_box, start_page
from gradlab.ui.presentation import is_presenting
from gradlab.ui.presets import preset_buttons
from gradlab.ui.regime_links import regime_linked, regime_links
from gradlab.ui.slider_release import follow_chart_slider
from gradlab.ui.term_links import linked, term
from gradlab.ui.views import lab_view, show_chart

start_page("explorer")


_X_MOVED = "_explorer_x_moved"  # session_state: the one line saying a picked function moved x


def _on_function_change() -> None:
    """Picking a catalogue function moves x to its interesting point."""
    picked = picked_point(st.session_state.get("fn"), st.session_state.get("x"))
    if picked is not None:
        st.session_state["x"], said = picked
        if said:  # said once, next to the controls
            st.session_state[_X_MOVED] = said


def _honour_a_linked_step_range() -> None:
    """A link that names a step range (older links, or one copied with the fit off) means it.

    Runs before the toggle is drawn, on the session's first run only.
    """
    if ("eps_auto" not in st.session_state and "eps_range" in st.query_params
            and "eps_auto" not in st.query_params):
        st.session_state["eps_auto"] = False


# ---------------------------------------------------------------- controls

_SCHEME_HELP = ("Central: (f(x+h) − f(x−h))/2h, error ∝ h². Forward: (f(x+h) − f(x))/h, error ∝ h. "
                + term("Richardson extrapolation") + " " + term("complex step"))


#: The scheme multiselect is wide enough for a chip, its clear button and arrow (150 px cut
#: "Central" to "Ce…"); on a phone the two multiselects take a line each (side by side, the
#: second dtype chip scrolled out of sight behind a fade).
_CHIPS_CSS = """<style>
/* a third dtype chip wraps the box to a second row (its chips wrap so every one shows): one row less chart */
body:has(.st-key-dtypes [data-tag-index="2"]) [data-testid="stMain"] div.st-key-gl-main-chart.st-key-gl-main-chart {
  height: clamp(300px, calc(100vh - 377px), 600px) !important; }
@media (max-width: 640px) {
  [data-testid="stMain"] :is(.st-key-dtypes, .st-key-schemes) { flex: 1 1 100% !important; width: 100% !important; } }
</style>"""


def _controls():
    """The title with two popovers (steps, presets), then one row of controls that wraps on a phone.

    Returns the one frozen settings object, validated by the lab (which raises what to fix).
    """
    with st.container(horizontal=True, vertical_alignment="center", gap="small"):
        st.header("Explorer: error against step size", anchor=False, width="content")
        st.space("stretch")
        steps = st.popover("Steps", icon=":material/tune:")
        with st.popover("Presets", icon=":material/bookmarks:"):
            preset_buttons("explorer")
    v = {}
    with st.container(horizontal=True, vertical_alignment="bottom", gap="small"):
        v["fn"] = url_selectbox("function", "fn", FUNCTION_OPTIONS,
                                  index=FUNCTION_OPTIONS.index(DEFAULTS["fn"]), width=200,
                                  format_func=function_label, on_change=_on_function_change)
        v["x"] = url_number("point x", "x", value=DEFAULTS["x"], min_value=-MAX_X, max_value=MAX_X,
                              format="%.12g", width=120, help="Any float, e.g. 0.3, 1e-10 or -2.5e3.")
        v["dtypes"] = dtype_multiselect(default=DEFAULTS["dtypes"], width="stretch", options=ALL_DTYPE_NAMES,
                                        help=dtype_help() + " " + EMULATED_HELP + " " + term("unit round-off"))
        v["schemes"] = scheme_multiselect(default=DEFAULTS["schemes"], help=_SCHEME_HELP, width=180)
    st.html(_CHIPS_CSS)
    if moved := st.session_state.pop(_X_MOVED, None):
        st.caption(moved)
    with steps:
        _step_controls(v)
    if v["fn"] == CUSTOM:
        v["expr"] = url_text("f(x) =", "expr", value=DEFAULTS["expr"], max_chars=MAX_EXPRESSION_CHARS,
                               help="Python syntax in x: + - * / **, exp, log, sin, sqrt, abs, ...")
    return settings_from(v)


def _step_controls(v: dict) -> None:
    """The steps' controls, their values into ``v`` (the fitted range is the lab's: it only says it)."""
    _honour_a_linked_step_range()
    v["eps_auto"] = url_toggle("fit the steps to the dtypes", "eps_auto", value=DEFAULTS["eps_auto"],
                               help="On: from a decade below the unit round-off u (where round-off "
                                    "reaches 100 %) to a decade past the best step u^(1/(p+1)), so "
                                    "each V fills the chart. Off: choose the range yourself.")
    if v["eps_auto"]:
        st.caption(fitted_steps(v["dtypes"], v["schemes"]).caption)
    else:
        v["eps_range"] = eps_range_input("step range (eps-min, eps-max)", default=DEFAULTS["eps_range"],
                                         smallest=EPS_SMALLEST, largest=EPS_LARGEST)
    v["points"] = url_slider("points in the sweep", "points", min_value=POINTS_MIN,
                               max_value=MAX_POINTS, value=DEFAULTS["points"], step=POINTS_STEP)


# ------------------------------------------------------------------ views


def _answer(shown: ExplorerView) -> None:
    with answer_box():
        # ulp, the answer's unit, defined where it first appears: on hover (a line of its own cost
        # the chart the height its step slider takes on a 1280x720 first screen)
        show_answer(shown.answer, icon=":material/lightbulb:",
                    links=lambda sentence: regime_linked(linked(sentence, "ulp")))


#: The main chart's box fills the first screen below the controls and the answer (so all of
#: the chart, legend included, is on a 1280x720 projector's first screen) but stays readable
#: on a tall screen; a phone gets a fixed height (its legend takes more rows). The chart
#: stretches to the box (show_figure(height="stretch")); presentation mode sets its own.
_CHART_BOX_CSS = """<style>
[data-testid="stMain"] div.st-key-gl-main-chart.st-key-gl-main-chart {
  height: clamp(330px, calc(100vh - 349px), 600px) !important; min-height: 0 !important;
  flex: 0 0 auto !important; }
@media (max-width: 640px) {
  [data-testid="stMain"] div.st-key-gl-main-chart.st-key-gl-main-chart { height: 515px !important; flex: 0 0 auto !important; } }
.st-key-gl-main-chart [data-testid="stPlotlyChart"] { flex: 1 1 auto; min-height: 0; }
</style>"""


_CHART_KEY = "explorer_chart"


@st.fragment
def _chart(settings, shown: ExplorerView) -> None:
    """The chart, then its display options: reruns alone when an option changes."""
    if not shown.has_derivative:  # a kink, or outside f's domain: no error to draw
        _estimates_chart(settings, shown)
        return
    note = st.empty()  # above the chart's box, which CSS sizes: inside, it would take the plot's height
    chart = main_chart_box()  # drawn above the options, filled after they are read
    with st.container(horizontal=True, vertical_alignment="bottom"):
        error = url_radio("error", "error", ("relative", "absolute"), horizontal=True,
                            help=term("relative error"))
        theory = url_toggle("theory lines", "theory", value=DEFAULTS["theory"],
                              help=term("truncation error") + " " + term("round-off error"))
        autograd = url_toggle("autograd lines", "autograd", value=DEFAULTS["autograd"],
                                help="Autograd's own error: a flat line, it has no step. " + term("ulp"))
        focus = url_selectbox("theory for", "focus", ("auto", *ALL_DTYPE_NAMES),
                                format_func=lambda d: "auto (all, if few curves)" if d == "auto" else d,
                                width=240, help="Which dtypes get theory lines and predicted-best stars.")
        h = url_select_slider("marked step h", "h", STEPS, value=STEP_DEFAULT, format_func=step_label,
                                width=260, help="The step marked on the chart: drag the slider under the chart "
                                                "(it moves in your browser) or this one; the link keeps the step.")
    follow_chart_slider(_CHART_KEY, "h", step_label(h), STEPS)
    st.caption(shown.texts["chart"])
    options = ChartOptions(error, theory, autograd, focus)
    drawn = main_chart(shown, options)
    if drawn.note:  # f′ = 0 exactly: its relative error is undefined everywhere
        note.info(drawn.note, icon=":material/info:")
    key = (settings, options)
    with chart:
        if not is_presenting():
            st.html(_CHART_BOX_CSS)
        # built once per view (every stop's frame in it), shown at h (show_figure's step); the
        # recorded chart replayed while nothing it shows changes (gradlab.ui.figures.replayed_chart)
        replayed_chart(key, shown.texts["file name"],
                       lambda: cached_figure(key, drawn.chart.build, *drawn.chart.args, **drawn.chart.kwargs),
                       chart_key=_CHART_KEY, height="stretch", step=h if drawn.step_slider else None)


def _estimates_chart(settings, shown: ExplorerView) -> None:
    """No exact f′ (the answer says why): what each scheme and autograd return, with only the words
    that describe it; no error options, bands, stars or marked step, since there is no error."""
    chart = main_chart_box()
    st.caption(shown.texts["estimates"])
    with chart:
        if not is_presenting():
            st.html(_CHART_BOX_CSS)
        show_chart(settings, shown, "estimates", shown.texts["file name"], chart_key=_CHART_KEY, height="stretch")


def _notes(shown: ExplorerView) -> None:
    """Each warning on its own, the infos together; the engine set each note's level. The missing
    reference is the answer's own sentence, not said again here."""
    if shown.texts["theory"]:  # the 8-bit floats' theory, which the answer leaves out
        st.caption(shown.texts["theory"])
    for warning in shown.warnings:
        st.warning(warning, icon=":material/warning:")
    if shown.texts["infos"]:
        st.info(shown.texts["infos"], icon=":material/info:")


def _numbers(shown: ExplorerView, text: str) -> None:
    """Formulas, the rounding of x, best steps and autograd: drawn only when opened."""
    box = details("Formulas and numbers: f, f′, how x is rounded, best steps, autograd",
                  "explorer_numbers", icon=":material/table:")
    if box is None:
        return
    with box:
        try:
            f_latex, d_latex = lab_view(formulas, text, spinner="Writing the formulas…")
        except Exception as err:  # noqa: BLE001 - a time limit's sentence, not an exception element
            show_error(err)
        else:
            st.latex(rf"f(x) = {f_latex}")
            st.latex(rf"f'(x) = {d_latex}")
        st.markdown(shown.texts["exact"])
        st.markdown("**How x is rounded** in each dtype (errors are measured against the exact "
                    "derivative at the rounded point)")
        st.dataframe(shown.tables["rounding"], hide_index=True, width="stretch")
        st.markdown("**Best step per dtype and scheme**: observed in this sweep, and the theory's h*")
        st.dataframe(shown.tables["best steps"], hide_index=True, width="stretch")
        st.markdown("**Autograd** at the dtype-rounded x, against the exact derivative")
        st.dataframe(shown.tables["autograd"], hide_index=True, width="stretch")
        st.download_button("Download the sweep as CSV", data=lambda: shown.tables["sweep"].to_csv(index=False),
                           file_name=f"{shown.texts['file name']}.csv", mime="text/csv", on_click="ignore",
                           icon=":material/download:", key="download_csv")


@st.fragment
def _lesson(shown: ExplorerView) -> None:
    """Predict first: a dtype the chart does not show yet; once answered, its best step and why.
    Not asked where there is no exact derivative: no step is best there."""
    if shown.quiz is None:
        return
    with quiz_box(), st.expander("Predict before you look: where is the best step?", icon=":material/school:",
                                 expanded=True):
        _quiz(shown)


def _add_dtype(dtype: str) -> None:
    """``on_click``: put ``dtype`` on the chart (its curve shows the answer just revealed)."""
    st.session_state["dtypes"] = [*st.session_state.get("dtypes", ()), dtype]


def _quiz(shown: ExplorerView) -> None:
    quiz = shown.quiz
    if quiz.unavailable:
        st.caption(quiz.unavailable)
        return
    # Asked about a dtype the chart does not show, so the answer is not on screen yet; a quiz
    # answer is never kept in the URL: a shared link must arrive unanswered.
    guess = st.radio(quiz.question, quiz.choices, index=None, format_func=quiz.label, key="explorer_guess",
                     captions=quiz.captions, help=quiz.help)
    if guess is None:
        return
    try:  # the same sweep for that dtype alone: one more cached engine call
        own = lab_view(view, quiz.settings, spinner="Computing the sweep…")
    except Exception as err:  # noqa: BLE001 - every failure becomes a message
        show_error(err)
        return
    show_answer(quiz.reveal(guess, own), icon=":material/lightbulb:")
    st.button(f"Add {quiz.dtype} to the chart", key="explorer_quiz_add", on_click=_add_dtype, args=(quiz.dtype,),
              icon=":material/add_chart:")
    st.markdown("A finite difference with step $h$ makes two errors. **Truncation**: the "
                "formula drops terms of the Taylor series, so it falls like $h^p$ "
                "($p = 1$ one-sided, $p = 2$ central). **Round-off**: $f$ is rounded to "
                "relative precision $u$ (the unit round-off, half the dtype's machine epsilon) "
                "and the difference of two nearly equal values is divided by a small $h$:")
    st.latex(r"E(h) \approx \underbrace{C\,|f^{(p+1)}(x)|\,h^{p}}_{\text{truncation}}"
             r" + \underbrace{\frac{u\,|f(x)|}{h}}_{\text{round-off}},\qquad "
             r"h^{*} = \left(\frac{u\,|f|}{p\,C\,|f^{(p+1)}|}\right)^{1/(p+1)}"
             r"\propto u^{1/(p+1)}")
    st.markdown("On log–log axes each term is a straight line, slope $p$ and slope $-1$; "
                "their sum is a V whose bottom $h^*$ moves with the dtype's $u$.")


# ------------------------------------------------------------------- page

# controls -> one validated settings object -> one cached engine call (the lab's view) -> render
try:
    settings = _controls()
    shown = lab_view(view, settings, spinner="Computing the sweep…")
except ExpressionError as err:
    stop_with_error(err, icon=":material/edit:")
except ControlError as err:  # a choice still to make, or a range to fix: the lab's sentence
    stop_with_error(str(err), level=err.level)
except Exception as err:  # noqa: BLE001 - every failure becomes a message
    stop_with_error(err)
_answer(shown)
_chart(settings, shown)
_notes(shown)
_lesson(shown)
_numbers(shown, settings.expression)
regime_links()  # the answer's "round-off" and "truncation" light the chart's bands, and the reverse
