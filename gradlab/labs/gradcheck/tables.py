"""The Grad check page's two tables: the function check's values and the layer check's modules.

Each table is a frame (built in the worker with the view) and its columns (:class:`Column`: a
name, what it means, its number format, whether it stays in view), which the page turns into
Streamlit's column settings. :func:`state_styler` colours a state column in each state's
colour, cheaply enough for a page to do it once per check.

>>> [c.name for c in VALUE_COLUMNS][:3], [c.name for c in MODULE_COLUMNS if c.pinned]
(['element', 'state', 'autograd'], ['module', 'verdict'])
>>> state_colour("fail") == f"color: {STATES['fail'].colour}; font-weight: bold", state_colour("skipped")
(True, '')
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Callable

import pandas as pd
from pandas.io.formats.style import Styler

from gradlab.check import COLUMN_WORDS, STATES
from gradlab.layers.result import SKIPPED
from gradlab.teaching.glossary import term

__all__ = ["Column", "VALUE_COLUMNS", "MODULE_COLUMNS", "STATES_HELP", "TABLE_ROWS", "values_table",
           "module_table", "state_colour", "state_styler"]


@dataclass(frozen=True)
class Column:
    """One column of a page's table: its name, what it means, its number format (None: text), and
    whether it stays in view while the table scrolls sideways."""

    name: str
    help: str
    format: str | None = None
    pinned: bool = False


#: The check's four states, each in one line (from the one table of states).
STATES_HELP = "Each value is " + "; ".join(f"{r.label}: {r.meaning}" for r in STATES.values()) + "."

#: One format a table: Streamlit's %g is JS toPrecision, which writes 0.00000234247 beside 2.72e-6.
_VALUE_FORMAT, _MODULE_FORMAT = "%.5e", "%.3e"

#: The values table's columns (the answer, ``state``, second: visible on a phone) and what each means.
VALUE_COLUMNS = (
    Column("element", "Which input element was perturbed.", pinned=True),
    Column("state", STATES_HELP, pinned=True),
    *(Column(name, words, _VALUE_FORMAT) for name, words in {
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
    }.items()),
)

#: The layer table's columns, the answer (verdict) after the module's name and type, and what each means.
MODULE_COLUMNS = (
    Column("module", "The module's path in model.named_modules().", pinned=True),
    Column("type", "Its class."),
    Column("checked over", "parameters: its own weights; inputs: the arguments it received in the forward pass."),
    Column("verdict", "; ".join(f"{r.label}: {r.meaning}" for r in STATES.values()) + f"; {SKIPPED}: could not run.",
           pinned=True),
    Column("element", "The worst (or failing) element."),
    Column("autograd", "What backward computed there.", _MODULE_FORMAT),
    Column("numeric", "The finite difference there.", _MODULE_FORMAT),
    Column("difference", "|autograd − numeric|.", _MODULE_FORMAT),
    Column("tolerance", "atol + rtol·|numeric|.", _MODULE_FORMAT),
    Column("error bound", "How far the finite difference can be from the true derivative.", _MODULE_FORMAT),
    Column("note", "Why a check failed, could not decide or was skipped."),
)

#: Rows the values table shows: the worst of a full check's up to 65,536. Styling and sending
#: every row holds the server's interpreter for seconds per rerun, and the table's 240 px show
#: seven of them at a time.
TABLE_ROWS = 100


def values_table(result) -> pd.DataFrame:
    """The :data:`TABLE_ROWS` values of a CheckResult furthest over their tolerance, in the columns of
    :data:`VALUE_COLUMNS` it has."""
    shown = [c.name for c in VALUE_COLUMNS if c.name in result.columns]
    return result.worst_rows(TABLE_ROWS)[shown]


def module_table(result) -> pd.DataFrame:
    """One row per module and side a LayersResult checked, in the columns of :data:`MODULE_COLUMNS`."""
    return result.table[[c.name for c in MODULE_COLUMNS]]


def state_colour(state: object) -> str:
    """The CSS of a state's cell: its state's colour, bold; nothing for a module that could not run."""
    return f"color: {STATES[state].colour}; font-weight: bold" if state in STATES else ""


def state_styler(frame: pd.DataFrame, column: str, colour: Callable[[object], str] = state_colour) -> Styler:
    """``frame`` with ``colour(value)`` as the CSS of each cell of ``column`` (a state, in its colour),
    styled for ``st.dataframe`` at about half the server's cost of ``frame.style.map``.

    Streamlit renders a Styler's every cell through pandas (``Styler._translate``) to send display
    values, which its table shows only in text columns without a format, and gives every cell an id.
    Here only the columns up to ``column`` are rendered (every text column of the page's two tables
    reads the same as its own value, the numbers have formats) and only the styled cells get ids
    (``cell_ids``): the values table of 100 rows in 6.2 ms a new check against 11.5. If
    pandas' ``_translate`` loses ``max_cols``: tests/test_page_gradcheck.py fails naming it.

    >>> styler = state_styler(pd.DataFrame({"name": ["a"], "state": ["pass"], "x": [1.0]}), "state")
    >>> styler._translate.keywords, styler.cell_ids
    ({'max_cols': 2}, False)
    """
    styler = frame.style.map(colour, subset=[column])
    styler.cell_ids = False
    styler._translate = partial(styler._translate, max_cols=frame.columns.get_loc(column) + 1)
    return styler
