"""Grad check: a finite-difference gradient check on a real tensor, explained. Layout only.

Controls -> one frozen settings object (gradlab.labs.gradcheck.settings_from; the engine
validates it) -> one cached view of it in a worker (function_view; the main chart's eps sweep:
eps_sweep_view, shared by every check that differs only in mode or step) -> render.

First screen (a projector at 1280x720): the title with the question beside it and the
presets in a popover, one row of the five controls that change the answer (the rest in
the "More" popover), then the answer sentence (gradlab.labs.gradcheck.answer) and the
whole main chart: the error of the finite difference against the step for sum, mean and
none, with the check's own step marked. That chart makes the page's point: at the question's step
sum and mean sit on round-off's plateau while none dips under rtol, so the step
failed, not the gradient. The diagnosis, metrics, table, Taylor test and heatmap
follow below.

The switch beside the title ("check": a function, or a model, layer by layer) opens
the second view: a stack of named layers (gradlab.labs.gradcheck.layer_settings), each module
checked on its own beside the whole model's check (layer_view), with the Python call that
reproduces it.
"""

import streamlit as st

from gradlab.labs.gradcheck import (CALLS, CHECKS, DEFAULT_INPUT, DEFAULT_STACK, DEFAULT_STEP, GRAD_OUTPUTS,
                                    LAYER_LOSSES, LAYER_QUESTION, LAYER_VOCABULARY, LAYERS, LOSSES, MAX_ELEMENTS,
                                    MAX_EXPRESSION_CHARS, MAX_SAMPLES, MODE_HELP, MODEL, MODELS, MODES,
                                    MODULE_COLUMNS, QUESTION, REDUCTIONS, VALUE_COLUMNS, appended_layer,
                                    eps_sweep_view, function_view, layer_view, marked, settings_from, state_styler,
                                    sweep_settings_for)
from gradlab.ui.url_widgets import url_number, url_radio, url_selectbox, url_tabs, url_text, url_toggle
from gradlab.ui.controls import SCHEME_OPTIONS, dtype_selectbox, eps_options, format_eps, scheme_label
from gradlab.ui.figures import cached_figure, replayed_chart
from gradlab.ui.gradcheck_progress import checked_view
from gradlab.ui.messages import (ANSWER_BOXES, ANSWER_ICONS, WRONG_GRADIENT_ICON, show_answer, show_error,
                                 stop_with_error)
from gradlab.ui.page_chrome import answer_box, details, main_chart_box, start_page, title_row
from gradlab.ui.presets import presets_popover
from gradlab.ui.term_links import definition, term
from gradlab.ui.views import lab_view, replayed_section, show_chart, show_numbers

start_page("gradcheck")

STEP_OPTIONS = (DEFAULT_STEP, *(format_eps(v) for v in eps_options(1e-12, 1.0)))
VALUES_TAB, TAYLOR_TAB, HEATMAP_TAB = "Every checked value", "Taylor test", "Heatmap"
CONTROL_WIDTH = 115  # px: five and the popover in one row at 1280 px, two a row on a phone (it wraps)
SWITCH_WIDTH = 205  # px: "a model, layer by layer" whole, beside the title
STACK_WIDTH, SHAPE_WIDTH = 250, 100  # px: the stack, shape, dtype and two popovers in one row at 1280 px
CODE_KEY = "layer_check_code"  # the open state of the expander holding the Python call (session state)


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
        checked = url_selectbox("check", "check", CHECKS, width=SWITCH_WIDTH, label_visibility="collapsed",
                                  help="a function: a built-in model or an expression, checked as a whole; "
                                       "a model, layer by layer: a stack of layers, each module checked "
                                       "on its own, beside the whole model's check.")
        presets_popover("gradcheck", primary="float32_check_fails")
    return checked


def _controls(checked: str):
    """One wrapping row: the five controls that change the answer, then the rest in a popover
    (for a model: its stack, shape, dtype and two popovers).

    Returns the one frozen settings object (a GradLabError says what to fix)."""
    v = {"check": checked}
    w = dict(width=CONTROL_WIDTH)
    with st.container(horizontal=True, wrap=True, gap="small", vertical_alignment="bottom"):
        if checked == MODEL:
            return _layer_controls(v)
        v["shape"] = url_text("input shape", "shape", value="140x120", max_chars=40, **w,
                                help=f"e.g. 140x120; at most {MAX_ELEMENTS:,} elements.")
        v["reduction"] = url_selectbox("reduction", "reduction", REDUCTIONS, **w,
                                         help="How the loss's elements are combined: sum, mean, or none "
                                              "(each output element's gradient is checked, the VJP with "
                                              "grad_outputs). " + term("VJP"))
        v["dtype"] = dtype_selectbox("dtype", "dtype", default="float32", **w)
        v["scheme"] = url_selectbox("scheme", "scheme", SCHEME_OPTIONS, format_func=scheme_label,
                                      index=SCHEME_OPTIONS.index("central"), **w,
                                      help="The finite-difference formula: forward (f(x+h) − f(x))/h, "
                                           "central (f(x+h) − f(x−h))/2h, and higher orders. "
                                           + term("Richardson extrapolation"))
        v["eps"] = url_selectbox("step eps", "eps", STEP_OPTIONS, **w,
                                   help="The finite difference's step h. 'default' takes the scheme's "
                                        "best step for the dtype, balancing the two errors. "
                                        + term("round-off error") + " " + term("truncation error"))
        with st.popover("More", icon=":material/tune:",
                        help="model, loss, mode, samples, seed, finite differences in float64"):
            _more_controls(v)
    return settings_from(v)


def _more_controls(v: dict) -> None:
    v["model"] = url_selectbox("model", "model", MODELS,
                                 help="affine: (x+1)/2, as in the question; expression: any f(x) "
                                      "elementwise; mlp: a small tanh MLP, seeded weights.")
    if v["model"] == "expression":
        v["expression"] = url_text("f(x) =", "expression", value="sin(x)", max_chars=MAX_EXPRESSION_CHARS)
    v["loss"] = url_selectbox("loss against randn targets", "loss", LOSSES)
    v["mode"] = url_selectbox("mode", "mode", MODES, help=MODE_HELP)
    v["samples"] = url_number("samples / directions", "samples", value=5, min_value=1,
                                max_value=MAX_SAMPLES, step=1)
    v["seed"] = url_number("seed", "seed", value=0, min_value=0, max_value=2**31 - 1, step=1)
    v["numeric64"] = url_toggle("finite differences in float64", "numeric64",
                                  help="autograd stays in the chosen dtype; only the finite "
                                       "differences are computed in float64, where round-off is "
                                       "2²⁹ times smaller.")
    if v["reduction"] == "none":
        v["grad_outputs"] = url_radio("grad_outputs", "grad_outputs", GRAD_OUTPUTS, horizontal=True,
                                        help="The vector v of the VJP vᵀ·J. " + term("VJP"))


def _append_layer(name: str) -> None:
    """``on_click`` of an "Add a layer" button: the layer at the stack's end (the URL follows)."""
    st.session_state["stack"] = appended_layer(st.session_state.get("stack", DEFAULT_STACK), name)


def _layer_controls(v: dict):
    """The model's controls, in the caller's row: the stack, the input's shape, the dtype, then "Add a
    layer" and "More" popovers (widget keys are URL parameters; dtype, mode, seed and reduction are
    shared with the function view), their values into ``v``. Returns the one frozen settings object,
    validated."""
    # no max_chars: Streamlit cuts a longer URL value to it silently ("Unknown layer 'exp'" from a
    # cut-off 'expr:...'); the parser refuses a stack over MAX_EXPRESSION_CHARS in a sentence
    v["stack"] = url_text("layers, first to last", "stack", value=DEFAULT_STACK, width=STACK_WIDTH,
                            help=f"One layer per comma, at most {MAX_EXPRESSION_CHARS} characters. "
                                 f"{LAYER_VOCABULARY}.")
    v["input"] = url_text("input shape", "input", value=DEFAULT_INPUT, max_chars=40, width=SHAPE_WIDTH,
                            help="Batch first, e.g. 4x8; (batch, sequence, features) for attention and gru, "
                                 f"(batch, channels, height, width) for conv2d; at most {MAX_ELEMENTS:,} "
                                 "elements.")
    v["dtype"] = dtype_selectbox("dtype", "dtype", default="float32", width=CONTROL_WIDTH)
    with st.popover("Add a layer", icon=":material/add:", help="Append a layer to the stack; edit its size there."):
        with st.container(horizontal=True, wrap=True, gap="small"):
            for name, layer in LAYERS.items():
                st.button(name, key=f"add_{name}", help=layer.help, on_click=_append_layer, args=(name,))
    with st.popover("More", icon=":material/tune:", help="mode, seed, which calls of a repeated module"):
        v["mode"] = url_selectbox("mode", "mode", MODES, help=MODE_HELP)
        v["seed"] = url_number("seed", "seed", value=0, min_value=0, max_value=2**31 - 1, step=1,
                                 help="Draws the weights and the input.")
        v["calls"] = url_selectbox("calls of a module called more than once", "calls", CALLS,
                                     help="first: check a shared module at its first call; all: at each.")
        # its own key: the function view's "loss" has other options
        v["model_loss"] = url_selectbox("loss", "model_loss", LAYER_LOSSES,
                                          help="none: check the model's outputs; mse: a last layer, the squared "
                                               "error to a target drawn from the seed (checked as a module too).")
        v["reduction"] = url_selectbox("reduction", "reduction", REDUCTIONS,
                                         help="How every check reduces the outputs to the number it "
                                              "differentiates: sum, mean, or none (each output element "
                                              "weighted by 1).")
    return settings_from(v)


def _column_config(columns, frame) -> dict:
    """Streamlit's settings of a lab table's columns (each help, number format, pinning)."""
    return {c.name: (st.column_config.NumberColumn(c.name, help=c.help, format=c.format) if c.format
                     else st.column_config.Column(c.name, help=c.help, pinned=c.pinned))
            for c in columns if c.name in frame}


# ---------------------------------------------------------------- a function

@st.fragment
def _function_view(settings) -> None:
    """One cached view of the check (a full check draws its progress), then render it; any failure
    becomes a message."""
    try:
        shown = checked_view(function_view, settings)
    except Exception as err:  # noqa: BLE001 - every failure becomes a message
        show_error(err)
        return
    with answer_box():
        show_answer(shown.answer)
    with main_chart_box():
        shown_chart = _sweep_chart(settings, shown.step)
    if shown_chart:  # under the box: in presentation mode the chart takes all of it
        st.caption("Each line is one sampled element, its error at each step eps. At relative error 1 the "
                   "estimate is 0: the step was lost to rounding. With sum and mean the difference is of "
                   "the summed loss, so round-off is relative to |L|; with none it is per output element. "
                   "Mean has the same curve as sum: it scales L and dL/dxᵢ alike. The dotted line is "
                   f"rtol, {definition('rtol')}")
    replayed_section(settings, "diagnosis", lambda: _diagnosis(shown))
    # Lazy tabs: only the open one is drawn; the open tab is in the URL, so a shared link opens the same view.
    tabs = url_tabs([VALUES_TAB, TAYLOR_TAB] + ([HEATMAP_TAB] if "heatmap" in shown.charts else []), "view")
    if tabs[0].open:
        with tabs[0]:
            replayed_section(settings, "values", lambda: _values_table(shown))
    if tabs[1].open and "taylor" in shown.charts:
        with tabs[1]:
            show_chart(settings, shown, "taylor", "gradlab-gradcheck-taylor")
            st.markdown(shown.texts["taylor"])
    if "heatmap" in shown.charts and tabs[2].open:
        with tabs[2]:
            show_chart(settings, shown, "heatmap", "gradlab-gradcheck-heatmap")


def _sweep_chart(settings, step: float) -> bool:
    """The eps sweep for sum, mean and none with the check's step marked; False when a message took its place."""
    try:  # drawn once per sweep, step and presentation mode, replayed: a rerun asks no sweep at all
        key = (sweep_settings_for(settings), step)
        replayed_chart(key, "gradlab-gradcheck-eps-sweep", lambda: _sweep_figure(key))
    except Exception as err:  # noqa: BLE001 - a limit's sentence, or a worker's failure shown generically
        show_error(err)
        return False
    return True


def _sweep_figure(key):
    """The eps sweep's figure for ``key`` (the sweep's settings, the check's step), built once."""
    sweep_settings, step = key
    sweep = lab_view(eps_sweep_view, sweep_settings, spinner="Sweeping eps for sum, mean and none…")
    chart = marked(sweep, step).charts["eps sweep"]
    return cached_figure(key, chart.build, *chart.args, **chart.kwargs)


def _diagnosis(shown) -> None:
    """Why the check at its own step passed or failed, and what helps: the long words."""
    ANSWER_BOXES[shown.diagnosis.level](shown.diagnosis.text, icon=ANSWER_ICONS[shown.diagnosis.level])
    show_numbers(shown.numbers)
    if shown.texts["hand-written"]:  # what a hand-written check prints at this step
        with st.container(key="gl-hand-written"):
            st.markdown(shown.texts["hand-written"])
            st.caption(shown.texts["numeric differs"])
    if shown.texts["step verdicts"]:  # a hand-written check's verdict beside GradLab's, where they differ
        st.markdown(shown.texts["step verdicts"])
    if shown.texts["message"]:
        st.caption(shown.texts["message"])
    for note in shown.notes:
        st.caption(note)


def _values_table(shown) -> None:
    """The values at the check's step, their best estimate, its error bound and the state (in its colour)."""
    table = shown.tables["values"]
    if shown.texts["values shown"]:
        st.caption(shown.texts["values shown"])
    st.caption(shown.texts["tolerance"])
    st.dataframe(state_styler(table, "state"), hide_index=True, width="stretch", height=240,
                 column_config=_column_config(VALUE_COLUMNS, table))


# ---------------------------------------------------------------- a model, layer by layer

def _layer_view(settings) -> None:
    """One cached view of the layer check, then the answer, the chart beside the whole-model check,
    the table and the Python call; a failure becomes one sentence."""
    try:
        shown = lab_view(layer_view, settings, spinner="Checking each layer, then the whole model…")
    except Exception as err:  # noqa: BLE001 - every failure becomes a message
        show_error(err)
        return
    with answer_box():
        show_answer(shown.answer, icon=_icon(shown.answer))
    chart, whole = st.columns([5, 2], gap="medium")
    with chart, main_chart_box():
        show_chart(settings, shown, "layers", "gradlab-layer-check")
    with whole:
        st.markdown("**The whole model, one check** over every parameter:")
        show_answer(shown.whole, icon=_icon(shown.whole))
        st.caption(shown.texts["whole model"])
    replayed_section(settings, "modules", lambda: _module_table(shown))
    # In an expander drawn only while open: a highlighted block makes the browser load and start a
    # 1.5 MB syntax highlighter, a third of a preset click's time in the browser.
    if box := details("The same check in Python", CODE_KEY, icon=":material/code:"):
        box.code(shown.texts["python call"], language="python", wrap_lines=True)


def _icon(answer) -> str | None:
    """A box saying a gradient is wrong has its own icon: the check's answer, not the page's failure."""
    return WRONG_GRADIENT_ICON if answer.level == "error" else None


def _module_table(shown) -> None:
    """One row per module and side checked, the verdict in its colour."""
    table = shown.tables["modules"]
    st.dataframe(state_styler(table, "verdict"), hide_index=True, width="stretch",
                 column_config=_column_config(MODULE_COLUMNS, table))


# controls -> one frozen settings object -> one cached view of it -> render
checked = _header()
try:
    settings = _controls(checked)
except Exception as err:  # noqa: BLE001 - a limit's or a value's sentence; anything else generically
    stop_with_error(err)
if checked == MODEL:
    _layer_view(settings)  # the answer, chart, whole model, table, code
else:
    _function_view(settings)  # in a fragment: a full check draws its progress
st.caption("Every control is kept in the URL: copy the address bar to share this exact check. "
           "The same check from a terminal: `python -m gradlab "
           f"{'layers' if checked == MODEL else 'check'} --help`.")
