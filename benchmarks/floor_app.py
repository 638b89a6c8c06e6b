"""The floor for bench_browser.py: the least a Streamlit page with one slider and one chart costs.

One slider and one Plotly chart of four 60-point lines in a ``gl-main-chart``
container, nothing else: no torch, no engine, no page chrome. Whatever this page
takes in Chromium is Streamlit's and Plotly's own time on this machine, a bound
no GradLab page can beat. Run by ``python -m benchmarks.bench_browser --floor``.
"""

import numpy as np
import plotly.graph_objects as go
import streamlit as st

st.set_page_config(page_title="floor", layout="wide")
decades = st.slider("decades", 4, 20, 12)
h = np.logspace(-decades, 0, 60)
fig = go.Figure([go.Scatter(x=h, y=h ** p + 1e-16 / h, name=f"p={p}") for p in (1, 2, 3, 4)])
fig.update_xaxes(type="log")
fig.update_yaxes(type="log")
st.container(key="gl-main-chart").plotly_chart(fig, width="stretch")
