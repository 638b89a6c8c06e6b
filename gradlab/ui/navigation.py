"""The one list of GradLab's pages.

``app.py`` builds ``st.navigation`` from :data:`PAGES` (:func:`st_page_arguments`),
the home page lists them, and the tests open each one. The views worth sharing (the
home gallery's cards, the pages' preset buttons) are in :mod:`gradlab.teaching.presets`,
keyed by a page's ``url_path``.

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


def st_page_arguments() -> list[dict]:
    """The keyword arguments of each ``st.Page`` that ``app.py`` gives ``st.navigation``.

    One per page, and for the default page a second, hidden one at its own path: Streamlit
    serves the default page at the root only, so a link to ``/home`` answered "Page not
    found". The default page still reserves the path it declares, so it declares ``""``
    and the hidden page takes ``home``; both run ``pages/home.py``.

    >>> [(a["url_path"], a.get("visibility", "visible")) for a in st_page_arguments()][:3]
    [('', 'visible'), ('home', 'hidden'), ('explorer', 'visible')]
    """
    arguments = []
    for spec in PAGES:
        common = {"page": spec.path, "title": spec.title, "icon": spec.icon}
        if spec.default:
            arguments += [{**common, "url_path": "", "default": True},
                          {**common, "url_path": spec.url_path, "visibility": "hidden"}]
        else:
            arguments.append({**common, "url_path": spec.url_path})
    return arguments
