"""The only streamlit-aware code in GradLab: shared widgets, URL state, figures.

Page authors import from the submodules:

- :mod:`gradlab.ui.pages`: the page list and the preset-link registry (no streamlit)
- :mod:`gradlab.ui.state`: URL-bound widget wrappers, presets, error display
- :mod:`gradlab.ui.widgets`: shared dtype / scheme / step controls
- :mod:`gradlab.ui.figures`: :func:`show_figure`, the one way to show a Plotly figure
"""
