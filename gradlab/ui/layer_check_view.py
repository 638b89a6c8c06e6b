"""The Grad check page's second view: a model built from named layers, checked layer by layer.

``pages/gradcheck.py`` draws its switch ("a function" or "a model, layer by layer") beside its
title; for a model it calls :func:`layer_controls` (its row of controls: the stack, the input's
shape, the dtype, then "Add a layer" and "More" popovers, the mode in the latter), which returns the one
frozen :class:`~gradlab.layers.settings.LayerCheckSettings`, and :func:`layer_views`: one cached
engine call (:func:`gradlab.server.heavy_work.layers` in a worker process), then the answer
sentence, the per-module chart beside the whole-model check, the table and the Python call.

The point, side by side: the whole-model check over every parameter at once fails at an early
parameter (the chain rule carries a wrong backward to every parameter before it), the
layer-by-layer check names the module whose backward is wrong.

Every name and help of the stack comes from :data:`gradlab.layers.vocabulary.LAYERS`; widget
keys are URL parameters (``stack``, ``input``, ``dtype``, ``mode``, ``seed``, ``calls``, ``model_loss``,
``reduction``; ``dtype``, ``mode``, ``seed`` and ``reduction`` are shared with the function view).

>>> layer_snippet("linear"), layer_snippet("attention"), layer_snippet("tanh")
('linear:8', 'attention:2', 'tanh')
>>> whole_answer("fail").level, whole_answer("pass").level
('error', 'success')
"""

from __future__ import annotations

import streamlit as st

from gradlab.view import Answer
from gradlab.check import MODES, REDUCTIONS, STATES, parse_shape
from gradlab.figures.layers import layers_figure
from gradlab.layers.check import CALLS
from gradlab.layers.result import SKIPPED
from gradlab.layers.settings import LOSSES, LayerCheckSettings, python_call
from gradlab.layers.vocabulary import LAYERS
from gradlab.limits import LIMITS
from gradlab.literal_text import markdown_literal
from gradlab.server.heavy_work import layers
from gradlab.ui.bound_widgets import bound_number, bound_selectbox, bound_text
from gradlab.ui.cache_keys import settings_key
from gradlab.ui.check_view import state_styler
from gradlab.ui.controls import dtype_selectbox
from gradlab.ui.figures import cached_figure, show_figure
from gradlab.ui.messages import show_answer, show_error
from gradlab.ui.page_chrome import answer_box, details, main_chart_box
from gradlab.ui.worker_calls import heavy

__all__ = ["WRONG_GRADIENT_ICON", "FUNCTION", "MODEL", "CHECKS", "MODE_HELP", "layer_controls", "layer_views", "layer_snippet",
           "module_answer", "whole_answer"]

#: The icon of a box that says a gradient is wrong: the check's answer, not a failure of the page
#: (which says so with :func:`gradlab.ui.messages.show_error`'s icon).
WRONG_GRADIENT_ICON = ":material/bug_report:"

#: The page's switch: what is checked (its values are what the URL carries: ``?check=...``).
FUNCTION, MODEL = "a function", "a model, layer by layer"
CHECKS = (FUNCTION, MODEL)

MODE_HELP = ("blocks: random directions over blocks of 8 elements that cover every element; sampled: "
             f"k random elements; full: every element (up to {LIMITS.full_check_elements:,}); "
             "directional: k random directions.")
DEFAULT_STACK = "linear:16, tanh, layernorm, swish, linear:8, linear:1"
DEFAULT_INPUT = "4x8"
#: The open state of the expander holding the Python call (session state, not the URL).
CODE_KEY = "layer_check_code"
STACK_WIDTH, SHAPE_WIDTH = 250, 100  # px: the stack, shape, dtype and two popovers in one row at 1280 px

#: A layer's size as the "Add a layer" buttons first write it (heads for attention: 2 divide most widths).
_FIRST_SIZE = {"attention": 2}
_VOCABULARY = "; ".join(f"{name}: {layer.help}" for name, layer in LAYERS.items())


def layer_snippet(name: str) -> str:
    """How the "Add a layer" button of ``name`` writes it into the stack."""
    return f"{name}:{_FIRST_SIZE.get(name, 8)}" if LAYERS[name].needs_number else name


def _append_layer(name: str) -> None:
    """``on_click`` of an "Add a layer" button: the layer at the stack's end (the URL follows)."""
    current = str(st.session_state.get("stack", DEFAULT_STACK)).strip().rstrip(",")
    st.session_state["stack"] = f"{current}, {layer_snippet(name)}" if current else layer_snippet(name)


def layer_controls(width: int = 115) -> LayerCheckSettings:
    """The model's controls, drawn in the caller's row; the one frozen settings object, validated
    (a GradLabError says what to fix)."""
    w = dict(width=width)
    # no max_chars: Streamlit cuts a longer URL value to it silently ("Unknown layer 'exp'" from a
    # cut-off 'expr:...'); the parser refuses a stack over LIMITS.expression_chars in a sentence
    stack = bound_text("layers, first to last", "stack", value=DEFAULT_STACK, width=STACK_WIDTH,
                       help=f"One layer per comma, at most {LIMITS.expression_chars} characters. " + _VOCABULARY + ".")
    shape = bound_text("input shape", "input", value=DEFAULT_INPUT, max_chars=40, width=SHAPE_WIDTH,
                       help="Batch first, e.g. 4x8; (batch, sequence, features) for attention and gru, "
                            f"(batch, channels, height, width) for conv2d; at most {LIMITS.tensor_elements:,} "
                            "elements.")
    dtype = dtype_selectbox("dtype", "dtype", default="float32", **w)
    with st.popover("Add a layer", icon=":material/add:", help="Append a layer to the stack; edit its size there."):
        with st.container(horizontal=True, wrap=True, gap="small"):
            for name, layer in LAYERS.items():
                st.button(name, key=f"add_{name}", help=layer.help, on_click=_append_layer, args=(name,))
    with st.popover("More", icon=":material/tune:", help="mode, seed, which calls of a repeated module"):
        mode = bound_selectbox("mode", "mode", MODES, help=MODE_HELP)
        seed = bound_number("seed", "seed", value=0, min_value=0, max_value=2**31 - 1, step=1,
                            help="Draws the weights and the input.")
        calls = bound_selectbox("calls of a module called more than once", "calls", CALLS,
                                help="first: check a shared module at its first call; all: at each.")
        loss = bound_selectbox("loss", "model_loss", LOSSES,  # the function view's "loss" has other options
                               help="none: check the model's outputs; mse: a last layer, the squared error to "
                                    "a target drawn from the seed (checked as a module too).")
        reduction = bound_selectbox("reduction", "reduction", REDUCTIONS,
                                    help="How every check reduces the outputs to the number it differentiates: "
                                         "sum, mean, or none (each output element weighted by 1).")
    return LayerCheckSettings(stack, parse_shape(shape), dtype, mode, int(seed), calls, loss, reduction).validated()


@st.cache_data(max_entries=LIMITS.cache_entries_large, ttl=LIMITS.cache_seconds,
               show_spinner="Checking each layer, then the whole model…",
               hash_funcs={LayerCheckSettings: settings_key})
def _cached_layers(settings: LayerCheckSettings):
    # In a worker process, ended at its bound (heavy_work.BOUNDS[layers]); keyed on the frozen settings.
    return heavy(layers, settings)


def module_answer(result) -> str:
    """The layer check's answer, a module named by its index in the stack read as one ("Module 3 (...)")."""
    failing = result.failing_modules
    return f"Module {result.answer}" if failing and failing[0].isdigit() else result.answer


def _icon(verdict: str) -> str | None:
    return WRONG_GRADIENT_ICON if verdict == "fail" else None


def whole_answer(verdict: str) -> Answer:
    """The box the whole-model verdict is shown in (its level from the verdict)."""
    return Answer({"pass": "success", "fail": "error"}.get(verdict, "warning"), STATES[verdict].label)


def layer_views(settings: LayerCheckSettings) -> None:
    """One cached engine call, then the answer, the chart beside the whole-model check, the table
    and the Python call; a failure becomes one sentence."""
    try:
        report = _cached_layers(settings=settings)  # by name, hashed by its text: gradlab.ui.cache_keys
    except Exception as err:  # noqa: BLE001 - every failure becomes a message
        show_error(err)
        return
    result = report.layers
    with answer_box():
        show_answer(Answer(whole_answer(result.verdict).level, module_answer(result)), icon=_icon(result.verdict))
    chart, whole = st.columns([5, 2], gap="medium")
    with chart, main_chart_box():
        show_figure(cached_figure(settings, _chart, result), "gradlab-layer-check")
    with whole:
        _whole_model(report)
    _table(settings=settings, _result=result)
    # In an expander drawn only while open: a highlighted block makes the browser load and start a
    # 1.5 MB syntax highlighter, a third of a preset click's time (CPU profile, Chromium).
    if box := details("The same check in Python", CODE_KEY, icon=":material/code:"):
        box.code(python_call(settings), language="python", wrap_lines=True)


def _chart(result):
    """The layer check's chart without its title: the answer is the sentence right above it."""
    fig = layers_figure(result)
    fig.update_layout(title=None, margin=dict(l=10, r=10, t=30, b=10), height=fig.layout["height"] - 30)
    return fig


def _whole_model(report) -> None:
    """The whole model's check over every parameter at once, and why it names the wrong place."""
    s = report.whole.summary
    st.markdown("**The whole model, one check** over every parameter:")
    answer = whole_answer(report.whole.verdict)
    show_answer(Answer(answer.level, f"{answer.text.upper()}: {s.headline}"), icon=_icon(report.whole.verdict))
    failing = report.layers.failing_modules
    if report.whole.verdict == "fail" and failing:
        st.caption(f"It names a parameter, not the layer: a wrong backward in module {markdown_literal(failing[0])} "
                   "reaches every parameter before it through the chain rule, so the first parameter "
                   "already fails. Each layer checked on its own names the one whose backward is wrong.")
    elif report.whole.verdict == "fail":
        st.caption("The layer checks found no failing module: see the table for the checks that could not decide.")
    else:
        st.caption("Each module is also checked on its own, at the inputs it received, in the model's dtype.")


def _verdict_colour(verdict: str) -> str:
    return f"color: {STATES[verdict].colour}; font-weight: bold" if verdict in STATES else ""


#: The table's columns, the answer (verdict) after the module's name and type, and what each means.
_COLUMNS = {
    "module": "The module's path in model.named_modules().",
    "type": "Its class.",
    "checked over": "parameters: its own weights; inputs: the arguments it received in the forward pass.",
    "verdict": "; ".join(f"{r.label}: {r.meaning}" for r in STATES.values()) + f"; {SKIPPED}: could not run.",
    "element": "The worst (or failing) element.",
    "autograd": "What backward computed there.",
    "numeric": "The finite difference there.",
    "difference": "|autograd − numeric|.",
    "tolerance": "atol + rtol·|numeric|.",
    "error bound": "How far the finite difference can be from the true derivative.",
    "note": "Why a check failed, could not decide or was skipped.",
}


@st.cache_data(max_entries=LIMITS.cache_entries_large, ttl=LIMITS.cache_seconds, show_spinner=False,
               hash_funcs={LayerCheckSettings: settings_key})
def _table(settings: LayerCheckSettings, _result) -> None:
    """One row per module and side checked, the verdict in its colour; drawn once per check and
    replayed from the cache (keyed on the settings, which decide the result)."""
    frame = _result.table[list(_COLUMNS)]
    # one format: Streamlit's %g is JS toPrecision, which writes 0.0000123 beside 2.34e-9 in a column
    formats = {c: "%.3e" for c in ("autograd", "numeric", "difference", "tolerance", "error bound")}
    config = {c: (st.column_config.NumberColumn(c, help=h, format=formats[c]) if c in formats
                  else st.column_config.Column(c, help=h, pinned=c in ("module", "verdict")))
              for c, h in _COLUMNS.items()}
    st.dataframe(state_styler(frame, "verdict", _verdict_colour), hide_index=True, width="stretch",
                 column_config=config)
