"""Round-off lab: why autograd's 1/x gradient differs from -1/x**2; two formulas, ulp by ulp, against the exact value."""

import streamlit as st

from gradlab.ui.page_chrome import ensure_router

ensure_router()

from gradlab.figures import labs as plots  # noqa: E402
from gradlab.limits import LIMITS  # noqa: E402
from gradlab.literal_text import markdown_code, markdown_literal  # noqa: E402
from gradlab.labs.roundoff import COMPARISONS, DISTRIBUTIONS, RoundoffSettings, compare, ulp_histogram, with_hex  # noqa: E402
from gradlab.ui.presets import matching_preset, preset_buttons  # noqa: E402
from gradlab.ui.figures import PreparedFigure, prepare_figure, show_figure  # noqa: E402
from gradlab.ui.bound_widgets import bound_number, bound_selectbox, bound_text  # noqa: E402
from gradlab.ui.messages import show_error  # noqa: E402
from gradlab.ui.controls import dtype_selectbox  # noqa: E402

DEFAULTS = RoundoffSettings()


@st.cache_data(max_entries=LIMITS.cache_entries_large, ttl=LIMITS.cache_seconds,
               show_spinner="Comparing the formulas against the exact value…")
def run(a: str, b: str, dtype: str, dist: str, low: float, high: float, n: int, seed: int):
    return compare(RoundoffSettings(a, b, dtype, dist, low, high, n, seed))


@st.cache_resource(max_entries=LIMITS.cache_entries_large, ttl=LIMITS.cache_seconds, show_spinner=False)
def figures(*args) -> tuple[PreparedFigure, PreparedFigure, PreparedFigure]:
    """The three figures of run(*args), built once: they are what every rerun draws."""
    result = run(*args)
    table, a, b = result.table, result.label_a, result.label_b
    return (prepare_figure(plots.ulp_distance_bars, ulp_histogram(table), a, b),
            prepare_figure(plots.error_histogram, table, a, b),
            prepare_figure(plots.error_scatter, table, a, b))


st.title("Round-off lab")
st.markdown(
    "**The question:** autograd's gradient of `1/x` differs from `-1/x**2` by "
    "`5.9605e-08`. Which one is wrong? Here the two formulas meet an **exact** value, "
    "computed at high precision, at thousands of random points."
)

preset_buttons("roundoff", primary="reciprocal_formulas")

with st.container(border=True):
    c1, c2 = st.columns(2)
    with c1:
        a = bound_text("Formula A", "a", value=DEFAULTS.formula_a, max_chars=LIMITS.expression_chars,
                       help="An expression of x, 'autograd' (torch.autograd.grad of 1/x) or grad(<expr>).")
    with c2:
        b = bound_text("Formula B", "b", value=DEFAULTS.formula_b, max_chars=LIMITS.expression_chars,
                       help="Must equal formula A in exact arithmetic, e.g. log(1+x) and log1p(x).")
    c3, c4, c5, c6, c7, c8 = st.columns(6)
    with c3:
        dtype = dtype_selectbox("dtype", "dtype", default=DEFAULTS.dtype)
    with c4:
        dist = bound_selectbox("x drawn from", "dist", DISTRIBUTIONS,
                               help="normal: mean (low+high)/2, sd (high-low)/2, so [-1, 1] is randn(). "
                                    "log-uniform: positive x spread evenly over the decades.")
    with c5:
        low = bound_number("low", "low", value=DEFAULTS.low, min_value=-1e30, max_value=1e30, format="%g")
    with c6:
        high = bound_number("high", "high", value=DEFAULTS.high, min_value=-1e30, max_value=1e30, format="%g")
    with c7:
        n = bound_number("points", "n", value=DEFAULTS.samples, min_value=1, max_value=LIMITS.roundoff_samples,
                         step=1000)
    with c8:
        seed = bound_number("seed", "seed", value=DEFAULTS.seed, min_value=0, max_value=2**31 - 1, step=1)

shown_preset = matching_preset("roundoff")
if shown_preset is not None:
    st.caption(f"{shown_preset.label}: {shown_preset.note}")

args = (a, b, dtype, dist, float(low), float(high), int(n), int(seed))
try:
    result = run(*args)
    distance_bars, error_histogram, error_scatter = figures(*args)
except Exception as err:  # noqa: BLE001 - shown as a sentence, never a traceback
    show_error(err)
    st.stop()

s = result.summary
st.info(markdown_literal(result.verdict()), icon=":material/balance:")
m = st.columns(4)
m[0].metric("bit for bit equal", f"{s.bitwise_equal:.1%}")
m[1].metric(f"A closer: {markdown_literal(result.label_a)}", f"{s.a_closer:.1%}")
m[2].metric(f"B closer: {markdown_literal(result.label_b)}", f"{s.b_closer:.1%}")
m[3].metric("largest A–B distance", f"{s.max_ulps_a_b:,} ulp" if s.max_ulps_a_b < 10**6 else f"{s.max_ulps_a_b:.2e} ulp")

g1, g2 = st.columns(2)
with g1:
    show_figure(distance_bars, "roundoff-distance")
with g2:
    show_figure(error_histogram, "roundoff-error")
show_figure(error_scatter, "roundoff-scatter")

for label, note in ((result.label_a, result.note_a), (result.label_b, result.note_b)):
    if note:
        st.markdown(f"- **{markdown_code(label)}**: " + markdown_literal(note))
for note in result.notes:
    st.caption(markdown_literal(note))

with st.expander("The numbers, point by point (first 500)"):
    st.dataframe(
        with_hex(result.table.head(500)), hide_index=True,
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

with st.expander("Lesson: why one ulp, and who is right", icon=":material/school:"):
    # A quiz answer is not part of the view: plain st.radio, never in the URL.
    guess = st.radio(
        "First, a guess: in float32, which is closer to the exact −1/x² more often?",
        ("autograd", "-1/x**2", "neither: always equal"), index=None, horizontal=True,
        key="roundoff_guess",
    )
    if guess is None:
        st.caption("Pick an answer to see the explanation.")
    else:
        q = COMPARISONS["reciprocal"].settings  # the question's own comparison, in the engine's table
        asked = run(q.formula_a, q.formula_b, q.dtype, q.distribution, q.low, q.high, q.samples, q.seed)
        right = q.formula_b if asked.summary.b_closer > asked.summary.a_closer else q.formula_a
        (st.success if guess == right else st.info)(
            f"{'Right' if guess == right else 'Not quite'}: {markdown_literal(asked.verdict())}"
        )
        st.markdown(
            r"""
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
        )
