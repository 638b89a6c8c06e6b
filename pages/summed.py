"""Summed loss: the float32 MSE-sum check question's loss summed term by term, five ways, against
the exact sum. Layout only.

First screen (1280x720): the title with the question beside it and the presets in a
popover, one row of controls, the answer sentence (gradlab.labs.summed.answer) and
the whole main chart: what the check prints, forward differences of L against
autograd's gradient, sitting on the lines k · ulp(L)/h instead of the diagonal. Below:
the numbers (ulp(L), the quantum, a gradient element), each summation's error in ulps
of L (bars, the ±½ ulp band of a correctly rounded sum shaded), how large a one-element
change must be to move each rounded sum, and the link to the Grad check's view of the
same loss.
"""

from __future__ import annotations

import streamlit as st

from gradlab.labs.summed import (DTYPE_NAMES, MAX_TERMS, PAGE_DEFAULTS, SUM_METHODS, SummedLossSettings, settings_from,
                                 view)
from gradlab.ui.url_widgets import url_selectbox, url_text
from gradlab.ui.controls import dtype_selectbox, eps_input
from gradlab.ui.messages import show_answer, stop_with_error
from gradlab.ui.page_chrome import answer_box, main_chart_box, start_page, title_row
from gradlab.ui.presets import preset_link, presets_popover
from gradlab.ui.term_links import define, term
from gradlab.ui.views import lab_view, replayed_section, show_chart, show_numbers

start_page("summed")

CONTROL_WIDTH = 150  # px: four in a row at 1280 px, two a row on a phone


def _header() -> None:
    """The title, the question in one line beside it, the presets in a popover: one row."""
    with title_row("Summed loss", "why does a float32 check of the summed loss print only −1.9531, 0 and 1.9531?",
                   help="The float32 grad check question: MSELoss(reduction='sum') of (x+1)/2 over 140×120 "
                        "inputs, forward differences at eps = 1e-3 in float32."):
        presets_popover("summed", primary="float32_check_loss")


def _controls() -> SummedLossSettings:
    """One wrapping row of four controls; returns the one frozen settings object."""
    w, v = dict(width=CONTROL_WIDTH), {}
    with st.container(horizontal=True, wrap=True, gap="small", vertical_alignment="bottom"):
        v["shape"] = url_text("input shape", "shape", value=PAGE_DEFAULTS["shape"], max_chars=40, **w,
                                help=f"e.g. 140x120: one squared error per element, at most {MAX_TERMS:,} of them.")
        v["dtype"] = dtype_selectbox("dtype", "dtype", default=PAGE_DEFAULTS["dtype"], options=DTYPE_NAMES, **w)
        v["reduction"] = url_selectbox("reduction", "reduction", ("sum", "mean"), **w,
                                         help="sum: L is the sum of the squared errors; mean: the sum "
                                              "divided by their number. Both scale L and each gradient "
                                              "element alike.")
        v["h"] = eps_input("step h", "h", default=PAGE_DEFAULTS["h"], smallest=1e-8, largest=1.0, **w,
                           help="The finite-difference step of the grad check: x + h in one element.")
    return settings_from(v)


def _methods_table(table) -> None:
    st.dataframe(table, hide_index=True, width="stretch", column_config={
        "method": st.column_config.Column(
            "method", help=" ".join(f"{m.label}: {m.help}" for m in SUM_METHODS), pinned=True),
        "L": st.column_config.NumberColumn("L", format="%.10g"),
        "error": st.column_config.NumberColumn("error", format="%.2e", help="L − exact L"),
        "error (ulps of L)": st.column_config.NumberColumn(format="%.2f"),
        "smallest change that moves it": st.column_config.NumberColumn(format="%.2e", help=term("sum threshold")),
        "÷ ulp(L)/2": st.column_config.NumberColumn(format="%.2f"),
    })


def _numbers(settings: SummedLossSettings, shown) -> None:
    """The numbers, each summation's error in ulps of L and the smallest change that moves each sum."""
    show_numbers(shown.numbers)
    show_chart(settings, shown, "errors", "gradlab-summed-loss")
    st.caption("Each bar: one way of adding the same terms, its error against the exact sum in ulps of L. "
               "Inside the green band the sum is correctly rounded; a naive loop drifts as every addition "
               "rounds to the grid of a growing total.", help=term("exact value"))
    st.markdown(shown.texts["threshold"], help=term("sum threshold"))
    _methods_table(shown.tables["methods"])
    st.caption(shown.texts["changed term"])


# controls -> one frozen settings object -> one cached engine call -> render
_header()
try:
    settings = _controls()
    shown = lab_view(view, settings, spinner="Summing…")
except Exception as err:  # noqa: BLE001 - a limit's or a value's sentence; anything else generically
    stop_with_error(err)
with answer_box():
    show_answer(shown.answer, icon=":material/lightbulb:", note=define("ulp"))  # its unit, where it first appears
with main_chart_box():
    show_chart(settings, shown, "differences", "gradlab-summed-loss-differences")
st.caption(f"{len(shown.tables['differences'])} evenly spaced elements: the forward difference (L(x + h·eᵢ) − L(x))/h "
           "(the loss summed by torch.sum, as in the question) against autograd's gradient. A "
           "right check lies on the green diagonal; these can only lie on the dotted lines "
           "k · ulp(L)/h.", help=term("quantum"))
replayed_section(settings, "numbers", lambda: _numbers(settings, shown))
st.markdown(shown.texts["lesson"])
preset_link("gradcheck", "float32_check_fails", "The same loss's check on the Grad check page, and its diagnosis",
            icon=":material/fact_check:")
st.caption("Every control is kept in the URL: copy the address bar to share this view. The same "
           "numbers from a terminal: `python -m gradlab sum --help`.")
