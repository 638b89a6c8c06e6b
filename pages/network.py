"""Network input gradients: why scipy's derivative disagrees with autograd; autograd against scipy-style central differences.

Controls -> one frozen NetworkSettings (the engine validates it) -> one cached view of it
(gradlab.labs.network.view, in a worker: the central difference and the sweep over steps)
-> its layout. Layout only: no numerics, limit checks or engine choices here.

First screen (a projector at 1280x720): the title with the question beside it and the
presets in a popover, one row of the controls that change the answer (the rest in the
"More" popover), the answer sentence (gradlab.labs.network.answer) and the whole main
chart: the estimates against the step with the curves k·ulp(y)/(2h) they must sit on,
autograd's line and the question's dx ringed. The prediction, the numbers, the error
chart and the lesson follow below.
"""

import streamlit as st

from gradlab.labs.network import (
    ACTIVATIONS,
    MAX_DEPTH,
    MAX_WIDTH,
    SCIPY_NOTE,
    PAGE_DEFAULTS,
    NetworkSettings,
    settings_from,
    view,
)
from gradlab.ui.url_widgets import url_number, url_selectbox, url_text
from gradlab.ui.controls import dtype_selectbox, eps_input, eps_range_input
from gradlab.ui.messages import show_answer, stop_with_error
from gradlab.ui.page_chrome import answer_box, details, main_chart_box, start_page, title_row
from gradlab.ui.predictions import prediction
from gradlab.ui.presets import presets_popover
from gradlab.ui.term_links import term
from gradlab.ui.views import lab_view, replayed_section, show_chart

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
    v = {}
    with st.container(horizontal=True, wrap=True, gap="small", vertical_alignment="bottom"):
        v["dtype"] = dtype_selectbox("dtype", "dtype", default=DEFAULTS.dtype, width=CONTROL_WIDTH)
        v["idx"] = url_number("input index i", "idx", value=DEFAULTS.index, min_value=0,
                                max_value=MAX_WIDTH - 1, step=1, width=CONTROL_WIDTH)
        v["seed"] = url_number("seed", "seed", value=DEFAULTS.seed, min_value=0, max_value=2**31 - 1, step=1,
                                 width=CONTROL_WIDTH, help="Seeds the weights and the input x. "
                                                           f"{DEFAULTS.seed} rebuilds the question's numbers.")
        v["dx"] = eps_input("step dx", "dx", default=DEFAULTS.step, smallest=1e-12, largest=1e-1,
                            mantissas=(1, 2, 5), width=SLIDER_WIDTH,
                            help="The step of the central difference. " + term("round-off error") + " "
                                 + term("truncation error"))
        with st.popover("More", icon=":material/tune:", help="activation, layers, inputs, the sweep of steps"):
            v["act"] = url_selectbox("activation", "act", tuple(ACTIVATIONS))
            v["hidden"] = url_text("hidden widths", "hidden", value=PAGE_DEFAULTS["hidden"], max_chars=60,
                                   help=f"Up to {MAX_DEPTH} layers of at most {MAX_WIDTH} units.")
            v["inputs"] = url_number("inputs", "inputs", value=DEFAULTS.input_size, min_value=1,
                                       max_value=MAX_WIDTH, step=1)
            v["range"] = eps_range_input("sweep of steps", "range", default=PAGE_DEFAULTS["range"],
                                         smallest=1e-14, largest=1.0)
    return settings_from(v)


def _prediction(shown) -> None:
    """Predict, then look: the quantum in float64 (the sentence above gives float32's away, not this),
    its choices and its reveal worked out from this network's output (gradlab.labs.network.quiz)."""
    choices = shown.tables["prediction"]  # one row per choice: how it reads, right or not, its reveal
    prediction(shown.texts["prediction"], choices.index, "network_guess", lambda: choices, labels=choices["choice"])


def _numbers(shown) -> None:
    """"The numbers": the values side by side (a static table of four rows, no data grid to load) and
    why the estimate is k·q."""
    st.subheader("The numbers")
    st.table(shown.tables["values"], hide_index=True)
    st.markdown(shown.texts["quantisation"], help=term("ulp"))
    st.caption(ARITHMETIC_NOTE)
    if "step vanished" in shown.texts:
        st.warning(shown.texts["step vanished"])


def _best_step(settings: NetworkSettings, shown) -> None:
    """The error against the step, the sweep's best step next to the theory's and the engine's notes."""
    show_chart(settings, shown, "step error", "network-step-error")
    st.markdown(shown.texts["best step"], help=term("unit round-off"))
    for name, note in shown.texts.items():
        if name.startswith("note "):
            st.caption(note)
    st.info(SCIPY_NOTE, icon=":material/info:")


def _sweep_rows(shown) -> None:
    """The sweep, step by step: a data grid drawn only while its expander is open."""
    if box := details("The sweep, step by step", "network_sweep_rows"):
        box.dataframe(shown.tables["sweep"], hide_index=True,
                      column_config={c: st.column_config.NumberColumn(format="%.5e") for c in SWEEP_COLUMNS})


def _render(settings: NetworkSettings, shown) -> None:
    """Everything below the controls, from one view: first screen, then the details."""
    with answer_box():
        # ulp and q, the answer's and the chart's units, defined where they first appear
        # (the glossary's ulp, said of y in one line: a second line cost the chart its x axis at 1280x720)
        show_answer(shown.answer, note=shown.texts["answer note"])
    with main_chart_box():  # the staircase: every estimate sits on a curve k·ulp(y)/(2h)
        show_chart(settings, shown, "staircase", "network-staircase")
    st.caption(shown.texts["chart caption"], help=term("ulp"))
    _prediction(shown)
    # drawn once per settings and replayed: their table and formulas cost a sixth of a rerun that changes nothing
    replayed_section(settings, "numbers", lambda: _numbers(shown))
    st.subheader("Which step would have worked?")
    replayed_section(settings, "best step", lambda: _best_step(settings, shown))
    _sweep_rows(shown)
    with st.expander("Lesson: a finite difference can only take a few values", icon=":material/school:"):
        st.markdown(LESSON)


# controls -> one frozen settings object -> one cached view -> its layout
_header()
try:
    settings = _controls()
    shown = lab_view(view, settings, spinner="Differentiating the network…")  # in a worker, shared
except Exception as err:  # noqa: BLE001 - shown as a sentence, never a traceback
    stop_with_error(err)
_render(settings, shown)
