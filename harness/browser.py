"""Chromium as the browser tests and the browser benchmarks drive it (Playwright, Debian's Chromium).

Where the browser is, the flags it runs with in a container, and how to tell that a
Streamlit page has connected and finished its script run.
"""

from __future__ import annotations

import os

CHROMIUM = os.environ.get("GRADLAB_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)
#: The app root once its websocket is up.
CONNECTED = "[data-testid='stApp'][data-test-connection-state='CONNECTED']"
#: Streamlit 1.67 marks the app root with the state of the script run:
#: "initial" before the first run, "running" during one, "notRunning" after.
SCRIPT_FINISHED = "[data-testid='stApp'][data-test-script-state='notRunning']"


def wait_for_app(page, timeout: float = 30_000) -> None:
    """Wait until the app is connected and its script run has finished (a sync Playwright page)."""
    page.wait_for_selector(CONNECTED, timeout=timeout)
    page.wait_for_selector(SCRIPT_FINISHED, timeout=timeout)
    # Let a rerun triggered by the first render (e.g. URL corrections) settle too.
    page.wait_for_timeout(300)
    page.wait_for_selector(SCRIPT_FINISHED, timeout=timeout)
