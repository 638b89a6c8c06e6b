"""Network input gradients: why scipy's derivative disagrees with autograd; autograd against scipy-style central differences.

Controls -> one frozen NetgradSettings (the engine validates it) -> one cached engine
call (network_experiment: the central difference and the sweep over steps) ->
render(result). Layout only: no numerics, limit checks or engine choices here.
"""

import pandas as pd
import streamlit as st

from gradlab.ui.page_chrome import ensure_router

ensure_router()

from gradlab.figures import labs as plots  # noqa: E402
from gradlab.labs.network import (  # noqa: E402
    ACTIVATIONS,
    SCIPY_NOTE,
    FiniteDifference,
    NetgradSettings,
    NetworkExperiment,
    StepSweep,
    network_experiment,
    parse_hidden,
)
from gradlab.limits import LIMITS  # noqa: E402
from gradlab.literal_text import markdown_literal  # noqa: E402
from gradlab.ui.bound_widgets import bound_number, bound_selectbox, bound_text  # noqa: E402
from gradlab.ui.controls import dtype_selectbox, eps_input, eps_range_input  # noqa: E402
from gradlab.ui.figures import prepare_figure, show_figure  # noqa: E402
from gradlab.ui.messages import show_error  # noqa: E402
from gradlab.ui.presets import preset_buttons  # noqa: E402

DEFAULTS = NetgradSettings()
SWEEP_COLUMNS = ("step", "step_taken", "estimate", "abs_error", "ref_error", "quantum")

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


@st.cache_data(max_entries=LIMITS.cache_entries, ttl=LIMITS.cache_seconds,
               show_spinner="Differentiating the network…")
def _experiment(settings: NetgradSettings) -> NetworkExperiment:
    """The one engine call: the central difference at dx and the sweep over steps."""
    return network_experiment(settings)


def _header() -> None:
    """The title, the question this page answers and its preset buttons."""
    st.title("Network input gradients")
    st.markdown(
        "**The question:** for a network's scalar output, `torch.autograd.grad` gives "
        "`-0.009522666` for ∂y/∂x₃ but `scipy.misc.derivative(dx=1e-6)` gives `-0.014901161193847656`. "
        "Which one is wrong? Look at the finite difference's last digits: it can only take a few values."
    )
    preset_buttons("network", primary="scipy_derivative")


def _controls() -> NetgradSettings:
    """The control panel (every value in the URL); returns the one frozen settings object.

    The hidden widths are read after every widget is drawn, so a typo there (a
    GradLabError) leaves the whole panel on screen.
    """
    with st.container(border=True):
        c = st.columns(5)
        with c[0]:
            dtype = dtype_selectbox("dtype", "dtype", default=DEFAULTS.dtype)
        with c[1]:
            act = bound_selectbox("activation", "act", tuple(ACTIVATIONS))
        with c[2]:
            hidden_text = bound_text("hidden widths", "hidden", value="32, 32", max_chars=60,
                                     help=f"Up to {LIMITS.network_depth} layers of at most "
                                          f"{LIMITS.network_width} units.")
        with c[3]:
            inputs = bound_number("inputs", "inputs", value=DEFAULTS.input_size, min_value=1,
                                  max_value=LIMITS.network_width, step=1)
        with c[4]:
            idx = bound_number("input index i", "idx", value=DEFAULTS.index, min_value=0,
                               max_value=LIMITS.network_width - 1, step=1)
        c = st.columns([2, 3, 1])
        with c[0]:
            dx = eps_input("step dx", "dx", default=DEFAULTS.step, smallest=1e-12, largest=1e-1,
                           mantissas=(1, 2, 5))
        with c[1]:
            lo, hi = eps_range_input("sweep of steps", "range", default=(DEFAULTS.step_min, DEFAULTS.step_max),
                                     smallest=1e-14, largest=1.0)
        with c[2]:
            seed = bound_number("seed", "seed", value=DEFAULTS.seed, min_value=0, max_value=2**31 - 1, step=1)
    return NetgradSettings(int(inputs), parse_hidden(hidden_text), act, dtype, int(seed), int(idx),
                           float(dx), float(lo), float(hi))


def _values(fd: FiniteDifference) -> None:
    """Autograd, the central difference and the exact value side by side."""
    dtype = fd.dtype
    st.table(pd.DataFrame({
        "": [f"autograd ({dtype})", f"central difference, dx = {fd.step:g} ({dtype})",
             "exact: float64 autograd on the same rounded weights", "quantum q = ulp(y)/(2·dx)"],
        "value": [f"{fd.autograd:.9g}", f"{fd.estimate:.9g}", f"{fd.reference:.9g}", f"{fd.quantum:.6g}"],
        "off from exact": [f"{fd.autograd_error:+.2e}", f"{fd.estimate_error:+.2e}", "", ""],
    }).set_index(""))


def _quantisation(fd: FiniteDifference) -> None:
    """Why the estimate is k·q, in the numbers of this network."""
    st.markdown(
        f"The output is $y = {fd.y:.9g}$, and $y(x_i \\pm dx)$ are floats of {fd.dtype}: integer multiples of "
        f"$\\mathrm{{ulp}}(y) = {fd.ulp_y:.4g}$. Their difference is $k\\,\\mathrm{{ulp}}(y)$ with "
        f"$k = {fd.k}$, so the estimate is $k \\cdot q = {fd.k} \\times {fd.quantum:.6g} = {fd.estimate:.9g}$. "
        f"The nearest multiple of $q$ to the exact value would be $k = {fd.nearest_multiple_of_reference}$: "
        f"no step of this size can do better. The step actually taken was "
        f"$\\tfrac12(\\mathrm{{fl}}(x_i+dx)-\\mathrm{{fl}}(x_i-dx)) = {fd.step_taken:.4g}$, not {fd.step:g}."
    )
    if fd.step_vanished:
        st.warning(f"In {fd.dtype}, x_i ± {fd.step:g} rounds back to x_i itself: the difference is exactly 0. "
                   "Try a larger step.")


def _charts(fd: FiniteDifference, sweep: StepSweep) -> None:
    """The staircase of possible estimates and the error against the step."""
    left, right = st.columns(2)
    with left:
        show_figure(prepare_figure(plots.staircase_figure, sweep.table, sweep.autograd, sweep.reference, fd.step,
                                   fd.quantum, fd.dtype),
                    "network-staircase")
    with right:
        show_figure(prepare_figure(plots.step_error_figure, sweep.table, sweep.predicted_step, fd.step, fd.dtype),
                    "network-step-error")


def _best_step(sweep: StepSweep) -> None:
    """The sweep's best step next to the theory's, then the engine's notes."""
    best = sweep.best_row()
    st.markdown(
        f"Best step in this sweep: **h = {best['step']:.2g}**, error {best['ref_error']:.2g}; the theory's "
        f"$(3u\\,|f/f'''|)^{{1/3}}$ predicts **{sweep.predicted_step:.2g}** "
        f"(with $|f/f'''| \\approx 1$: {sweep.default_step:.2g})."
    )
    for note in sweep.notes:
        st.caption(markdown_literal(note))
    st.info(SCIPY_NOTE, icon=":material/info:")
    with st.expander("The sweep, step by step"):
        st.dataframe(sweep.table, hide_index=True,
                     column_config={c: st.column_config.NumberColumn(format="%.6g") for c in SWEEP_COLUMNS})


def _lesson() -> None:
    """A finite difference can only take a few values; a guess before the reveal."""
    with st.expander("Lesson: a finite difference can only take a few values", icon=":material/school:"):
        # A quiz answer is not part of the view: plain st.radio, never in the URL.
        guess = st.radio(
            "First, a guess: in float32 with dx = 1e-6 and y ≈ 0.3, how finely can the estimate resolve ∂y/∂x?",
            ("to about 1e-9", "to about 1e-4", "to about 0.015"), index=None, key="network_guess",
        )
        if guess is None:
            st.caption("Pick an answer to see the explanation.")
            return
        right = guess == "to about 0.015"
        (st.success if right else st.info)(
            ("Right. " if right else "Not quite: about 0.015. ")
            + "Near 0.3 float32's ulp is 2⁻²⁵ ≈ 3e-8; divided by 2·dx = 2e-6 that is 0.0149 — "
            "exactly the question's scipy value, k = −1."
        )
        st.markdown(LESSON)


def _render(result: NetworkExperiment) -> None:
    """Everything below the controls, from one experiment."""
    fd, sweep = result.difference, result.sweep
    _values(fd)
    _quantisation(fd)
    _charts(fd, sweep)
    _best_step(sweep)
    _lesson()


# controls -> one frozen settings object -> one cached engine call -> render(result)
_header()
try:
    result = _experiment(_controls())
except Exception as err:  # noqa: BLE001 - shown as a sentence, never a traceback
    show_error(err)
    st.stop()
_render(result)
