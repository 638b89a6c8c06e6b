"""The lower sections of the Backward's gradient argument page (``pages/backward.py``), top to bottom.

Section 1 (the first screen: y = 3a + 2b² + log(c), backward(v) and its answer) stays in the
page. Each section here has the page's shape of its own: its controls -> one frozen settings
object -> one cached engine call -> render; a section's failure is a message in that section,
the sections below it still draw.

- :func:`accumulation` (2): the step buttons; every step replayed on fresh tensors
  (``BackwardSession``), .grad after each.
- :func:`full_jacobian` (3): z = W x for a named matrix, its Jacobian and the rows v weights
  (``ExampleVJPSettings``).
- :func:`empty_example_section` (4): the question's ``torch.empty`` printout rebuilt.

Widget keys are URL parameters (``steps``, ``mx``, ``mv``) or session-only (the buttons).

>>> vector_text((0.1, 1.0, 0.0001))
'0.1, 1, 0.0001'
"""

from __future__ import annotations

import streamlit as st

from gradlab.errors import GradLabError
from gradlab.figures import backward as plots
from gradlab.labs.backward.engine import (
    EMPTY_NOTE,
    MATRIX_EXAMPLES,
    QUESTION_CODE,
    STEP_CODES,
    BackwardSession,
    ExampleVJPSettings,
    MatrixVJP,
    StepRecord,
    VJPSettings,
    empty_demo,
    empty_example,
    example_vjp,
    parse_vector,
)
from gradlab.limits import LIMITS
from gradlab.literal_text import markdown_code, markdown_literal
from gradlab.ui.bound_widgets import bound_selectbox, bound_text
from gradlab.ui.cache_keys import settings_key
from gradlab.ui.figures import cached_figure, show_figure
from gradlab.ui.messages import show_error

__all__ = ["accumulation", "full_jacobian", "empty_example_section", "vector_text"]

STEP_BUTTONS = {"br": "backward(v, retain)", "b": "backward(v)", "bn": "backward()", "z": "zero grads",
                "f": "forward again"}
STEP_ERROR = "_step_error"  # session_state: a step button's refusal, shown once on the next run


def vector_text(values) -> str:
    """Numbers as a person types them: '0.1, 1, 0.0001'."""
    return ", ".join(f"{v:g}" for v in values)


# ------------------------------------------------------------------ 2 · accumulation


@st.cache_data(max_entries=LIMITS.cache_entries, ttl=LIMITS.cache_seconds, hash_funcs={BackwardSession: settings_key})
def _replay(session: BackwardSession) -> tuple[StepRecord, ...]:
    """Section 2's engine call: every step replayed from scratch on fresh tensors."""
    return session.replay()


#: The steps the first screen's answer was written for: section 2 reruns the whole page when
#: its steps differ, so the answer above never speaks of other steps than the list below.
ANSWERED_STEPS = "_gl_backward_answered_steps"


def steps_so_far(vjp: VJPSettings) -> tuple[StepRecord, ...]:
    """Section 2's steps (its box's value, else the URL's) replayed on ``vjp``'s tensors, for the
    first screen's answer; () for none or for steps section 2 refuses (it says why)."""
    text = st.session_state.get("steps", st.query_params.get("steps", ""))
    st.session_state[ANSWERED_STEPS] = text
    try:
        return _replay(session=BackwardSession.from_text(text, vjp)) if text.strip() else ()
    except GradLabError:
        return ()


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
        steps = bound_text("steps so far, as codes", "steps", value="", max_chars=LIMITS.expression_chars,
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


def _render_steps(records: tuple[StepRecord, ...]) -> None:
    """Section 2's result: each step, its PyTorch line and the .grad values after it."""
    if not records:
        st.caption("Press the buttons above: each press replays every step from scratch on fresh tensors.")
    for n, rec in enumerate(records, start=1):
        with st.container(border=True):
            st.markdown(f"**{n}.** {markdown_code(rec.code)}")
            if rec.ok:
                st.markdown(" · ".join(
                    f"`{k}.grad` = {('None' if g is None else '[' + vector_text(g) + ']')}" for k, g in rec.grads.items()
                ))
            else:
                st.warning(f"PyTorch refuses: {markdown_literal(rec.message)}", icon=":material/block:")


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
        records = _replay(session=session)  # by name, hashed by its text: gradlab.ui.cache_keys
    except Exception as err:  # noqa: BLE001 - shown as a sentence, never a traceback
        show_error(err)
        records = ()
    _render_steps(records)


# ------------------------------------------------------------------ 3 · full Jacobian


@st.cache_resource(max_entries=LIMITS.cache_entries, ttl=LIMITS.cache_seconds,
                   hash_funcs={ExampleVJPSettings: settings_key})
def _matrix(settings: ExampleVJPSettings) -> MatrixVJP:
    """Section 3's engine call: z = W x, then z.backward(v); shared read-only by every session."""
    return example_vjp(settings)


def _matrix_controls() -> ExampleVJPSettings:
    """The example and its v; returns the section's frozen settings (a GradLabError says what to fix)."""
    name = bound_selectbox("example", "mx", tuple(MATRIX_EXAMPLES), format_func=lambda k: MATRIX_EXAMPLES[k].title)
    e = MATRIX_EXAMPLES[name]
    typed_v = bound_text(f"v for z = W x ({len(e.w)} entries)", "mv", value=vector_text(e.v),
                         max_chars=LIMITS.expression_chars)
    return ExampleVJPSettings(name, parse_vector(typed_v, "v"))


@st.cache_data(max_entries=LIMITS.cache_entries, ttl=LIMITS.cache_seconds, show_spinner=False,
               hash_funcs={ExampleVJPSettings: settings_key})
def _render_matrix(settings: ExampleVJPSettings) -> None:
    """Section 3's result: J = W, its rows weighted by v, and x.grad. Drawn once per settings and
    replayed from the cache: st.plotly_chart encodes each chart and hashes it into its element id
    on every call (a tenth of the page's warm rerun, py-spy)."""
    r = _matrix(settings=settings)
    left, right = st.columns([2, 3])
    with left:
        show_figure(cached_figure(settings, plots.jacobian_heatmap, r.jacobian, "J = ∂z/∂x = W", "z", "x"),
                    "jacobian-w", key="jac-w")
    with right:
        show_figure(cached_figure(settings, plots.weighted_rows_figure, r.table, r.grad), "weighted-rows")
    st.markdown(f"x.grad = [{vector_text(r.grad)}] = Σᵢ vᵢ · (row i of J) = [{vector_text(r.vjp)}]. "
                "A one-hot v picks out one row: the gradient of one output.")


@st.fragment
def full_jacobian() -> None:
    """Section 3: a Jacobian that is not diagonal. Its controls -> ExampleVJPSettings -> one cached call -> render."""
    st.subheader("3 · A Jacobian that is not diagonal")
    try:
        settings = _matrix_controls()
        _matrix(settings=settings)  # computed here, so a refusal is this section's sentence
    except Exception as err:  # noqa: BLE001 - shown as a sentence, never a traceback
        show_error(err)
        return
    _render_matrix(settings=settings)


# ------------------------------------------------------------------ 4 · torch.empty


@st.cache_data(max_entries=1, show_spinner=False)
def _printout() -> None:
    """Section 4's fixed part: the question's code, the same rebuilt in GradLab with its printout, and
    what the printout says. The same on every run, so drawn once and replayed from the cache
    (rebuilding and printing the tensors, then escaping the note, were a ninth of the page's
    server time per rerun: py-spy under a class)."""
    st.code(QUESTION_CODE, language="python")
    ex = empty_example()  # deterministic and instant: b = c = 0, as the printout implies; a = 1 (any value)
    st.code("# The same in GradLab (PyTorch 2): b = c = 0, a = 1; y broadcast to the gradient's 3 entries\n"
            "y.expand(3).backward(gradients)\n"
            + "\n".join(f"print({k}.grad) # {ex.printed[k]}" for k in ("a", "b", "c")), language="python")
    st.markdown(markdown_literal(EMPTY_NOTE))


@st.fragment
def empty_example_section() -> None:
    """Section 4: the question's torch.empty example, its printout, and what the printout says about a, b, c."""
    st.subheader("4 · The question's torch.empty example")
    _printout()
    if not st.button("Call torch.empty(3) twice", key="empty"):
        return
    demo = empty_demo()  # uncached: its values are arbitrary by design
    for n, values in enumerate(demo.empty_calls, start=1):
        st.code(f"torch.empty(3)  # call {n}: [{vector_text(values)}]   (arbitrary)", language="python")
    st.code(f"torch.zeros(3)  # [{vector_text(demo.zeros)}]", language="python")
