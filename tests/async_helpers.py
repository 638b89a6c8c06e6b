"""Running a coroutine from a test, whatever else runs in this process.

The browser tests' Playwright keeps an event loop running in the main thread for the
rest of the session, where ``asyncio.run()`` refuses to start: a coroutine runs in a
thread of its own instead.
"""

import asyncio
from concurrent.futures import ThreadPoolExecutor


def run_async(coro):
    """``asyncio.run(coro)`` in a fresh thread; its result (or exception)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()
