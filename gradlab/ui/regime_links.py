"""The answer's words "round-off" and "truncation" tied to the chart, both ways.

Pointing at (hover) or tapping a word lights that regime's band on every curve and strokes the
part of each curve it covers; pointing at a curve or a band lights the word for the regime
there (and that curve's part). A tap keeps the light until the next tap, so a phone, which has
no hover, sees it too.

The words are Markdown links to ``#gl-regime-<regime>`` (:func:`regime_linked`) inside the
answer's ordinary message box; a small custom component (components v2: it runs in the page
itself, no iframe) finds them and the main chart's bands, whose names are
:func:`gradlab.step_sweep.regimes.band_name` ("round-off · float32 central"), and does the
lighting in the browser, without a rerun. Without JavaScript the words stay plain text links
that go nowhere.

>>> regime_linked("Left of it round-off dominates, right of it truncation; round-off again.")
'Left of it [round-off](#gl-regime-round-off) dominates, right of it [truncation](#gl-regime-truncation); round-off again.'
"""

from __future__ import annotations

import re

import streamlit as st

from gradlab.figures.style import ROUNDOFF_SHADE, TRUNCATION_SHADE
from gradlab.step_sweep.regimes import REGIMES
from gradlab.ui.page_chrome import MAIN_CHART_KEY

__all__ = ["regime_linked", "regime_links", "REGIME_ANCHOR", "REGIME_LINKS_KEY", "LIT_CLASS", "STROKE_CLASS"]

REGIME_ANCHOR = "#gl-regime-"  # + the regime: a word's link target
REGIME_LINKS_KEY = "gl-regime-links"
LIT_CLASS = "gl-lit"  # on a word while its regime is lit
STROKE_CLASS = "gl-regime-stroke"  # a curve's lit part, drawn over the curve
_COLOURS = {REGIMES[0]: ROUNDOFF_SHADE, REGIMES[1]: TRUNCATION_SHADE}


def regime_linked(markdown: str) -> str:
    r"""``markdown`` with the first "round-off" and the first "truncation" links the page ties to
    the chart (unchanged where a word is absent); a word escaped as literal text
    (:func:`gradlab.literal_text.markdown_literal` writes ``round\-off``) is found too.

    >>> regime_linked(r"round\-off dominates")
    '[round\\-off](#gl-regime-round-off) dominates'
    """
    for regime in REGIMES:
        word = "".join(rf"\\?{re.escape(c)}" if not c.isalnum() else c for c in regime)
        markdown = re.sub(rf"(?<![\w\[#\\-]){word}(?![\w-])",
                          lambda m: f"[{m.group(0)}]({REGIME_ANCHOR}{regime})", markdown, count=1, flags=re.IGNORECASE)
    return markdown


_JS = """
export default function (component) {
  const { data } = component
  const G = window.__glRegimes || (window.__glRegimes = {})
  Object.assign(G, data)
  if (G.installed) { G.light(G.pinned); return }
  G.installed = true
  G.pinned = null
  const WORD = `a[href^="${G.anchor}"]`
  const SVG = "http://www.w3.org/2000/svg"
  const chart = () => document.querySelector(`.st-key-${G.chart} .js-plotly-plot`)
  const wordRegime = a => decodeURIComponent(a.getAttribute("href").slice(G.anchor.length))
  const bandOf = name => { // "round-off · float32 central" -> ["round-off", "float32 central"]
    const i = (name || "").indexOf(" · ")
    return i > 0 && G.regimes.includes(name.slice(0, i)) ? [name.slice(0, i), name.slice(i + 3)] : null
  }
  // a curve, or its theory line (drawn over it near the best step): the curve a band names
  const curveName = meta => meta && ["sweep", "theory"].includes(meta.kind) ? `${meta.dtype} ${meta.scheme}` : null
  let clips = 0

  function stroke(gd, curve, regime, band) { // the curve's part under the band, a wide stroke over it
    const k = gd._fullData.findIndex(t => t.meta && t.meta.kind === "sweep" && curveName(t.meta) === curve)
    const group = [...gd.querySelectorAll(".scatterlayer .trace")]
      .find(g => g.__data__ && g.__data__[0] && g.__data__[0].trace && g.__data__[0].trace.index === k)
    const line = group && group.querySelector("path.js-line")
    if (!line || !line.getAttribute("d")) return
    const box = band.getBoundingClientRect(), toLine = line.getScreenCTM().inverse()
    const left = new DOMPoint(box.left, 0).matrixTransform(toLine).x
    const right = new DOMPoint(box.right, 0).matrixTransform(toLine).x
    const clip = document.createElementNS(SVG, "clipPath"), rect = document.createElementNS(SVG, "rect")
    clip.id = `gl-regime-clip-${++clips}`
    Object.entries({ x: Math.min(left, right), y: -1e5, width: Math.abs(right - left), height: 2e5 })
      .forEach(([a, v]) => rect.setAttribute(a, v))
    clip.appendChild(rect)
    const lit = line.cloneNode(false)
    lit.removeAttribute("class")
    lit.setAttribute("class", G.stroke)
    lit.setAttribute("clip-path", `url(#${clip.id})`)
    Object.assign(lit.style, { stroke: G.colours[regime], strokeWidth: "12px", strokeOpacity: "0.5",
                               strokeDasharray: "none", fill: "none", pointerEvents: "none" })
    clip.setAttribute("class", G.stroke)
    line.parentNode.insertBefore(clip, line)
    line.parentNode.insertBefore(lit, line)
  }

  // lit: null, or {regime, band: one band's name or null for every band of the regime}
  G.light = function (lit) {
    G.current = lit
    for (const a of document.querySelectorAll(WORD)) a.classList.toggle(G.lit, !!lit && wordRegime(a) === lit.regime)
    const gd = chart()
    if (!gd || !gd.layout || !gd._fullData) return
    for (const old of gd.querySelectorAll(`.${G.stroke}`)) old.remove()
    const shapes = gd.layout.shapes || []
    for (const path of gd.querySelectorAll(".shapelayer path[data-index]")) {
      const shape = shapes[+path.getAttribute("data-index")], band = shape && bandOf(shape.name)
      if (!band) continue
      if (path.dataset.glOpacity === undefined) path.dataset.glOpacity = path.style.opacity
      const on = !!lit && band[0] === lit.regime && (!lit.band || lit.band === shape.name)
      path.style.opacity = on ? "0.6" : path.dataset.glOpacity
      path.classList.toggle(G.lit, on)
      if (on) stroke(gd, band[1], band[0], path)
    }
  }

  // the words: point or focus to light, tap or click to keep it lit (again to let go)
  const word = e => e.target instanceof Element ? e.target.closest(WORD) : null
  document.addEventListener("mouseover", e => { const a = word(e); if (a) G.light({ regime: wordRegime(a), band: null }) })
  document.addEventListener("focusin", e => { const a = word(e); if (a) G.light({ regime: wordRegime(a), band: null }) })
  for (const kind of ["mouseout", "focusout"]) {
    document.addEventListener(kind, e => { if (word(e)) G.light(G.pinned) })
  }
  document.addEventListener("click", e => {
    const a = word(e)
    if (!a) return
    e.preventDefault()  // a link to a regime goes nowhere: it lights the chart
    e.stopPropagation()
    const regime = wordRegime(a)
    G.pinned = G.pinned && G.pinned.regime === regime && !G.pinned.band ? null : { regime, band: null }
    G.light(G.pinned)
  }, true)

  // the chart: a curve's point or a band under the pointer (or a tap) lights its regime and word
  function bandAt(gd, x, y) {
    const shapes = gd.layout.shapes || []
    for (const path of gd.querySelectorAll(".shapelayer path[data-index]")) {
      const shape = shapes[+path.getAttribute("data-index")], band = shape && bandOf(shape.name)
      const r = path.getBoundingClientRect()
      if (band && x >= r.left && x <= r.right && y >= r.top && y <= r.bottom) return { regime: band[0], band: shape.name }
    }
    return null
  }
  function onCurve(gd, ev) {
    const e = ev.event  // over a band, the band wins (a curve near it is hovered at the same time)
    if (e && e.clientX !== undefined && bandAt(gd, e.clientX, e.clientY)) return null
    const pt = ev.points && ev.points[0], curve = pt && curveName(gd._fullData[pt.curveNumber].meta)
    if (!curve) return null
    for (const shape of gd.layout.shapes || []) {
      const band = bandOf(shape.name)
      if (band && band[1] === curve && shape.x0 <= pt.x && pt.x <= shape.x1) return { regime: band[0], band: shape.name }
    }
    return null
  }
  let fromChart = false
  function bind(gd) {
    if (gd.__glRegimes || typeof gd.on !== "function") return
    gd.__glRegimes = true
    gd.on("plotly_hover", ev => { const lit = onCurve(gd, ev); if (lit) { fromChart = true; G.light(lit) } })
    gd.on("plotly_unhover", () => { if (fromChart) { fromChart = false; G.light(G.pinned) } })
    // Plotly draws its shapes again after a relayout (a double tap resets the axes): light them again
    gd.on("plotly_afterplot", () => { if (G.current) G.light(G.current) })
    gd.on("plotly_click", ev => { const lit = onCurve(gd, ev); if (lit) { G.pinned = lit; G.light(lit) } })
    gd.addEventListener("pointermove", e => {
      const lit = bandAt(gd, e.clientX, e.clientY)
      if (lit) { fromChart = true; G.light(lit) } else if (fromChart) { fromChart = false; G.light(G.pinned) }
    })
    gd.addEventListener("pointerdown", e => {
      const lit = bandAt(gd, e.clientX, e.clientY)
      if (lit) { G.pinned = G.pinned && G.pinned.band === lit.band ? null : lit; G.light(G.pinned) }
    })
  }
  const scan = () => { const gd = chart(); if (gd) bind(gd) }
  new MutationObserver(scan).observe(document.body, { childList: true, subtree: true })
  scan()
}
"""

_LINKS = st.components.v2.component("gradlab_regime_links", html="<span></span>", js=_JS)


def _css() -> str:
    words = "".join(
        f'a[href="{REGIME_ANCHOR}{r}"] {{ color: inherit; text-decoration: underline {c} 3px;'
        f' text-underline-offset: 3px; border-radius: 3px; cursor: pointer; }}'
        f'a.{LIT_CLASS}[href="{REGIME_ANCHOR}{r}"] {{ background: color-mix(in srgb, {c} 35%, transparent); }}'
        for r, c in _COLOURS.items())
    return f"<style>.st-key-{REGIME_LINKS_KEY} {{ display: none !important; }} {words}</style>"


def regime_links(chart_key: str = MAIN_CHART_KEY) -> None:
    """Tie the page's regime words (:func:`regime_linked`) to the bands of the chart in the
    container keyed ``chart_key`` (see the module docstring). Call once per run, anywhere."""
    st.html(_css())
    _LINKS(key=REGIME_LINKS_KEY, data={"chart": chart_key, "anchor": REGIME_ANCHOR, "regimes": list(REGIMES),
                                       "colours": _COLOURS, "lit": LIT_CLASS, "stroke": STROKE_CLASS})
