"""Controls shared by several pages: dtypes, finite-difference schemes, step sizes.

All are URL widgets (see :mod:`gradlab.ui.url_widgets`), so each needs a ``key`` that is
unique on its page; the defaults below suit a page with one of each.

Options, labels and help text come from the rows of
:data:`gradlab.numerics.dtypes.DTYPES` and :data:`gradlab.numerics.schemes.SCHEMES`,
read when a widget is drawn: a new row is a new option, with nothing to add here.

The URL carries what the widget *shows*: dtype labels (``float32``), scheme short
labels (``Central``, ``Complex step``) and steps as ``1e-06``. Use :func:`scheme_param`
and :func:`eps_param` to write those values into a :class:`~gradlab.ui.navigation.PresetLink`.
"""

from __future__ import annotations

from collections.abc import Sequence

from gradlab.numerics.dtypes import DTYPE_NAMES, DTYPE_TABLE, DTYPES
from gradlab.numerics.schemes import SCHEME_NAMES, SCHEMES
from gradlab.ui.url_widgets import url_multiselect, url_select_slider, url_selectbox

#: Every dtype, in the table's order (for pages that pass the options themselves).
DTYPE_OPTIONS: tuple[str, ...] = DTYPE_NAMES
#: Every scheme name, in the table's order; the widgets show :func:`scheme_label`.
SCHEME_OPTIONS: tuple[str, ...] = SCHEME_NAMES


def dtype_label(name: str) -> str:
    """The label shown (and put in the URL) for a dtype name; unknown names pass through.

    >>> dtype_label("bfloat16"), dtype_label("float8_e5m2")
    ('bfloat16', 'float8_e5m2 (emulated)')
    """
    row = DTYPE_TABLE.get(name)
    return row.label if row is not None else name


def scheme_label(name: str) -> str:
    """The label shown (and put in the URL) for a scheme name; unknown names pass through.

    >>> scheme_label("five_point"), scheme_label("complex_step")
    ('5-point', 'Complex step')
    """
    row = SCHEMES.get(name)
    return row.short_label if row is not None else name


def scheme_param(*names: str) -> tuple[str, ...]:
    """URL values for a scheme multiselect, e.g. ``{"schemes": scheme_param("central")}``."""
    return tuple(scheme_label(n) for n in names)


def dtype_help() -> str:
    """The dtype widgets' help: each dtype's machine epsilon, from the table.

    >>> dtype_help()
    'Machine epsilon: float16 9.8e-4, bfloat16 7.8e-3, float32 1.2e-7, float64 2.2e-16.'
    """
    return "Machine epsilon: " + ", ".join(f"{r.label} {_short_e(r.eps)}" for r in DTYPES.values()) + "."


def scheme_help() -> str:
    """The scheme widget's help: one line per scheme, from the table."""
    return "  \n".join(f"{s.short_label} — {s.help}" for s in SCHEMES.values())


def _short_e(value: float) -> str:
    """``9.8e-4`` rather than ``9.8e-04``."""
    mantissa, exponent = f"{value:.1e}".split("e")
    return f"{mantissa}e{int(exponent)}"


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
    options: Sequence[str] | None = None,
    **kwargs: object,
) -> tuple[str, ...]:
    """Pick dtypes to compare side by side; returns names such as ``("float32", "float64")``.

    ``options`` defaults to every row of the dtype table. May return an empty tuple
    when the user clears it: the page should say what to pick.
    """
    kwargs.setdefault("help", dtype_help())
    options = tuple(DTYPES) if options is None else tuple(options)
    return url_multiselect(label, key, options, default=default, format_func=dtype_label, **kwargs)


def dtype_selectbox(
    label: str = "dtype",
    key: str = "dtype",
    *,
    default: str = "float32",
    options: Sequence[str] | None = None,
    **kwargs: object,
) -> str:
    """Pick one dtype by name (``options`` defaults to every row of the dtype table)."""
    options = tuple(DTYPES) if options is None else tuple(options)
    kwargs.setdefault("help", dtype_help())
    return url_selectbox(label, key, options, index=options.index(default), format_func=dtype_label,
                           **kwargs)


def scheme_multiselect(
    label: str = "schemes",
    key: str = "schemes",
    *,
    default: Sequence[str] = ("forward", "central"),
    options: Sequence[str] | None = None,
    **kwargs: object,
) -> tuple[str, ...]:
    """Pick finite-difference schemes; returns scheme *names* (``"five_point"``), shows short labels.

    ``options`` defaults to every row of the scheme table.
    """
    kwargs.setdefault("help", scheme_help())
    options = tuple(SCHEMES) if options is None else tuple(options)
    return url_multiselect(
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
    return url_select_slider(
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
    chosen = url_select_slider(
        label, key, options, value=(low, high), format_func=format_eps, **kwargs,
    )
    return (float(chosen[0]), float(chosen[1]))
