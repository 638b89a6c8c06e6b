"""The step a chart's own slider was released at, sent to the server once per release.

A chart with Plotly frames and a Plotly slider (:mod:`gradlab.labs.explorer.chart_slider`, the
Grid's :func:`gradlab.labs.grid.figures.grid_slider_figure`) animates in the browser: a drag
never reaches the server. To put the released step in the URL, a tiny custom component
(Streamlit's components v2: it runs in the page itself, no iframe) listens on the chart
for Plotly's ``plotly_sliderend`` event and sends the stop's value as a trigger; its
callback writes it into the step URL control before that control is drawn, so the
control, the URL and every number below the chart take it in one rerun. Nothing is sent
while the slider moves.

It draws nothing (its box is hidden); with JavaScript off the chart and its URL
control still work, the control alone then moving the step.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

__all__ = ["follow_chart_slider"]

_JS = """
export default function (component) {
  const { data, setTriggerValue } = component
  // One polling loop per chart, the newest call's: Streamlit calls this again on a rerun that
  // changes the data, and an older loop left running rewrote the mark with its stale value
  // every 400 ms (two loops fighting: a chart that never settles, a release compared with the
  // wrong step).
  const loops = (window.__glReleaseLoops = window.__glReleaseLoops || {})
  const mine = { value: data.value, setTriggerValue, stopped: false }
  if (loops[data.selector]) loops[data.selector].stopped = true
  loops[data.selector] = mine
  // Why polling: Streamlit draws the chart after this component may have run, and may
  // replace the chart's element on a later run; a hooked element is marked, so a release
  // is reported once, through the newest call's trigger.
  const hook = () => {
    if (mine.stopped) return
    const gd = document.querySelector(data.selector)
    if (gd && typeof gd.on === "function" && gd.dataset.glReleaseHooked !== "1") {
      gd.dataset.glReleaseHooked = "1"
      gd.on("plotly_sliderend", (event) => {
        const value = event && event.step ? event.step.value : null
        if (value !== null && value !== gd.dataset.glReleased) {
          gd.dataset.glReleased = value
          loops[data.selector].setTriggerValue("released", value)
        }
      })
    }
    // written only when it differs: a write is a DOM change (work for the page, and a chart
    // that never looks settled to anything watching it)
    if (gd && gd.dataset.glReleased !== mine.value) gd.dataset.glReleased = mine.value
    setTimeout(hook, 400)
  }
  hook()
  return () => { mine.stopped = true }
}
"""

_LISTENER = st.components.v2.component("gradlab_chart_slider_release", html="<span></span>", js=_JS)


def follow_chart_slider(chart_key: str, control_key: str, current: str, options: Sequence[float]) -> None:
    """Report the chart ``chart_key``'s slider releases into ``st.session_state[control_key]``.

    ``current`` is the stop the chart shows (its URL text, ``1e-04``); ``options`` are the
    control's values: a released stop that is not one of them is ignored. Call it before the
    control is drawn (the callback runs first in the next run, so the control takes the value).
    """
    key = f"{control_key}_released"

    def take() -> None:
        released = getattr(st.session_state.get(key), "released", None)
        try:
            value = float(released)
        except (TypeError, ValueError):
            return
        if value in options:
            st.session_state[control_key] = value

    # The listener draws nothing; the slider's stop labels (dozens, under the rail) would overlap:
    # the slider's current value above the rail names the stop that counts.
    st.html(f"<style>.st-key-{key} {{ display: none !important; }} "
            f".st-key-{chart_key} .slider-labels {{ display: none; }}</style>")
    _LISTENER(key=key, data={"selector": f".st-key-{chart_key} .js-plotly-plot", "value": current},
              on_released_change=take)
