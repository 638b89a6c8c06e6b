"""The Grad check page's cached calls and cached drawings (``pages/gradcheck.py``, the function view).

Defined here, once, at import, not in the page script: Streamlit keys a cached function by its
source, read with ``inspect.getsource`` each time the decorator runs, and a page script's
decorators run on every rerun (0.2-1.3 ms a function on this machine, ~4 ms of each Grad check
rerun for its five). The page lays out the controls, builds the frozen ``CheckSettings`` and calls:

- :func:`cached_check` (the check, in a worker process) and :func:`cached_sweep` (the eps sweep of
  sum, mean and none; its figure :func:`sweep_figure`, built once per sweep and step);
- :func:`diagnosis` and :func:`values_table`: drawn once per check and replayed from the cache
  (keyed on the settings, which decide the result).

>>> TABLE_ROWS, list(_COLUMNS)[:2]
(100, ['element', 'state'])
"""

from __future__ import annotations

from functools import partial
from typing import Callable

import pandas as pd
import streamlit as st
from pandas.io.formats.style import Styler

from gradlab.answers.check import hand_written_words
from gradlab.check import COLUMN_WORDS, NUMERIC_DIFFERS, STATES, CheckSettings
from gradlab.figures.check import eps_sweep_figure
from gradlab.limits import LIMITS
from gradlab.literal_text import markdown_literal
from gradlab.server.heavy_work import check, check_eps_sweep
from gradlab.teaching.glossary import term
from gradlab.ui.cache_keys import settings_key
from gradlab.ui.figures import PreparedFigure, prepare_figure, replayed_chart
from gradlab.ui.messages import ANSWER_BOXES, ANSWER_ICONS
from gradlab.ui.runtime import CHECK_WORKERS
from gradlab.ui.worker_calls import heavy

__all__ = ["STATES_HELP", "TABLE_ROWS", "cached_check", "cached_sweep", "sweep_figure", "sweep_chart", "diagnosis",
           "values_table", "state_styler"]


#: Settings hashed by their text (gradlab.ui.cache_keys: 197 µs a call by Streamlit's own hashing, 20 µs so).
#: Call the functions below with keyword arguments (a positional one costs a signature read a call).
_KEYS = {CheckSettings: settings_key}

#: The check's four states, each in one line (from the one table of states).
STATES_HELP = "Each value is " + "; ".join(f"{r.label}: {r.meaning}" for r in STATES.values()) + "."


@st.cache_data(max_entries=LIMITS.cache_entries_large, ttl=LIMITS.cache_seconds, show_spinner=False,
               hash_funcs=_KEYS)
def cached_check(settings: CheckSettings):
    """The check of ``settings`` (not a full one: that draws its progress, see the page's ``_run``)."""
    # In a worker process, ended at its bound (its pace is judged there: LIMITS.full_check_seconds).
    return heavy(check, settings, CHECK_WORKERS)


@st.cache_data(max_entries=LIMITS.cache_entries_large, ttl=LIMITS.cache_seconds,
               show_spinner="Sweeping eps for sum, mean and none…", hash_funcs=_KEYS)
def cached_sweep(sweep_settings: CheckSettings):
    """The eps sweep of sum, mean and none for ``sweep_settings`` (``sweep_settings_for(settings)``)."""
    # Keyed on the sweep's own settings (sweep_settings_for): checks differing only in mode or
    # step share it; the step is drawn on the figure, not computed into the sweep.
    return heavy(check_eps_sweep, sweep_settings)


@st.cache_resource(max_entries=LIMITS.cache_entries_large, ttl=LIMITS.cache_seconds, show_spinner=False,
                   hash_funcs=_KEYS)
def sweep_figure(sweep_settings: CheckSettings, step: float) -> PreparedFigure:
    """The page's main chart: the eps sweep with the check's own ``step`` marked, built once."""
    # The figure, not only the table, is cached: it is what every rerun needs.
    sweep = cached_sweep(sweep_settings=sweep_settings)
    return prepare_figure(eps_sweep_figure, sweep.table, rtol=sweep.rtol, step=step)


def sweep_chart(sweep_settings: CheckSettings, step: float) -> None:
    """The main chart (:func:`sweep_figure`), drawn once per sweep, step and presentation mode and replayed."""
    replayed_chart((sweep_settings, step), "gradlab-gradcheck-eps-sweep",
                   lambda: sweep_figure(sweep_settings=sweep_settings, step=step))


@st.cache_data(max_entries=LIMITS.cache_entries_large, ttl=LIMITS.cache_seconds, show_spinner=False,
               hash_funcs=_KEYS)
def diagnosis(settings: CheckSettings, _result) -> None:
    """Why the check at its own step passed or failed, and what helps: the long words.

    Drawn once per check and replayed from the cache (keyed on the settings, which decide the
    result): its box, four metrics and notes were the largest part of a rerun's render that
    changed nothing (py-spy, reruns of one view)."""
    s, d = _result.summary, _result.summary.diagnosis
    fixes = "".join(f"\n- {markdown_literal(f)}" for f in d.fixes)
    ANSWER_BOXES[d.level](f"**{markdown_literal(d.headline)}**\n\n{markdown_literal(d.details)}"
                          + (f"\n\n**What helps:**{fixes}" if fixes else ""), icon=ANSWER_ICONS[d.level])
    c = st.columns(4)
    counts = ", ".join(f"{n} {STATES[k].label}" for k, n in s.counts if n)
    c[0].metric(f"verdict ({counts})", STATES[s.verdict].label.upper(), help=STATES_HELP)
    c[1].metric("ρ = h·|dL/dxᵢ| / |L|", f"{s.relative_perturbation:.2e}",
                help="relative_perturbation (median over the checked values). " + term("relative_perturbation"))
    c[2].metric(f"machine eps ({s.numeric_dtype})", f"{s.machine_eps:.2e}", help=term("machine epsilon"))
    c[3].metric(f"step h ({s.scheme})", f"{s.step:.3g}",
                help=f"Tolerances: rtol {s.rtol:g}, atol {s.atol:g} (the {s.dtype} defaults). "
                     + term("atol/rtol"))
    _fixed_step_comparison(s, _result.columns)
    if not s.passed or s.message != d.headline:
        st.caption(markdown_literal(s.message))  # the hint is the diagnosis box above
    for note in s.notes:
        st.caption(markdown_literal(note))


def _fixed_step_comparison(s, columns) -> None:
    """What a hand-written check prints at this step (the question's own arithmetic), what it
    concludes next to GradLab's verdict when they differ, and how GradLab's own differ."""
    printed = hand_written_words(s, columns)
    if printed:
        with st.container(key="gl-hand-written"):
            st.markdown(markdown_literal(printed))
            st.caption(markdown_literal("GradLab's own finite differences (column numeric) are computed "
                                        "differently on purpose: " + NUMERIC_DIFFERS))
    if s.fixed_step_verdict == s.verdict:
        return
    st.markdown(
        f"**A hand-written check** (this step h = {s.step:.3g}, a fixed tolerance, no error bound) says "
        f"**{s.fixed_step_verdict.upper()}**: {s.fixed_step_failed} of {s.checked} values are over the "
        f"tolerance. **GradLab says {STATES[s.verdict].label.upper()}**: every value was re-estimated at "
        "steps (and in a dtype) where the finite difference's own error is below the tolerance"
        + (" and agrees with autograd: the gradient is right; the step could not show it." if s.passed
           else "."))


def _state_colour(state: str) -> str:
    return f"color: {STATES[state].colour}; font-weight: bold"


def state_styler(frame: pd.DataFrame, column: str, colour: Callable[[object], str]) -> Styler:
    """``frame`` with ``colour(value)`` as the CSS of each cell of ``column`` (a state, in its colour),
    styled for ``st.dataframe`` at about half the server's cost of ``frame.style.map``.

    Streamlit renders a Styler's every cell through pandas (``Styler._translate``) to send display
    values, which its table shows only in text columns without a format, and gives every cell an id.
    Here only the columns up to ``column`` are rendered (every text column of the pages' two tables
    reads the same as its own value, the numbers have formats) and only the styled cells get ids
    (``cell_ids``): the Grad check's values table of 100 rows, 11.5 -> 6.2 ms a new check. If
    pandas' ``_translate`` loses ``max_cols``: tests/test_page_gradcheck.py fails naming it.

    >>> styler = state_styler(pd.DataFrame({"name": ["a"], "state": ["pass"], "x": [1.0]}), "state", _state_colour)
    >>> styler._translate.keywords, styler.cell_ids
    ({'max_cols': 2}, False)
    """
    styler = frame.style.map(colour, subset=[column])
    styler.cell_ids = False
    styler._translate = partial(styler._translate, max_cols=frame.columns.get_loc(column) + 1)
    return styler


#: The table's columns (the answer, ``state``, second: visible on a phone) and what each means.
_COLUMNS = {
    "element": "Which input element was perturbed.",
    "state": STATES_HELP,
    "autograd": "The gradient backward computed.",
    "hand_written": COLUMN_WORDS["hand_written"],
    "numeric": COLUMN_WORDS["numeric"],
    "abs_error": "|autograd − numeric| at the check's step.",
    "tolerance": "atol + rtol·|numeric|. " + term("atol/rtol"),
    "best_numeric": "The finite difference re-estimated at the step (and dtype) where its own error "
                    "is smallest.",
    "error_bound": "How far the best estimate can be from the true derivative: round-off plus "
                   "truncation, the latter estimated by Richardson. " + term("Richardson extrapolation"),
    "best_step": "The step of best_numeric.",
    "relative_perturbation": term("relative_perturbation"),
}


#: Rows the values table shows: the worst of a full check's up to 65,536. Styling and sending
#: them all held the server's interpreter for seconds per rerun, stalling every session; 500
#: still cost 0.14 s of it per rerun (py-spy under the class load: the page's largest share),
#: 100 cost 0.05 s, and the table's 240 px show seven of them at a time.
TABLE_ROWS = 100


@st.cache_data(max_entries=LIMITS.cache_entries_large, ttl=LIMITS.cache_seconds, show_spinner=False,
               hash_funcs=_KEYS)
def values_table(settings: CheckSettings, _result) -> None:
    """The values at the check's step, their best estimate, its bound and the state (in its colour).

    Drawn once per check and replayed from the cache (keyed on the settings, which decide the
    result): styling the rows cost a quarter of the page's server time per rerun (py-spy, class load).
    """
    result = _result
    cols = [c for c in _COLUMNS if c in result.columns]
    rows = result.worst_rows(TABLE_ROWS)
    if len(rows) < len(result.columns):
        st.caption(f"The {len(rows)} values furthest over their tolerance, of {len(result.columns):,}.")
    formats = {c: "%.5e" for c in cols[2:]}  # one format: a JS %g wrote 0.00000234247 beside 2.72e-6
    s = result.summary
    st.caption(f"tolerance = atol + rtol·|numeric|, with atol = {s.atol:g} (absolute tolerance) and "
               f"rtol = {s.rtol:g} (relative tolerance): for values near 0 it is atol itself.")
    config = {c: (st.column_config.NumberColumn(c, help=h, format=formats[c]) if c in formats
                  else st.column_config.Column(c, help=h, pinned=c in ("element", "state")))
              for c, h in _COLUMNS.items() if c in cols}
    st.dataframe(state_styler(rows[cols], "state", _state_colour), hide_index=True,
                 width="stretch", height=240, column_config=config)
