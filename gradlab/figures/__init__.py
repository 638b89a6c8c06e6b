"""Figures: pure functions from an engine result's tidy tables to Plotly figures (no streamlit)."""
