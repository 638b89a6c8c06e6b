"""Controls shared by several pages: dtypes, finite-difference schemes, step sizes.

All are URL-bound (see :mod:`gradlab.ui.bound_widgets`), so each needs a ``key`` that is
unique on its page; the defaults below suit a page with one of each.

The URL carries what the widget *shows*: dtype names (``float32``), scheme labels
(``Central``, ``Complex step``) and steps as ``1e-06``. Use :func:`scheme_param`
and :func:`eps_param` to write those values into a :class:`~gradlab.ui.navigation.PresetLink`.
"""

from __future__ import annotations

from collections.abc import Sequence

from gradlab.ui.bound_widgets import bound_multiselect, bound_select_slider, bound_selectbox

#: Same names and order as ``gradlab.numerics.dtypes.DTYPE_NAMES`` (a test checks it).
DTYPE_OPTIONS: tuple[str, ...] = ("float16", "bfloat16", "float32", "float64")

#: Same names and order as ``gradlab.numerics.schemes.SCHEME_NAMES``, with the labels users see.
SCHEME_LABELS: dict[str, str] = {
    "forward": "Forward",
    "backward": "Backward",
    "central": "Central",
    "five_point": "5-point",
    "complex_step": "Complex step",
    "richardson": "Richardson",
}
SCHEME_OPTIONS: tuple[str, ...] = tuple(SCHEME_LABELS)

_SCHEME_HELP = (
    "Forward/backward: error ~ h (one-sided). Central: ~ h². 5-point: ~ h⁴. "
    "Complex step: Im f(x+ih)/h, no cancellation, so h can be tiny; needs a "
    "holomorphic function. Richardson: extrapolates central differences."
)
_DTYPE_HELP = (
    "Machine epsilon: float16 9.8e-4, bfloat16 7.8e-3, float32 1.2e-7, float64 2.2e-16."
)


def scheme_label(name: str) -> str:
    """The label shown (and put in the URL) for a scheme name; unknown names pass through."""
    return SCHEME_LABELS.get(name, name)


def scheme_param(*names: str) -> tuple[str, ...]:
    """URL values for a scheme multiselect, e.g. ``{"schemes": scheme_param("central")}``."""
    return tuple(scheme_label(n) for n in names)


def format_eps(value: float) -> str:
    """A step as shown on the slider and in the URL: ``1e-06``, ``5e-03``."""
    return f"{value:.0e}"


def eps_param(value: float) -> str:
    """URL value for an :func:`eps_input` (same as :func:`format_eps`)."""
    return format_eps(value)


def eps_options(
    smallest: float = 1e-20, largest: float = 1.0, mantissas: Sequence[int] = (1,)
) -> tuple[float, ...]:
    """Steps on a log grid: ``m·10^k`` for each decade in range and each mantissa in ``mantissas``.

    Built from decimal strings so ``1e-06`` is exactly ``float("1e-06")``.
    """
    lo, hi = f"{smallest:.0e}", f"{largest:.0e}"
    k_lo, k_hi = int(lo.split("e")[1]), int(hi.split("e")[1])
    values = {
        float(f"{m}e{k}")
        for k in range(k_lo, k_hi + 1)
        for m in mantissas
    }
    return tuple(sorted(v for v in values if smallest <= v <= largest))


def _nearest(options: Sequence[float], value: float) -> float:
    return min(options, key=lambda o: abs(o - value) / o)


def dtype_multiselect(
    label: str = "dtypes",
    key: str = "dtypes",
    *,
    default: Sequence[str] = ("float32", "float64"),
    options: Sequence[str] = DTYPE_OPTIONS,
    **kwargs: object,
) -> tuple[str, ...]:
    """Pick dtypes to compare side by side; returns names such as ``("float32", "float64")``.

    May return an empty tuple when the user clears it: the page should say what to pick.
    """
    kwargs.setdefault("help", _DTYPE_HELP)
    return bound_multiselect(label, key, options, default=default, **kwargs)


def dtype_selectbox(
    label: str = "dtype",
    key: str = "dtype",
    *,
    default: str = "float32",
    options: Sequence[str] = DTYPE_OPTIONS,
    **kwargs: object,
) -> str:
    """Pick one dtype by name."""
    options = tuple(options)
    kwargs.setdefault("help", _DTYPE_HELP)
    return bound_selectbox(label, key, options, index=options.index(default), **kwargs)


def scheme_multiselect(
    label: str = "schemes",
    key: str = "schemes",
    *,
    default: Sequence[str] = ("forward", "central"),
    options: Sequence[str] = SCHEME_OPTIONS,
    **kwargs: object,
) -> tuple[str, ...]:
    """Pick finite-difference schemes; returns scheme *names* (``"five_point"``), shows labels."""
    kwargs.setdefault("help", _SCHEME_HELP)
    return bound_multiselect(
        label, key, options, default=default, format_func=scheme_label, **kwargs
    )


def eps_input(
    label: str = "step h",
    key: str = "eps",
    *,
    default: float = 1e-6,
    smallest: float = 1e-20,
    largest: float = 1.0,
    mantissas: Sequence[int] = (1,),
    **kwargs: object,
) -> float:
    """A step size on a log scale (a slider over ``m·10^k``); returns a float.

    ``default`` snaps to the nearest grid value. URL form: ``?eps=1e-06``.
    """
    options = eps_options(smallest, largest, mantissas)
    return bound_select_slider(
        label, key, options, value=_nearest(options, default),
        format_func=format_eps, **kwargs,
    )


def eps_range_input(
    label: str = "step range",
    key: str = "eps_range",
    *,
    default: tuple[float, float] = (1e-16, 1.0),
    smallest: float = 1e-20,
    largest: float = 1.0,
    **kwargs: object,
) -> tuple[float, float]:
    """A range of step sizes, one stop per decade; returns ``(low, high)``.

    URL form: ``?eps_range=1e-16&eps_range=1e+00``.
    """
    options = eps_options(smallest, largest)
    low, high = (_nearest(options, v) for v in default)
    chosen = bound_select_slider(
        label, key, options, value=(low, high), format_func=format_eps, **kwargs,
    )
    return (float(chosen[0]), float(chosen[1]))
