"""Explorer: error of finite differences and autograd against the step size. Layout only."""

from __future__ import annotations

import streamlit as st

from gradlab.teaching.catalogue import CATALOGUE
from gradlab.errors import GradLabError
from gradlab.numerics.expressions import parse
from gradlab.teaching.quizzes import GUESSES, expected_guess, guess_label, guess_step, quiz_scheme
from gradlab.limits import LIMITS
from gradlab.literal_text import markdown_literal
from gradlab.figures.sweep import error_vs_eps_figure, estimate_vs_eps_figure, has_drawable_errors
from gradlab.figures.sweep_tables import autograd_table, best_step_table, exact_digits, format_sig, rounding_table
from gradlab.numerics.dtypes import facts
from gradlab.error_sweep import SweepResult, SweepSettings, run_sweep
from gradlab.teaching.explorer_controls import (
    CUSTOM,
    DEFAULTS,
    EPS_LARGEST,
    EPS_SMALLEST,
    FUNCTION_OPTIONS,
    POINTS_MIN,
    POINTS_STEP,
    function_label,
)
from gradlab.ui.presets import preset_buttons
from gradlab.ui.figures import prepare_figure, show_figure
from gradlab.ui.bound_widgets import bound_number, bound_radio, bound_selectbox, bound_slider, bound_text, bound_toggle
from gradlab.ui.page_chrome import ensure_router
from gradlab.ui.messages import show_error
from gradlab.ui.controls import DTYPE_OPTIONS, dtype_multiselect, eps_range_input, scheme_multiselect

ensure_router()


# ------------------------------------------------------------------ engine


@st.cache_data(max_entries=LIMITS.cache_entries, ttl=LIMITS.cache_seconds,
               show_spinner="Computing the sweep…")
def _sweep(expression: str, x: float, dtypes: tuple, schemes: tuple,
           eps_min: float, eps_max: float, points: int) -> SweepResult:
    return run_sweep(SweepSettings(expression, x, dtypes, schemes, eps_min, eps_max, points))


@st.cache_data(max_entries=LIMITS.cache_entries, ttl=LIMITS.cache_seconds,
               show_spinner=False)
def _latex(text: str) -> tuple[str, str]:
    expression = parse(text)
    return expression.latex(), expression.derivative_latex()


def _on_function_change() -> None:
    """Picking a catalogue function moves x to its interesting point."""
    key = st.session_state.get("fn")
    if key in CATALOGUE:
        st.session_state["x"] = CATALOGUE[key].x


# ---------------------------------------------------------------- controls


def _controls() -> tuple[str | None, SweepSettings | None]:
    """The sidebar; returns (expression text, settings) or Nones with a message shown."""
    st.header("Controls")
    fn = bound_selectbox("function", "fn", FUNCTION_OPTIONS,
                         index=FUNCTION_OPTIONS.index(DEFAULTS["fn"]),
                         format_func=function_label, on_change=_on_function_change)
    if fn == CUSTOM:
        text = bound_text("f(x) =", "expr", value=DEFAULTS["expr"],
                          max_chars=LIMITS.expression_chars,
                          help="Python syntax in x: + - * / **, exp, log, sin, sqrt, abs, ...")
    else:
        text = CATALOGUE[fn].expression
        st.caption(f"f(x) = `{text}` — {CATALOGUE[fn].note}")
    x = bound_number("point x", "x", value=DEFAULTS["x"], min_value=-LIMITS.literal_magnitude,
                     max_value=LIMITS.literal_magnitude, format="%.12g",
                     help="Any float, e.g. 0.3, 1e-10 or -2.5e3.")
    dtypes = dtype_multiselect(default=DEFAULTS["dtypes"])
    schemes = scheme_multiselect(default=DEFAULTS["schemes"])
    eps_min, eps_max = eps_range_input("step range (eps-min, eps-max)", default=DEFAULTS["eps_range"],
                                       smallest=EPS_SMALLEST, largest=EPS_LARGEST)
    points = bound_slider("points in the sweep", "points", min_value=POINTS_MIN,
                          max_value=LIMITS.sweep_points, value=DEFAULTS["points"], step=POINTS_STEP)
    st.caption("Every control is kept in the URL: copy the address bar to share this view.")
    return text, SweepSettings(text, float(x), dtypes, schemes, eps_min, eps_max, int(points))


def _validated(text: str, settings: SweepSettings) -> SweepSettings | None:
    """Settings the engine accepts, or None after telling the user what to fix."""
    try:
        parse(text)
    except GradLabError as err:
        show_error(err, icon=":material/edit:")
        return None
    if not settings.dtypes:
        st.warning("Pick at least one dtype in the sidebar (float32 and float64 are a good start).")
        return None
    if not settings.schemes:
        st.warning("Pick at least one scheme in the sidebar (Central is the classic).")
        return None
    if settings.eps_min >= settings.eps_max:
        st.error(f"eps-min ({settings.eps_min:.0e}) must be smaller than eps-max "
                 f"({settings.eps_max:.0e}): drag the two ends of the step range apart.")
        return None
    try:
        return settings.validated()
    except Exception as err:  # noqa: BLE001 - every failure becomes a message
        show_error(err)
        return None


def _presets() -> None:
    st.markdown("**Start from a preset:**")
    preset_buttons("explorer")


# ------------------------------------------------------------------ views


def _formulas(text: str, result: SweepResult) -> None:
    f_latex, d_latex = _latex(text)
    st.latex(rf"f(x) = {f_latex}")
    st.latex(rf"f'(x) = {d_latex}")
    left, right = st.columns([2, 3], gap="large")
    with left:
        x = result.settings.x
        if result.reference.defined:
            st.markdown(f"Exact $f'(x)$ at $x = {x!r}$, to 20 digits:")
            st.code(exact_digits(result.reference.d1), language=None)
        else:
            st.markdown(f"No exact $f'$ at $x = {x!r}$: {markdown_literal(result.reference.reason)}")
    with right:
        st.markdown("**How x is rounded** in each dtype (errors are measured against the exact "
                    "derivative at the rounded point)")
        st.dataframe(rounding_table(result), hide_index=True, width="stretch")


def _notes(result: SweepResult) -> None:
    """Each warning on its own, the infos together; the engine set each note's level."""
    for note in result.warnings:
        st.warning(markdown_literal(note.text), icon=":material/warning:")
    if result.infos:
        st.info("\n".join(f"- {markdown_literal(n.text)}" for n in result.infos), icon=":material/info:")


def _focus(settings: SweepSettings) -> str:
    chosen = st.session_state.get("focus", "auto")
    return chosen if chosen in settings.dtypes else settings.dtypes[0]


@st.fragment
def _chart(result: SweepResult) -> None:
    """Display options, the chart, its tables and the CSV: reruns alone when an option changes."""
    settings = result.settings
    with st.container(horizontal=True, vertical_alignment="bottom"):
        error = bound_radio("error", "error", ("relative", "absolute"), horizontal=True)
        theory = bound_toggle("theory lines", "theory", value=DEFAULTS["theory"])
        autograd = bound_toggle("autograd lines", "autograd", value=DEFAULTS["autograd"])
        bound_selectbox("focus dtype (theory and shading)", "focus", ("auto", *DTYPE_OPTIONS),
                        format_func=lambda d: "first selected" if d == "auto" else d,
                        width=260)
    focus = _focus(settings)
    name = f"gradlab-explorer-{settings.expression}-x{settings.x:g}"
    if has_drawable_errors(result, error) or result.table["estimate"].isna().all():
        fig = prepare_figure(error_vs_eps_figure, result, error, show_theory=theory,
                             show_autograd=autograd, focus_dtype=focus)
    else:
        st.info("There is no exact derivative here, so there is no error to plot: the chart "
                "shows what each scheme and autograd return instead.", icon=":material/info:")
        fig = prepare_figure(estimate_vs_eps_figure, result)
    show_figure(fig, name)
    st.markdown("**Best step per dtype and scheme**: observed in this sweep, and the theory's h*")
    st.dataframe(best_step_table(result), hide_index=True, width="stretch")
    st.markdown("**Autograd** at the dtype-rounded x, against the exact derivative")
    st.dataframe(autograd_table(result), hide_index=True, width="stretch")
    st.download_button("Download the sweep as CSV", data=lambda: result.table.to_csv(index=False),
                       file_name=f"{name}.csv", mime="text/csv", on_click="ignore",
                       icon=":material/download:", key="download_csv")


@st.fragment
def _lesson(result: SweepResult) -> None:
    """Why the curve is a V, with a prediction before the reveal."""
    with st.expander("Why is the curve a V? Predict before you look", icon=":material/school:"):
        st.markdown("A finite difference with step $h$ makes two errors. **Truncation**: the "
                    "formula drops terms of the Taylor series, so it falls like $h^p$ "
                    "($p = 1$ one-sided, $p = 2$ central). **Round-off**: $f$ is rounded to "
                    "relative precision $u$ (half the dtype's machine epsilon) and the "
                    "difference of two nearly equal values is divided by a small $h$:")
        st.latex(r"E(h) \approx \underbrace{C\,|f^{(p+1)}(x)|\,h^{p}}_{\text{truncation}}"
                 r" + \underbrace{\frac{u\,|f(x)|}{h}}_{\text{round-off}},\qquad "
                 r"h^{*} = \left(\frac{u\,|f|}{p\,C\,|f^{(p+1)}|}\right)^{1/(p+1)}"
                 r"\propto u^{1/(p+1)}")
        st.markdown("On log–log axes each term is a straight line, slope $p$ and slope $-1$; "
                    "their sum is a V whose bottom $h^*$ moves with the dtype's $u$.")
        _quiz(result)


def _quiz(result: SweepResult) -> None:
    settings = result.settings
    scheme, dtype = quiz_scheme(settings.schemes), _focus(settings)
    if scheme is None:
        st.caption("Select a forward, backward or central difference to try the prediction.")
        return
    label = scheme.replace("_", " ")
    # A quiz answer is never kept in the URL: a shared link must arrive unanswered.
    guess = st.radio(f"Where will the {label} difference in {dtype} be most accurate?",
                     tuple(GUESSES), index=None, format_func=guess_label, key="explorer_guess",
                     captions=[f"{guess_step(k, dtype):.1e}" for k in GUESSES])
    if guess is None:
        return
    answer = expected_guess(scheme)
    rows = result.best[(result.best["dtype"] == dtype) & (result.best["scheme"] == scheme)]
    verdict = "Right" if guess == answer else "Not quite"
    text = (f"**{verdict}.** The theory says {guess_label(answer)} "
            f"(ε = {facts(dtype).eps:.2e} in {dtype}, so about {guess_step(answer, dtype):.1e})")
    if not rows.empty:
        row = rows.iloc[0]
        text += (f"; for this function it predicts h* = {format_sig(row['predicted_eps'])}, "
                 f"and the sweep's best step was {format_sig(row['eps'])}")
    show = st.success if guess == answer else st.info
    show(text + ".", icon=":material/lightbulb:")


# ------------------------------------------------------------------- page


st.title("Explorer: error against step size")
st.caption("Every finite difference has a best step: smaller steps drown in round-off, larger "
           "ones in truncation. Pick a function, a point, dtypes and schemes; errors are "
           "measured against the exact derivative.")
_presets()
with st.sidebar:
    text, raw = _controls()
settings = _validated(text, raw)
if settings is not None:
    try:
        result = _sweep(settings.expression, settings.x, settings.dtypes, settings.schemes,
                        settings.eps_min, settings.eps_max, settings.points)
    except Exception as err:  # noqa: BLE001 - every failure becomes a message
        show_error(err)
        result = None
    if result is not None:
        _formulas(text, result)
        _notes(result)
        _chart(result)
        _lesson(result)
