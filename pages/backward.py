"""Backward's gradient argument: what backward(gradient=v) means; vector-Jacobian products, accumulation, retain_graph.

Read top to bottom, as the page draws: the title row; section 1, the page's question
(controls -> one frozen VJPSettings -> one cached engine call -> the answer, the main chart,
the answer table and the Jacobian blocks); a prediction; then sections 2-4 from
gradlab.ui.backward_sections, each with the same shape of its own (accumulation on a
BackwardSession, a full Jacobian on an ExampleVJPSettings, the question's torch.empty
example); the lesson. Layout only: no numerics, limit checks or engine choices here.

First screen (a projector at 1280x720): the title with the question beside it, one row
of controls (v and the dtype; a, b and c in a popover; the presets in another), the
answer sentence (gradlab.answers.labs) and the whole main chart: for each
entry, ∂yᵢ/∂inputᵢ and the .grad that backward(v) returned, v's scaling drawn between
them.
"""

import pandas as pd
import streamlit as st

from gradlab.answers.labs import backward_answer, steps_answer
from gradlab.figures import backward as plots
from gradlab.labs.backward.engine import SEED_FUNCTION, VJPResult, VJPSettings, parse_vector, vector_jacobian
from gradlab.limits import LIMITS
from gradlab.teaching.glossary import term
from gradlab.ui.backward_sections import accumulation, empty_example_section, full_jacobian, steps_so_far, vector_text
from gradlab.ui.bound_widgets import bound_text
from gradlab.ui.cache_keys import page_cache_data, page_cache_resource, settings_key
from gradlab.ui.controls import dtype_selectbox
from gradlab.ui.figures import cached_figure, replayed_chart, show_figure
from gradlab.ui.messages import show_answer, stop_with_error
from gradlab.ui.page_chrome import answer_box, details, main_chart_box, quiz_box, start_page, title_row
from gradlab.ui.presets import presets_popover

start_page("backward")

QUESTION = VJPSettings()  # the question's tensors: the defaults
VECTOR_FIELDS = (("a", "a"), ("b", "b"), ("c", "c (> 0)"), ("v", "gradient v"))  # (key, label)
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



def _typed(values) -> str:
    """Numbers as a person would type them, exactly: '0.1, 1, 0.0001' (repr where :g would round)."""
    return ", ".join(f"{v:g}" if float(f"{v:g}") == v else repr(v) for v in values)


@page_cache_resource(max_entries=LIMITS.cache_entries, ttl=LIMITS.cache_seconds, hash_funcs={VJPSettings: settings_key})
def _vjp(settings: VJPSettings) -> VJPResult:
    """Section 1's engine call: Jacobian blocks, vᵀJ and y.backward(v); shared read-only by every
    session (st.cache_data unpickled a copy on every rerun)."""
    return vector_jacobian(settings)


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
        typed["v"] = bound_text("gradient v", "v", value=vector_text(QUESTION.v), max_chars=LIMITS.expression_chars,
                                width=V_WIDTH, help="The argument of y.backward(v): one weight per entry of y. "
                                                    + term("VJP"))
        dtype = dtype_selectbox("dtype", "dtype", default=QUESTION.dtype, width=DTYPE_WIDTH)
        with st.popover("a, b, c", icon=":material/tune:", help="the inputs of y = 3a + 2b² + log(c)"):
            for key, label in VECTOR_FIELDS[:3]:
                typed[key] = bound_text(label, key, value=vector_text(getattr(QUESTION, key)),
                                        max_chars=LIMITS.expression_chars)
        presets_popover("backward", primary="gradient_argument")
    vectors = {key: parse_vector(typed[key], key) for key, _ in VECTOR_FIELDS}  # a first, as y reads
    return VJPSettings(vectors["a"], vectors["b"], vectors["c"], vectors["v"], dtype)


def _first_screen(settings: VJPSettings, r: VJPResult) -> bool:
    """The answer sentence and the main chart: each .grad is vᵢ times the derivative v = 1 would give;
    once section 2 holds steps, what they leave in .grad (the chart stays one backward's)."""
    records = steps_so_far(settings)
    answer = steps_answer(r, records) if records else backward_answer(r)
    asked = not records  # once steps ran, the answer above already tells what a second backward adds
    with answer_box():
        show_answer(answer)
    with main_chart_box():
        replayed_chart(settings, "backward-grad",
                       lambda: cached_figure(settings, plots.vjp_rows_figure, _vjp(settings=settings).table))
    return asked


@page_cache_data(max_entries=LIMITS.cache_entries, ttl=LIMITS.cache_seconds, show_spinner=False,
                 hash_funcs={VJPSettings: settings_key})
def _answer_table(settings: VJPSettings) -> None:
    """The values behind the chart, .grad first (the answer column stays on a phone's screen).

    A static table: 9 rows need no data grid, whose code the browser would fetch and
    start on every visit before the page settles. Drawn once per settings and replayed from the
    cache: building the frame and its Arrow bytes was a twelfth of the page's server time per rerun
    (py-spy, a class on this page)."""
    t = _vjp(settings=settings).table
    st.table(pd.DataFrame({
        "entry": [f"{k}[{i}]" for k, i in zip(t["input"], t["i"])],
        ".grad": [f"{g:.6g}" for g in t["grad"]],
        "vᵢ": [f"{v:g}" for v in t["v"]],
        "∂yᵢ/∂inputᵢ": [f"{j:.6g}" for j in t["jacobian"]],
        "input": [f"{x:g}" for x in t["value"]],
    }), hide_index=True)


def _vjp_section(settings: VJPSettings, r: VJPResult) -> None:
    """Section 1: backward(v) computes vᵀJ."""
    st.subheader("1 · backward(v) computes vᵀJ", help=term("VJP"))
    _answer_table(settings=settings)
    if r.backward_equals_weighted_sum:
        st.success("`y.backward(v)` and `(v * y).sum().backward()` give the same .grad, bit for bit: "
                   "v weights each output, as if y were part of a larger scalar loss with ∂loss/∂y = v.")
    _jacobian_blocks(settings, r)


def _jacobian_blocks(settings: VJPSettings, r: VJPResult) -> None:
    """The three diagonal blocks: drawn only when opened (three heatmaps, code and KaTeX cost the
    browser about a second on a slow machine, on every visit)."""
    box = details("The Jacobian blocks", "backward_blocks", icon=":material/grid_on:")
    if box is None:
        return
    with box:
        st.code(f"{SEED_FUNCTION}\ny.backward(v)   # v = torch.tensor([{_typed(settings.v)}])",
                language="python")
        st.markdown(
            r"Each $y_i$ depends only on $a_i, b_i, c_i$, so each Jacobian block is diagonal: "
            r"$\partial y/\partial a = 3I$, $\partial y/\partial b = \mathrm{diag}(4b)$, "
            r"$\partial y/\partial c = \mathrm{diag}(1/c)$. backward(v) never builds them; it returns "
            r"$v^\top J$ directly: **a.grad = 3v, b.grad = 4bv, c.grad = v/c**."
        )
        for name in ("a", "b", "c"):
            show_figure(cached_figure((settings, name), plots.jacobian_heatmap, r.jacobians[name], f"∂y/∂{name}",
                                      "y", name), f"jacobian-{name}", key=f"jac-{name}")


def _prediction() -> None:
    """Predict, then look: what a second backward adds (section 2 shows it; the answer above does not)."""
    with quiz_box(border=True):
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


def _lesson() -> None:
    """What backward(v) multiplies, with the formulas."""
    with st.expander("Lesson: what backward(v) multiplies", icon=":material/school:"):
        st.markdown(LESSON)


# controls -> one frozen settings object -> one cached engine call -> render; then sections 2-4
_header()
try:
    settings = _controls()
    result = _vjp(settings=settings)  # by name, hashed by its text: gradlab.ui.cache_keys
except Exception as err:  # noqa: BLE001 - shown as a sentence, never a traceback
    stop_with_error(err)
if _first_screen(settings, result):
    _prediction()
_vjp_section(settings, result)
accumulation(settings)
full_jacobian()
empty_example_section()
_lesson()
