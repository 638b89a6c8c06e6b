"""The one place that puts a Plotly figure on a page, so every chart behaves alike."""

from __future__ import annotations

import re
from typing import Any

import plotly.graph_objects as go
import streamlit as st

#: Modebar buttons that do nothing useful on GradLab's charts.
_REMOVED_BUTTONS = ("lasso2d", "select2d", "autoScale2d")


def _safe_filename(name: str) -> str:
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.")
    return stem or "gradlab-figure"


def figure_config(name: str) -> dict[str, Any]:
    """The Plotly config every GradLab chart uses; ``name`` names the PNG download."""
    return {
        "displaylogo": False,
        "toImageButtonOptions": {
            "format": "png",
            "filename": _safe_filename(name),
            "scale": 2,
        },
        "modeBarButtonsToRemove": list(_REMOVED_BUTTONS),
        "scrollZoom": False,
        "responsive": True,
    }


def show_figure(fig: go.Figure, name: str, key: str | None = None) -> None:
    """Display ``fig`` across the container's width with GradLab's chart config.

    ``name`` becomes the file name of the "download as PNG" button (made safe for a
    file system); ``key`` is needed only when two identical figures share a page.
    The chart uses ``theme="streamlit"`` so it follows the app's light/dark theme.
    """
    st.plotly_chart(
        fig,
        width="stretch",
        theme="streamlit",
        key=key,
        config=figure_config(name),
    )
