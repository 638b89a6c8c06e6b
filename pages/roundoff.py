"""Round-off lab: why autograd's 1/x gradient differs from -1/x**2; two formulas, ulp by ulp, against the exact value.

Controls -> one frozen RoundoffSettings (the engine validates it) -> one cached view of it
(gradlab.labs.roundoff.view, in a worker) -> its layout. Layout only: no numerics, limit
checks or engine choices here. First screen: the title with the question beside it and the
presets in a popover, one row of controls, the answer sentence and the whole main chart;
the prediction (the question's comparison in float64, which the page does not draw), the
other charts, the notes and the table below.
"""

import streamlit as st

from gradlab.labs.roundoff import (
    DISTRIBUTIONS,
    MAX_FORMULA_CHARS,
    MAX_SAMPLES,
    ROUNDOFF_GUESSES,
    ROUNDOFF_QUESTION,
    ROUNDOFF_QUIZ,
    TABLE_ROWS,
    RoundoffSettings,
    quiz_view,
    settings_from,
    view,
)
from gradlab.ui.url_widgets import url_number, url_selectbox, url_text
from gradlab.ui.controls import dtype_selectbox
from gradlab.ui.messages import show_answer, stop_with_error
from gradlab.ui.page_chrome import answer_box, details, main_chart_box, start_page, title_row
from gradlab.ui.predictions import prediction
from gradlab.ui.presets import matching_preset, presets_popover
from gradlab.ui.term_links import term
from gradlab.ui.views import lab_view, replayed_section, show_chart

start_page("roundoff")

DEFAULTS = RoundoffSettings()
#: Widths (px) of the controls and metrics in their wrapping rows: one row each at 1280 px, two or three
#: side by side on a 390 px phone (columns would stack one per line there).
FORMULA_WIDTH, CHOICE_WIDTH, METRIC_WIDTH = 225, 120, 160
SPINNER = "Comparing the formulas against the exact value…"

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



def _header() -> None:
    """The title, the question this page answers in one line beside it, the presets in a popover."""
    with title_row("Round-off lab", "autograd's gradient of `1/x` differs from `-1/x**2` by `5.96e-08`: "
                                    "which one is wrong?",
                   help="Both formulas meet an exact value, computed at high precision, at thousands of random x."):
        presets_popover("roundoff", primary="reciprocal_formulas")


def _controls() -> RoundoffSettings:
    """One wrapping row: the two formulas and the dtype, where x comes from in a popover (every value
    in the URL); returns the frozen settings."""
    v = {}
    with st.container(horizontal=True, gap="small", vertical_alignment="bottom", key="roundoff-formulas"):
        v["a"] = url_text("Formula A", "a", value=DEFAULTS.formula_a, max_chars=MAX_FORMULA_CHARS,
                            width=FORMULA_WIDTH,
                            help="An expression of x, 'autograd' (torch.autograd.grad of 1/x) or grad(<expr>).")
        v["b"] = url_text("Formula B", "b", value=DEFAULTS.formula_b, max_chars=MAX_FORMULA_CHARS,
                            width=FORMULA_WIDTH,
                            help="Must equal formula A in exact arithmetic, e.g. log(1+x) and log1p(x).")
        v["dtype"] = dtype_selectbox("dtype", "dtype", default=DEFAULTS.dtype, width=CHOICE_WIDTH)
        with st.popover("Points x", icon=":material/tune:",
                        help="Where the x values are drawn from, how many, and the seed."):
            v["dist"] = url_selectbox("x drawn from", "dist", DISTRIBUTIONS,
                                        help="normal: mean (low+high)/2, sd (high-low)/2, so [-1, 1] is randn(). "
                                             "log-uniform: positive x spread evenly over the decades.")
            v["low"] = url_number("low", "low", value=DEFAULTS.low, min_value=-1e30, max_value=1e30, format="%g")
            v["high"] = url_number("high", "high", value=DEFAULTS.high, min_value=-1e30, max_value=1e30, format="%g")
            v["n"] = url_number("points", "n", value=DEFAULTS.samples, min_value=1,
                                  max_value=MAX_SAMPLES, step=1000)
            v["seed"] = url_number("seed", "seed", value=DEFAULTS.seed, min_value=0, max_value=2**31 - 1, step=1)
    return settings_from(v)


def _preset_note() -> None:
    """When the controls hold a preset's values, say which question it answers."""
    preset = matching_preset("roundoff")
    if preset is not None:
        st.caption(f"{preset.label}: {preset.note}")


def _metrics(shown) -> None:
    """The numbers behind the sentence: bit-for-bit agreement and each formula's worst error."""
    with st.container(horizontal=True, gap="small", key="roundoff-metrics"):
        for number in shown.numbers:
            st.metric(number.label, number.value, width=METRIC_WIDTH, help=number.help)


def _quiz() -> None:
    """Predict, then look: a comparison the page does not draw, revealed only once answered (never in the URL)."""
    prediction(ROUNDOFF_QUESTION, ROUNDOFF_GUESSES, "roundoff_guess",
               lambda: lab_view(quiz_view, ROUNDOFF_QUIZ, spinner=SPINNER).tables["prediction"],
               labels=ROUNDOFF_GUESSES, pick="Pick an answer to see the comparison and why.")


def _more_charts(settings: RoundoffSettings, shown) -> None:
    """How far apart A and B are, and where along x the errors grow (side by side; stacked on a phone)."""
    left, right = st.columns(2)
    with left:
        show_chart(settings, shown, "distance", "roundoff-distance")
    with right:
        show_chart(settings, shown, "by x", "roundoff-error-by-x")


def _notes(shown) -> None:
    """What each formula is, then the engine's notes (the view's Markdown: visitor text in it literal)."""
    for name, text in shown.texts.items():
        (st.markdown if name.startswith("formula ") else st.caption)(text)


def _points(shown) -> None:
    """The first rows of the engine's table (all the view holds of it), bit patterns in hex."""
    if box := details(f"The numbers, point by point (first {TABLE_ROWS})", "roundoff_points"):
        box.dataframe(
            shown.tables["points"], hide_index=True,
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


def _render(settings: RoundoffSettings, shown) -> None:
    """Everything below the controls: the answer and main chart first, then the rest."""
    with answer_box():
        show_answer(shown.answer, icon=":material/balance:")
        st.caption(term("ulp"))  # our own words: its link to the grid stays a link
    with main_chart_box():  # both formulas' errors against the exact value: the chart that answers the question
        show_chart(settings, shown, "errors", "roundoff-error")
    _preset_note()
    _metrics(shown)
    _quiz()
    # drawn once per settings and replayed: encoding the two charts and hashing them into their
    # element ids (st.plotly_chart) costs a tenth of a rerun's server time
    replayed_section(settings, "more charts", lambda: _more_charts(settings, shown))
    _notes(shown)
    _points(shown)
    _lesson()


# controls -> one frozen settings object -> one cached view -> its layout
_header()
try:
    settings = _controls()
    shown = lab_view(view, settings, spinner=SPINNER)  # in a worker, shared by every session
except Exception as err:  # noqa: BLE001 - shown as a sentence, never a traceback
    stop_with_error(err)
_render(settings, shown)
