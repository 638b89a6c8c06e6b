"""Every preset's view computed when the server starts, so the first visitor to open one waits for nothing.

A teacher projects GradLab and a class clicks the presets: :func:`start_warming` starts one
background thread per server process that computes the views of every page's first screen (each
lab's ``preset_views({})``) and of every preset (``preset_views(preset.values)``: exactly the
:func:`~gradlab.ui.views.lab_view` calls its page makes when its widgets hold the preset's values)
into lab_view's own cache (:func:`~gradlab.ui.views.warm_view`), one after another, then logs
``warmed N preset views in S s``. Every few minutes it looks again and recomputes what the cache
dropped (its time limit, or the release of the caches once no tab is connected,
:mod:`gradlab.ui.runtime`): a hit costs microseconds.

Outside a script run a view's call has no session, so nothing cancels it (it runs to its
limit), and no visitor: the pool counts each call as a visitor of its own, so a visitor's
request goes ahead of it in a busy lane (:mod:`gradlab.server.lanes`), and one call at a time
leaves the other workers to visitors. A failure is logged and skipped: only a colder start.

``serve.py`` starts it from its ``st.App`` lifespan, as the server starts; ``app.py`` on its
first script run (``streamlit run app.py`` has no start-up hook); the second call does nothing.
``GRADLAB_WARM_PRESETS=0`` turns it off (the tests' servers and AppTests: their CPU is measured).

>>> warming_enabled({}), warming_enabled({"GRADLAB_WARM_PRESETS": "0"})
(True, False)
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

__all__ = ["ENV_VARIABLE", "RECHECK_SECONDS", "warming_enabled", "warm_calls", "warm_all", "start_warming"]

_LOG = logging.getLogger(__name__)

#: Set to ``0`` (or ``false``, ``no``, ``off``) to start no warm-up thread.
ENV_VARIABLE = "GRADLAB_WARM_PRESETS"
#: How often the thread looks again for views the cache dropped.
RECHECK_SECONDS = 300.0

_lock = threading.Lock()
_thread: threading.Thread | None = None


def warming_enabled(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether :func:`start_warming` starts its thread (on unless ``GRADLAB_WARM_PRESETS`` says off).

    >>> warming_enabled({"GRADLAB_WARM_PRESETS": "off"})
    False
    """
    return environ.get(ENV_VARIABLE, "1").strip().lower() not in ("0", "false", "no", "off")


def _preset_views() -> dict[str, Callable[[Mapping[str, Any]], tuple]]:
    """Each page (by url_path) whose lab (``gradlab.labs.<url_path>``) has ``preset_views`` -> it,
    the presets' pages first in the registry's order, then the others of the navigation; imported
    here, in the thread, not by ``serve.py`` while the server starts."""
    from gradlab.teaching.presets import PRESETS
    from gradlab.ui.navigation import PAGES

    found = {}
    for page in dict.fromkeys([p.page for p in PRESETS] + [spec.url_path for spec in PAGES]):
        name = f"gradlab.labs.{page}"
        try:
            lab = importlib.import_module(name)
        except ModuleNotFoundError as err:
            if err.name != name:  # a lab that fails to import is an error, not a page without a lab
                raise
            continue
        if hasattr(lab, "preset_views"):
            found[page] = lab.preset_views
    return found


def warm_calls() -> Iterator[tuple[str, Callable, Any]]:
    """``(what, view function, settings)`` of every page's first screen, then of every preset, in
    the table's order, each view once; a preset whose settings fail is logged and left out.

    >>> calls = list(warm_calls())
    >>> calls[0][0], calls[0][1].__qualname__
    ('roundoff first screen', 'view')
    >>> [what for what, _, _ in calls if what.startswith("gradcheck wrong_layer")]  # a layer view each
    ['gradcheck wrong_layer', 'gradcheck wrong_layer_float64']
    """
    from gradlab.teaching.presets import PRESETS
    from gradlab.ui.views import view_key

    views = _preset_views()
    wanted = [(f"{page} first screen", page, {}) for page in views]
    wanted += [(f"{p.page} {p.key}", p.page, p.values) for p in PRESETS]
    seen = set()
    for what, page, values in wanted:
        try:
            calls = views[page](values)
        except Exception as err:  # noqa: BLE001 - a colder start, never a failed one
            _LOG.warning("warming %s: its settings failed (%s)", what, err)
            continue
        for view_of, settings in calls:
            if (key := view_key(view_of, settings)) not in seen:
                seen.add(key)
                yield what, view_of, settings


def warm_all() -> int:
    """Every view of :func:`warm_calls` in :func:`~gradlab.ui.views.lab_view`'s cache, one after
    another; how many were computed (not found cached). A failure is logged, never raised."""
    from gradlab.errors import GradLabError
    from gradlab.ui.views import warm_view

    computed = 0
    for what, view_of, settings in warm_calls():
        try:
            computed += warm_view(view_of, settings)
        except GradLabError as err:  # a limit on this machine, say: that visitor will read it too
            _LOG.warning("warming %s failed: %s", what, err)
        except Exception:  # noqa: BLE001 - a colder start, never a failed one
            _LOG.warning("warming %s failed", what, exc_info=True)
    return computed


def _keep_warm() -> None:
    first = True
    while True:
        start = time.monotonic()
        computed = warm_all()
        if first or computed:
            _LOG.info("warmed %d preset views in %.1f s", computed, time.monotonic() - start)
        first = False
        time.sleep(RECHECK_SECONDS)


def _say_info() -> None:
    """INFO lines reach the server's log: Streamlit configures only its own loggers."""
    if _LOG.getEffectiveLevel() > logging.INFO:
        _LOG.setLevel(logging.INFO)
    if not _LOG.handlers and not logging.getLogger().handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        _LOG.addHandler(handler)


def start_warming(environ: Mapping[str, str] = os.environ) -> threading.Thread | None:
    """Start the warm-up thread, once per process (a daemon: it never delays the server's exit);
    the thread, or None when ``GRADLAB_WARM_PRESETS`` turns it off.

    >>> start_warming({"GRADLAB_WARM_PRESETS": "0"}) is None
    True
    """
    global _thread
    if not warming_enabled(environ):
        return None
    with _lock:
        if _thread is None:
            _say_info()
            _thread = threading.Thread(target=_keep_warm, name="gradlab-warm-presets", daemon=True)
            _thread.start()
        return _thread
