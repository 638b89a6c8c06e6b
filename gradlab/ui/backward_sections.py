"""The lower sections of the Backward's gradient argument page (``pages/backward.py``), top to bottom.

Section 1 (the first screen: y = 3a + 2b² + log(c), backward(v) and its answer) stays in the
page. Each section here has the page's shape of its own: its controls -> one frozen settings
object -> one cached view of the lab (:mod:`gradlab.labs.backward`, in a worker) -> render; a
section's failure is a message in that section, the sections below it still draw.

- :func:`accumulation` (2): the step buttons; every step replayed on fresh tensors
  (``BackwardSession``, :func:`~gradlab.labs.backward.page_view.steps_view`), .grad after each.
- :func:`full_jacobian` (3): z = W x for a named matrix, its Jacobian and the rows v weights
  (``ExampleVJPSettings``, :func:`~gradlab.labs.backward.page_view.matrix_view`).
- :func:`empty_example_section` (4): the question's ``torch.empty`` printout rebuilt (section 1's view
  carries it: the same for every settings).

Widget keys are URL parameters (``steps``, ``mx``, ``mv``) or session-only (the buttons).

>>> _steps_in_words("br,b")
'Steps: backward(v, retain) → backward(v).'
"""

from __future__ import annotations

import streamlit as st

from gradlab.errors import GradLabError
from gradlab.labs.backward import (EXPRESSION_CHARS, MATRIX_EXAMPLES, STEP_CODES, BackwardSession, ExampleVJPSettings,
                                   VJPSettings, empty_demo, empty_demo_code, example_settings, matrix_view, steps_view,
                                   vector_text)
from gradlab.literal_text import markdown_code, markdown_literal
from gradlab.ui.url_widgets import url_selectbox, url_text
from gradlab.ui.messages import show_error
from gradlab.ui.views import lab_view, replayed_section, show_chart
from gradlab.view import View

__all__ = ["accumulation", "full_jacobian", "empty_example_section", "steps_so_far"]

STEP_BUTTONS = {"br": "backward(v, retain)", "b": "backward(v)", "bn": "backward()", "z": "zero grads",
                "f": "forward again"}
STEP_ERROR = "_step_error"  # session_state: a step button's refusal, shown once on the next run


# ------------------------------------------------------------------ 2 · accumulation


#: The steps the first screen's answer was written for: section 2 reruns the whole page when
#: its steps differ, so the answer above never speaks of other steps than the list below.
ANSWERED_STEPS = "_gl_backward_answered_steps"


def steps_so_far(vjp: VJPSettings) -> View | None:
    """Section 2's view of its steps (its box's value, else the URL's) on ``vjp``'s tensors, whose
    answer the first screen shows; None for no steps or for steps section 2 refuses (it says why)."""
    text = st.session_state.get("steps", st.query_params.get("steps", ""))
    st.session_state[ANSWERED_STEPS] = text
    try:
        return lab_view(steps_view, BackwardSession.from_text(text, vjp)) if text.strip() else None
    except GradLabError:
        return None


def _add_step(code: str) -> None:
    """``on_click`` of a step button: append its code to the steps in the URL."""
    current = st.session_state.get("steps", "")
    try:  # the steps so far may be anything a URL carried: unknown codes, too many
        session = BackwardSession.from_text(current) if current else BackwardSession()
        st.session_state["steps"] = session.then(code).to_text()
    except GradLabError as err:
        st.session_state[STEP_ERROR] = str(err)


def _clear_steps() -> None:
    """``on_click`` of "start afresh"."""
    st.session_state["steps"] = ""


def _steps_in_words(text: str) -> str:
    """The URL's step codes as the buttons name them ("br,b,b" -> "Steps: backward(v, retain) →
    backward(v) → backward(v)"); "" for no steps or text that is not a list of known codes.

    >>> _steps_in_words("br,b,b")
    'Steps: backward(v, retain) → backward(v) → backward(v).'
    >>> _steps_in_words(""), _steps_in_words("b,nonsense")
    ('', '')
    """
    codes = [c.strip() for c in text.split(",") if c.strip()]
    if not codes or any(c not in STEP_BUTTONS for c in codes):
        return ""
    return "Steps: " + " → ".join(STEP_BUTTONS[c] for c in codes) + "."


def _step_controls(vjp: VJPSettings) -> BackwardSession:
    """The steps so far (in the URL) and one button per step; returns the section's frozen settings,
    the steps on ``vjp``'s tensors (a GradLabError says what to fix)."""
    # the steps in words; their codes (what the URL keeps) only for those who type them
    codes = "; ".join(f"{k} = {v[1]}" for k, v in STEP_CODES.items())
    with st.popover("steps as codes", icon=":material/code:", help="Type the steps as codes: " + codes):
        steps = url_text("steps so far, as codes", "steps", value="", max_chars=EXPRESSION_CHARS,
                           help="Codes: " + codes)
    if readable := _steps_in_words(steps):
        st.markdown(readable)
    # A wrapping row of buttons as wide as their labels: six equal columns cut
    # "backward(v, retain)" to "backward(v,…" on a projector's 1280 px.
    with st.container(horizontal=True, gap="small"):
        for code, label in STEP_BUTTONS.items():
            st.button(label, key=f"step-{code}", on_click=_add_step, args=(code,), width="content",
                      help=f"`{STEP_CODES[code][1]}`")
        st.button("start afresh", key="step-reset", on_click=_clear_steps, width="content")
    if STEP_ERROR in st.session_state:
        st.warning(markdown_literal(st.session_state.pop(STEP_ERROR)))
    return BackwardSession.from_text(steps, vjp)


def _render_steps(shown: View | None) -> None:
    """Section 2's result: each step, its PyTorch line and the .grad values after it (or PyTorch's refusal)."""
    if shown is None or shown.tables["steps"].empty:
        st.caption("Press the buttons above: each press replays every step from scratch on fresh tensors.")
        return
    for n, step in enumerate(shown.tables["steps"].itertuples(index=False), start=1):
        with st.container(border=True):
            st.markdown(f"**{n}.** {markdown_code(step.code)}")
            if step.refusal:
                st.warning(f"PyTorch refuses: {markdown_literal(step.refusal)}", icon=":material/block:")
            else:
                st.markdown(step.grads)


@st.fragment
def accumulation(vjp: VJPSettings) -> None:
    """Section 2: .grad accumulates; the graph is freed. Its controls -> a BackwardSession -> one cached replay -> render.

    Sections 2-4 are fragments: a press of one of their buttons, or a change of their own controls,
    reruns that section alone, not the page above it (their inputs are section 1's settings, passed
    in, and their own widgets). Under a class on this page, most clicks are theirs.

    ``vjp`` is section 1's tensors and v: the steps run on them. A refused session is a message
    here; the sections below it still draw.
    """
    st.subheader("2 · .grad accumulates; the graph is freed")
    try:
        session = _step_controls(vjp)
        if st.session_state.get("steps", "") != st.session_state.get(ANSWERED_STEPS, ""):
            st.rerun(scope="app")  # the first screen's answer speaks of these steps too
        shown = lab_view(steps_view, session) if session.steps else None
    except Exception as err:  # noqa: BLE001 - shown as a sentence, never a traceback
        show_error(err)
        shown = None
    _render_steps(shown)


# ------------------------------------------------------------------ 3 · full Jacobian


def _matrix_controls() -> ExampleVJPSettings:
    """The example and its v; returns the section's frozen settings (a GradLabError says what to fix)."""
    name = url_selectbox("example", "mx", tuple(MATRIX_EXAMPLES), format_func=lambda k: MATRIX_EXAMPLES[k].title)
    e = MATRIX_EXAMPLES[name]
    typed_v = url_text(f"v for z = W x ({len(e.w)} entries)", "mv", value=vector_text(e.v),
                         max_chars=EXPRESSION_CHARS)
    return example_settings({"mx": name, "mv": typed_v})


def _render_matrix(settings: ExampleVJPSettings, shown: View) -> None:
    """Section 3's result: J = W, its rows weighted by v, and x.grad."""
    left, right = st.columns([2, 3])
    with left:
        show_chart(settings, shown, "jacobian", "jacobian-w", chart_key="jac-w")
    with right:
        show_chart(settings, shown, "weighted rows", "weighted-rows")
    st.markdown(shown.answer.text)


@st.fragment
def full_jacobian() -> None:
    """Section 3: a Jacobian that is not diagonal. Its controls -> ExampleVJPSettings -> one cached view -> render."""
    st.subheader("3 · A Jacobian that is not diagonal")
    try:
        settings = _matrix_controls()
        shown = lab_view(matrix_view, settings)  # computed here, so a refusal is this section's sentence
    except Exception as err:  # noqa: BLE001 - shown as a sentence, never a traceback
        show_error(err)
        return
    # drawn once per settings and replayed: st.plotly_chart encodes each chart and hashes it into its
    # element id on every call
    replayed_section(settings, "matrix", lambda: _render_matrix(settings, shown))


# ------------------------------------------------------------------ 4 · torch.empty


def _printout(shown: View) -> None:
    """Section 4's fixed part: the question's code, the same rebuilt in GradLab with its printout, and
    what the printout says."""
    st.code(shown.texts["question code"], language="python")
    st.code(shown.texts["rebuilt code"], language="python")
    st.markdown(markdown_literal(shown.texts["empty note"]))


@st.fragment
def empty_example_section(shown: View) -> None:
    """Section 4: the question's torch.empty example, its printout, and what the printout says about
    a, b, c (from section 1's view ``shown``: the same for every settings, so drawn once and replayed)."""
    st.subheader("4 · The question's torch.empty example")
    replayed_section("backward", "torch.empty", lambda: _printout(shown))
    if not st.button("Call torch.empty(3) twice", key="empty"):
        return
    for line in empty_demo_code(empty_demo()):  # uncached: torch.empty's values are arbitrary by design
        st.code(line, language="python")
