"""Round-off lab: why autograd's 1/x gradient differs from -1/x**2; two formulas, ulp by ulp, against the exact value.

Controls -> one frozen RoundoffSettings (the engine validates it) -> one cached engine
call (compare) -> render(result). Layout only: no numerics, limit checks or engine
choices here.
"""

import streamlit as st

from gradlab.ui.page_chrome import ensure_router

ensure_router()

from gradlab.figures import labs as plots  # noqa: E402
from gradlab.labs.roundoff import (  # noqa: E402
    COMPARISONS,
    DISTRIBUTIONS,
    RoundoffResult,
    RoundoffSettings,
    compare,
    with_hex,
)
from gradlab.limits import LIMITS  # noqa: E402
from gradlab.literal_text import markdown_code, markdown_literal  # noqa: E402
from gradlab.ui.bound_widgets import bound_number, bound_selectbox, bound_text  # noqa: E402
from gradlab.ui.controls import dtype_selectbox  # noqa: E402
from gradlab.ui.figures import PreparedFigure, prepare_figure, show_figure  # noqa: E402
from gradlab.ui.messages import show_error  # noqa: E402
from gradlab.ui.presets import matching_preset, preset_buttons  # noqa: E402

DEFAULTS = RoundoffSettings()
QUESTION = COMPARISONS["reciprocal"].settings  # the question's own comparison, in the engine's table
TABLE_ROWS = 500  # rows of the point-by-point table shown

LESSON = r"""
Every basic operation is **correctly rounded**: the result is the float nearest the exact
one, off by at most half an ulp, a relative error of at most $u = \varepsilon/2$
($u = 2^{-24}$ in float32).

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


@st.cache_data(max_entries=LIMITS.cache_entries_large, ttl=LIMITS.cache_seconds,
               show_spinner="Comparing the formulas against the exact value…")
def _comparison(settings: RoundoffSettings) -> RoundoffResult:
    """The one engine call: both formulas against the exact value at the settings' points."""
    return compare(settings)


@st.cache_resource(max_entries=LIMITS.cache_entries_large, ttl=LIMITS.cache_seconds, show_spinner=False)
def _figures(settings: RoundoffSettings) -> tuple[PreparedFigure, PreparedFigure, PreparedFigure]:
    """The three figures of one comparison, built once: they are what every rerun draws."""
    result = _comparison(settings)
    a, b = result.label_a, result.label_b
    return (prepare_figure(plots.ulp_distance_bars, result.distance_histogram(), a, b),
            prepare_figure(plots.error_histogram, result.table, a, b),
            prepare_figure(plots.error_scatter, result.table, a, b))


def _header() -> None:
    """The title, the question this page answers and its preset buttons."""
    st.title("Round-off lab")
    st.markdown(
        "**The question:** autograd's gradient of `1/x` differs from `-1/x**2` by "
        "`5.9605e-08`. Which one is wrong? Here the two formulas meet an **exact** value, "
        "computed at high precision, at thousands of random points."
    )
    preset_buttons("roundoff", primary="reciprocal_formulas")


def _controls() -> RoundoffSettings:
    """The control panel (every value in the URL); returns the one frozen settings object."""
    with st.container(border=True):
        left, right = st.columns(2)
        with left:
            a = bound_text("Formula A", "a", value=DEFAULTS.formula_a, max_chars=LIMITS.expression_chars,
                           help="An expression of x, 'autograd' (torch.autograd.grad of 1/x) or grad(<expr>).")
        with right:
            b = bound_text("Formula B", "b", value=DEFAULTS.formula_b, max_chars=LIMITS.expression_chars,
                           help="Must equal formula A in exact arithmetic, e.g. log(1+x) and log1p(x).")
        c = st.columns(6)
        with c[0]:
            dtype = dtype_selectbox("dtype", "dtype", default=DEFAULTS.dtype)
        with c[1]:
            dist = bound_selectbox("x drawn from", "dist", DISTRIBUTIONS,
                                   help="normal: mean (low+high)/2, sd (high-low)/2, so [-1, 1] is randn(). "
                                        "log-uniform: positive x spread evenly over the decades.")
        with c[2]:
            low = bound_number("low", "low", value=DEFAULTS.low, min_value=-1e30, max_value=1e30, format="%g")
        with c[3]:
            high = bound_number("high", "high", value=DEFAULTS.high, min_value=-1e30, max_value=1e30,
                                format="%g")
        with c[4]:
            n = bound_number("points", "n", value=DEFAULTS.samples, min_value=1,
                             max_value=LIMITS.roundoff_samples, step=1000)
        with c[5]:
            seed = bound_number("seed", "seed", value=DEFAULTS.seed, min_value=0, max_value=2**31 - 1, step=1)
    return RoundoffSettings(a, b, dtype, dist, float(low), float(high), int(n), int(seed))


def _preset_note() -> None:
    """When the controls hold a preset's values, say which question it answers."""
    shown = matching_preset("roundoff")
    if shown is not None:
        st.caption(f"{shown.label}: {shown.note}")


def _ulps(distance: int) -> str:
    """An ulp count as a person reads it: digits up to a million, then powers of ten."""
    return f"{distance:,} ulp" if distance < 10**6 else f"{distance:.2e} ulp"


def _summary(result: RoundoffResult) -> None:
    """The verdict in one sentence, then its numbers."""
    s = result.summary
    st.info(markdown_literal(result.verdict()), icon=":material/balance:")
    m = st.columns(4)
    m[0].metric("bit for bit equal", f"{s.bitwise_equal:.1%}")
    m[1].metric(f"A closer: {markdown_literal(result.label_a)}", f"{s.a_closer:.1%}")
    m[2].metric(f"B closer: {markdown_literal(result.label_b)}", f"{s.b_closer:.1%}")
    m[3].metric("largest A–B distance", _ulps(s.max_ulps_a_b))


def _charts(figures: tuple[PreparedFigure, PreparedFigure, PreparedFigure]) -> None:
    """The A–B distances and both errors against the exact value."""
    distance_bars, error_histogram, error_scatter = figures
    left, right = st.columns(2)
    with left:
        show_figure(distance_bars, "roundoff-distance")
    with right:
        show_figure(error_histogram, "roundoff-error")
    show_figure(error_scatter, "roundoff-scatter")


def _notes(result: RoundoffResult) -> None:
    """What each formula is, then the engine's notes; visitor text shown literally."""
    for label, note in ((result.label_a, result.note_a), (result.label_b, result.note_b)):
        if note:
            st.markdown(f"- **{markdown_code(label)}**: " + markdown_literal(note))
    for note in result.notes:
        st.caption(markdown_literal(note))


def _points(result: RoundoffResult) -> None:
    """The first rows of the engine's table, bit patterns in hex."""
    with st.expander("The numbers, point by point (first 500)"):
        st.dataframe(
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
    """Why one ulp, and who is right; a guess before the reveal."""
    with st.expander("Lesson: why one ulp, and who is right", icon=":material/school:"):
        # A quiz answer is not part of the view: plain st.radio, never in the URL.
        guess = st.radio(
            "First, a guess: in float32, which is closer to the exact −1/x² more often?",
            ("autograd", "-1/x**2", "neither: always equal"), index=None, horizontal=True,
            key="roundoff_guess",
        )
        if guess is None:
            st.caption("Pick an answer to see the explanation.")
            return
        asked = _comparison(QUESTION)
        right = {"A": QUESTION.formula_a, "B": QUESTION.formula_b}[asked.summary.closer_more_often()]
        (st.success if guess == right else st.info)(
            f"{'Right' if guess == right else 'Not quite'}: {markdown_literal(asked.verdict())}"
        )
        st.markdown(LESSON)


def _render(result: RoundoffResult, figures: tuple[PreparedFigure, PreparedFigure, PreparedFigure]) -> None:
    """Everything below the controls, from one comparison and its figures."""
    _summary(result)
    _charts(figures)
    _notes(result)
    _points(result)
    _lesson()


# controls -> one frozen settings object -> one cached engine call -> render(result)
_header()
settings = _controls()
_preset_note()
try:
    result, figures = _comparison(settings), _figures(settings)
except Exception as err:  # noqa: BLE001 - shown as a sentence, never a traceback
    show_error(err)
    st.stop()
_render(result, figures)
