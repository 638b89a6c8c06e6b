"""What a class of tabs sends: each page's shared links, the pages, the text a student types.

A student arrives at a page from one of its preset links (the preset registry,
``gradlab.teaching.presets``) or with no query at all; :func:`preset_coverage` says which
presets a class leaves out.

A *changing* class (``load_test.py --changing``) moves between a page's presets with one
control changed (:data:`CHANGED_CONTROL`): a new seed, x, shape or v, drawn afresh for each
move, so each move asks for a view no one has computed yet. :func:`changed_query` builds such
a link from a preset's values and ``url_query``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode


def page_links(page: str) -> list[str]:
    """Query strings a student may arrive with: the page's preset links, and none."""
    links = [""]
    try:
        from gradlab.teaching.presets import presets_for, url_query

        for preset in presets_for(page):
            links.append(urlencode(url_query(preset), doseq=True))
    except Exception:  # noqa: BLE001 - the registry is optional for the benchmark
        pass
    if page == "explorer":
        try:
            from gradlab.teaching.catalogue import CATALOGUE
            from gradlab.teaching.presets import url_values

            links += [urlencode(url_values("explorer", {"fn": k, "x": e.x}), doseq=True)
                      for k, e in CATALOGUE.items()]
        except Exception:  # noqa: BLE001
            pass
    return list(dict.fromkeys(links))


def preset_coverage(links: dict[str, list[str]]) -> list[str]:
    """``page/key`` of every preset in the registry whose link is not among ``links`` (url path ->
    the query strings a class opens it with): a preset of a page the class leaves out, or one whose
    page name is not a page's url path."""
    from gradlab.teaching.presets import PRESETS, url_query

    return [f"{p.page}/{p.key}" for p in PRESETS
            if urlencode(url_query(p), doseq=True) not in links.get(p.page, [])]


def text_choices() -> dict[str, list[str]]:
    """Values for text inputs, by query-parameter key (a student types a known function)."""
    try:
        from gradlab.teaching.catalogue import CATALOGUE

        expressions = sorted({e.expression for e in CATALOGUE.values()})
    except Exception:  # noqa: BLE001
        expressions = ["sin(x)", "exp(x)", "1/x", "x**3"]
    return {key: expressions for key in ("expression", "expr", "f", "function")}


def all_pages() -> list[str]:
    """Every page's url path ('' for the home page), for ``--page all``."""
    try:
        from gradlab.ui.navigation import PAGES

        paths = [spec.url_path for spec in PAGES]
    except Exception:  # noqa: BLE001
        paths = ["home", "explorer"]
    return ["" if path in ("home", "/") else path for path in paths]


#: page -> the one control a changing class moves (its widget key, a URL parameter).
CHANGED_CONTROL: dict[str, str] = {
    "gradcheck": "seed", "network": "seed", "roundoff": "seed",
    "explorer": "x", "grid": "x", "summed": "shape", "backward": "v",
}
SEED_RANGE = (0, 2**31 - 1)  # every page's seed number input
NEW_SEEDS = 1_000_000  # seeds a student types: small, and new each move (a cache hit is ~1e-6)


def _new_seed(old: int, rng: random.Random) -> int:
    while (seed := rng.randrange(1, NEW_SEEDS)) == old:
        pass
    return seed


def _new_x(old: float, rng: random.Random) -> float:
    """x moved by a factor of 0.5-2 (keeping its sign: a branch point's side, a reciprocal's
    x away from 0), or from 0 to within 0.5 of it; 6 digits, as a student types it."""
    from gradlab.limits import LIMITS  # the x inputs' range, +-literal_magnitude

    while True:
        x = float(f"{(old * rng.uniform(0.5, 2.0) if old else rng.uniform(-0.5, 0.5)):.6g}")
        if x not in (0.0, old) and math.isfinite(x) and abs(x) <= LIMITS.literal_magnitude:
            return x


def _new_shape(old: str, rng: random.Random) -> str:
    """Each dimension scaled by 0.75-1.25, within the summed lab's limit on terms."""
    from gradlab.labs.summed import MAX_TERMS

    dims = [int(d) for d in old.split("x")]
    while True:
        new = [max(1, round(d * rng.uniform(0.75, 1.25))) for d in dims]
        if new != dims and math.prod(new) <= MAX_TERMS:
            return "x".join(map(str, new))


def _vector_text(values: tuple[float, ...]) -> str:
    return ", ".join(f"{v:g}" for v in values)


def _new_vector(old: str, rng: random.Random) -> str:
    """As many entries as ``old`` (v weighs y's entries), each in [-2, 2] to 3 digits."""
    n = len(old.split(","))
    while (text := _vector_text(tuple(float(f"{rng.uniform(-2, 2):.3g}") for _ in range(n)))) == old:
        pass
    return text


_NEW_VALUE: dict[str, Callable[[Any, random.Random], Any]] = {
    "seed": _new_seed, "x": _new_x, "shape": _new_shape, "v": _new_vector}


def _page_default(page: str, key: str) -> Any:
    """The control's value when a preset leaves it out: the page's default."""
    if key == "seed":
        from gradlab.labs.roundoff.settings import RoundoffSettings

        return RoundoffSettings().seed if page == "roundoff" else 0  # Grad check's default: 0
    if key == "v":
        from gradlab.labs.backward.engine import VJPSettings

        return _vector_text(VJPSettings().v)
    raise KeyError(f"{page}/{key}: every preset sets it")


def changed_query(preset: Any, rng: random.Random) -> dict[str, str | list[str]]:
    """``url_query(preset)`` with its page's :data:`CHANGED_CONTROL` set to a new valid value.

    >>> from gradlab.teaching.presets import preset, url_query
    >>> p = preset("network", "float16")
    >>> q = changed_query(p, random.Random(0))
    >>> [key for key in q if q[key] != url_query(p)[key]]
    ['seed']
    """
    from gradlab.teaching.presets import url_query, url_values

    key, value = _changed(preset, rng)
    query = url_query(preset)
    query[key] = url_values(preset.page, {key: value})[key]
    return query


def _changed(preset: Any, rng: random.Random) -> tuple[str, Any]:
    """The page's changed control and a new value for it, away from the preset's."""
    key = CHANGED_CONTROL[preset.page]
    old = preset.values[key] if key in preset.values else _page_default(preset.page, key)
    return key, _NEW_VALUE[key](old, rng)


@dataclass(frozen=True)
class Step:
    """One move of a changing class's student in the tab they have open: click a preset's button
    (``button``: its widget key), then set the control ``control`` (a URL key) to ``value``."""

    button: str
    control: str
    value: Any


def changing_steps(page: str) -> Callable[[random.Random], Step] | None:
    """What a student of a changing class does next on ``page``, in the tab they have open: one of
    its presets at random, then one control changed (None: no presets or no such control).

    >>> step = changing_steps("roundoff")(random.Random(0))
    >>> step.button.startswith("preset_"), step.control
    (True, 'seed')
    """
    from gradlab.teaching.presets import presets_for

    presets = presets_for(page)
    if page not in CHANGED_CONTROL or not presets:
        return None

    def step(rng: random.Random) -> Step:
        preset = rng.choice(presets)
        return Step(f"preset_{preset.key}", *_changed(preset, rng))
    return step


def changing_moves(page: str) -> Callable[[random.Random], str] | None:
    """What a student of a changing class opens next on ``page``: one of its presets, at random,
    with one control changed (None: the page has no presets or no such control)."""
    from gradlab.teaching.presets import presets_for

    presets = presets_for(page)
    if page not in CHANGED_CONTROL or not presets:
        return None
    return lambda rng: urlencode(changed_query(rng.choice(presets), rng), doseq=True)
