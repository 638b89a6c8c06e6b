"""The only streamlit-aware code in GradLab: shared widgets, URL state, figures.

Page authors import from the submodules:

- :mod:`gradlab.ui.navigation`: the page list (no streamlit; presets: gradlab.teaching.presets)
- :mod:`gradlab.ui.presets`: preset buttons (on_click applies a preset; the URL then holds it)
- :mod:`gradlab.ui.bound_widgets`: URL-bound widget wrappers, presets, error display
- :mod:`gradlab.ui.controls`: shared dtype / scheme / step controls
- :mod:`gradlab.ui.figures`: :func:`show_figure`, the one way to show a Plotly figure
"""
