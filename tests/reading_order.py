"""A page's elements in the order a reader meets them, for AppTest: the first-screen tests of
the Grad check, Network and Backward pages read the answer box and the main chart from it."""

from __future__ import annotations

from gradlab.ui.page_chrome import ANSWER_KEY, MAIN_CHART_KEY

ANSWER, CHART = ANSWER_KEY, MAIN_CHART_KEY


def block_key(node) -> str | None:
    """The key of the answer box or the main chart (its proto id ends with '-<key>'), else None."""
    block_id = getattr(getattr(node, "proto", None), "id", "") or ""
    return next((k for k in (ANSWER, CHART) if block_id.endswith("-" + k)), None)


def reading_order(node, whole: tuple[str, ...] = ()) -> list:
    """Depth first, as a reader meets them: every leaf element as ``(type, element)``, the answer
    box and the main chart as one ``(key, box)`` item each, and any container whose type is in
    ``whole`` (e.g. ``"popover"``: closed until clicked) as one ``(type, container)`` item."""
    out = []
    for child in getattr(node, "children", {}).values():
        key = block_key(child)
        if key:
            out.append((key, child))
        elif child.type in whole:
            out.append((child.type, child))
        elif hasattr(child, "children"):
            out.extend(reading_order(child, whole))
        else:
            out.append((child.type, child))
    return out
