"""Network input gradients: why scipy's derivative disagrees with autograd; autograd against scipy-style central differences.

Controls -> one frozen NetworkSettings (the engine validates it) -> one cached engine
call (network_experiment: the central difference and the sweep over steps) ->
render(result). Layout only: no numerics, limit checks or engine choices here.

First screen (a projector at 1280x720): the title with the question beside it and the
presets in a popover, one row of the controls that change the answer (the rest in the
"More" popover), the answer sentence (gradlab.answers.labs) and the whole main
chart: the estimates against the step with the curves k·ulp(y)/(2h) they must sit on,
autograd's line and the question's dx ringed. The prediction, the numbers, the error
chart and the lesson follow below.
"""

import math

import pandas as pd
import streamlit as st

from gradlab.ui.page_chrome import answer_box, details, main_chart_box, quiz_box, start_page, title_row
from gradlab.figures import network as plots
from gradlab.labs.network.engine import (
    ACTIVATIONS,
    SCIPY_NOTE,
    FiniteDifference,
    NetworkSettings,
    NetworkExperiment,
    StepSweep,
    parse_hidden,
)
from gradlab.limits import LIMITS
from gradlab.literal_text import markdown_literal
from gradlab.numerics.mp_format import latex_number as tex
from gradlab.answers.labs import network_answer
from gradlab.teaching.glossary import term
from gradlab.teaching.quizzes import NETWORK_QUESTION, network_guesses, network_reveal
from gradlab.ui.bound_widgets import bound_number, bound_selectbox, bound_text
from gradlab.ui.cache_keys import page_cache_data, settings_key
from gradlab.ui.controls import dtype_selectbox, eps_input, eps_range_input
from gradlab.ui.figures import cached_figure, replayed_chart, show_figure
from gradlab.ui.messages import show_answer, stop_with_error
from gradlab.ui.presets import presets_popover
from gradlab.server.heavy_work import network
from gradlab.ui.worker_calls import heavy

start_page("network")

DEFAULTS = NetworkSettings()
SWEEP_COLUMNS = ("step", "step_taken", "estimate", "abs_error", "ref_error", "quantum")
CONTROL_WIDTH = 105  # px: all in one row at 1280 px; on a phone three, then the slider and "More"
SLIDER_WIDTH = 230
ARITHMETIC_NOTE = (
    "How the lab evaluates y: every layer's products and bias are summed in float64 in a fixed order and "
    "rounded once to the dtype, and every activation is rounded once from its exact value. torch's own float32 "
    "matrix product sums in an order that depends on the CPU, so its last bit of y, and with it k, can "
    "differ between two machines; this way the numbers above are the same on every CPU. Autograd is "
    "torch's own backward pass."
)

LESSON = r"""
A central difference computes $\dfrac{f(x+h)-f(x-h)}{2h}$. Both values are floats
near $y$, multiples of $\mathrm{ulp}(y)$, so the numerator is $k\,\mathrm{ulp}(y)$ and

$$\text{estimate} = k\,q,\qquad q = \frac{\mathrm{ulp}(y)}{2h}.$$

Rounding $f$ costs up to $u|f|/h$ (round-off, grows as $h$ shrinks); the Taylor
remainder costs $|f'''|h^2/6$ (truncation, grows with $h$). They balance at
$h^\ast \approx (3u\,|f/f'''|)^{1/3}$: about $5\times10^{-3}$ in float32, $7\times10^{-6}$
in float64. The question's `dx=1e-6` is a float64 habit; in float32 it sits deep in the
round-off region. Autograd has no step at all: it applies the chain rule to the
operations actually run, so its error is a few roundings — it was right.
"""


@page_cache_data(max_entries=LIMITS.cache_entries, ttl=LIMITS.cache_seconds,
                 show_spinner="Differentiating the network…", hash_funcs={NetworkSettings: settings_key})
def _experiment(settings: NetworkSettings) -> NetworkExperiment:
    """The one engine call: the central difference at dx and the sweep over steps, in a worker process
    (its exactly rounded sums are Python loops that would hold this server's interpreter)."""
    return heavy(network, settings)


def _header() -> None:
    """The title, the question this page answers in one short line beside it, the presets in a popover."""
    with title_row(
        "Network input gradients",
        "autograd says **−0.00952**, scipy's derivative **−0.0149**. Which is wrong?",
        help="For a network's output, torch.autograd.grad gives −0.009522666 for ∂y/∂x₃, "
             "scipy.misc.derivative(dx=1e-6) gives −0.014901161193847656. The question's code: "
             "x_test = torch.randn(D_in, requires_grad=True); y_test = model(x_test); "
             "d = torch.autograd.grad(y_test, x_test)[0]; then derivative(fun, x0, dx=1e-6) of fun(x) = "
             "model(x_test with x_test[3] = x).item(), all in float32. This page rebuilds it with a seeded "
             "10-input tanh network whose output y = 0.39 lies where float32's ulp is 2⁻²⁵. "
             + term("central difference"),
    ):
        presets_popover("network", primary="scipy_derivative")


def _controls() -> NetworkSettings:
    """One wrapping row of the controls that change the answer, the rest in a popover; every value in the URL.

    The hidden widths are read after every widget is drawn, so a typo there (a
    GradLabError) leaves the whole panel on screen.
    """
    with st.container(horizontal=True, wrap=True, gap="small", vertical_alignment="bottom"):
        dtype = dtype_selectbox("dtype", "dtype", default=DEFAULTS.dtype, width=CONTROL_WIDTH)
        idx = bound_number("input index i", "idx", value=DEFAULTS.index, min_value=0,
                           max_value=LIMITS.network_width - 1, step=1, width=CONTROL_WIDTH)
        seed = bound_number("seed", "seed", value=DEFAULTS.seed, min_value=0, max_value=2**31 - 1, step=1,
                            width=CONTROL_WIDTH, help="Seeds the weights and the input x. "
                                                      f"{DEFAULTS.seed} rebuilds the question's numbers.")
        dx = eps_input("step dx", "dx", default=DEFAULTS.step, smallest=1e-12, largest=1e-1,
                       mantissas=(1, 2, 5), width=SLIDER_WIDTH,
                       help="The step of the central difference. " + term("round-off error") + " "
                            + term("truncation error"))
        with st.popover("More", icon=":material/tune:", help="activation, layers, inputs, the sweep of steps"):
            act = bound_selectbox("activation", "act", tuple(ACTIVATIONS))
            hidden_text = bound_text("hidden widths", "hidden", value="32, 32", max_chars=60,
                                     help=f"Up to {LIMITS.network_depth} layers of at most "
                                          f"{LIMITS.network_width} units.")
            inputs = bound_number("inputs", "inputs", value=DEFAULTS.input_size, min_value=1,
                                  max_value=LIMITS.network_width, step=1)
            lo, hi = eps_range_input("sweep of steps", "range", default=(DEFAULTS.step_min, DEFAULTS.step_max),
                                     smallest=1e-14, largest=1.0)
    return NetworkSettings(int(inputs), parse_hidden(hidden_text), act, dtype, int(seed), int(idx),
                           float(dx), float(lo), float(hi))


def _answer(fd: FiniteDifference) -> None:
    """The page's one sentence, built outside the page (gradlab.answers.labs)."""
    answer = network_answer(fd)
    with answer_box():
        # ulp and q, the answer's and the chart's units, defined where they first appear
        # (the glossary's ulp, said of y in one line: a second line cost the chart its x axis at 1280x720)
        show_answer(answer, note=f"ulp(y): the gap between y and the next larger {fd.dtype} number; q = ulp(y)/(2·dx), "
                                 "the least an estimate can change by.")


def _main_chart(settings: NetworkSettings, fd: FiniteDifference, sweep: StepSweep) -> None:
    """The staircase: every estimate sits on a curve k·ulp(y)/(2h); autograd's line runs between them."""
    with main_chart_box():
        replayed_chart(settings, "network-staircase", lambda: _staircase(settings))
    st.caption(f"y = {fd.y:.9g}, ulp(y) = {fd.ulp_y:.4g}, q = ulp(y)/(2·dx) = {fd.quantum:.6g}.",
               help=term("ulp"))


def _staircase(settings: NetworkSettings):
    """The staircase figure of ``settings``: every estimate of the sweep, autograd's line, the step dx."""
    result = _experiment(settings=settings)
    fd, sweep = result.difference, result.sweep
    return cached_figure(settings, plots.staircase_figure, sweep.table, sweep.autograd, sweep.reference, fd.step,
                         fd.quantum, fd.dtype, fd.estimate)


def _prediction(fd: FiniteDifference) -> None:
    """Predict, then look: the quantum in float64 (the sentence above gives float32's away, not this),
    its choices and its reveal worked out from this network's output (gradlab.teaching.quizzes)."""
    guesses = network_guesses(fd.y, fd.step)
    with quiz_box(border=True):
        # A quiz answer is not part of the view: plain st.radio, never in the URL.
        guess = st.radio(NETWORK_QUESTION.format(step=fd.step), list(guesses), format_func=guesses.get,
                         index=None, key="network_guess", horizontal=True)
        if guess is None:
            st.caption("Pick an answer to see the explanation.")
            return
        reveal = network_reveal(guess, fd.y, fd.step, fd.reference)
        (st.success if reveal.right else st.info)(reveal.text)


def _values(fd: FiniteDifference) -> None:
    """Autograd, the central difference and the exact value side by side (the value column first)."""
    dtype = fd.dtype
    st.table(pd.DataFrame({  # four rows: a static table, no data grid to load
        "value": [repr(fd.autograd), repr(fd.estimate), f"{fd.reference:.9g}", f"{fd.quantum:.6g}"],
        "what": [f"autograd ({dtype})", f"scipy-style difference, dx = {fd.step:g}",
                 "exact (float64 autograd, same weights)", "q = ulp(y)/(2·dx)"],
        "off from exact": [f"{fd.autograd_error:+.2e}", f"{fd.estimate_error:+.2e}", "", ""],
    }), hide_index=True)


def _quantisation(fd: FiniteDifference) -> None:
    """Why the estimate is k·q, in the numbers of this network."""
    st.markdown(
        f"The output is $y = {tex(fd.y, '.9g')}$, and $y(x_i \\pm dx)$ are floats of {fd.dtype}: integer "
        f"multiples of $\\mathrm{{ulp}}(y) = {tex(fd.ulp_y, '.4g')}$. Their difference is "
        f"$k\\,\\mathrm{{ulp}}(y)$ with $k = {fd.k}$, so the estimate is "
        f"$k \\cdot q = {fd.k} \\times {tex(fd.quantum, '.6g')} = {tex(fd.estimate, '.9g')}$. "
        f"The nearest multiple of $q$ to the exact value would be $k = {fd.nearest_multiple_of_reference}$: "
        f"no step of this size can do better. The step actually taken was "
        f"$\\tfrac12(\\mathrm{{fl}}(x_i+dx)-\\mathrm{{fl}}(x_i-dx)) = {tex(fd.step_taken, '.4g')}$, "
        f"not {fd.step:g}.",
        help=term("ulp"),
    )
    st.caption(ARITHMETIC_NOTE)
    if fd.step_vanished:
        st.warning(f"In {fd.dtype}, x_i ± {fd.step:g} rounds back to x_i itself: the difference is exactly 0. "
                   "Try a larger step.")


def _best_step(settings: NetworkSettings, fd: FiniteDifference, sweep: StepSweep) -> None:
    """The error against the step, the sweep's best step next to the theory's, the engine's notes, the rows."""
    _best_step_drawn(settings=settings)
    if box := details("The sweep, step by step", "network_sweep_rows"):
        box.dataframe(sweep.table, hide_index=True,
                     column_config={c: st.column_config.NumberColumn(format="%.5e") for c in SWEEP_COLUMNS})


@page_cache_data(max_entries=LIMITS.cache_entries, ttl=LIMITS.cache_seconds, show_spinner=False,
                 hash_funcs={NetworkSettings: settings_key})
def _best_step_drawn(settings: NetworkSettings) -> None:
    """The error against the step, the best step in words and the notes: drawn once per settings and
    replayed from the cache (st.plotly_chart encodes the chart and hashes it into its id on every call)."""
    result = _experiment(settings=settings)
    fd, sweep = result.difference, result.sweep
    show_figure(cached_figure(settings, plots.step_error_figure, sweep, fd.step, fd.dtype),
                "network-step-error")
    best = sweep.best_row()
    # a ReLU network is piecewise linear: f‴ = 0 between kinks, and the formula's h* is no number
    theory = (rf"$h^\ast = (3u\,|f/f'''|)^{{1/3}}$: **{sweep.predicted_step:.2g}** for this network"
              if math.isfinite(sweep.predicted_step) else
              r"$h^\ast = (3u\,|f/f'''|)^{1/3}$; here $f''' = 0$ (a piecewise-linear network), so there is no "
              r"truncation to balance and the formula names no step: any step that crosses no kink is exact "
              r"up to rounding")
    st.markdown(  # for a second-year student: what balances, then the formula, then the rule of thumb
        f"Best step in this sweep: **h = {best['step']:.2g}**, error {best['ref_error']:.2g}. Theory: the step "
        r"is best where the rounding error (about $u\,|f|/h$, $u$ the unit round-off) equals the error of the "
        rf"formula itself (about $|f'''|\,h^2/6$, $f'''$ the third derivative), which happens at {theory}. "
        rf"Without knowing $f'''$, the usual rule of thumb pretends $|f/f'''| = 1$: $(3u)^{{1/3}}$ = "
        rf"{sweep.default_step:.2g}.",
        help=term("unit round-off"),
    )
    for note in sweep.notes:
        st.caption(markdown_literal(note))
    st.info(SCIPY_NOTE, icon=":material/info:")


@page_cache_data(max_entries=LIMITS.cache_entries, ttl=LIMITS.cache_seconds, show_spinner=False,
                 hash_funcs={NetworkSettings: settings_key})
def _numbers_drawn(settings: NetworkSettings) -> None:
    """"The numbers": the values side by side and why the estimate is k·q, drawn once per settings and
    replayed (their table's DataFrame and formulas were a sixth of a rerun that changed nothing)."""
    fd = _experiment(settings=settings).difference
    st.subheader("The numbers")
    _values(fd)
    _quantisation(fd)


def _render(settings: NetworkSettings, result: NetworkExperiment) -> None:
    """Everything below the controls, from one experiment: first screen, then the details."""
    fd, sweep = result.difference, result.sweep
    _answer(fd)
    _main_chart(settings, fd, sweep)
    _prediction(fd)
    _numbers_drawn(settings=settings)
    st.subheader("Which step would have worked?")
    _best_step(settings, fd, sweep)
    with st.expander("Lesson: a finite difference can only take a few values", icon=":material/school:"):
        st.markdown(LESSON)


# controls -> one frozen settings object -> one cached engine call -> render(result)
_header()
try:
    settings = _controls()
    result = _experiment(settings=settings)  # by name, hashed by its text: gradlab.ui.cache_keys
except Exception as err:  # noqa: BLE001 - shown as a sentence, never a traceback
    stop_with_error(err)
_render(settings, result)
