"""Helpers for browser tests: wait for a Streamlit run to finish, save screenshots.

Chromium's flags and the wait for a finished run are :mod:`harness.browser`'s, shared with the
browser benchmarks; they are importable from here too.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlencode

from harness.browser import CHROMIUM_ARGS, SCRIPT_FINISHED, wait_for_app  # noqa: F401 - the tests import them from here

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"


def open_page(page, base_url: str, url_path: str = "", query: dict | None = None,
              timeout: float = 30_000) -> None:
    """Go to ``base_url/url_path?query`` and wait for the script to finish."""
    url = f"{base_url}/{url_path}"
    if query:
        url += "?" + urlencode(query, doseq=True)
    page.goto(url)
    wait_for_app(page, timeout=timeout)


def screenshot(page, name: str, full_page: bool = True) -> Path:
    """Save a PNG of the page to tests/artifacts/<name>.png and return its path.

    Streamlit scrolls inside its main container, not the document, so for a
    full-page shot the viewport is stretched to the content's height meanwhile.
    """
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "screenshot"
    path = ARTIFACTS / f"{stem}.png"
    viewport = page.viewport_size
    if full_page and viewport:
        height = page.evaluate(
            "() => Math.max(...[...document.querySelectorAll("
            "'[data-testid=stMain], [data-testid=stAppScrollToBottomContainer]')]"
            ".map(e => e.scrollHeight), document.body.scrollHeight)"
        )
        if height > viewport["height"]:
            page.set_viewport_size({"width": viewport["width"], "height": min(int(height), 8000)})
            page.wait_for_timeout(300)
    try:
        page.screenshot(path=str(path), full_page=full_page)
    finally:
        if viewport:
            page.set_viewport_size(viewport)
    return path


#: Where a page's answer box and main chart sit, the main plot's size and drawn points, and
#: any sideways overflow: what the first-screen browser tests measure.
FIRST_SCREEN = """() => {
  const box = s => { const e = document.querySelector(s); if (!e) return null;
                     const r = e.getBoundingClientRect(); return {top: r.top, bottom: r.bottom}; };
  const plot = document.querySelector('.st-key-gl-main-chart .nsewdrag');
  return {answer: box('.st-key-gl-answer'), chart: box('.st-key-gl-main-chart'),
          answerText: document.querySelector('.st-key-gl-answer')?.innerText || '',
          plotWidth: plot ? plot.getBoundingClientRect().width : 0,
          plotHeight: plot ? plot.getBoundingClientRect().height : 0,
          points: document.querySelectorAll('.st-key-gl-main-chart .scatterlayer .point').length,
          overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
          mainOverflow: (() => { const m = document.querySelector('[data-testid=stMain]');
                                 return m ? m.scrollWidth - m.clientWidth : 0; })()};
}"""


#: Every visible leaf of the page (an element container: a widget, a sentence, a box's text), a
#: tooltip or a popover that overlaps the answer box or the main chart box without being part of it.
OVERLAPS = """() => {
  const rect = e => e.getBoundingClientRect();
  // checkVisibility: false inside a closed expander (its content is laid out but not drawn)
  const shown = e => { const r = rect(e);
    return r.width >= 1 && r.height >= 1 && e.checkVisibility({opacityProperty: true, visibilityProperty: true}); };
  const leaves = [...document.querySelectorAll('[data-testid=stMain] [data-testid=stElementContainer], '
    + '[data-testid=stTooltipContent], [role=tooltip], [data-testid=stPopoverBody]')].filter(shown);
  const hits = [];
  for (const key of ['gl-answer', 'gl-main-chart']) {
    const box = document.querySelector('.st-key-' + key);
    if (!box) continue;
    const a = rect(box);
    for (const e of leaves) {
      if (box.contains(e) || e.contains(box)) continue;
      const b = rect(e);
      const dx = Math.min(a.right, b.right) - Math.max(a.left, b.left);
      const dy = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
      if (dx > 1 && dy > 1) hits.push(`'${(e.innerText || e.dataset.testid || '').trim().slice(0, 50)}' `
        + `(y=${Math.round(b.top)}..${Math.round(b.bottom)}) over ${key} (y=${Math.round(a.top)}..${Math.round(a.bottom)})`);
    }
  }
  return hits;
}"""
#: Each axis title of the main chart drawn over one of its own tick labels (bounding boxes, by more
#: than 1 px each way), with the overlap's size.
#: For each visible label (a button's, a link's, a tab's, a multiselect chip's), every element
#: inside it whose text is wider than its box while that box hides the overflow. Elements of
#: a width of 1 px or less are screen-reader-only text (KaTeX's MathML, "Skip to main content").
CLIPPED_LABELS = """() => {
  const clipped = [];
  const labels = document.querySelectorAll(
    '[data-testid=stMain] :is(button, a, [role=tab], [data-tag])');
  for (const label of labels) {
    const box = label.getBoundingClientRect();
    if (box.width <= 1 || box.height <= 1 || !label.innerText.trim()) continue;
    for (const el of [label, ...label.querySelectorAll('*')]) {
      const style = getComputedStyle(el);
      const hides = style.overflowX !== 'visible' || style.textOverflow === 'ellipsis';
      if (el.clientWidth > 1 && hides && el.scrollWidth > el.clientWidth + 1) {
        clipped.push(`${label.innerText.trim().replace(/\\s+/g, ' ').slice(0, 60)} `
                     + `(${el.scrollWidth} px of text in ${el.clientWidth} px)`);
        break;
      }
    }
  }
  return clipped;
}"""

AXIS_TITLE_OVERLAPS = """() => { const hits = [];
  for (const [title, ticks] of [['g-ytitle', 'ytick'], ['g-xtitle', 'xtick']]) {
    for (const t of document.querySelectorAll(`.st-key-gl-main-chart .${title} text`)) {
      const a = t.getBoundingClientRect(); if (a.width < 1) continue;
      for (const k of document.querySelectorAll(`.st-key-gl-main-chart .${ticks} text`)) {
        const b = k.getBoundingClientRect(); if (b.width < 1) continue;
        const dx = Math.min(a.right, b.right) - Math.max(a.left, b.left);
        const dy = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
        if (dx > 1 && dy > 1) hits.push(`${t.textContent.slice(0, 30)} over tick ${k.textContent} (${dx.toFixed(0)}x${dy.toFixed(0)} px)`);
      } } }
  return hits; }"""

# ------------------------------------------------------------------ contrast as drawn
# From the colours the browser paints (computed styles), with WCAG 2.x relative
# luminance; a translucent colour is first blended over the background it sits on.

TEXT_CONTRAST = 4.5  # WCAG AA, text


def rgba(css: str) -> tuple[float, ...]:
    """``rgb(…)``/``rgba(…)`` as (r, g, b, a)."""
    numbers = [float(n) for n in re.findall(r"[\d.]+", css)]
    return tuple(numbers[:3]) + ((numbers[3],) if len(numbers) > 3 else (1.0,))


def over(colour: str, background: tuple[float, ...]) -> tuple[float, ...]:
    """``colour`` blended over an opaque ``background``."""
    r, g, b, a = rgba(colour)
    return tuple(a * c + (1 - a) * bc for c, bc in zip((r, g, b), background[:3], strict=True))


def _luminance(rgb) -> float:
    def channel(v: float) -> float:
        c = v / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (channel(v) for v in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a, b) -> float:
    """WCAG contrast ratio of two opaque colours, 1..21."""
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def app_background(page) -> tuple[float, ...]:
    return rgba(page.evaluate(
        "getComputedStyle(document.querySelector('[data-testid=stApp]')).backgroundColor"))


#: Every chart text a visitor reads on the page's own background: annotations, axis text,
#: legends, labels beside bars and points (text inside a bar or a heatmap cell stands on
#: that cell's colour, which Plotly picks a contrasting text colour for).
_CHART_TEXTS = """() => [...document.querySelectorAll('.js-plotly-plot text')]
  .filter(t => t.textContent.trim() && t.getBoundingClientRect().width > 0)
  .filter(t => !/bartext-inside|heatmap-label/.test(
    (t.getAttribute('class') || '') + ' ' + (t.parentElement.getAttribute('class') || '')))
  .map(t => [t.textContent.trim().slice(0, 40), getComputedStyle(t).fill,
             parseFloat(getComputedStyle(t).fillOpacity || '1')])"""


def chart_texts_under_aa(page) -> list[str]:
    """Each chart text drawn on the page background below 4.5:1, with its colour and ratio."""
    page.wait_for_timeout(500)  # plotly draws annotations after the axes
    background = app_background(page)
    low = []
    for text, fill, opacity in page.evaluate(_CHART_TEXTS):
        r, g, b, a = rgba(fill)
        ratio = contrast(over(f"rgba({r}, {g}, {b}, {a * opacity})", background), background)
        if ratio < TEXT_CONTRAST:
            low.append(f"{text!r} {fill} {ratio:.2f}:1")
    return low


#: The smallest chart text a reader needs in the main chart (tick labels, legend entries,
#: annotations; not a slider's stop labels, hidden on purpose at 1 px) and the answer's body text,
#: px as drawn: issue 37 measured ticks and legends at 12.75 px beside 17 px text.
CHART_TEXT_SIZES = """() => {
  const sizes = sel => [...document.querySelectorAll(sel)].filter(e => e.getBoundingClientRect().width > 0)
    .map(e => parseFloat(getComputedStyle(e).fontSize)).filter(s => s > 2);
  const chart = '.st-key-gl-main-chart ';
  // a curve's name inside its regime band is sized to the band (gradlab.figures.layout.BAND_SIZED)
  const plot = document.querySelector(chart + '.js-plotly-plot');
  const names = ((plot && plot._fullLayout && plot._fullLayout.annotations) || []).map(a => a.name);
  const notes = [...document.querySelectorAll(chart + '.annotation')]
    .filter(g => names[Number(g.getAttribute('data-index'))] !== 'regime').map(g => g.querySelector('.annotation-text'));
  const text = sizes(['.xtick text', '.ytick text', '.legendtext'].map(s => chart + s).join(','))
    .concat(notes.filter(e => e && e.getBoundingClientRect().width > 0).map(e => parseFloat(getComputedStyle(e).fontSize)));
  const body = sizes('.st-key-gl-answer p');
  return {chart: text.length ? Math.min(...text) : null, body: body.length ? Math.min(...body) : null}; }"""
