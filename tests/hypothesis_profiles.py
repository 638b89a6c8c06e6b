"""Hypothesis settings for the engine's property tests (expression language and sweep).

The default ("gradlab-fast") keeps every property test to a second or two on a
2-core machine, so the whole engine suite stays well under 40 s. For a long
run before a release, or after touching ``gradlab/numerics/expressions.py``:

    HYPOTHESIS_PROFILE=long python -m pytest tests/test_expr.py -q

("long": ten times the examples, at least 1000 per property, no deadline;
about 35 s for test_expr.py's three properties on an idle 2-core machine.)

The profiles are applied per test with ``@engine_settings(...)`` rather than
``settings.load_profile`` so that this module never changes the settings of
tests it does not own (``tests/conftest.py`` belongs to the app's test suite).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

_COMMON = dict(
    # Locally every run explores new examples; CI replays a fixed sequence so a
    # red build is reproducible and not a coin toss.
    derandomize=bool(os.environ.get("CI")),
    suppress_health_check=(HealthCheck.too_slow, HealthCheck.filter_too_much),
    print_blob=True,
)

settings.register_profile("gradlab-fast", max_examples=100, deadline=None, **_COMMON)
settings.register_profile("long", max_examples=1000, deadline=None, **_COMMON)

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "gradlab-fast")
if PROFILE not in ("gradlab-fast", "long"):
    PROFILE = "gradlab-fast"


def engine_settings(max_examples: int | None = None, **overrides) -> settings:
    """The active profile, with a per-test example count for the fast profile.

    Under ``HYPOTHESIS_PROFILE=long`` the per-test count is multiplied by 10
    (at least 1000), so slow properties scale too.
    """
    base = settings.get_profile(PROFILE)
    if max_examples is not None:
        overrides["max_examples"] = max_examples if PROFILE != "long" else max(10 * max_examples, 1000)
    return settings(base, **overrides)
