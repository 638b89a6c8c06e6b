"""Explorer: error of finite differences and autograd against the step size. Layout only.

First screen (1280x720): a compact row of controls, the answer sentence, the chart.
Formulas, tables and the lesson sit below in expanders that draw their content only
when opened (KaTeX and data grids cost the browser seconds on a slow machine).
"""

from __future__ import annotations

import streamlit as st

from gradlab.errors import GradLabError
from gradlab.sweep.engine import SweepResult, SweepSettings
from gradlab.sweep.notes import no_reference_note
from gradlab.server.heavy_work import sweep, sweep_formulas
from gradlab.ui.worker_calls import heavy
from gradlab.figures.sweep import has_drawable_errors
from gradlab.figures.sweep_slider import error_vs_eps_with_slider, estimate_vs_eps_with_legend, step_label
from gradlab.figures.sweep_tables import autograd_table, best_step_table, exact_digits, format_sig, rounding_table
from gradlab.limits import LIMITS
from gradlab.literal_text import markdown_literal
from gradlab.numerics.dtypes import ALL_DTYPE_NAMES, EMULATED_DTYPES, facts
from gradlab.numerics.expressions import parse
from gradlab.numerics.schemes import get_scheme
from gradlab.sweep.step_frames import slider_steps
from gradlab.sweep.step_range import chart_step_range
from gradlab.answers.sweep import sweep_answer, theory_words
from gradlab.teaching.catalogue import CATALOGUE
from gradlab.teaching.glossary import definition, term
from gradlab.teaching.explorer_defaults import (
    CUSTOM,
    DEFAULTS,
    EPS_LARGEST,
    EPS_SMALLEST,
    FUNCTION_OPTIONS,
    POINTS_MIN,
    POINTS_STEP,
    STEP_DEFAULT,
    function_label,
)
from gradlab.teaching.quizzes import GUESSES, guess_label, guess_step, quiz_dtype, quiz_reveal, quiz_scheme
from gradlab.ui.cache_keys import page_cache_data, page_cache_resource, settings_key
from gradlab.ui.bound_widgets import (bound_number, bound_radio, bound_select_slider, bound_selectbox, bound_slider,
                                      bound_text, bound_toggle)
from gradlab.ui.controls import dtype_help, dtype_multiselect, eps_range_input, scheme_multiselect
from gradlab.ui.figures import cached_figure, replayed_chart
from gradlab.ui.messages import show_answer, show_error, stop_with_error
from gradlab.ui.regime_links import regime_linked, regime_links
from gradlab.ui.page_chrome import answer_box, details, main_chart_box, quiz_box, start_page
from gradlab.ui.presentation import is_presenting
from gradlab.ui.presets import preset_buttons
from gradlab.ui.slider_release import follow_chart_slider
from gradlab.ui.term_links import linked

start_page("explorer")


# ------------------------------------------------------------------ engine


@page_cache_resource(max_entries=LIMITS.cache_entries, ttl=LIMITS.cache_seconds,
                     show_spinner="Computing the sweep…", hash_funcs={SweepSettings: settings_key})
def _sweep(settings: SweepSettings) -> SweepResult:
    """The sweep, kept as it came back and shared read-only by every session (st.cache_data would
    unpickle its tables on every rerun), keyed by the settings' text; the cached function made once
    per process, not on every rerun (gradlab.ui.cache_keys)."""
    return heavy(sweep, settings)


@page_cache_data(max_entries=LIMITS.cache_entries, ttl=LIMITS.cache_seconds, show_spinner=False)
def _latex(text: str) -> tuple[str, str]:
    return heavy(sweep_formulas, text)


_X_MOVED = "_explorer_x_moved"  # session_state: the one line saying a picked function moved x


def _on_function_change() -> None:
    """Picking a catalogue function moves x to its interesting point."""
    key = st.session_state.get("fn")
    if key in CATALOGUE:
        before, after = st.session_state.get("x"), CATALOGUE[key].x
        st.session_state["x"] = after
        if before is not None and before != after:  # said once, next to the controls
            st.session_state[_X_MOVED] = (f"Picking {CATALOGUE[key].title} moved x from {before:g} to "
                                          f"{after:g}, the point this example is about; type another x to change it.")


def _honour_a_linked_step_range() -> None:
    """A link that names a step range (older links, or one copied with the fit off) means it.

    Runs before the toggle is drawn, on the session's first run only.
    """
    if ("eps_auto" not in st.session_state and "eps_range" in st.query_params
            and "eps_auto" not in st.query_params):
        st.session_state["eps_auto"] = False


# ---------------------------------------------------------------- controls

_EMULATED_HELP = ("8-bit floats, emulated (x, x + h and every value inside f rounded to the format, "
                  "arithmetic in float32; the stencil's difference and division in float64): "
                  + ", ".join(f"{r.name} {r.eps:.3g}" for r in EMULATED_DTYPES.values()) + ".")
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


def _controls() -> SweepSettings:
    """The title with two popovers (steps, presets), then one row of controls that wraps on a phone.

    Returns the one frozen settings object, validated (the page stops on what to fix).
    """
    with st.container(horizontal=True, vertical_alignment="center", gap="small"):
        st.header("Explorer: error against step size", anchor=False, width="content")
        st.space("stretch")
        steps = st.popover("Steps", icon=":material/tune:")
        with st.popover("Presets", icon=":material/bookmarks:"):
            preset_buttons("explorer")
    with st.container(horizontal=True, vertical_alignment="bottom", gap="small"):
        fn = bound_selectbox("function", "fn", FUNCTION_OPTIONS,
                             index=FUNCTION_OPTIONS.index(DEFAULTS["fn"]), width=200,
                             format_func=function_label, on_change=_on_function_change)
        x = bound_number("point x", "x", value=DEFAULTS["x"], min_value=-LIMITS.literal_magnitude,
                         max_value=LIMITS.literal_magnitude, format="%.12g", width=120,
                         help="Any float, e.g. 0.3, 1e-10 or -2.5e3.")
        dtypes = dtype_multiselect(default=DEFAULTS["dtypes"], width="stretch", options=ALL_DTYPE_NAMES,
                                   help=dtype_help() + " " + _EMULATED_HELP + " " + term("unit round-off"))
        schemes = scheme_multiselect(default=DEFAULTS["schemes"], help=_SCHEME_HELP, width=180)
    st.html(_CHIPS_CSS)
    if moved := st.session_state.pop(_X_MOVED, None):
        st.caption(moved)
    with steps:
        eps_min, eps_max, points = _step_controls(dtypes, schemes)
    if fn == CUSTOM:
        text = bound_text("f(x) =", "expr", value=DEFAULTS["expr"],
                          max_chars=LIMITS.expression_chars,
                          help="Python syntax in x: + - * / **, exp, log, sin, sqrt, abs, ...")
    else:
        text = CATALOGUE[fn].expression
    return _validated(SweepSettings(text, float(x), dtypes, schemes, eps_min, eps_max, int(points)))


def _step_controls(dtypes, schemes) -> tuple[float, float, int]:
    _honour_a_linked_step_range()
    fitted = bound_toggle("fit the steps to the dtypes", "eps_auto", value=DEFAULTS["eps_auto"],
                          help="On: from a decade below the unit round-off u (where round-off "
                               "reaches 100 %) to a decade past the best step u^(1/(p+1)), so "
                               "each V fills the chart. Off: choose the range yourself.")
    if fitted:
        eps_min, eps_max = chart_step_range(dtypes, schemes) if dtypes and schemes else (1e-16, 1.0)
        st.caption(f"Steps from {eps_min:.0e} to {eps_max:.0e}.")
    else:
        eps_min, eps_max = eps_range_input("step range (eps-min, eps-max)", default=DEFAULTS["eps_range"],
                                           smallest=EPS_SMALLEST, largest=EPS_LARGEST)
    points = bound_slider("points in the sweep", "points", min_value=POINTS_MIN,
                          max_value=LIMITS.sweep_points, value=DEFAULTS["points"], step=POINTS_STEP)
    return eps_min, eps_max, points


def _validated(settings: SweepSettings) -> SweepSettings:
    """Settings the engine accepts; otherwise the page stops after saying what to fix."""
    try:
        parse(settings.expression)
    except GradLabError as err:
        stop_with_error(err, icon=":material/edit:")
    if not settings.dtypes:
        stop_with_error("Pick at least one dtype above (float32 and float64 are a good start).", level="warning")
    if not settings.schemes:
        stop_with_error("Pick at least one scheme above (Central is the classic).", level="warning")
    if settings.eps_min >= settings.eps_max:
        stop_with_error(f"eps-min ({settings.eps_min:.0e}) must be smaller than eps-max "
                        f"({settings.eps_max:.0e}): drag the two ends of the step range apart.")
    return settings.validated()  # its GradLabError is the page's to show


# ------------------------------------------------------------------ views


def _answer(result: SweepResult) -> None:
    with answer_box():
        # ulp, the answer's unit, defined where it first appears: on hover (a line of its own cost
        # the chart the height its step slider takes on a 1280x720 first screen)
        show_answer(sweep_answer(result), icon=":material/lightbulb:",
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
#: The marked step's stops: every 1-2-5 step of the step range's widest ends (the chart's slider
#: offers those inside the chart's range).
_STEPS = slider_steps(EPS_SMALLEST, EPS_LARGEST)


@st.fragment
def _chart(result: SweepResult) -> None:
    """The chart, then its display options: reruns alone when an option changes."""
    settings = result.settings
    if not result.reference.defined:  # a kink, or outside f's domain: no error to draw
        _estimates_chart(result)
        return
    note = st.empty()  # above the chart's box, which CSS sizes: inside, it took the plot's height
    chart = main_chart_box()  # drawn above the options, filled after they are read
    with st.container(horizontal=True, vertical_alignment="bottom"):
        error = bound_radio("error", "error", ("relative", "absolute"), horizontal=True,
                            help=term("relative error"))
        theory = bound_toggle("theory lines", "theory", value=DEFAULTS["theory"],
                              help=term("truncation error") + " " + term("round-off error"))
        autograd = bound_toggle("autograd lines", "autograd", value=DEFAULTS["autograd"],
                                help="Autograd's own error: a flat line, it has no step. " + term("ulp"))
        focus = bound_selectbox("theory for", "focus", ("auto", *ALL_DTYPE_NAMES),
                                format_func=lambda d: "auto (all, if few curves)" if d == "auto" else d,
                                width=240, help="Which dtypes get theory lines and predicted-best stars.")
        h = bound_select_slider("marked step h", "h", _STEPS, value=STEP_DEFAULT, format_func=step_label,
                                width=260, help="The step marked on the chart: drag the slider under the chart "
                                                "(it moves in your browser) or this one; the link keeps the step.")
    follow_chart_slider(_CHART_KEY, "h", step_label(h), _STEPS)
    st.caption(f"f(x) = {markdown_literal(settings.expression)}. Bands at the top, one per curve: red "
               "round-off, blue truncation; point at (or tap) either word in the answer, a band or a curve to light "
               "where each dominates. Wide faded lines: the "
               "theory's error; stars: its best step h*. Dotted verticals, labelled ε float32 and so on: each dtype's machine epsilon "
               f"({definition('machine epsilon').split(' (')[0]}). Large dots: each curve at the marked "
               "step h; drag the slider under the chart to move it (it moves in your browser, and the link "
               "keeps the step you let go at).")
    name = f"gradlab-explorer-{settings.expression}-x{settings.x:g}"
    with chart:
        if has_drawable_errors(result, error) or result.table["estimate"].isna().all():
            # built once per view (every stop's frame in it), shown at h (show_figure's step)
            def figure():
                return cached_figure((settings, error, theory, autograd, focus), error_vs_eps_with_slider, result,
                                     STEP_DEFAULT, error=error, show_theory=theory, show_autograd=autograd,
                                     focus_dtype=focus)
            step = h
        else:  # f′ = 0 exactly: its relative error is undefined everywhere
            note.info(f"The exact derivative is 0 here, so no {error} error can be drawn on a log axis: the "
                      "chart shows what each scheme and autograd return; choose absolute to see the errors.",
                      icon=":material/info:")
            def figure():
                return cached_figure(settings, estimate_vs_eps_with_legend, result)
            step = None
        if not is_presenting():
            st.html(_CHART_BOX_CSS)
        # the recorded chart replayed while nothing it shows changes (gradlab.ui.figures.replayed_chart)
        replayed_chart((settings, error, theory, autograd, focus), name, figure, chart_key=_CHART_KEY,
                       height="stretch", step=step)


def _estimates_chart(result: SweepResult) -> None:
    """No exact f′ (the answer says why): what each scheme and autograd return, with only the words
    that describe it; no error options, bands, stars or marked step, since there is no error."""
    settings = result.settings
    chart = main_chart_box()
    st.caption(f"f(x) = {markdown_literal(settings.expression)}. No exact f′ at x = {settings.x!r}, so no "
               "error to draw: each curve is what a scheme returns at each step h (the dtype's colour, the "
               "scheme's marker), each dotted line autograd's value. At a kink a one-sided difference "
               "returns the slope on its side and the central difference their average.")
    with chart:
        if not is_presenting():
            st.html(_CHART_BOX_CSS)
        replayed_chart(settings, f"gradlab-explorer-{settings.expression}-x{settings.x:g}",
                       lambda: cached_figure(settings, estimate_vs_eps_with_legend, result),
                       chart_key=_CHART_KEY, height="stretch")


def _notes(result: SweepResult) -> None:
    """Each warning on its own, the infos together; the engine set each note's level. The missing
    reference is the answer's own sentence (gradlab.answers.sweep), not said again here."""
    if theory := theory_words(result):  # the 8-bit floats' theory, which the answer leaves out
        st.caption(markdown_literal(theory))
    said = no_reference_note(result.reference) if not result.reference.defined else None
    for note in (n for n in result.warnings if n != said):
        st.warning(markdown_literal(note.text), icon=":material/warning:")
    if result.infos:
        st.info("\n".join(f"- {markdown_literal(n.text)}" for n in result.infos), icon=":material/info:")


def _numbers(result: SweepResult, text: str) -> None:
    """Formulas, the rounding of x, best steps and autograd: drawn only when opened."""
    box = details("Formulas and numbers: f, f′, how x is rounded, best steps, autograd",
                  "explorer_numbers", icon=":material/table:")
    if box is None:
        return
    with box:
        try:
            f_latex, d_latex = _latex(text=text)
        except GradLabError as err:  # a time bound's sentence, not an exception element
            show_error(err)
        else:
            st.latex(rf"f(x) = {f_latex}")
            st.latex(rf"f'(x) = {d_latex}")
        x = result.settings.x
        if result.reference.defined:
            st.markdown(f"Exact f′(x) at x = {x!r}, to 20 digits: "
                        f"{markdown_literal(exact_digits(result.reference.d1))}")
        else:
            st.markdown(f"No exact f′ at x = {x!r}: {markdown_literal(result.reference.reason)}")
        st.markdown("**How x is rounded** in each dtype (errors are measured against the exact "
                    "derivative at the rounded point)")
        st.dataframe(rounding_table(result), hide_index=True, width="stretch")
        st.markdown("**Best step per dtype and scheme**: observed in this sweep, and the theory's h*")
        st.dataframe(best_step_table(result), hide_index=True, width="stretch")
        st.markdown("**Autograd** at the dtype-rounded x, against the exact derivative")
        st.dataframe(autograd_table(result), hide_index=True, width="stretch")
        name = f"gradlab-explorer-{result.settings.expression}-x{x:g}"
        st.download_button("Download the sweep as CSV", data=lambda: result.table.to_csv(index=False),
                           file_name=f"{name}.csv", mime="text/csv", on_click="ignore",
                           icon=":material/download:", key="download_csv")


@st.fragment
def _lesson(result: SweepResult) -> None:
    """Predict first: a dtype the chart does not show yet; once answered, its best step and why.
    Not asked where there is no exact derivative: no step is best there."""
    if not result.reference.defined:
        return
    with quiz_box(), st.expander("Predict before you look: where is the best step?", icon=":material/school:",
                                 expanded=True):
        _quiz(result)


def _add_dtype(dtype: str) -> None:
    """``on_click``: put ``dtype`` on the chart (its curve shows the answer just revealed)."""
    st.session_state["dtypes"] = [*st.session_state.get("dtypes", ()), dtype]


def _quiz(result: SweepResult) -> None:
    settings = result.settings
    scheme = quiz_scheme(settings.schemes)
    dtype = quiz_dtype(settings.dtypes)
    if scheme is None:
        st.caption("Select a forward, backward or central difference to try the prediction.")
        return
    if dtype is None:
        st.caption("Every dtype is on the chart already: remove one to predict its best step first.")
        return
    label = get_scheme(scheme).label  # "central difference": the label names the kind already
    # Asked about a dtype the chart does not show, so the answer is not on screen yet; a quiz
    # answer is never kept in the URL: a shared link must arrive unanswered.
    guess = st.radio(f"{dtype} is not on the chart. Where will its {label} be most "
                     "accurate?", tuple(GUESSES), index=None, format_func=guess_label,
                     key="explorer_guess", captions=[f"{guess_step(k, dtype):.1e}" for k in GUESSES],
                     help=f"ε is the dtype's machine epsilon, {facts(dtype).eps:.1e} in {dtype}. "
                          + term("machine epsilon"))
    if guess is None:
        return
    try:  # the same sweep for that dtype alone: one more cached engine call
        own = _sweep(settings=SweepSettings(settings.expression, settings.x, (dtype,), (scheme,),
                                            *chart_step_range((dtype,), (scheme,)), settings.points))
    except Exception as err:  # noqa: BLE001 - every failure becomes a message
        show_error(err)
        return
    row = own.best.iloc[0] if not own.best.empty else None
    reveal = quiz_reveal(scheme, dtype, guess,
                         predicted=None if row is None else format_sig(row["predicted_eps"]),
                         observed=None if row is None else format_sig(row["eps"]))
    show = st.success if reveal.right else st.info
    show(markdown_literal(reveal.text), icon=":material/lightbulb:")
    st.button(f"Add {dtype} to the chart", key="explorer_quiz_add", on_click=_add_dtype, args=(dtype,),
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


try:
    settings = _controls()
    result = _sweep(settings=settings)
except Exception as err:  # noqa: BLE001 - every failure becomes a message
    stop_with_error(err)
_answer(result)
_chart(result)
_notes(result)
_lesson(result)
_numbers(result, settings.expression)
regime_links()  # the answer's "round-off" and "truncation" light the chart's bands, and the reverse
