"""Summed loss: the float32 MSE-sum check question's loss summed term by term, five ways, against
the exact sum. Layout only.

First screen (1280x720): the title with the question beside it and the presets in a
popover, one row of controls, the answer sentence (gradlab.answers.summed) and
the whole main chart: what the check prints, forward differences of L against
autograd's gradient, sitting on the lines k · ulp(L)/h instead of the diagonal. Below:
the numbers (ulp(L), the quantum, a gradient element), each summation's error in ulps
of L (bars, the ±½ ulp band of a correctly rounded sum shaded), how large a one-element
change must be to move each rounded sum, and the link to the Grad check's view of the
same loss.
"""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from gradlab.ui.page_chrome import answer_box, main_chart_box, start_page, title_row
from gradlab.check.lab.settings import parse_shape
from gradlab.figures.summed import difference_staircase, summed_error_bars
from gradlab.labs.summed.loss import NO_THRESHOLD, SUM_METHODS, SummedLoss, SummedLossSettings
from gradlab.limits import LIMITS
from gradlab.numerics.dtypes import DTYPE_NAMES, facts
from gradlab.teaching.presets import preset, url_query
from gradlab.answers.summed import summed_answer
from gradlab.ui.bound_widgets import bound_selectbox, bound_text
from gradlab.ui.cache_keys import page_cache_data, page_cache_resource, settings_key
from gradlab.ui.controls import dtype_selectbox, eps_input
from gradlab.ui.figures import cached_figure, replayed_chart, show_figure
from gradlab.ui.messages import show_answer, stop_with_error
from gradlab.ui.presets import presets_popover
from gradlab.teaching.glossary import define, term
from gradlab.server.heavy_work import summed
from gradlab.ui.worker_calls import heavy

start_page("summed")

CONTROL_WIDTH = 150  # px: four in a row at 1280 px, two a row on a phone


@page_cache_resource(max_entries=LIMITS.cache_entries, ttl=LIMITS.cache_seconds, show_spinner="Summing…",
                     hash_funcs={SummedLossSettings: settings_key})
def cached_sum(settings: SummedLossSettings) -> tuple[SummedLoss, pd.DataFrame]:
    """The lab (every method's sum) and the check's forward differences: one cached call, in a
    worker process (its loops would hold this server's interpreter for seconds). Kept as it came
    back and shared read-only by every session: st.cache_data unpickled its 16,800 terms (a torch
    tensor) and its tables on each of the page's three reads, a sixth of a rerun's CPU."""
    return heavy(summed, settings)


def _differences_figure(settings: SummedLossSettings):
    """The check's forward differences against autograd: the page's main chart."""
    result, differences = cached_sum(settings=settings)
    return cached_figure(settings, difference_staircase, differences, result.quantum, settings.h, settings.dtype)


def _header() -> None:
    """The title, the question in one line beside it, the presets in a popover: one row."""
    with title_row("Summed loss", "why does a float32 check of the summed loss print only −1.9531, 0 and 1.9531?",
                   help="The float32 grad check question: MSELoss(reduction='sum') of (x+1)/2 over 140×120 "
                        "inputs, forward differences at eps = 1e-3 in float32."):
        presets_popover("summed", primary="float32_check_loss")


def _controls() -> SummedLossSettings:
    """One wrapping row of four controls; returns the one frozen settings object."""
    w = dict(width=CONTROL_WIDTH)
    with st.container(horizontal=True, wrap=True, gap="small", vertical_alignment="bottom"):
        shape = bound_text("input shape", "shape", value="140x120", max_chars=40, **w,
                           help=f"e.g. 140x120: one squared error per element, at most "
                                f"{LIMITS.summed_terms:,} of them.")
        dtype = dtype_selectbox("dtype", "dtype", default="float32", options=DTYPE_NAMES, **w)
        reduction = bound_selectbox("reduction", "reduction", ("sum", "mean"), **w,
                                    help="sum: L is the sum of the squared errors; mean: the sum "
                                         "divided by their number. Both scale L and each gradient "
                                         "element alike.")
        h = eps_input("step h", "h", default=1e-3, smallest=1e-8, largest=1.0, **w,
                      help="The finite-difference step of the grad check: x + h in one element.")
    return SummedLossSettings(shape=parse_shape(shape), dtype=dtype, reduction=reduction, h=float(h))


def _answer(result: SummedLoss) -> None:
    answer = summed_answer(result)
    with answer_box():
        show_answer(answer, icon=":material/lightbulb:", note=define("ulp"))  # its unit, where it first appears


def _table(result: SummedLoss) -> pd.DataFrame:
    half = result.ulp_loss / 2
    return pd.DataFrame({
        "method": [r.label for r in result.rows],
        "L": [r.value for r in result.rows],
        "error": [r.error for r in result.rows],
        "error (ulps of L)": [r.error_ulps for r in result.rows],
        "smallest change that moves it": [r.threshold for r in result.rows],
        "÷ ulp(L)/2": [r.threshold / half for r in result.rows],
        "why none": [NO_THRESHOLD.get(r.threshold_reason, "") for r in result.rows],
    })


@page_cache_data(max_entries=LIMITS.cache_entries, ttl=LIMITS.cache_seconds, show_spinner=False,
                 hash_funcs={SummedLossSettings: settings_key})
def _numbers(settings: SummedLossSettings) -> None:
    """The numbers, each summation's error in ulps of L and the smallest change that moves each sum.

    Drawn once per settings and replayed from the cache: its chart (encoded and hashed into its
    element id by st.plotly_chart) and its table (Arrow bytes) were rebuilt on every rerun."""
    result = cached_sum(settings=settings)[0]
    s = result.settings
    c = st.columns(4)
    c[0].metric("exact L", f"{result.exact_float:.8g}", help=term("exact value"))
    c[1].metric(f"ulp(L) in {s.dtype}", f"{result.ulp_loss:.3g}", help=term("ulp"))
    c[2].metric("quantum ulp(L)/h", f"{result.quantum:.4g}", help=f"At h = {s.h:g}. " + term("quantum"))
    c[3].metric("|dL/dxᵢ| (median)", f"{result.gradient_size:.3g}",
                help="The median size of the gradient the check compares with.")
    show_figure(cached_figure(result.settings, summed_error_bars, result), "gradlab-summed-loss")
    st.caption("Each bar: one way of adding the same terms, its error against the exact sum in ulps of L. "
               "Inside the green band the sum is correctly rounded; a naive loop drifts as every addition "
               "rounds to the grid of a growing total.", help=term("exact value"))
    st.markdown("**How large must a one-element change be to move the rounded sum at all?** "
                f"Below about half an ulp of L ({result.ulp_loss / 2:.3g}) a change of one term is "
                "rounded away, so L(x + h·eᵢ) = L(x) and the difference is 0.",
                help=term("sum threshold"))
    help_ = {m.label: m.help for m in SUM_METHODS}
    st.dataframe(_table(result), hide_index=True, width="stretch", column_config={
        "method": st.column_config.Column("method", help=" ".join(f"{k}: {v}" for k, v in help_.items()),
                                          pinned=True),
        "L": st.column_config.NumberColumn("L", format="%.10g"),
        "error": st.column_config.NumberColumn("error", format="%.2e", help="L − exact L"),
        "error (ulps of L)": st.column_config.NumberColumn(format="%.2f"),
        "smallest change that moves it": st.column_config.NumberColumn(format="%.2e",
                                                                       help=term("sum threshold")),
        "÷ ulp(L)/2": st.column_config.NumberColumn(format="%.2f"),
    })
    st.caption(f"The change is an increase of the largest term (element {result.term_index}); the float64 "
               "row moves at the smallest change one float term can make.")


def _lesson(result: SummedLoss) -> None:
    s = result.settings
    finer = round(math.log2(facts(s.dtype).eps / facts("float64").eps))
    st.markdown(
        f"**What this does to a grad check.** Both losses of a forward difference are rounded to "
        f"{s.dtype} numbers near L, so their difference is a whole number k of ulps of L, and "
        f"(L(x + h·eᵢ) − L(x))/h = k · {result.quantum:.4g}. The check can only print 0, "
        f"±{result.quantum:.4g}, ±{2 * result.quantum:.4g}, … whatever the true gradient element "
        f"(about {result.gradient_size:.2g}). A smaller h makes the steps coarser"
        + (f"; float64 makes them 2^{finer} times finer." if finer > 0 else "."))
    st.page_link("pages/gradcheck.py", label="The same loss's check on the Grad check page, and its diagnosis",
                 icon=":material/fact_check:",
                 query_params=url_query(preset("gradcheck", "float32_check_fails")))


# controls -> one frozen settings object -> one cached engine call -> render
_header()
try:
    settings = _controls()
    result, differences = cached_sum(settings=settings)  # by name, hashed by its text: gradlab.ui.cache_keys
except Exception as err:  # noqa: BLE001 - a bound's or a value's sentence; anything else generically
    stop_with_error(err)
_answer(result)
with main_chart_box():
    replayed_chart(settings, "gradlab-summed-loss-differences", lambda: _differences_figure(settings))
st.caption(f"{len(differences)} evenly spaced elements: the forward difference (L(x + h·eᵢ) − L(x))/h "
           "(the loss summed by torch.sum, as in the question) against autograd's gradient. A "
           "right check lies on the green diagonal; these can only lie on the dotted lines "
           "k · ulp(L)/h.", help=term("quantum"))
_numbers(settings=settings)
_lesson(result)
st.caption("Every control is kept in the URL: copy the address bar to share this view. The same "
           "numbers from a terminal: `python -m gradlab sum --help`.")
