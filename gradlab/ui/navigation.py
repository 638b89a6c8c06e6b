"""The one list of GradLab's pages, and the registry of preset links.

``app.py`` builds ``st.navigation`` from :data:`PAGES`, the home page builds its
gallery from :data:`PAGES` and :data:`PRESET_LINKS`, and the tests parametrise
over :func:`available_pages`. A page appears only once its script exists, so the
app runs while pages are still being written.

This module imports no streamlit, so tests and the CLI can read it cheaply.

Page authors: add a :class:`PresetLink` to :data:`PRESET_LINKS` for every view
worth sharing. ``query_params`` are exactly what the page's URL carries: the
keys of its ``bind="query-params"`` widgets, with the values the widgets show
(for a widget with ``format_func`` the *formatted* label is what the URL holds;
use ``gradlab.ui.controls.scheme_param`` / ``eps_param`` for the shared widgets).
Leave out values equal to a widget's default: Streamlit drops them from the URL.
``tests/test_app_pages.py`` opens every link whose page exists and checks that
each parameter was accepted by a widget on that page (a wrong key or value fails).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

REPO_ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class PageSpec:
    """One page: its script (relative to the repo root), title, icon and URL."""

    path: str
    title: str
    icon: str
    url_path: str
    blurb: str = ""
    default: bool = False

    @property
    def exists(self) -> bool:
        return (REPO_ROOT / self.path).is_file()


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
        "pages/gradcheck.py", "Grad check", ":material/fact_check:", "gradcheck",
        "A finite-difference gradient check on a real tensor and loss, "
        "with a diagnosis of why it passes or fails.",
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


def available_pages() -> tuple[PageSpec, ...]:
    """The pages whose script exists on disk, in :data:`PAGES` order."""
    return tuple(spec for spec in PAGES if spec.exists)


def page_by_url(url_path: str) -> PageSpec | None:
    """The page with this ``url_path``, or None if there is none."""
    for spec in PAGES:
        if spec.url_path == url_path:
            return spec
    return None


@dataclass(frozen=True)
class PresetLink:
    """A card in the home page's gallery: a question and the view that answers it."""

    url_path: str
    title: str
    question: str
    query_params: Mapping[str, str | tuple[str, ...]] = field(default_factory=dict)
    note: str = ""  # one sentence under the question; the page's blurb when empty

    def __post_init__(self) -> None:
        if page_by_url(self.url_path) is None:
            raise ValueError(
                f"Preset {self.title!r} points at page {self.url_path!r}, which is not "
                "in gradlab.ui.navigation.PAGES; use one of its url_path values."
            )
        object.__setattr__(self, "query_params", MappingProxyType(dict(self.query_params)))

    @property
    def description(self) -> str:
        return self.note or self.page.blurb

    @property
    def page(self) -> PageSpec:
        spec = page_by_url(self.url_path)
        assert spec is not None  # checked in __post_init__
        return spec

    def as_query_params(self) -> dict[str, str | list[str]]:
        """Plain values for ``st.page_link(query_params=...)``."""
        return {
            k: (list(v) if isinstance(v, tuple | list) else str(v))
            for k, v in self.query_params.items()
        }


# The seed questions first (../shared/seeds/), then Explorer classics.
# Page authors: give each seed card the query parameters that open your page on
# the seed's exact view (empty means the page's default view).
PRESET_LINKS: tuple[PresetLink, ...] = (
    PresetLink(
        "roundoff", "1/x: autograd vs −1/x²",
        "Why does autograd's 1/x gradient differ from −1/x²?",
        {"preset": "reciprocal"},
    ),
    PresetLink(
        "gradcheck", "A float32 grad check that fails",
        "Why does my float32 grad check fail?",
        {"preset": "seed001"},
    ),
    PresetLink(
        "network", "scipy's derivative vs autograd",
        "Why does scipy's derivative disagree with autograd?",
        {"preset": "scipy_dx_1e-6"},
    ),
    PresetLink(
        "backward", "backward(gradient=v)",
        "What is the gradient argument of backward()?",
        {"preset": "vjp"},
    ),
    PresetLink(
        "explorer", "The V-shaped error curve",
        "Which step size gives the most accurate finite difference?",
        {"dtypes": ("float32",), "schemes": ("Central",)},
        "Truncation falls with h, round-off grows as 1/h; the best step sits "
        "where they cross, and it depends on the dtype.",
    ),
    PresetLink(
        "explorer", "Complex step",
        "How can a step of 1e-200 give a derivative exact to the last bit?",
        {"dtypes": ("float64",), "schemes": ("Central", "Complex step")},
        "Im f(x+ih)/h subtracts nothing, so there is no cancellation to amplify "
        "round-off; it needs a holomorphic function.",
    ),
    PresetLink(
        "explorer", "float16 to float64",
        "How much does the dtype matter for a finite difference?",
        {"dtypes": ("float16", "bfloat16", "float32", "float64"), "schemes": ("Central",)},
        "The same central difference in four dtypes: the best step moves with "
        "the cube root of machine epsilon.",
    ),
    # Explorer presets (same values as its buttons: gradlab.teaching.explorer_controls.PRESETS;
    # tests/test_page_explorer.py checks they agree).
    PresetLink(
        "explorer", "1/x in float32 (seed 000)",
        "How close does float32 get to the derivative of 1/x?",
        {"fn": "1/x", "x": "0.3", "dtypes": ("float32",),
         "schemes": ("Forward", "Central", "5-point"), "eps_range": ("1e-12", "1e+00")},
        "Autograd is within an ulp or two of the exact value; the best finite "
        "difference is thousands of times worse.",
    ),
    PresetLink(
        "explorer", "sqrt(x) near 0",
        "What happens to the best step near a branch point?",
        {"fn": "sqrt(x) near 0", "x": "0.0001", "eps_range": ("1e-16", "1e+00")},
        "Higher derivatives blow up: the best step shrinks, and steps larger "
        "than x leave the domain.",
    ),
    PresetLink(
        "explorer", "abs(x) at the kink",
        "What does a finite difference return where there is no derivative?",
        {"fn": "abs(x) at a kink", "x": "0.0",
         "schemes": ("Forward", "Backward", "Central"), "eps_range": ("1e-16", "1e+00")},
        "One-sided differences give ±1, central 0, autograd 0: none of them is 'the' derivative.",
    ),
)


def presets_for(url_path: str) -> tuple[PresetLink, ...]:
    """The preset links that open the page with this ``url_path``."""
    return tuple(p for p in PRESET_LINKS if p.url_path == url_path)
