"""The one list of GradLab's pages.

``app.py`` builds ``st.navigation`` from :data:`PAGES`, the home page lists them,
and the tests open each one. The views worth sharing (the home gallery's cards,
the pages' preset buttons) are in :mod:`gradlab.teaching.presets`, keyed by a
page's ``url_path``.

This module imports no streamlit, so tests and the CLI can read it cheaply.

>>> page_by_url("gradcheck").title
'Grad check'
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PageSpec:
    """One page: its script (relative to the repo root), title, icon and URL."""

    path: str
    title: str
    icon: str
    url_path: str
    blurb: str = ""
    default: bool = False


PAGES: tuple[PageSpec, ...] = (
    PageSpec(
        "pages/home.py", "Home", ":material/home:", "home",
        "What GradLab shows, and a gallery of questions to start from.",
        default=True,
    ),
    PageSpec(
        "pages/explorer.py", "Explorer", ":material/query_stats:", "explorer",
        "Error against step size for any function, scheme and dtype: "
        "truncation on the right, round-off on the left, the best step marked.",
    ),
    PageSpec(
        "pages/grid.py", "Representable grid", ":material/grid_on:", "grid",
        "Why (x+h) − x is not h: x, x+h, f(x) and f(x+h) on the dtype's grid, the bits a "
        "subtraction keeps, and the few slopes a secant can take.",
    ),
    PageSpec(
        "pages/gradcheck.py", "Grad check", ":material/fact_check:", "gradcheck",
        "A finite-difference gradient check on a real tensor and loss, "
        "with a diagnosis of why it passes or fails.",
    ),
    PageSpec(
        "pages/summed.py", "Summed loss", ":material/functions:", "summed",
        "What a float32 check of a summed loss can print: multiples of ulp(L)/h; and the loss "
        "summed five ways against its exact sum.",
    ),
    PageSpec(
        "pages/roundoff.py", "Round-off lab", ":material/blur_on:", "roundoff",
        "Two formulas for the same derivative, an ulp apart: which one is closer "
        "to the exact value, point by point.",
    ),
    PageSpec(
        "pages/network.py", "Network input gradients", ":material/hub:", "network",
        "Autograd against a finite difference of a small network's output "
        "with respect to its input, and why the difference is quantised.",
    ),
    PageSpec(
        "pages/backward.py", "Backward's gradient argument", ":material/undo:", "backward",
        "Vector–Jacobian products, accumulation of .grad, retain_graph and zeroing.",
    ),
)


def page_by_url(url_path: str) -> PageSpec | None:
    """The page with this ``url_path``, or None if there is none."""
    for spec in PAGES:
        if spec.url_path == url_path:
            return spec
    return None
