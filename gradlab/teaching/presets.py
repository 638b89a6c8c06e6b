"""Every preset of every page, in one table: the home gallery, the pages' buttons and the tests read it.

A :class:`Preset` is a view worth sharing: the page it opens, a key (for button
keys and test ids, never shown and never in a URL), the words a visitor sees
(label, the question it answers, a note) and ``values``: widget key -> value as
``st.session_state`` holds it (scheme *names*, floats, tuples for multiselects
and ranges).

:func:`url_query` turns a preset into the query parameters that open the page on
that view, in the form the URL carries (what the widget *shows*: ``Central``,
``1e-06``, ``1/x``). Every value the preset sets is written, also those equal to a
widget's default, so a link keeps its meaning if a default changes; Streamlit
drops the default-valued ones from the address bar by itself.

No streamlit here. To add a preset, add a row to :data:`PRESETS`; if it sets a
widget whose URL form differs from ``str(value)``, add the widget to
:data:`_URL_FORMATS`. ``tests/test_app_pages.py`` opens every preset's URL and
checks that each widget took the preset's value.

>>> p = preset("explorer", "reciprocal")
>>> url_query(p)["schemes"]
['Forward', 'Central', '5-point']
>>> [q.key for q in gallery()][:4]
['reciprocal_formulas', 'float32_check_fails', 'scipy_derivative', 'gradient_argument']
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from gradlab.labs.backward.engine import MATRIX_EXAMPLES, VJPSettings
from gradlab.labs.network.engine import QUESTION_SEED, NetworkSettings
from gradlab.labs.roundoff.engine import COMPARISONS
from gradlab.numerics.dtypes import facts
from gradlab.numerics.schemes import get_scheme
from gradlab.teaching.catalogue import function_label

__all__ = ["Preset", "PRESETS", "presets_for", "preset", "gallery", "url_query", "url_values"]


@dataclass(frozen=True)
class Preset:
    """One shareable view of one page (see the module docstring)."""

    page: str  # the page's url_path, as in gradlab.ui.navigation.PAGES
    key: str
    label: str
    question: str
    values: Mapping[str, Any]
    note: str = ""
    gallery: bool = False  # a card on the home page

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", MappingProxyType(dict(self.values)))


def _scheme_text(name: str) -> str:
    """A scheme as the scheme widgets show it (``Central``, ``5-point``)."""
    return get_scheme(name).short_label  # what the widget shows and the URL carries


def _dtype_text(name: str) -> str:
    """A dtype as the dtype widgets show it: its row's label (``float8_e5m2 (emulated)``)."""
    return facts(name).label


def _step_text(value: float) -> str:
    """A step as the step sliders show it (same as gradlab.ui.controls.format_eps)."""
    return f"{value:.0e}"


#: page -> widget key -> how one value of that widget reads in the URL (its format_func).
_URL_FORMATS: Mapping[str, Mapping[str, Callable[[Any], str]]] = {
    "explorer": {"fn": function_label, "schemes": _scheme_text, "dtypes": _dtype_text,
                 "eps_range": _step_text},
    "gradcheck": {"scheme": _scheme_text},
    "network": {"dx": _step_text, "range": _step_text},
    "backward": {"mx": lambda name: MATRIX_EXAMPLES[name].title},
    "grid": {"fn": function_label, "h": _step_text, "dtype": lambda name: facts(name).label},
    "summed": {"h": _step_text},
}


def _plain_text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def url_values(page: str, values: Mapping[str, Any]) -> dict[str, str | list[str]]:
    """Widget ``values`` of ``page`` in URL form (a list for a multiselect or a range).

    >>> url_values("network", {"dtype": "float16", "dx": 1e-3, "range": (1e-6, 1.0)})
    {'dtype': 'float16', 'dx': '1e-03', 'range': ['1e-06', '1e+00']}
    """
    formats = _URL_FORMATS.get(page, {})
    query: dict[str, str | list[str]] = {}
    for key, value in values.items():
        text = formats.get(key, _plain_text)
        query[key] = [text(v) for v in value] if isinstance(value, tuple | list) else text(value)
    return query


def url_query(p: Preset) -> dict[str, str | list[str]]:
    """The query parameters that open ``p.page`` on this preset's view.

    >>> url_query(preset("gradcheck", "float64_check"))["dtype"]
    'float64'
    """
    return url_values(p.page, p.values)


# ------------------------------------------------------------------- the table


def _vector_text(values: tuple[float, ...]) -> str:
    """A vector as the Backward page's text inputs show it: ``1, 2, 3``."""
    return ", ".join(f"{v:g}" for v in values)


def _comparison(name: str) -> dict[str, Any]:
    """The Round-off page's widget values for one of the engine's ready-made comparisons."""
    s = COMPARISONS[name].settings
    return {"a": s.formula_a, "b": s.formula_b, "dtype": s.dtype, "dist": s.distribution,
            "low": s.low, "high": s.high}


_FLOAT32_CHECK = {"check": "a function", "model": "affine", "shape": "140x120", "loss": "mse", "reduction": "sum",
                  "dtype": "float32", "scheme": "forward", "eps": "1e-03", "mode": "sampled",
                  "samples": 5, "seed": 0, "numeric64": False}
_WRONG_LAYER = {"check": "a model, layer by layer",
                "stack": "linear:16, tanh, layernorm, wrong_swish, linear:8, linear:1", "input": "4x8",
                "dtype": "float32", "mode": "blocks", "seed": 0, "calls": "first"}
_BLOCK = {**_WRONG_LAYER, "stack": "layernorm, attention:2, layernorm, linear:32, gelu, linear:16",
          "input": "2x6x16", "dtype": "float16"}
_NET = NetworkSettings()
# The question's network: QUESTION_SEED and input index 3 give its two numbers to the digit.
_NETWORK = {"dtype": "float32", "act": "tanh", "hidden": "32, 32", "inputs": _NET.input_size,
            "seed": QUESTION_SEED, "idx": 3, "dx": 1e-6, "range": (_NET.step_min, _NET.step_max)}
_VJP = VJPSettings()
_EXPLORER = {"fn": "complex_step_classic", "x": 1.5, "dtypes": ("float32", "float64"),
             "schemes": ("forward", "central", "complex_step"), "eps_auto": False,
             "eps_range": (1e-20, 1.0)}
_SUMMED = {"shape": "140x120", "dtype": "float32", "reduction": "sum", "h": 1e-3}
_FITTED = {"eps_auto": True}  # steps chosen per dtype so the V fills the chart (gradlab.step_sweep.step_range)
_GRID = {"fn": "sin", "x": 1.0, "dtype": "float32"}  # the Grid page: sin(x) at 1, the catalogue's entry

PRESETS: tuple[Preset, ...] = (
    # Round-off lab: the values come from the engine's table of comparisons.
    Preset("roundoff", "reciprocal_formulas", "1/x: autograd vs −1/x²",
           "Why does autograd's 1/x gradient differ from −1/x²?", _comparison("reciprocal"),
           "In float32 they differ by an ulp at many x, and neither is always the closer.",
           gallery=True),
    Preset("roundoff", "same_operations", "−(1/x)·(1/x)",
           "What does autograd actually compute for 1/x?", _comparison("reciprocal_product"),
           "The same operations in the same order round the same way: equal bit for bit."),
    Preset("roundoff", "float64_formulas", "In float64",
           "Does float64 make the two formulas agree?", _comparison("reciprocal_float64"),
           "The same effect, 2²⁹ times smaller."),
    Preset("roundoff", "log1p", "log1p(x)",
           "Why does numpy have log1p?", _comparison("log1p"),
           "1+x rounds away most digits of a small x before the log sees it."),
    Preset("roundoff", "one_minus_cos", "1−cos(x)",
           "How can a formula lose every digit?", _comparison("one_minus_cos"),
           "1 - cos(x) cancels; the half-angle form has nothing to cancel."),
    Preset("roundoff", "decimal", "x/100×100",
           "Why does 29/100×100 give 28.999999999999996?", _comparison("decimal"),
           "Written with numbers only, the expression is a constant that GradLab folds "
           "exactly when parsing, so type it with x."),
    # Grad check.
    Preset("gradcheck", "float32_check_fails",
           "float32 at eps=1e-3: a hand-written check fails, the gradient is right",
           "Why does my float32 grad check fail?", _FLOAT32_CHECK,
           "(x+1)/2 with MSELoss(reduction='sum') on 140×120 inputs, forward difference, "
           "eps 1e-3, 5 sampled elements.", gallery=True),
    Preset("gradcheck", "float64_check", "Same in float64",
           "Does the same check pass in float64?", {**_FLOAT32_CHECK, "dtype": "float64"},
           "The same check in float64: round-off is gone and the ratios agree to 3–4 digits (the "
           "question's run printed 0.9993–1.0004); the rest is the forward difference's truncation "
           "h·f″/2, over rtol 1e-5."),
    Preset("gradcheck", "per_element", "Same, reduction none",
           "Does checking one output element at a time help?",
           {**_FLOAT32_CHECK, "reduction": "none"},
           "float32 again, but each difference is taken of one output element instead of "
           "the summed loss."),
    Preset("gradcheck", "float64_differences", "Same, differences in float64",
           "Does it help to take only the finite differences in float64?",
           {**_FLOAT32_CHECK, "numeric64": True},
           "autograd stays in float32; the finite differences run in float64."),
    # Grad check, a model layer by layer: module 3 (0-based, the fourth layer) is GradLab's wrong swish.
    Preset("gradcheck", "wrong_layer", "A wrong custom activation hidden in layer 3 of 6",
           "Which layer of my model has the wrong gradient?", _WRONG_LAYER,
           "Module 3 is a custom autograd.Function whose backward forgets the product rule. The whole "
           "model's check fails at the first weight; checked layer by layer, module 3 alone fails."),
    Preset("gradcheck", "wrong_layer_float64", "The same model in float64",
           "Does float64 change which layer is wrong?", {**_WRONG_LAYER, "dtype": "float64"},
           "The same model in float64: still module 3, with a much smaller tolerance."),
    Preset("gradcheck", "float16_block", "A float16 transformer block",
           "Can a float16 attention block be checked on a CPU?", _BLOCK,
           "LayerNorm, 2-head self-attention and a GELU feed-forward in float16: every module passes or "
           "says it cannot decide; none fails."),
    Preset("gradcheck", "correct_model", "A correct model",
           "What does a model with right gradients look like, layer by layer?",
           {**_WRONG_LAYER, "stack": "linear:16, tanh, layernorm, swish, linear:8, linear:1"},
           "The same stack with the right hand-written swish: every module passes."),
    # Network input gradients.
    Preset("network", "scipy_derivative", "scipy's derivative vs autograd",
           "Why does scipy's derivative disagree with autograd?", _NETWORK,
           "float32, dx = 1e-6, input index 3: autograd −0.00952, scipy −0.014901161193847656, "
           "as in the question.", gallery=True),
    Preset("network", "float64", "Same in float64",
           "Do they agree in float64?", {**_NETWORK, "dtype": "float64"},
           "float64's ulp is 2²⁹ times finer, and so is the quantum ulp(y)/(2·dx)."),
    Preset("network", "relu", "A ReLU network",
           "Does the activation matter?", {**_NETWORK, "act": "relu"},
           "The same network with ReLU activations instead of tanh."),
    Preset("network", "float16", "float16, dx = 1e-3",
           "How coarse is a float16 finite difference?",
           {**_NETWORK, "dtype": "float16", "dx": 1e-3, "range": (1e-6, 1.0)},
           "float16's ulp is 2¹³ times float32's: the step must be far larger, here 1e-3."),
    # Backward's gradient argument.
    Preset("backward", "gradient_argument", "backward(gradient=v)",
           "What is the gradient argument of backward()?",
           {"a": _vector_text(_VJP.a), "b": _vector_text(_VJP.b), "c": _vector_text(_VJP.c),
            "v": _vector_text(_VJP.v), "steps": ""},
           "y = 3a + 2b² + log(c) with v = [0.1, 1, 0.0001]: each .grad is vᵀJ.", gallery=True),
    Preset("backward", "accumulate", "Backward twice, then once more",
           "What happens when backward() runs twice?", {"steps": "br,b,b"},
           ".grad adds up; the graph is freed after a backward without retain_graph."),
    Preset("backward", "ones", "v = ones",
           "What does backward() do with v = [1, 1, 1]?", {"v": "1, 1, 1"},
           "With v = 1 each .grad is the gradient of y.sum()."),
    # Summed loss.
    Preset("summed", "float32_check_loss", "The float32 check's loss: 140×120, sum",
           "Why does the float32 check print only −1.9531, 0 and 1.9531?", _SUMMED,
           "L ≈ 25230 lies in [2¹⁴, 2¹⁵): its ulp is 2⁻⁹, and 2⁻⁹/1e-3 = 1.953125.", gallery=True),
    Preset("summed", "float16", "Same in float16",
           "How coarse is the loss in float16?", {**_SUMMED, "dtype": "float16"},
           "float16's ulp at 25230 is 16: a naive loop stops growing long before the end."),
    Preset("summed", "mean", "Same, reduction mean",
           "Does reduction='mean' help?", {**_SUMMED, "reduction": "mean"},
           "Mean divides L and every gradient element by n alike: the quantum is still larger "
           "than a gradient element."),
    Preset("summed", "larger", "A larger loss: 400×500",
           "What happens with more terms?", {**_SUMMED, "shape": "400x500"},
           "L grows with the number of terms and so does its ulp: the steps of the difference "
           "get coarser while a gradient element stays the same."),
    # Explorer.
    Preset("explorer", "v_shape", "The V-shaped error curve",
           "Which step size gives the most accurate finite difference?",
           {"fn": "complex_step_classic", "x": 1.5, "dtypes": ("float32", "float64"),
            "schemes": ("central",), **_FITTED},
           "Truncation falls with h, round-off grows as 1/h; the best step sits where they "
           "cross, and it moves with the dtype: float64's V sits far to the left of float32's.",
           gallery=True),
    Preset("explorer", "classic", "Complex-step classic",
           "How can a step of 1e-20 give a derivative exact to the last bit?", _EXPLORER,
           "Differences have a V; the complex step keeps falling to round-off.", gallery=True),
    Preset("explorer", "four_dtypes", "float16 to float64",
           "How much does the dtype matter for a finite difference?",
           {"fn": "complex_step_classic", "x": 1.5,
            "dtypes": ("float16", "bfloat16", "float32", "float64"), "schemes": ("central",),
            **_FITTED},
           "The same central difference in four dtypes: does the best step move with the "
           "dtype, and by how much?", gallery=True),
    Preset("explorer", "reciprocal", "1/x in float32",
           "How close does float32 get to the derivative of 1/x?",
           {"fn": "reciprocal", "x": 0.3, "dtypes": ("float32",),
            "schemes": ("forward", "central", "five_point"), "eps_auto": False,
            "eps_range": (1e-12, 1.0)},
           "Autograd is within an ulp or two; the best difference is far worse.", gallery=True),
    Preset("explorer", "sqrt", "sqrt(x) near 0",
           "What happens to the best step near a branch point?",
           {**_EXPLORER, "fn": "sqrt_near_zero", "x": 1e-4, "eps_range": (1e-16, 1.0)},
           "Higher derivatives blow up: the best step shrinks, large steps leave the domain.",
           gallery=True),
    Preset("explorer", "kink", "abs(x) at the kink",
           "What does a finite difference return where there is no derivative?",
           {**_EXPLORER, "fn": "abs_kink", "x": 0.0,
            "schemes": ("forward", "backward", "central"), "eps_range": (1e-16, 1.0)},
           "One-sided differences give ±1, central 0, autograd 0: none is 'right'.",
           gallery=True),
    # Representable grid: sin(x) at 1 in float32 as h shrinks, then one 8-bit case.
    Preset("grid", "h_1e-4", "float32, h = 1e-4",
           "How many bits does a float32 difference keep at h = 1e-4?", {**_GRID, "h": 1e-4},
           "x + h is hundreds of ulps above x; f(x) and f(x+h) still differ in about 10 bits."),
    Preset("grid", "h_1e-6", "h = 1e-6",
           "What is left of the difference at h = 1e-6?", {**_GRID, "h": 1e-6},
           "A few ulps of step: the slope is a multiple of 1/16.", gallery=True),
    Preset("grid", "one_ulp", "h = 1e-7: one ulp",
           "Why is the float32 step 1.19e-7 when I asked for 1e-7?", {**_GRID, "h": 1e-7},
           "x + h rounds to the next float32 after 1: the step is one ulp, and the slope is 0.5."),
    Preset("grid", "no_step", "h = 1e-8: no step",
           "What happens when h is smaller than half an ulp of x?", {**_GRID, "h": 1e-8},
           "x + h rounds back to x: no step is taken, the difference is 0/0."),
    Preset("grid", "e4m3", "8-bit e4m3, h = 0.1",
           "How coarse is an 8-bit float's finite difference?",
           {**_GRID, "dtype": "float8_e4m3fn", "h": 0.1},
           "e4m3 has 4 bits of precision: 1 + 0.1 rounds to 1.125, and f keeps one bit of difference."),
    Preset("explorer", "fp8", "8-bit floats",
           "How close can a gradient check get in 8-bit floats?",
           {"fn": "sin", "x": 1.0,  # a catalogue entry: a custom expression's row cost the chart 80 px
            "dtypes": ("float8_e4m3fn", "float8_e5m2", "float32"), "schemes": ("central", "forward"),
            "eps_auto": False, "eps_range": (1e-8, 10.0)},
           "sin at x = 1 in the two fp8 formats (emulated) and float32: the best central difference "
           "is off by percents, of order ε^(2/3) (25 % for e4m3), and autograd is a few percent off too."),
)


def presets_for(page: str) -> tuple[Preset, ...]:
    """The presets of one page (by url_path), in table order.

    >>> [p.key for p in presets_for("backward")]
    ['gradient_argument', 'accumulate', 'ones']
    """
    return tuple(p for p in PRESETS if p.page == page)


def preset(page: str, key: str) -> Preset:
    """Look one preset up; ``KeyError`` names the page's keys.

    >>> preset("network", "float16").values["dx"]
    0.001
    """
    for p in presets_for(page):
        if p.key == key:
            return p
    known = ", ".join(p.key for p in presets_for(page)) or "none"
    raise KeyError(f"No preset {key!r} on page {page!r}; its presets: {known}.")


def gallery() -> tuple[Preset, ...]:
    """The presets shown as cards on the home page, in table order."""
    return tuple(p for p in PRESETS if p.gallery)
