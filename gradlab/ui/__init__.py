"""The only streamlit-aware code in GradLab: shared chrome, URL controls, how a page shows things.

Every page, in the order it uses them:

- :mod:`~gradlab.ui.page_chrome`: :func:`~gradlab.ui.page_chrome.start_page` and
  :func:`~gradlab.ui.page_chrome.finish_page`, what every page calls first and last; the
  title row, the answer's and the main chart's boxes
- :mod:`~gradlab.ui.url_widgets`: URL widget wrappers (every control's value in the URL);
  :mod:`~gradlab.ui.controls`: the dtype, scheme and step controls several pages share
- :mod:`~gradlab.ui.presets`: preset buttons (the presets themselves: :mod:`gradlab.teaching.presets`)
- :mod:`~gradlab.ui.cache_keys`: cheap cache keys for frozen settings, and the pages' size-limited caches
- :mod:`~gradlab.ui.worker_calls`: :func:`~gradlab.ui.worker_calls.heavy`, engine work in a worker
  process within its limit; :mod:`~gradlab.ui.visitor_turns`: script runs taken in turns per visitor
- :mod:`~gradlab.ui.views`: :func:`~gradlab.ui.views.lab_view`, a lab's view computed once per settings
  and shared, and :func:`~gradlab.ui.views.show_chart`, one of its charts
- :mod:`~gradlab.ui.messages`: :func:`~gradlab.ui.messages.show_answer`, the one way a page shows its
  answer, and errors as a sentence, never a traceback
- :mod:`~gradlab.ui.figures`: :func:`~gradlab.ui.figures.show_figure`, the one way to show a Plotly figure
- :mod:`~gradlab.ui.presentation`: presentation mode (``?present=1``); :mod:`~gradlab.ui.theme`: light
  and dark

What some pages add in the browser: :mod:`~gradlab.ui.term_links` (a term's definition on its
word), :mod:`~gradlab.ui.regime_links` (the answer's regimes tied to the chart),
:mod:`~gradlab.ui.slider_release` (a chart slider's step sent once per release),
:mod:`~gradlab.ui.history_steps` (Back undoes one change), :mod:`~gradlab.ui.bit_editor` (the
Grid's bits). One page's own: :mod:`~gradlab.ui.gradcheck_progress` (Grad check: a full check's
progress bar), :mod:`~gradlab.ui.backward_sections` (Backward).

Around the pages: :mod:`~gradlab.ui.navigation` (the page list), :mod:`~gradlab.ui.runtime`
(server settings, applied once from ``app.py``), :mod:`~gradlab.ui.compat` (every private
Streamlit internal GradLab relies on).
"""
