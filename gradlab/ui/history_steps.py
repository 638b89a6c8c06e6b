"""Each change a visitor makes is its own browser-history entry, so Back undoes one change.

Streamlit writes a URL control's new value into the address bar with
``history.replaceState``: the URL is always the view, but the history holds one entry per
page, and Back after three changes left the site. A tiny custom component (Streamlit's
components v2: it runs in the page itself, no iframe) makes such a rewrite a
``pushState`` when the visitor has just changed something (a click, a key, a drag in the
last few seconds), and on Back (``popstate``) reloads the page, which opens the view the
older URL names. Rewrites the app makes on its own (a first run's corrections) stay
replacements. It draws nothing; without JavaScript the URL still holds the view.
"""

from __future__ import annotations

import streamlit as st

__all__ = ["history_steps", "HISTORY_KEY"]

HISTORY_KEY = "gl-history-steps"

_JS = """
export default function (component) {
  if (window.__glHistorySteps) return
  window.__glHistorySteps = true
  let touched = -1e9
  const mark = () => { touched = Date.now() }
  for (const kind of ["pointerdown", "keydown", "input", "change", "touchstart"]) {
    window.addEventListener(kind, mark, true)
  }
  const replace = history.replaceState.bind(history)
  history.replaceState = function (state, title, url) {
    if (url !== undefined && url !== null) {
      const next = new URL(url, location.href)
      const theirs = Date.now() - touched < 4000
      if (theirs && next.pathname === location.pathname && next.search !== location.search) {
        return history.pushState(state, title, url)
      }
    }
    return replace(state, title, url)
  }
  // Back or Forward within a page: open the view that URL names
  let here = location.pathname
  window.addEventListener("popstate", () => {
    if (location.pathname === here) location.reload()
    here = location.pathname
  })
  const pushed = history.pushState.bind(history)
  history.pushState = function (state, title, url) {
    const result = pushed(state, title, url)
    here = location.pathname
    return result
  }
}
"""

_STEPS = st.components.v2.component("gradlab_history_steps", html="<span></span>", js=_JS)


def history_steps() -> None:
    """Install the history-entry-per-change listener on this page (once per browser tab)."""
    st.html(f"<style>.st-key-{HISTORY_KEY} {{ display: none !important; }}</style>")
    _STEPS(key=HISTORY_KEY, data={})
