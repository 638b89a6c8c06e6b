"""Grad check: a finite-difference gradient check on a real tensor, explained.

Controls -> one frozen CheckSettings (the engine validates it) -> one cached engine
call (run_check; the eps sweep: check_sweep; both in a worker process) -> render(result). Layout only: no
numerics, limit checks or engine choices here.

First screen (a projector at 1280x720): the title with the question beside it and the
presets in a popover, one row of the five controls that change the answer (the rest in
the "More" popover), then the answer sentence (gradlab.answers.check) and the
whole main chart: the error of the finite difference against the step for sum, mean and
none, with the check's own step marked. That chart makes the page's point: at the question's step
sum and mean sit on round-off's plateau while none dips under rtol, so the step
failed, not the gradient. The diagnosis, metrics, table, Taylor test and heatmap
follow below.

The switch beside the title ("check": a function, or a model, layer by layer) opens
the second view, drawn by gradlab.ui.layer_check_view: a stack of named layers, each module
checked on its own beside the whole model's check, with the Python call that reproduces it.
"""

import streamlit as st

from gradlab.ui.page_chrome import answer_box, main_chart_box, start_page, title_row
from gradlab.check import (GRAD_OUTPUTS, LOSSES, MODELS, MODES, REDUCTIONS, CheckSettings, parse_shape,
                           sweep_settings_for)
from gradlab.errors import GradLabError
from gradlab.limits import LIMITS
from gradlab.literal_text import markdown_literal
from gradlab.server.heavy_work import check
from gradlab.ui.worker_calls import heavy_with_progress
from gradlab.figures.check import error_heatmap, taylor_figure
from gradlab.answers.check import LAYER_QUESTION, QUESTION, check_answer
from gradlab.teaching.glossary import definition, term
from gradlab.ui.presets import presets_popover
from gradlab.ui.figures import cached_figure, show_figure
from gradlab.ui.runtime import CHECK_WORKERS
from gradlab.ui.bound_widgets import bound_number, bound_radio, bound_selectbox, bound_tabs, bound_text, bound_toggle
from gradlab.ui.check_view import cached_check, diagnosis, sweep_chart, values_table
from gradlab.ui.messages import show_answer, show_error, stop_with_error
from gradlab.ui.controls import SCHEME_OPTIONS, dtype_selectbox, eps_options, format_eps, scheme_label
from gradlab.ui.layer_check_view import CHECKS, MODE_HELP, MODEL, layer_controls, layer_views
from gradlab.layers.settings import LayerCheckSettings

start_page("gradcheck")

DEFAULT_STEP = "default"
STEP_OPTIONS = (DEFAULT_STEP, *(format_eps(v) for v in eps_options(1e-12, 1.0)))
VALUES_TAB, TAYLOR_TAB, HEATMAP_TAB = "Every checked value", "Taylor test", "Heatmap"
PROGRESS_STEPS = 50  # redraws of the progress bar per full check
CONTROL_WIDTH = 115  # px: five and the popover in one row at 1280 px, two a row on a phone (it wraps)
SWITCH_WIDTH = 205  # px: "a model, layer by layer" whole, beside the title


def _header() -> str:
    """The title, the question in one line beside it, what is checked and the presets: one row.

    Returns what is checked (a function, or a model layer by layer)."""
    # the view's own question: the layer view answers which layer is wrong, not the float32 question
    layers = st.session_state.get("check", st.query_params.get("check")) == MODEL
    with title_row("Grad check", LAYER_QUESTION if layers else QUESTION,
                   help="A model's modules checked one by one, each against its own finite differences: "
                        "the preset 'A wrong custom activation hidden in layer 3 of 6'." if layers else
                        "A hand-written finite-difference check of (x+1)/2 with MSELoss(reduction=\"sum\") "
                        "on a 140×120 input: the first preset (Presets, right)."):
        checked = bound_selectbox("check", "check", CHECKS, width=SWITCH_WIDTH, label_visibility="collapsed",
                                  help="a function: a built-in model or an expression, checked as a whole; "
                                       "a model, layer by layer: a stack of layers, each module checked "
                                       "on its own, beside the whole model's check.")
        presets_popover("gradcheck", primary="float32_check_fails")
    return checked


def _controls(checked: str) -> CheckSettings | LayerCheckSettings:
    """One wrapping row: the five controls that change the answer, then the rest in a popover
    (for a model: gradlab.ui.layer_check_view's row).

    Returns the one frozen settings object (a GradLabError says what to fix).
    """
    v = {}
    w = dict(width=CONTROL_WIDTH)
    with st.container(horizontal=True, wrap=True, gap="small", vertical_alignment="bottom"):
        if checked == MODEL:
            return layer_controls(CONTROL_WIDTH)
        v["shape"] = bound_text("input shape", "shape", value="140x120", max_chars=40, **w,
                                help=f"e.g. 140x120; at most {LIMITS.tensor_elements:,} elements.")
        v["reduction"] = bound_selectbox("reduction", "reduction", REDUCTIONS, **w,
                                         help="How the loss's elements are combined: sum, mean, or none "
                                              "(each output element's gradient is checked, the VJP with "
                                              "grad_outputs). " + term("VJP"))
        v["dtype"] = dtype_selectbox("dtype", "dtype", default="float32", **w)
        v["scheme"] = bound_selectbox("scheme", "scheme", SCHEME_OPTIONS, format_func=scheme_label,
                                      index=SCHEME_OPTIONS.index("central"), **w,
                                      help="The finite-difference formula: forward (f(x+h) − f(x))/h, "
                                           "central (f(x+h) − f(x−h))/2h, and higher orders. "
                                           + term("Richardson extrapolation"))
        v["eps"] = bound_selectbox("step eps", "eps", STEP_OPTIONS, **w,
                                   help="The finite difference's step h. 'default' takes the scheme's "
                                        "best step for the dtype, balancing the two errors. "
                                        + term("round-off error") + " " + term("truncation error"))
        with st.popover("More", icon=":material/tune:",
                        help="model, loss, mode, samples, seed, finite differences in float64"):
            _more_controls(v)
    return _settings(v)


def _more_controls(v: dict) -> None:
    v["model"] = bound_selectbox("model", "model", MODELS,
                                 help="affine: (x+1)/2, as in the question; expression: any f(x) "
                                      "elementwise; mlp: a small tanh MLP, seeded weights.")
    if v["model"] == "expression":
        v["expression"] = bound_text("f(x) =", "expression", value="sin(x)",
                                     max_chars=LIMITS.expression_chars)
    v["loss"] = bound_selectbox("loss against randn targets", "loss", LOSSES)
    v["mode"] = bound_selectbox("mode", "mode", MODES, help=MODE_HELP)
    v["samples"] = bound_number("samples / directions", "samples", value=5, min_value=1,
                                max_value=LIMITS.sampled_elements, step=1)
    v["seed"] = bound_number("seed", "seed", value=0, min_value=0, max_value=2**31 - 1, step=1)
    v["numeric64"] = bound_toggle("finite differences in float64", "numeric64",
                                  help="autograd stays in the chosen dtype; only the finite "
                                       "differences are computed in float64, where round-off is "
                                       "2²⁹ times smaller.")
    if v["reduction"] == "none":
        v["grad_outputs"] = bound_radio("grad_outputs", "grad_outputs", GRAD_OUTPUTS, horizontal=True,
                                        help="The vector v of the VJP vᵀ·J. " + term("VJP"))


def _settings(v: dict) -> CheckSettings:
    """The one frozen settings object; the engine validates it (a GradLabError says what to fix)."""
    return CheckSettings(
        model=v["model"], shape=parse_shape(v["shape"]), loss=v["loss"], reduction=v["reduction"],
        dtype=v["dtype"], scheme=v["scheme"],
        eps=None if v["eps"] == DEFAULT_STEP else float(v["eps"]),
        mode=v["mode"], samples=int(v["samples"]), seed=int(v["seed"]),
        numeric_float64=bool(v["numeric64"]), expression=v.get("expression", "sin(x)"),
        grad_outputs=v.get("grad_outputs", "ones"),
    )


def _run(settings: CheckSettings):
    if settings.mode != "full":
        return cached_check(settings=settings)
    bar = st.progress(0.0, text="Full check: perturbing every element…")
    last = {"shown": -1}

    def progress(done: int, total: int) -> None:
        step = int(PROGRESS_STEPS * done / max(total, 1))
        if step != last["shown"]:
            last["shown"] = step
            bar.progress(done / max(total, 1), text=f"Full check: {done:,} of {total:,} elements")

    try:  # a full check draws its progress: cached apart (st.cache_data would replay the bar)
        return heavy_with_progress(check, settings, CHECK_WORKERS, progress=progress)
    finally:
        bar.empty()  # also when the check was stopped: the message replaces the bar


def _answer(result) -> None:
    """The page's one sentence: is the gradient wrong? (built in gradlab.answers.check)"""
    answer = check_answer(result.summary, result.columns)
    with answer_box():
        show_answer(answer)


@st.fragment
def _views(settings: CheckSettings) -> None:
    """One cached engine call, then render its result; any failure becomes a message."""
    try:
        result = _run(settings)
    except Exception as err:  # noqa: BLE001 - every failure becomes a message
        show_error(err)
        return
    _render(settings, result)


def _render(settings: CheckSettings, result) -> None:
    _answer(result)
    with main_chart_box():
        shown_chart = _sweep_view(settings, result.summary.step)
    if shown_chart:  # under the box: in presentation mode the chart takes all of it
        st.caption("Each line is one sampled element, its error at each step eps. At relative error 1 the "
                   "estimate is 0: the step was lost to rounding. With sum and mean the difference is of "
                   "the summed loss, so round-off is relative to |L|; with none it is per output element. "
                   "Mean has the same curve as sum: it scales L and dL/dxᵢ alike. The dotted line is "
                   f"rtol, {definition('rtol')}")
    diagnosis(settings=settings, _result=result)
    # Lazy tabs: only the open one is drawn; the open tab is in the URL, so a shared link
    # opens the same view.
    shown = bound_tabs([VALUES_TAB, TAYLOR_TAB] + ([HEATMAP_TAB] if result.error_map is not None else []),
                       "view")
    if shown[0].open:
        with shown[0]:
            values_table(settings=settings, _result=result)
    if shown[1].open and result.taylor is not None:
        with shown[1]:
            show_figure(cached_figure(settings, taylor_figure, result.taylor), "gradlab-gradcheck-taylor")
            st.markdown(markdown_literal(result.taylor.text) + " This test needs no step and no tolerance.")
    if result.error_map is not None and shown[2].open:
        with shown[2]:
            show_figure(cached_figure(settings, error_heatmap, result.error_map, result.state_map),
                        "gradlab-gradcheck-heatmap")


def _sweep_view(settings: CheckSettings, step: float) -> bool:
    """The eps sweep for sum, mean and none; False when a message took its place."""
    try:  # drawn once per sweep, step and presentation mode, replayed from the cache
        sweep_chart(sweep_settings=sweep_settings_for(settings), step=step)
    except Exception as err:  # noqa: BLE001 - a bound's sentence, or a worker's failure shown generically
        show_error(err)
        return False
    return True


# controls -> one frozen settings object -> one cached engine call -> render(result)
checked = _header()
try:
    settings = _controls(checked)
except GradLabError as err:
    stop_with_error(err)
if isinstance(settings, LayerCheckSettings):
    layer_views(settings)  # the cached layer check (a worker), the answer, chart, whole model, table, code
else:
    _views(settings)  # the cached check and its render, in a fragment (a full check draws its progress)
st.caption("Every control is kept in the URL: copy the address bar to share this exact check. "
           "The same check from a terminal: `python -m gradlab "
           f"{'layers' if isinstance(settings, LayerCheckSettings) else 'check'} --help`.")
