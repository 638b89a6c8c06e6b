"""Representable grid: why (x+h) − x is not h. Layout only.

First screen (1280x720): the title with the presets in a popover, one row of controls,
the answer sentence and the whole chart of f on the dtype's grid. Below: the numbers
with their bits (the shared leading digits marked), the secant's slope as h shrinks,
the definitions (anchor ``#definitions``, linked from other pages) and the precision
table of every dtype.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from gradlab.errors import GradLabError, LimitError
from gradlab.figures.grid import grid_slider_figure, secant_series_figure
from gradlab.labs.grid.frames import GRID_STEP_RANGE, GridFrames, grid_steps, series_with, view_of
from gradlab.labs.grid.story import grid_answer, printed_values, ulps_of_x
from gradlab.labs.grid.representable import GridDifference, GridSettings
from gradlab.limits import LIMITS
from gradlab.numerics.dtypes import ALL_DTYPE_NAMES, facts
from gradlab.numerics.expressions import parse
from gradlab.numerics.precision_table import CENTRAL_THEORY, COLUMNS, precision_table
from gradlab.server.heavy_work import grid
from gradlab.teaching.catalogue import CATALOGUE
from gradlab.teaching.explorer_defaults import CUSTOM, FUNCTION_OPTIONS, function_label
from gradlab.teaching.glossary import definition, term
from gradlab.ui.cache_keys import page_cache_data, page_cache_resource, settings_key
from gradlab.ui.bit_editor import bit_editor
from gradlab.ui.bound_widgets import bound_number, bound_selectbox, bound_text
from gradlab.ui.controls import eps_input
from gradlab.ui.figures import cached_figure, replayed_chart, show_figure
from gradlab.ui.worker_calls import heavy
from gradlab.ui.messages import show_answer, stop_with_error
from gradlab.ui.page_chrome import answer_box, main_chart_box, start_page, title_row
from gradlab.ui.presentation import is_presenting
from gradlab.ui.presets import presets_popover
from gradlab.ui.slider_release import follow_chart_slider
from gradlab.ui.term_links import linked

start_page("grid")

DEFAULT_EXPRESSION = "sin(x)"  # what the f(x) box starts with when "custom (type it)" is picked
DEFAULT_FUNCTION = "sin"  # the catalogue's sin(x) at x = 1: the function box names it
CHART_KEY = "grid_chart"
CONTROL_WIDTH = 120  # px: function, x, dtype, f(x) and the step's slider in one row at 1280 px


@page_cache_resource(max_entries=LIMITS.cache_entries, ttl=LIMITS.cache_seconds, show_spinner=False,
                     hash_funcs={GridSettings: settings_key})
def _view(view: GridSettings) -> tuple[pd.DataFrame, GridFrames]:
    """The secant's series and the slider's frames of a view (``view_of``: its step aside), one worker
    call per view whatever step the page shows: a new step is a look-up in the frames. Kept as it
    came back and shared read-only by every session (st.cache_data would unpickle 61 frames a rerun)."""
    _, _, series, frames = heavy(grid, view)  # in a worker process: the exact derivative can hold a C call
    return series, frames


@page_cache_resource(max_entries=LIMITS.cache_entries, ttl=LIMITS.cache_seconds, show_spinner=False,
                     hash_funcs={GridSettings: settings_key})
def _difference(settings: GridSettings) -> tuple[GridDifference, pd.DataFrame, pd.DataFrame, GridFrames]:
    """The page's step alone, for a view whose own step (1) has no difference (f not finite there)."""
    return heavy(grid, settings)


def _computed(settings: GridSettings) -> tuple[GridDifference, pd.DataFrame, pd.DataFrame, GridFrames, GridSettings]:
    """The difference at the page's step, f around it, the secant's series (the view's: the page's
    step joins it where it is drawn, :func:`_secant_chart`), the frames, and the settings that key the
    chart (the view's, unless the view had to be computed at the page's step)."""
    view = view_of(settings)
    try:
        series, frames = _view(view=view)
    except LimitError:
        raise
    except GradLabError:  # the view's step fails (x + 1 or f there not finite): the page's step alone
        frames = None
    if frames is None or settings.h not in frames.steps:
        result, window, series, frames = _difference(settings=settings)
        return result, window, series, frames, settings
    result, window = frames.at(settings.h)
    return result, window, series, frames, view


def _on_function_change() -> None:
    key = st.session_state.get("fn")
    if key in CATALOGUE:
        st.session_state["x"] = CATALOGUE[key].x


def _honour_a_linked_expression() -> None:
    """A link that carries an expression but no function meant "custom (type it)", the function
    box's default before it named sin(x): it opens the same view. Runs before the box is drawn."""
    if "fn" not in st.session_state and "expr" in st.query_params and "fn" not in st.query_params:
        st.session_state["fn"] = CUSTOM


def _controls() -> GridSettings:
    """The title row, then one row of controls; the one frozen settings object (or the page stops)."""
    _honour_a_linked_expression()
    with title_row("Representable grid: (x+h) − x ≠ h",
                   help="Why a finite difference's step is not the h you asked for: x + h is rounded "
                        "to the numbers the dtype can hold, and so is f."):
        presets_popover("grid")
    with st.container(horizontal=True, vertical_alignment="bottom", gap="small"):
        fn = bound_selectbox("function", "fn", FUNCTION_OPTIONS, index=FUNCTION_OPTIONS.index(DEFAULT_FUNCTION),
                             width=170, format_func=function_label, on_change=_on_function_change)
        x = bound_number("point x", "x", value=1.0, min_value=-LIMITS.literal_magnitude,
                         max_value=LIMITS.literal_magnitude, format="%.12g", width=CONTROL_WIDTH,
                         help="Any float, e.g. 1, 0.3 or 1e-3. It is rounded to the dtype first.")
        dtype = bound_selectbox("dtype", "dtype", ALL_DTYPE_NAMES, index=ALL_DTYPE_NAMES.index("float32"),
                                width=CONTROL_WIDTH, format_func=lambda n: facts(n).label,
                                help="The 8-bit formats are emulated: arithmetic in float32, x, x+h and "
                                     "every value of f rounded to the 8-bit format. " + term("ulp"))
        if fn == CUSTOM:
            text = bound_text("f(x) =", "expr", value=DEFAULT_EXPRESSION, max_chars=LIMITS.expression_chars,
                              width=CONTROL_WIDTH,
                              help="Python syntax in x: + - * / **, exp, log, sin, sqrt, abs, ...")
        else:
            text = CATALOGUE[fn].expression
        h = eps_input("step h", "h", default=1e-4, smallest=GRID_STEP_RANGE[0], largest=GRID_STEP_RANGE[1],
                      mantissas=(1, 2, 5), width="stretch",
                      help="The step you ask for. x + h is rounded to the grid, so the step taken "
                           "is a whole number of ulps of x (or none).")
    try:
        parse(text)
    except GradLabError as err:
        stop_with_error(err, icon=":material/edit:")
    return GridSettings(dtype=dtype, x=float(x), h=float(h), expression=text)


#: The main chart's box: at 1280x720 all of it (step slider, plot, legend) on the first screen
#: under the controls and a three-line answer; on a phone taller, since its legend takes a row per
#: entry and only the plot's top has to be on the first screen. The chart stretches to the box.
_CHART_BOX_CSS = """<style>
[data-testid="stMain"] div.st-key-gl-main-chart.st-key-gl-main-chart { height: 365px !important;
  min-height: 0 !important; flex: 0 0 auto !important; }
@media (max-width: 640px) {
  [data-testid="stMain"] div.st-key-gl-main-chart.st-key-gl-main-chart { height: 480px !important; } }
.st-key-gl-main-chart [data-testid="stPlotlyChart"] { flex: 1 1 auto; min-height: 0; }
</style>"""


def _marked(text: str, shared: int) -> str:
    """A printed number with its shared leading characters marked (the digits the subtraction cancels)."""
    if shared == 0:
        return f"`{text}`"
    return f":orange-background[`{text[:shared]}`]`{text[shared:]}`" if text[shared:] else \
        f":orange-background[`{text}`]"


def _bits_marked(bits: str, shared_bits: int) -> str:
    """Sign, exponent and fraction (in bytes) as separate code spans, so a phone can wrap them;
    the sign, exponent and shared significand bits marked (the implicit 1 counts as one)."""
    sign, exponent, fraction = bits.split(" ")
    groups = [sign, exponent] + [fraction[i:i + 8] for i in range(0, len(fraction), 8)]
    left = len(sign) + len(exponent) + shared_bits - 1 if shared_bits else 0
    out = []
    for group in groups:
        cut, left = min(max(left, 0), len(group)), left - len(group)
        out.append(_marked(group, cut).replace("``", ""))
    return " ".join(out)


def _numbers(r: GridDifference) -> list[str]:
    p = printed_values(r)
    rows = [
        "| | value | spacing (ulp) there |", "|---|---|---|",
        f"| x | `{r.x.value!r}` | {r.x.ulp:.3g} |",
        f"| x + h | `{r.x_plus_h.value!r}` | {r.x_plus_h.ulp:.3g} |",
        f"| f(x) | {_marked(p.fx, p.shared_chars)} | {r.fx.ulp:.3g} |",
        f"| f(x+h) | {_marked(p.fx_plus_h, p.shared_chars)} | {r.fx_plus_h.ulp:.3g} |",
        "", "| | bits: sign, exponent, fraction |", "|---|---|",
        f"| x | {_bits_marked(r.x.bits, 0)} |",
        f"| x + h | {_bits_marked(r.x_plus_h.bits, 0)} |",
        f"| f(x) | {_bits_marked(r.fx.bits, r.shared_bits)} |",
        f"| f(x+h) | {_bits_marked(r.fx_plus_h.bits, r.shared_bits)} |",
    ]
    st.markdown(
        f"- step taken (x+h) − x: **{r.step_taken!r}** = {ulps_of_x(r)} of x "
        f"(asked: h = {r.settings.h:g})\n"
        f"- shared: {p.shared_digits} decimal digit{'s' if p.shared_digits != 1 else ''}, "
        f"{r.shared_bits} of {r.precision_bits} bits; "
        f"the difference keeps **{r.kept_bits} significant bit{'s' if r.kept_bits != 1 else ''}**\n"
        f"- secant (f(x+h) − f(x)) / step: **{r.secant:.6g}**; tangent f′(x): **{r.tangent:.6g}**\n"
        f"- the secant can only be a multiple of ulp(f)/step = **{r.quantum:.4g}**")
    return rows


def _bits_table(rows: list[str]) -> None:
    st.markdown("\n".join(rows))
    st.caption("Marked: the leading digits and bits f(x) and f(x+h) share. The subtraction "
               "f(x+h) − f(x) cancels them; only the rest survives.")


@page_cache_data(max_entries=1, show_spinner=False)
def _definitions(dtypes: tuple[str, ...]) -> None:
    """The words and the precision table of ``dtypes`` (every dtype's row): the same for every view, so
    drawn once and replayed (the table's conversion was a third of a rerun that changed nothing)."""
    st.subheader("Definitions", anchor="definitions")
    st.markdown(
        "- **grid**: the numbers a dtype can hold. Between powers of two they are evenly spaced; "
        "the spacing doubles at each power of two.\n"
        f"- **ulp**: {definition('ulp')}\n"
        "- **precision p**: significand bits, the implicit leading 1 included (float32: 24).\n"
        "- **machine epsilon** eps = 2^(1−p): the gap between 1 and the next number, ulp(1).\n"
        f"- **unit round-off**: {definition('unit round-off')} "
        "In symbols u = 2^−p = eps/2.\n"
        "- **subnormal**: the evenly spaced numbers below the smallest normal one, "
        "spacing smallest normal × eps.")
    st.markdown("**Precision table**: every dtype, native and emulated.")
    table = precision_table()
    table = table[table["name"].isin(dtypes)].reset_index(drop=True)
    for column in table.columns:
        if table[column].dtype == float:
            table[column] = table[column].map(lambda v: f"{v:.3g}")
    table["emulated"] = table["emulated"].map({True: "yes (in float32)", False: "no"})
    st.dataframe(table.rename(columns=COLUMNS), hide_index=True, width="stretch")
    st.caption(CENTRAL_THEORY)


@page_cache_data(max_entries=LIMITS.cache_entries, ttl=LIMITS.cache_seconds, show_spinner=False,
                 hash_funcs={GridSettings: settings_key})
def _secant_chart(settings: GridSettings) -> None:
    """The secant's slope against h, drawn once per settings and replayed from the cache: st.plotly_chart
    encodes a chart to JSON and hashes it into its element id on every rerun it is drawn in."""
    result, _, series, _, _ = _computed(settings)
    st.markdown("**The secant's slope as h shrinks**: near ulp(x) it can take only a few values.")
    show_figure(cached_figure(settings, secant_series_figure, series_with(series, result), result),
                "gradlab-grid-secant-over-h")


# controls -> one frozen settings object -> one cached engine call -> render
try:
    settings = _controls()
    result, window, series, frames, chart_key = _computed(settings)
except Exception as err:  # noqa: BLE001 - every failure becomes a message
    stop_with_error(err)
with answer_box():
    # ulp, the answer's and the chart's unit, defined where the answer first says it (on hover;
    # the link goes to the Definitions below)
    show_answer(grid_answer(result), icon=":material/lightbulb:", links=lambda sentence: linked(sentence, "ulp", "#definitions"))
with main_chart_box():
    if not is_presenting():  # presentation mode sizes the box itself
        st.html(_CHART_BOX_CSS)
    # built once per view (every step's frame in it), shown at the page's step (gradlab.ui.figures.show_figure)
    # recorded once per view and step, then replayed (gradlab.ui.figures.replayed_chart)
    replayed_chart(chart_key, f"gradlab-grid-{settings.dtype}-x{settings.x:g}-h{settings.h:g}",
                   lambda: cached_figure(chart_key, grid_slider_figure, frames), chart_key=CHART_KEY,
                   height="stretch", step=settings.h)  # the box's height: this page's CSS sets it, or presentation mode
follow_chart_slider(CHART_KEY, "h", f"{settings.h:.0e}", grid_steps())
bit_editor(result.x, settings.dtype)  # click a bit of x: x, the grid and the step taken move
left, right = st.columns([3, 2])
with left:
    rows = _numbers(result)
with right:
    _secant_chart(settings=settings)
_bits_table(rows)
_definitions(dtypes=tuple(ALL_DTYPE_NAMES))
