"""Round-off lab: why autograd's 1/x gradient differs from -1/x**2; two formulas, ulp by ulp, against the exact value.

Controls -> one frozen RoundoffSettings (the engine validates it) -> one cached engine
call (compare) -> render(result). Layout only: no numerics, limit checks or engine
choices here. First screen: the title with the question beside it and the
presets in a popover, one row of controls, the answer sentence and the whole main chart;
the prediction (the question's comparison in float64, which the page does not draw), the
other charts, the notes and the table below.
"""

from dataclasses import replace

import streamlit as st

from gradlab.ui.page_chrome import answer_box, details, main_chart_box, quiz_box, start_page, title_row
from gradlab.labs.roundoff.engine import (
    COMPARISONS,
    DISTRIBUTIONS,
    RoundoffResult,
    RoundoffSettings,
    RoundoffSummary,
    with_hex,
)
from gradlab.answers.roundoff import answer, ulps_text
from gradlab.teaching.glossary import term
from gradlab.teaching.quizzes import (
    ROUNDOFF_DTYPE,
    ROUNDOFF_GUESSES,
    ROUNDOFF_QUESTION,
    roundoff_reveal,
)
from gradlab.limits import LIMITS
from gradlab.server.heavy_work import roundoff, roundoff_summary
from gradlab.ui.worker_calls import heavy
from gradlab.literal_text import markdown_code, markdown_literal
from gradlab.ui.bound_widgets import bound_number, bound_selectbox, bound_text
from gradlab.ui.cache_keys import page_cache_data, page_cache_resource, settings_key
from gradlab.ui.controls import dtype_selectbox
from gradlab.ui.figures import PreparedFigure, replayed_chart, show_figure
from gradlab.ui.messages import show_answer, stop_with_error
from gradlab.ui.presets import matching_preset, presets_popover

start_page("roundoff")

DEFAULTS = RoundoffSettings()
#: The prediction's comparison, not drawn on the page: the question's, moved to float64.
QUIZ = replace(COMPARISONS["reciprocal"].settings, dtype=ROUNDOFF_DTYPE)
TABLE_ROWS = 500  # rows of the point-by-point table shown
#: Widths (px) of the controls and metrics in their wrapping rows: one row each at 1280 px, two or three
#: side by side on a 390 px phone (columns would stack one per line there).
FORMULA_WIDTH, CHOICE_WIDTH, METRIC_WIDTH = 225, 120, 160

LESSON = r"""
Every basic operation is **correctly rounded**: the result is the float nearest the exact
one, off by at most half an ulp, a relative error of at most the unit round-off
$u = \varepsilon/2$ ($u = 2^{-24}$ in float32).

* PyTorch computes `1/x` as `reciprocal(x)`, whose backward is `-grad * result * result`.
  So autograd returns $-\mathrm{fl}(r\cdot r)$ with $r = \mathrm{fl}(1/x)$: exactly
  `-(1/x)*(1/x)`, bit for bit (check it with the second example).
* $r$ is off by a relative $\delta \le u$; squaring doubles that to $2u$, and the last
  rounding adds half an ulp: at most **2.5 ulp** from $-1/x^2$.
* `-1/x**2` rounds $x^2$ (relative $u$, which stays $u$ after the division) and the
  quotient (half an ulp): at most **1.5 ulp**.

Both are *right to within their rounding*; the question's `5.96e-08` is one ulp of float32
between 0.5 and 1 ($2^{-24}$). The same happens in float64, $2^{29}$ times smaller, and
`29/100*100` giving `28.999999999999996` is the same story in decimal clothing (try
`x/100*100` against `x` in float64).
"""


@page_cache_resource(max_entries=LIMITS.cache_entries_large, ttl=LIMITS.cache_seconds,
                     show_spinner="Comparing the formulas against the exact value…",
                     hash_funcs={RoundoffSettings: settings_key})
def _comparison(settings: RoundoffSettings) -> tuple[RoundoffResult, tuple[PreparedFigure, ...]]:
    """The one engine call: both formulas against the exact value at the settings' points, with
    the result's table cut to the TABLE_ROWS rows the page lists and the three figures drawn from
    every point, all built in the worker (gradlab.server.heavy_work.roundoff).

    Kept as it came back and shared, read-only, by every session: figures built in the server from
    100,000 points were a sixth of its time under a class, and st.cache_data copied the result on
    every rerun."""
    result, figures = heavy(roundoff, settings, TABLE_ROWS)  # in a worker process, ended at its bound
    return result, tuple(PreparedFigure(f) for f in figures)


@page_cache_data(max_entries=LIMITS.cache_entries, ttl=LIMITS.cache_seconds,
                 show_spinner="Comparing the formulas against the exact value…",
                 hash_funcs={RoundoffSettings: settings_key})
def _quiz_summary(settings: RoundoffSettings) -> RoundoffSummary:
    """The quiz's comparison, its summary only: the quiz draws nothing of it (in a worker process)."""
    return heavy(roundoff_summary, settings)


def _header() -> None:
    """The title, the question this page answers in one line beside it, the presets in a popover."""
    with title_row("Round-off lab", "autograd's gradient of `1/x` differs from `-1/x**2` by `5.96e-08`: "
                                    "which one is wrong?",
                   help="Both formulas meet an exact value, computed at high precision, at thousands of random x."):
        presets_popover("roundoff", primary="reciprocal_formulas")


def _controls() -> RoundoffSettings:
    """One wrapping row: the two formulas and the dtype, where x comes from in a popover (every value
    in the URL); returns the frozen settings."""
    with st.container(horizontal=True, gap="small", vertical_alignment="bottom", key="roundoff-formulas"):
        a = bound_text("Formula A", "a", value=DEFAULTS.formula_a, max_chars=LIMITS.expression_chars,
                       width=FORMULA_WIDTH,
                       help="An expression of x, 'autograd' (torch.autograd.grad of 1/x) or grad(<expr>).")
        b = bound_text("Formula B", "b", value=DEFAULTS.formula_b, max_chars=LIMITS.expression_chars,
                       width=FORMULA_WIDTH, help="Must equal formula A in exact arithmetic, e.g. log(1+x) and log1p(x).")
        dtype = dtype_selectbox("dtype", "dtype", default=DEFAULTS.dtype, width=CHOICE_WIDTH)
        with st.popover("Points x", icon=":material/tune:",
                        help="Where the x values are drawn from, how many, and the seed."):
            dist = bound_selectbox("x drawn from", "dist", DISTRIBUTIONS,
                                   help="normal: mean (low+high)/2, sd (high-low)/2, so [-1, 1] is randn(). "
                                        "log-uniform: positive x spread evenly over the decades.")
            low = bound_number("low", "low", value=DEFAULTS.low, min_value=-1e30, max_value=1e30, format="%g")
            high = bound_number("high", "high", value=DEFAULTS.high, min_value=-1e30, max_value=1e30, format="%g")
            n = bound_number("points", "n", value=DEFAULTS.samples, min_value=1,
                             max_value=LIMITS.roundoff_samples, step=1000)
            seed = bound_number("seed", "seed", value=DEFAULTS.seed, min_value=0, max_value=2**31 - 1, step=1)
    return RoundoffSettings(a, b, dtype, dist, float(low), float(high), int(n), int(seed))


def _answer(result: RoundoffResult) -> None:
    """The one sentence answering the page's question (from the engine), and what an ulp is."""
    with answer_box():
        show_answer(answer(result), icon=":material/balance:")
        st.caption(term("ulp"))  # our own words: its link to the grid stays a link


def _main_chart(settings: RoundoffSettings) -> None:
    """Both formulas' errors against the exact value: the chart that answers the question."""
    with main_chart_box():
        replayed_chart(settings, "roundoff-error", lambda: _comparison(settings=settings)[1][0])


def _preset_note() -> None:
    """When the controls hold a preset's values, say which question it answers."""
    shown = matching_preset("roundoff")
    if shown is not None:
        st.caption(f"{shown.label}: {shown.note}")


def _number(ulps: float) -> str:
    """An ulp count short enough for a metric on a phone: as the answer writes it, without the unit."""
    return ulps_text(ulps).removesuffix(" ulp")


def _metrics(result: RoundoffResult) -> None:
    """The numbers behind the sentence: bit-for-bit agreement and each formula's worst error."""
    s = result.summary
    with st.container(horizontal=True, gap="small", key="roundoff-metrics"):
        st.metric("same bits", f"{s.bitwise_equal:.1%}", width=METRIC_WIDTH,
                  help="Points where A and B are the very same float.")
        st.metric("A's worst error (ulp)", _number(s.max_ulps_a_exact), width=METRIC_WIDTH,
                  help=markdown_literal(f"A = {result.label_a}. ") + term("ulp"))
        st.metric("B's worst error (ulp)", _number(s.max_ulps_b_exact), width=METRIC_WIDTH,
                  help=markdown_literal(f"B = {result.label_b}. ") + term("correctly rounded"))
        # a count of floats, not ulps of the exact value: near 0 floats are denser, so log1p's
        # A = 0 against B ≈ 1e-8 is 8.6e+08 floats apart while A's error is 1.7e+07 ulp
        st.metric("A–B, floats apart (at most)", _number(s.max_ulps_a_b), width=METRIC_WIDTH,
                  help="How many steps from one float to the next lie between A's and B's results, at "
                       "most (0: the same bits, 1: neighbours). Within one binade that is their distance "
                       "in ulps; across binades toward 0 floats are denser, so it can exceed both errors "
                       "in ulp.")


@page_cache_data(max_entries=LIMITS.cache_entries, ttl=LIMITS.cache_seconds, show_spinner=False,
                 hash_funcs={RoundoffSettings: settings_key})
def _more_charts(settings: RoundoffSettings) -> None:
    """How far apart A and B are, and where along x the errors grow (side by side; stacked on a phone).

    Drawn once per settings and replayed from the cache: encoding the two charts and hashing them
    into their element ids (st.plotly_chart) was a tenth of a rerun's server time (py-spy)."""
    figures = _comparison(settings=settings)[1]
    left, right = st.columns(2)
    with left:
        show_figure(figures[1], "roundoff-distance")
    with right:
        show_figure(figures[2], "roundoff-error-by-x")


def _quiz() -> None:
    """Predict, then look: a comparison the page does not draw, revealed only once answered (never in the URL)."""
    with quiz_box(border=True):
        # A quiz answer is not part of the view: plain st.radio, never in the URL.
        guess = st.radio(ROUNDOFF_QUESTION, tuple(ROUNDOFF_GUESSES), index=None, horizontal=True,
                         format_func=ROUNDOFF_GUESSES.get, key="roundoff_guess")
        if guess is None:
            st.caption("Pick an answer to see the comparison and why.")
            return
        asked = _quiz_summary(settings=QUIZ)  # computed only now: the page shows nothing of it before
        reveal = roundoff_reveal(guess, asked.bitwise_equal, asked.max_ulps_a_b, asked.compared)
        (st.success if reveal.right else st.info)(markdown_literal(reveal.text))


def _notes(result: RoundoffResult) -> None:
    """What each formula is, then the engine's notes; visitor text shown literally."""
    for label, note in ((result.label_a, result.note_a), (result.label_b, result.note_b)):
        if note:
            st.markdown(f"- **{markdown_code(label)}**: " + markdown_literal(note))
    for note in result.notes:
        st.caption(markdown_literal(note))


def _points(result: RoundoffResult) -> None:
    """The first rows of the engine's table (all the worker call returns of it), bit patterns in hex."""
    if box := details("The numbers, point by point (first 500)", "roundoff_points"):
        box.dataframe(
            with_hex(result.table.head(TABLE_ROWS)), hide_index=True,
            column_config={
                "x": st.column_config.NumberColumn(format="%.9g"),
                "value_a": st.column_config.NumberColumn("A", format="%.9g"),
                "value_b": st.column_config.NumberColumn("B", format="%.9g"),
                "exact": st.column_config.NumberColumn(format="%.9g"),
                "ulps_a_b": st.column_config.NumberColumn("A–B (ulp)"),
                "ulps_a_exact": st.column_config.NumberColumn("A–exact (ulp)", format="%.3f"),
                "ulps_b_exact": st.column_config.NumberColumn("B–exact (ulp)", format="%.3f"),
            },
        )


def _lesson() -> None:
    """Why one ulp, and why neither formula is wrong."""
    with st.expander("Lesson: why one ulp, and who is right", icon=":material/school:"):
        st.markdown(LESSON)


def _render(settings: RoundoffSettings, result: RoundoffResult) -> None:
    """Everything below the controls: the answer and main chart first, then the rest."""
    _answer(result)
    _main_chart(settings)
    _preset_note()
    _metrics(result)
    _quiz()
    _more_charts(settings=settings)
    _notes(result)
    _points(result)
    _lesson()


# controls -> one frozen settings object -> one cached engine call -> render(result)
_header()
try:
    settings = _controls()
    result = _comparison(settings=settings)[0]  # by name, hashed by its text: gradlab.ui.cache_keys
except Exception as err:  # noqa: BLE001 - shown as a sentence, never a traceback
    stop_with_error(err)
_render(settings, result)
