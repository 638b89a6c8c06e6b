"""The only streamlit-aware code in GradLab: shared widgets, URL state, figures.

Page authors import from the submodules:

- :mod:`gradlab.ui.navigation`: the page list (no streamlit; presets: gradlab.teaching.presets)
- :mod:`gradlab.ui.presets`: preset buttons (on_click applies a preset; the URL then holds it)
- :mod:`gradlab.ui.page_chrome`: :func:`ensure_router`, what every page calls first
- :mod:`gradlab.ui.bound_widgets`: URL-bound widget wrappers (every control's value in the URL)
- :mod:`gradlab.ui.messages`: :func:`show_error`, a sentence for every failure, never a traceback
- :mod:`gradlab.ui.compat`: every private Streamlit internal GradLab relies on
- :mod:`gradlab.ui.runtime`: process-wide server settings, applied once from ``app.py``
- :mod:`gradlab.ui.controls`: shared dtype / scheme / step controls
- :mod:`gradlab.ui.figures`: :func:`show_figure`, the one way to show a Plotly figure
- :mod:`gradlab.ui.worker_calls`: :func:`heavy`, how a page runs a function of
  :mod:`gradlab.server.heavy_work` in a worker process, keyed by its session
"""
