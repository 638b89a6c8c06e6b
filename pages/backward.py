"""Backward's gradient argument: what backward(gradient=v) means; vector-Jacobian products, accumulation, retain_graph.

Read top to bottom, as the page draws: the title row; section 1, the page's question
(controls -> one frozen VJPSettings -> one cached view of the lab, gradlab.labs.backward ->
the answer, the main chart, the answer table and the Jacobian blocks); a prediction; then
sections 2-4 from gradlab.ui.backward_sections, each with the same shape of its own
(accumulation on a BackwardSession, a full Jacobian on an ExampleVJPSettings, the
question's torch.empty example); the lesson. Layout only: no numerics, limit checks or
engine choices here.

First screen (a projector at 1280x720): the title with the question beside it, one row
of controls (v and the dtype; a, b and c in a popover; the presets in another), the
answer sentence (gradlab.labs.backward.answer) and the whole main chart: for each
entry, ∂yᵢ/∂inputᵢ and the .grad that backward(v) returned, v's scaling drawn between
them.
"""

import streamlit as st

from gradlab.labs.backward import EXPRESSION_CHARS, PAGE_DEFAULTS, VJPSettings, settings_from, view
from gradlab.ui.backward_sections import accumulation, empty_example_section, full_jacobian, steps_so_far
from gradlab.ui.url_widgets import url_text
from gradlab.ui.controls import dtype_selectbox
from gradlab.ui.messages import show_answer, stop_with_error
from gradlab.ui.page_chrome import answer_box, details, main_chart_box, start_page, title_row
from gradlab.ui.predictions import prediction
from gradlab.ui.presets import presets_popover
from gradlab.ui.term_links import term
from gradlab.ui.views import lab_view, replayed_section, show_chart

start_page("backward")

VECTOR_LABELS = {"a": "a", "b": "b", "c": "c (> 0)"}  # key -> label of the popover's vectors
V_WIDTH, DTYPE_WIDTH = 220, 110  # px: v, the dtype and the "a, b, c" popover in one row, also on a phone

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


def _controls() -> VJPSettings:
    """v and the dtype in one row, a, b and c in a popover, then the presets; returns the one frozen
    settings object (a GradLabError says what to fix)."""
    typed = {}
    with st.container(horizontal=True, wrap=True, gap="small", vertical_alignment="bottom"):
        typed["v"] = url_text("gradient v", "v", value=PAGE_DEFAULTS["v"], max_chars=EXPRESSION_CHARS,
                                width=V_WIDTH, help="The argument of y.backward(v): one weight per entry of y. "
                                                    + term("VJP"))
        typed["dtype"] = dtype_selectbox("dtype", "dtype", default=PAGE_DEFAULTS["dtype"], width=DTYPE_WIDTH)
        with st.popover("a, b, c", icon=":material/tune:", help="the inputs of y = 3a + 2b² + log(c)"):
            for key, label in VECTOR_LABELS.items():
                typed[key] = url_text(label, key, value=PAGE_DEFAULTS[key], max_chars=EXPRESSION_CHARS)
        presets_popover("backward", primary="gradient_argument")
    return settings_from(typed)  # a's typo first, as y reads


def _first_screen(settings: VJPSettings, shown) -> bool:
    """The answer sentence and the main chart: each .grad is vᵢ times the derivative v = 1 would give;
    once section 2 holds steps, what they leave in .grad (the chart stays one backward's)."""
    steps = steps_so_far(settings)
    with answer_box():
        show_answer((shown if steps is None else steps).answer)
    with main_chart_box():
        show_chart(settings, shown, "grad", "backward-grad")
    return steps is None  # once steps ran, the answer above already tells what a second backward adds


def _answer_table(shown) -> None:
    """The values behind the chart, .grad first (the answer column stays on a phone's screen).

    A static table: 9 rows need no data grid, whose code the browser would fetch and
    start on every visit before the page settles."""
    st.table(shown.tables["grads"], hide_index=True)


def _vjp_section(settings: VJPSettings, shown) -> None:
    """Section 1: backward(v) computes vᵀJ."""
    st.subheader("1 · backward(v) computes vᵀJ", help=term("VJP"))
    # drawn once per settings and replayed: the table's Arrow bytes are not encoded on every rerun
    replayed_section(settings, "grads", lambda: _answer_table(shown))
    if "same" in shown.texts:
        st.success(shown.texts["same"])
    _jacobian_blocks(settings, shown)


def _jacobian_blocks(settings: VJPSettings, shown) -> None:
    """The three diagonal blocks: drawn only when opened (three heatmaps, code and KaTeX cost the
    browser about a second on a slow machine, on every visit)."""
    box = details("The Jacobian blocks", "backward_blocks", icon=":material/grid_on:")
    if box is None:
        return
    with box:
        st.code(shown.texts["code"], language="python")
        st.markdown(
            r"Each $y_i$ depends only on $a_i, b_i, c_i$, so each Jacobian block is diagonal: "
            r"$\partial y/\partial a = 3I$, $\partial y/\partial b = \mathrm{diag}(4b)$, "
            r"$\partial y/\partial c = \mathrm{diag}(1/c)$. backward(v) never builds them; it returns "
            r"$v^\top J$ directly: **a.grad = 3v, b.grad = 4bv, c.grad = v/c**."
        )
        for name in ("a", "b", "c"):
            show_chart(settings, shown, f"jacobian {name}", f"jacobian-{name}", chart_key=f"jac-{name}")


def _prediction(shown) -> None:
    """Predict, then look: what a second backward adds (section 2 shows it; the answer above does not);
    the choices and the reveal are the lab's (gradlab.labs.backward.quiz)."""
    table = shown.tables["prediction"]
    prediction(shown.texts["prediction"], table.index, "backward_guess", lambda: table)


def _lesson() -> None:
    """What backward(v) multiplies, with the formulas."""
    with st.expander("Lesson: what backward(v) multiplies", icon=":material/school:"):
        st.markdown(LESSON)


# controls -> one frozen settings object -> one cached engine call -> render; then sections 2-4
_header()
try:
    settings = _controls()
    shown = lab_view(view, settings)  # in a worker, once per settings, keyed by their text
except Exception as err:  # noqa: BLE001 - shown as a sentence, never a traceback
    stop_with_error(err)
if _first_screen(settings, shown):
    _prediction(shown)
_vjp_section(settings, shown)
accumulation(settings)
full_jacobian()
empty_example_section(shown)
_lesson()
