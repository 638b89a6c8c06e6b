"""The light and the dark theme as a visitor meets them: the switch, the contrast CSS, the theme type.

Streamlit 1.67 gives two supported ways to pick a theme, and GradLab offers both:

- the app menu (⋮, top right) lists System / Light / Dark once ``client.toolbarMode``
  is ``"viewer"`` (``.streamlit/config.toml``). It switches at once and the browser
  remembers the choice;
- the documented URL option ``?embed_options=light_theme`` / ``dark_theme``, read by
  the browser when a page loads. :func:`theme_links` draws two plain links that reload
  the current view (every control is in its URL) with that option, so a lecturer
  finds "Light" and "Dark" on the page itself, also in presentation mode.

Charts follow either choice by themselves (``st.plotly_chart(theme="streamlit")``);
:func:`contrast_css` makes their tick labels and axis titles the theme's text colour
(Plotly draws them in a grey with 3.7:1 on white), so they reach WCAG AA in both themes.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from urllib.parse import urlencode

import streamlit as st

__all__ = ["THEMES", "theme_type", "theme_link_query", "theme_links", "contrast_css", "current_query"]

#: The theme choices, as (label, Streamlit's ``embed_options`` value).
THEMES: tuple[tuple[str, str], ...] = (("Light", "light_theme"), ("Dark", "dark_theme"))

# Plotly's axis text (tick labels, axis and colour-bar titles) in the theme's text
# colour: SVG text inherits `color` from the page, `currentColor` picks it up, and
# !important beats the inline fill Plotly writes. So does any text in the grey of
# Streamlit's light chart template, #808495 (3.7:1 on white): an annotation, a bar's or a
# point's label that sets no colour of its own. Text that sets a colour keeps it.
_CONTRAST_CSS = """
<style>
.js-plotly-plot .xtick text, .js-plotly-plot .ytick text,
.js-plotly-plot .g-xtitle text, .js-plotly-plot .g-ytitle text,
.js-plotly-plot [class^="g-x"][class$="title"] text, .js-plotly-plot [class^="g-y"][class$="title"] text,
.js-plotly-plot .cbaxis text, .js-plotly-plot .cbtitle text, .js-plotly-plot .gtitle,
.js-plotly-plot text[style*="fill: rgb(128, 132, 149)"] {
  fill: currentColor !important;
}
.st-key-gl-theme-links a { margin-right: 0.6em; color: inherit; font-weight: 600; }
/* A slider's value is drawn in the primary colour: 3.95:1 on the dark background (the dark
   primary is dark enough for white button text, so it cannot also be light text). */
[data-testid="stSliderThumbValue"], [data-testid="stSliderTickBarMin"],
[data-testid="stSliderTickBarMax"] { color: inherit !important; }
/* Streamlit draws a page link's label on one line cut with an ellipsis ("The same loss's check on
   the Grad check page, and…" on a phone): a label wraps instead, on every page. */
[data-testid="stMain"] [data-testid="stPageLink-NavLink"] :is(span, p, [data-testid="stMarkdownContainer"]) {
  white-space: normal !important; overflow: visible !important; text-overflow: clip !important; }
[data-testid="stMain"] [data-testid="stPageLink-NavLink"] { height: auto !important; }
/* A selected option's chip shows its whole name ("float8_e4m3fn (emulated)", not "float8_e4m3fn (e…"):
   the chips wrap onto more rows (gradlab.ui.url_widgets.url_multiselect) instead. */
[data-testid="stMain"] .stMultiSelect [data-tag] { max-width: 100% !important; height: auto !important; }
[data-testid="stMain"] .stMultiSelect [data-tag] span[title] {
  max-width: none !important; overflow: visible !important; text-overflow: clip !important; white-space: normal !important;
  line-height: 1.25 !important; }
/* A projector's first screen is 720 px: a smaller page title leaves the room to the chart. */
[data-testid="stMainBlockContainer"] h1 { font-size: 2.1rem; padding-top: 0; padding-bottom: 0.4rem; }
</style>
"""


def theme_type() -> str:
    """``"light"`` or ``"dark"``: the theme the visitor's browser shows (light when unknown).

    Streamlit infers it from the app's background colour; on a session's first run
    and just after a switch it may lag one run behind (its documentation says so).
    """
    kind = st.context.theme.type
    return kind if kind in ("light", "dark") else "light"


def contrast_css(more: str = "") -> None:
    """Inject the CSS that gives chart axis text the theme's text colour (takes no space), with
    ``more`` (a page's own ``<style>`` block) in the same element: each element costs a rerun."""
    st.html(_CONTRAST_CSS + more)


def current_query() -> dict[str, list[str]]:
    """The page's query parameters now, every value of a repeated key kept (multiselects)."""
    return {key: st.query_params.get_all(key) for key in st.query_params}


def theme_link_query(query: Mapping[str, Sequence[str]], option: str) -> str:
    """The query string of the current view opened in the theme ``option``.

    >>> theme_link_query({"dtypes": ["float32", "float64"], "x": ["1/3"]}, "dark_theme")
    '?dtypes=float32&dtypes=float64&x=1%2F3&embed_options=dark_theme'
    """
    pairs = [(key, value) for key, values in query.items() for value in values]
    return "?" + urlencode([*pairs, ("embed_options", option)])


def theme_links(query: Mapping[str, Sequence[str]] | None = None) -> None:
    """Two links, Light and Dark, that reload the current view in that theme.

    Call it after the page's widgets ran (``app.py`` does), so the links carry the
    values they just wrote to the URL. Plain ``<a>`` links: a same-tab page load is
    what makes the browser read ``embed_options`` (an ``st.page_link`` would not reload).
    """
    query = current_query() if query is None else query
    links = " ".join(
        f'<a href="{html.escape(theme_link_query(query, option), quote=True)}" '
        f'title="Show this view in the {label.lower()} theme">{label}</a>'
        for label, option in THEMES
    )
    with st.container(key="gl-theme-links"):
        st.html(f"<span>Theme: {links}</span>")
