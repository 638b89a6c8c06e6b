"""Backward's gradient argument: what backward(gradient=v) means; vector-Jacobian products, accumulation, retain_graph.

Each section is the page skeleton: its controls -> one frozen settings object
(VJPSettings, BackwardSession, ExampleVJPSettings) -> one cached engine call ->
render(result). Layout only: no numerics, limit checks or engine choices here.
The sections keep their own controls, drawn where they are read, so one cannot
fold them into a single call without moving every control to the top.

First screen (a projector at 1280x720): the title with the question beside it, one row
of controls (v and the dtype; a, b and c in a popover; the presets in another), the
answer sentence (gradlab.answers.labs) and the whole main chart: for each
entry, ∂yᵢ/∂inputᵢ and the .grad that backward(v) returned, v's scaling drawn between
them. The answer table (.grad first), the Jacobians, accumulation, a full Jacobian and
the question's torch.empty example follow below.
"""

import pandas as pd
import streamlit as st

from gradlab.ui.page_chrome import answer_box, details, main_chart_box, start_page, title_row

start_page("backward")

from gradlab.errors import GradLabError  # noqa: E402
from gradlab.figures import backward as plots  # noqa: E402
from gradlab.labs.backward.engine import (  # noqa: E402
    EMPTY_NOTE,
    MATRIX_EXAMPLES,
    QUESTION_CODE,
    SEED_FUNCTION,
    STEP_CODES,
    BackwardSession,
    ExampleVJPSettings,
    MatrixVJP,
    StepRecord,
    VJPResult,
    VJPSettings,
    empty_demo,
    empty_example,
    example_vjp,
    parse_vector,
    vector_jacobian,
)
from gradlab.limits import LIMITS  # noqa: E402
from gradlab.answers.labs import backward_answer  # noqa: E402
from gradlab.teaching.glossary import term  # noqa: E402
from gradlab.literal_text import markdown_code, markdown_literal  # noqa: E402
from gradlab.ui.bound_widgets import bound_selectbox, bound_text  # noqa: E402
from gradlab.ui.controls import dtype_selectbox  # noqa: E402
from gradlab.ui.figures import prepare_figure, show_figure  # noqa: E402
from gradlab.ui.messages import ANSWER_BOXES, ANSWER_ICONS, show_error  # noqa: E402
from gradlab.ui.presets import presets_popover  # noqa: E402

QUESTION = VJPSettings()  # the question's tensors: the defaults
VECTOR_FIELDS = (("a", "a"), ("b", "b"), ("c", "c (> 0)"), ("v", "gradient v"))  # (key, label)
STEP_BUTTONS = {"br": "backward(v, retain)", "b": "backward(v)", "bn": "backward()", "z": "zero grads",
                "f": "forward again"}
STEP_ERROR = "_step_error"  # session_state: a step button's refusal, shown once on the next run
V_WIDTH, DTYPE_WIDTH = 220, 110  # px: v, the dtype and the "a, b, c" popover in one row, also on a phone
#: The answer table: the answer (.grad) right after the entry's name, so a phone shows it.

LESSON = r"""
For $y = f(x)$ with a vector output, the Jacobian $J_{ij} = \partial y_i/\partial x_j$ can be
huge. Reverse mode never forms it: given $v$ (the `gradient` argument), it computes

$$x.\mathrm{grad} \mathrel{+}= v^\top J = \sum_i v_i\, \frac{\partial y_i}{\partial x},$$

which is the gradient of the scalar $L = \sum_i v_i y_i$. If $y$ feeds a loss, the right
$v$ is $\partial L/\partial y$ — the chain rule, one step at a time. A scalar output uses
$v = 1$ by default; a vector output has no default, hence *"grad can be implicitly created
only for scalar outputs"*. Calls **add** into `.grad` (zero it between optimisation
steps), and a graph's saved tensors are freed after one backward unless
`retain_graph=True`.
"""


def _text(values) -> str:
    """Numbers as a person types them: '0.1, 1, 0.0001'."""
    return ", ".join(f"{v:g}" for v in values)


# ------------------------------------------------------------------ engine calls


@st.cache_data(max_entries=LIMITS.cache_entries, ttl=LIMITS.cache_seconds)
def _vjp(settings: VJPSettings) -> VJPResult:
    """Section 1's engine call: Jacobian blocks, vᵀJ and y.backward(v)."""
    return vector_jacobian(settings)


@st.cache_data(max_entries=LIMITS.cache_entries, ttl=LIMITS.cache_seconds)
def _replay(session: BackwardSession) -> tuple[StepRecord, ...]:
    """Section 2's engine call: every step replayed from scratch on fresh tensors."""
    return session.replay()


@st.cache_data(max_entries=LIMITS.cache_entries, ttl=LIMITS.cache_seconds)
def _matrix(settings: ExampleVJPSettings) -> MatrixVJP:
    """Section 3's engine call: z = W x, then z.backward(v)."""
    return example_vjp(settings)


# ------------------------------------------------------------------ step buttons


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


# ------------------------------------------------------------------ sections


def _header() -> None:
    """The title and the question this page answers in one short line beside it."""
    with title_row(
        "Backward's gradient argument",
        "what does `gradients` mean in `y.backward(gradients)`?",
        help="With y = 3a + 2b² + log(c) and gradients = [0.1, 1.0, 0.0001] the question's Example 1 "
             "(a = [1, 2, 3], b = [3, 4, 5], c = [6, 7, 8]) printed a.grad = [0.3, 3, 3e-4], "
             "b.grad = [1.2, 16, 2e-3], c.grad = [0.016667, 0.14286, 1.25e-5]. " + term("Jacobian"),
    ):
        pass  # the long title leaves the presets no room here: they close the row of controls


def _vector_controls() -> tuple[dict[str, str], str]:
    """v and the dtype in one row, a, b and c in a popover, then the presets; returns the vectors as typed
    and the dtype."""
    typed = {}
    with st.container(horizontal=True, wrap=True, gap="small", vertical_alignment="bottom"):
        typed["v"] = bound_text("gradient v", "v", value=_text(QUESTION.v), max_chars=LIMITS.expression_chars,
                                width=V_WIDTH, help="The argument of y.backward(v): one weight per entry of y. "
                                                    + term("VJP"))
        dtype = dtype_selectbox("dtype", "dtype", default=QUESTION.dtype, width=DTYPE_WIDTH)
        with st.popover("a, b, c", icon=":material/tune:", help="the inputs of y = 3a + 2b² + log(c)"):
            for key, label in VECTOR_FIELDS[:3]:
                typed[key] = bound_text(label, key, value=_text(getattr(QUESTION, key)),
                                        max_chars=LIMITS.expression_chars)
        presets_popover("backward", primary="gradient_argument")
    return typed, dtype


def _vjp_settings(typed: dict[str, str], dtype: str) -> VJPSettings:
    """The one frozen settings object; a GradLabError says what to fix."""
    vectors = {key: parse_vector(typed[key], key) for key, _ in VECTOR_FIELDS}  # a first, as y reads
    return VJPSettings(vectors["a"], vectors["b"], vectors["c"], vectors["v"], dtype)


def _first_screen(r: VJPResult) -> None:
    """The answer sentence and the main chart: each .grad is vᵢ times the derivative v = 1 would give."""
    answer = backward_answer(r)
    with answer_box():
        ANSWER_BOXES[answer.level](markdown_literal(answer.text), icon=ANSWER_ICONS[answer.level])
    with main_chart_box():
        show_figure(prepare_figure(plots.vjp_rows_figure, r.table), "backward-grad")


def _answer_table(r: VJPResult) -> None:
    """The values behind the chart, .grad first (the answer column stays on a phone's screen).

    A static table: 9 rows need no data grid, whose code the browser would fetch and
    start on every visit before the page settles."""
    t = r.table
    st.table(pd.DataFrame({
        "entry": [f"{k}[{i}]" for k, i in zip(t["input"], t["i"])],
        ".grad": [f"{g:.6g}" for g in t["grad"]],
        "vᵢ": [f"{v:g}" for v in t["v"]],
        "∂yᵢ/∂inputᵢ": [f"{j:.6g}" for j in t["jacobian"]],
        "input": [f"{x:g}" for x in t["value"]],
    }), hide_index=True)


def _render_vjp(r: VJPResult, typed_v: str) -> None:
    """Section 1: backward(v) computes vᵀJ."""
    st.subheader("1 · backward(v) computes vᵀJ", help=term("VJP"))
    _answer_table(r)
    if r.backward_equals_weighted_sum:
        st.success("`y.backward(v)` and `(v * y).sum().backward()` give the same .grad, bit for bit: "
                   "v weights each output, as if y were part of a larger scalar loss with ∂loss/∂y = v.")
    _jacobian_blocks(r, typed_v)


def _jacobian_blocks(r: VJPResult, typed_v: str) -> None:
    """The three diagonal blocks: drawn only when opened (three heatmaps, code and KaTeX cost the
    browser about a second on a slow machine, on every visit)."""
    box = details("The Jacobian blocks", "backward_blocks", icon=":material/grid_on:")
    if box is None:
        return
    with box:
        st.code(f"{SEED_FUNCTION}\ny.backward(v)   # v = torch.tensor([{typed_v}])",
                language="python")
        st.markdown(
            r"Each $y_i$ depends only on $a_i, b_i, c_i$, so each Jacobian block is diagonal: "
            r"$\partial y/\partial a = 3I$, $\partial y/\partial b = \mathrm{diag}(4b)$, "
            r"$\partial y/\partial c = \mathrm{diag}(1/c)$. backward(v) never builds them; it returns "
            r"$v^\top J$ directly: **a.grad = 3v, b.grad = 4bv, c.grad = v/c**."
        )
        for name in ("a", "b", "c"):
            show_figure(prepare_figure(plots.jacobian_heatmap, r.jacobians[name], f"∂y/∂{name}", "y", name),
                        f"jacobian-{name}", key=f"jac-{name}")


def _prediction() -> None:
    """Predict, then look: what a second backward adds (section 2 shows it; the answer above does not)."""
    with st.container(border=True):
        # A quiz answer is not part of the view: plain st.radio, never in the URL.
        guess = st.radio(
            "**Predict, then look:** after `y.backward(v, retain_graph=True)` and then `y.backward(v)`, "
            "what is a.grad?",
            ("3v", "6v", "an error"), index=None, horizontal=True, key="backward_guess",
        )
        if guess is None:
            st.caption("Pick an answer to see the explanation.")
            return
        (st.success if guess == "6v" else st.info)(
            ("Right: " if guess == "6v" else "Not quite: ") + "6v. .grad adds every backward's result to what "
            "is there; the first call kept the graph, so the second may run. A third would fail. "
            "Try it in section 2."
        )


def _step_controls() -> str:
    """The steps so far (in the URL) and one button per step; returns the steps' text."""
    steps = bound_text("steps so far", "steps", value="", max_chars=LIMITS.expression_chars,
                       help="Codes: " + "; ".join(f"{k} = {v[1]}" for k, v in STEP_CODES.items()))
    buttons = st.columns(6)
    for col, code in zip(buttons, STEP_BUTTONS):
        col.button(STEP_BUTTONS[code], key=f"step-{code}", on_click=_add_step, args=(code,), width="stretch",
                   help=f"`{STEP_CODES[code][1]}`")
    buttons[5].button("start afresh", key="step-reset", on_click=_clear_steps, width="stretch")
    if STEP_ERROR in st.session_state:
        st.warning(markdown_literal(st.session_state.pop(STEP_ERROR)))
    return steps


def _render_steps(records: tuple[StepRecord, ...]) -> None:
    """Section 2's result: each step, its PyTorch line and the .grad values after it."""
    if not records:
        st.caption("Press the buttons above: each press replays every step from scratch on fresh tensors.")
    for n, rec in enumerate(records, start=1):
        with st.container(border=True):
            st.markdown(f"**{n}.** {markdown_code(rec.code)}")
            if rec.ok:
                st.markdown(" · ".join(
                    f"`{k}.grad` = {('None' if g is None else '[' + _text(g) + ']')}" for k, g in rec.grads.items()
                ))
            else:
                st.warning(f"PyTorch refuses: {markdown_literal(rec.message)}", icon=":material/block:")


def _accumulation(vjp: VJPSettings) -> None:
    """Section 2: .grad accumulates; the graph is freed."""
    st.subheader("2 · .grad accumulates; the graph is freed")
    steps = _step_controls()
    try:
        records = _replay(BackwardSession.from_text(steps, vjp))
    except Exception as err:  # noqa: BLE001 - shown as a sentence, never a traceback
        show_error(err)
        records = ()
    _render_steps(records)


def _matrix_controls() -> tuple[str, str]:
    """The example and its v (as typed)."""
    name = bound_selectbox("example", "mx", tuple(MATRIX_EXAMPLES), format_func=lambda k: MATRIX_EXAMPLES[k].title)
    e = MATRIX_EXAMPLES[name]
    typed_v = bound_text(f"v for z = W x ({len(e.w)} entries)", "mv", value=_text(e.v),
                         max_chars=LIMITS.expression_chars)
    return name, typed_v


def _render_matrix(r: MatrixVJP) -> None:
    """Section 3's result: J = W, its rows weighted by v, and x.grad."""
    left, right = st.columns([2, 3])
    with left:
        show_figure(prepare_figure(plots.jacobian_heatmap, r.jacobian, "J = ∂z/∂x = W", "z", "x"), "jacobian-w",
                    key="jac-w")
    with right:
        show_figure(prepare_figure(plots.weighted_rows_figure, r.table, r.grad), "weighted-rows")
    st.markdown(f"x.grad = [{_text(r.grad)}] = Σᵢ vᵢ · (row i of J) = [{_text(r.vjp)}]. "
                "A one-hot v picks out one row: the gradient of one output.")


def _full_jacobian() -> None:
    """Section 3: a Jacobian that is not diagonal."""
    st.subheader("3 · A Jacobian that is not diagonal")
    name, typed_v = _matrix_controls()
    try:
        result = _matrix(ExampleVJPSettings(name, parse_vector(typed_v, "v")))
    except Exception as err:  # noqa: BLE001 - shown as a sentence, never a traceback
        show_error(err)
        return
    _render_matrix(result)


def _empty() -> None:
    """Section 4: the question's torch.empty example, its printout, and what the printout says about a, b, c."""
    st.subheader("4 · The question's torch.empty example")
    st.code(QUESTION_CODE, language="python")
    ex = empty_example()  # deterministic and instant: b = c = 0, as the printout implies; a = 1 (any value)
    st.code("# The same in GradLab (PyTorch 2): b = c = 0, a = 1; y broadcast to the gradient's 3 entries\n"
            "y.expand(3).backward(gradients)\n"
            + "\n".join(f"print({k}.grad) # {ex.printed[k]}" for k in ("a", "b", "c")), language="python")
    st.markdown(markdown_literal(EMPTY_NOTE))
    if not st.button("Call torch.empty(3) twice", key="empty"):
        return
    demo = empty_demo()  # uncached: its values are arbitrary by design
    for n, values in enumerate(demo.empty_calls, start=1):
        st.code(f"torch.empty(3)  # call {n}: [{_text(values)}]   (arbitrary)", language="python")
    st.code(f"torch.zeros(3)  # [{_text(demo.zeros)}]", language="python")


def _lesson() -> None:
    """What backward(v) multiplies, with the formulas."""
    with st.expander("Lesson: what backward(v) multiplies", icon=":material/school:"):
        st.markdown(LESSON)


# controls -> one frozen settings object -> one cached engine call -> render(result), per section
_header()
typed, dtype = _vector_controls()
try:
    settings = _vjp_settings(typed, dtype)
    result = _vjp(settings)
except Exception as err:  # noqa: BLE001 - shown as a sentence, never a traceback
    show_error(err)
    st.stop()
_first_screen(result)
_prediction()
_render_vjp(result, typed["v"])
_accumulation(settings)
_full_jacobian()
_empty()
_lesson()
