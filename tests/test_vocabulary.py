"""One vocabulary: every dtype and scheme is one row carrying its label, colour and style.

Each row is checked for every field; colours must be distinct and meet WCAG's
3:1 contrast for graphics against the light and the dark background (relative
luminance computed here from the WCAG 2.x formula, not taken from the code).
Then a row is added (monkeypatched into the table) and the widgets, the URL
values and the figures pick it up with nothing else changed.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from gradlab.figures.style import CATEGORICAL, HEATMAP_COLOURS, HEATMAP_COLOURSCALE, PALETTE
from gradlab.numerics.dtypes import (ALL_DTYPE_NAMES, DTYPE_NAMES, DTYPE_TABLE, DTYPES, EMULATED_DTYPES,
                                     DtypeFacts, facts)

ROWS = DTYPE_TABLE  # native and emulated: one table of facts
from gradlab.numerics.schemes import SCHEMES, Scheme

REPO = Path(__file__).resolve().parents[1]
LIGHT, DARK = "#ffffff", "#0e1117"  # Streamlit's light and dark backgrounds
MIN_CONTRAST = 3.0  # WCAG 2.x, 1.4.11: graphical objects
TEXT_CONTRAST = 4.5  # WCAG 2.x, 1.4.3 (AA): text, tick labels, button labels
BUTTON_TEXT = "#ffffff"  # Streamlit draws a primary button's label in white in both themes
HEX = re.compile(r"^#[0-9a-f]{6}$")
#: What widgets show and the URL carries: links already shared depend on these exact words.
URL_LABELS = {"forward": "Forward", "backward": "Backward", "central": "Central",
              "five_point": "5-point", "complex_step": "Complex step", "richardson": "Richardson"}
PLOTLY_DASHES = {"solid", "dot", "dash", "longdash", "dashdot", "longdashdot"}


def _channel(value: int) -> float:
    c = value / 255
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def luminance(colour: str) -> float:
    r, g, b = (_channel(int(colour[i:i + 2], 16)) for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_contrast_formula_spec():
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)  # the well-known AA near miss


# ---------------------------------------------------------------- the rows


@pytest.mark.parametrize("name", list(ROWS))
def test_every_dtype_row_has_every_field(name):
    row = ROWS[name]
    assert row.name == name and row.torch_dtype is not None
    for field in dataclasses.fields(DtypeFacts):
        optional = field.name == "complex_partner" or (field.name == "compute" and not row.emulated)
        assert getattr(row, field.name) is not None or optional, field.name
    assert row.label.strip() and HEX.match(row.colour)
    assert 0 < row.atol and 0 < row.rtol < 1


@pytest.mark.parametrize("name", list(SCHEMES))
def test_every_scheme_row_has_every_field(name):
    row = SCHEMES[name]
    assert row.name == name
    for text in (row.label, row.short_label, row.help, row.symbol, row.dash):
        assert isinstance(text, str) and text.strip()
    assert row.dash in PLOTLY_DASHES or re.fullmatch(r"(\d+px,?)+", row.dash)
    assert row.complex_step or len(row.offsets) == len(row.weights) >= 2


def test_short_labels_are_the_url_words():
    """A short label is what links carry: the first schemes' words never change (old links open the
    same view); a new row's label only has to differ from the others (test_scheme_styles_are_distinct)."""
    assert {name: SCHEMES[name].short_label for name in URL_LABELS} == URL_LABELS


@pytest.mark.parametrize("attribute", ["label", "short_label", "dash", "symbol"])
def test_scheme_styles_are_distinct(attribute):
    values = [getattr(row, attribute) for row in SCHEMES.values()]
    assert len(set(values)) == len(values)


def test_native_and_emulated_dtypes_are_views_of_the_one_table_by_its_emulated_field():
    assert [n for n, r in ROWS.items() if not r.emulated] == list(DTYPES) == list(DTYPE_NAMES)
    assert DTYPE_NAMES[:4] == ("float16", "bfloat16", "float32", "float64")  # what native widgets offer
    assert [n for n, r in ROWS.items() if r.emulated] == list(EMULATED_DTYPES)
    assert {"float8_e4m3fn", "float8_e5m2"} <= set(EMULATED_DTYPES)
    assert all(r.emulated == (r.compute is not None) for r in ROWS.values())  # emulated: computed in another dtype
    assert ALL_DTYPE_NAMES == tuple(ROWS)
    assert all(DTYPES[n] is ROWS[n] for n in DTYPE_NAMES) and all(EMULATED_DTYPES[n] is ROWS[n]
                                                                  for n in EMULATED_DTYPES)
    assert "float8_e4m3fn" not in DTYPES and "float32" not in EMULATED_DTYPES
    with pytest.raises(KeyError):
        DTYPES["float8_e5m2"]
    with pytest.raises(TypeError):  # read-only: a row is added to the one table
        DTYPES["float32_twin"] = ROWS["float32"]


def test_dtype_labels_and_colours_are_distinct():
    for attribute in ("label", "colour"):
        values = [getattr(row, attribute) for row in ROWS.values()]
        assert len(set(values)) == len(values), attribute


@pytest.mark.parametrize("background", [LIGHT, DARK])
@pytest.mark.parametrize("name", list(ROWS))
def test_dtype_colour_reads_on_light_and_dark(name, background):
    assert contrast(ROWS[name].colour, background) >= MIN_CONTRAST


@pytest.mark.parametrize("background", [LIGHT, DARK])
@pytest.mark.parametrize("role", list(PALETTE))
def test_palette_colour_reads_on_light_and_dark(role, background):
    assert HEX.match(PALETTE[role])
    assert contrast(PALETTE[role], background) >= MIN_CONTRAST


def test_theme_backgrounds_are_the_ones_checked_or_darker():
    # The app's own themes: a colour with 3:1 on LIGHT and DARK needs the same on these.
    theme = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text())["theme"]
    for colour in (*CATEGORICAL, *(row.colour for row in ROWS.values())):
        assert contrast(colour, theme["light"]["backgroundColor"]) >= MIN_CONTRAST
        assert contrast(colour, theme["dark"]["backgroundColor"]) >= MIN_CONTRAST


def test_theme_categorical_colours_are_the_palette():
    theme = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text())["theme"]
    assert tuple(theme["chartCategoricalColors"]) == CATEGORICAL


# ---------------------------------------------------------------- text in both themes


def _themes() -> dict[str, dict]:
    theme = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text())["theme"]
    return {"light": theme["light"], "dark": theme["dark"]}


@pytest.mark.parametrize("mode", ["light", "dark"])
@pytest.mark.parametrize("role", ["textColor", "linkColor", "codeTextColor"])
def test_theme_text_reads_on_its_backgrounds(mode, role):
    colours = _themes()[mode]
    for background in ("backgroundColor", "secondaryBackgroundColor"):
        assert contrast(colours[role], colours[background]) >= TEXT_CONTRAST, (mode, role, background)


@pytest.mark.parametrize("mode", ["light", "dark"])
def test_primary_button_label_reads_on_the_primary_colour(mode):
    # The dark theme's old primary #6ea8ff gave white labels 2.4:1.
    assert contrast(BUTTON_TEXT, _themes()[mode]["primaryColor"]) >= TEXT_CONTRAST


@pytest.mark.parametrize("mode", ["light", "dark"])
def test_primary_colour_reads_on_the_background(mode):
    colours = _themes()[mode]
    assert contrast(colours["primaryColor"], colours["backgroundColor"]) >= MIN_CONTRAST


def test_chart_axis_text_is_drawn_in_the_theme_text_colour():
    # Plotly's own tick grey #808495 has 3.7:1 on white; the chrome's CSS draws tick
    # labels and axis titles in the theme's text colour (currentColor), whose
    # contrast the test above checks. The browser test reads the computed colour.
    assert contrast("#808495", "#ffffff") < TEXT_CONTRAST  # why the override exists
    from gradlab.ui.theme import _CONTRAST_CSS
    rule = re.search(r"([^{}]*)\{\s*fill:\s*currentColor\s*!important;\s*\}", _CONTRAST_CSS)
    assert rule is not None
    for selector in (".xtick text", ".ytick text", ".g-xtitle text", ".g-ytitle text", ".cbaxis text"):
        assert selector in rule.group(1)


def test_heatmap_scale_reads_in_the_dark_theme():
    dark, light = _themes()["dark"]["backgroundColor"], _themes()["light"]["backgroundColor"]
    low, high = HEATMAP_COLOURS[0], HEATMAP_COLOURS[-1]
    assert contrast(low, dark) >= MIN_CONTRAST and contrast(high, dark) >= MIN_CONTRAST
    assert contrast(low, light) >= MIN_CONTRAST  # the light theme's cells stand out from the page too
    lightness = [luminance(c) for c in HEATMAP_COLOURS]
    assert lightness == sorted(lightness)  # sequential: higher value, lighter cell
    assert [c for _, c in HEATMAP_COLOURSCALE] == list(HEATMAP_COLOURS)
    assert HEATMAP_COLOURSCALE[0][0] == 0.0 and HEATMAP_COLOURSCALE[-1][0] == 1.0


# ---------------------------------------------------------------- adding a row

# f'(x) ~ (3 f(x) - 4 f(x-h) + f(x-2h)) / 2h: Taylor gives f' - h**2/3 f''' (order 2, C_t = 1/3).
BACKWARD_2 = Scheme(
    name="backward_2", label="second-order backward", short_label="Backward 2", order=2,
    offsets=(-2.0, -1.0, 0.0), weights=(1 / 2, -2.0, 3 / 2), truncation_constant=1 / 3,
    dash="dot", symbol="hexagon", help="three points left of x: error ∝ h².",
)
FLOAT32_TWIN = dataclasses.replace(DTYPES["float32"], name="float32_twin", label="float32 twin",
                                   colour="#0b7a75", aliases=())


@pytest.fixture
def added_rows(monkeypatch):
    monkeypatch.setitem(SCHEMES, BACKWARD_2.name, BACKWARD_2)
    monkeypatch.setitem(DTYPE_TABLE, FLOAT32_TWIN.name, FLOAT32_TWIN)  # one row, in the one table


def test_a_row_added_to_the_table_is_native_everywhere_at_once(added_rows):
    assert "float32_twin" in DTYPES and "float32_twin" not in EMULATED_DTYPES
    assert facts("float32_twin") is FLOAT32_TWIN


# ---------------------------------------------------------------- a newcomer's new rows
#
# The twin above is a copy of float32 under another name: every side table keyed by torch
# dtype (the ulp's integer views, a quiz's list) already holds float32, so it cannot show
# that one row is all a new dtype needs. Here a newcomer's edit is made for real: one row
# with a torch dtype no other row has (float8_e4m3fnuz: 8 bits, exponent bias 8, no inf,
# no negative zero) and one scheme row are written into the two tables' source, in a copy of
# gradlab, and every consumer is asked about them in a fresh interpreter, so names derived
# at import time (DTYPE_NAMES, ALL_DTYPE_NAMES, SCHEME_NAMES, the CLI's choices) see them.

NEW_DTYPE_ROW = """\
        _facts("float8_e4m3fnuz", None, rtol=0.5, atol=0.1, colour="#5b8c00", aliases=("e4m3fnuz",),
               label="float8_e4m3fnuz (emulated)", compute=torch.float32),
"""
NEW_SCHEME_ROW = """\
        Scheme(name="backward_2", label="second-order backward", short_label="Backward 2", order=2,
               offsets=(-2.0, -1.0, 0.0), weights=(1 / 2, -2.0, 3 / 2), truncation_constant=1 / 3,
               dash="dot", symbol="hexagon", help="three points left of x: error ∝ h²."),
"""
DTYPE_ANCHOR = 'label="float8_e5m2 (emulated)", compute=torch.float32),\n'
SCHEME_ANCHOR = 'help="extrapolates two central differences: error ∝ h⁴."),\n'

CONSUMERS = r"""
import contextlib, io, json
from streamlit.testing.v1 import AppTest

WIDGETS = '''
import streamlit as st
from gradlab.numerics.dtypes import ALL_DTYPE_NAMES
from gradlab.ui.controls import dtype_multiselect, scheme_multiselect
st.session_state["_values"] = (dtype_multiselect(options=ALL_DTYPE_NAMES), scheme_multiselect())
'''
at = AppTest.from_string(WIDGETS, default_timeout=60)
at.query_params.update({"dtypes": ["float8_e4m3fnuz (emulated)"], "schemes": ["Backward 2", "Central"]})
at.run()
from gradlab.numerics.dtypes import ALL_DTYPE_NAMES
from gradlab.numerics.ulp import float_hex, ulp, ulp_distance
from gradlab.step_sweep.engine import SweepSettings, run_sweep
from gradlab.labs.explorer.figures import error_vs_eps_figure
from gradlab.teaching.presets import url_values
from gradlab.cli.main import main
from gradlab.ui import controls

out = {"exception": [str(e.value) for e in at.exception],
       "dtype_options": list(at.multiselect(key="dtypes").options),
       "scheme_options": list(at.multiselect(key="schemes").options),
       "values": [list(v) for v in at.session_state["_values"]],
       "help": "Backward 2 — three points left of x" in controls.scheme_help(),  # dtype help: native rows
       "url": url_values("explorer", {"dtypes": ("float8_e4m3fnuz",), "schemes": ("backward_2",)}),
       "all_dtypes": list(ALL_DTYPE_NAMES)}
h = 1e-3
result = run_sweep(SweepSettings("exp(x)", 0.0, ("float8_e4m3fnuz", "float64"), ("backward_2",), h, 1e-2, 2))
row = result.table[(result.table["dtype"] == "float64") & (result.table["eps"] == h)].iloc[0]
out["float64_rel_error"] = float(row["rel_error"])
out["traces"] = [[t.meta["dtype"], t.line.color, t.line.dash, t.marker.symbol, t.name]
                 for t in error_vs_eps_figure(result).data if t.meta and t.meta.get("kind") == "sweep"]
out["ulp"] = [ulp(1.0, "float8_e4m3fnuz"), ulp_distance(1.0, 1.125, "float8_e4m3fnuz"),
              ulp_distance(-0.5, 0.5, "float8_e4m3fnuz"), float_hex(1.0, "float8_e4m3fnuz"),
              float_hex(-2.0, "float8_e4m3fnuz")]
for name, argv in (("cli_sweep", ["sweep", "exp(x)", "--at", "0", "--dtype", "float8_e4m3fnuz", "--scheme",
                                  "backward_2", "--eps-min", "1e-3", "--eps-max", "1e-2", "--points", "2",
                                  "--format", "json"]),
                   ("cli_dtypes", ["dtypes", "--format", "json"]),
                   ("cli_grid", ["grid", "--dtype", "float8_e4m3fnuz", "--at", "1", "--h", "0.25",
                                 "--format", "json"])):
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        status = main(argv)
    out[name] = [status, json.loads(text.getvalue())]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def newcomers_rows(tmp_path_factory):
    """What every consumer says about the new dtype and scheme rows, in a copy of gradlab with them."""
    root = tmp_path_factory.mktemp("new_rows")
    shutil.copytree(REPO / "gradlab", root / "gradlab", ignore=shutil.ignore_patterns("__pycache__"))
    for path, anchor, row in ((root / "gradlab/numerics/dtypes.py", DTYPE_ANCHOR, NEW_DTYPE_ROW),
                              (root / "gradlab/numerics/schemes.py", SCHEME_ANCHOR, NEW_SCHEME_ROW)):
        source = path.read_text(encoding="utf-8")
        assert source.count(anchor) == 1, f"the last row of {path.name}'s table moved: update the anchor"
        path.write_text(source.replace(anchor, anchor + row), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(root)}
    run = subprocess.run([sys.executable, "-c", CONSUMERS], cwd=root, env=env, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.server  # a fresh interpreter, and the CLI's child process
def test_a_new_dtype_and_scheme_row_reach_the_widgets_and_the_url(newcomers_rows):
    seen = newcomers_rows
    assert seen["exception"] == []
    assert "float8_e4m3fnuz (emulated)" in seen["dtype_options"] and "Backward 2" in seen["scheme_options"]
    assert seen["values"] == [["float8_e4m3fnuz"], ["backward_2", "central"]]  # read back from the URL
    assert seen["help"] is True
    assert seen["url"] == {"dtypes": ["float8_e4m3fnuz (emulated)"], "schemes": ["Backward 2"]}
    assert seen["all_dtypes"][-1] == "float8_e4m3fnuz"


@pytest.mark.slow
@pytest.mark.server
def test_a_new_dtype_and_scheme_row_are_swept_and_drawn_in_their_style(newcomers_rows):
    h = 1e-3  # exp at 0: f''' = 1, so backward_2's relative error at h is h**2/3 in float64
    assert newcomers_rows["float64_rel_error"] == pytest.approx(h ** 2 / 3, rel=1e-2)
    traces = {t[0]: t for t in newcomers_rows["traces"]}
    assert set(traces) == {"float8_e4m3fnuz", "float64"}
    _, colour, dash, symbol, name = traces["float8_e4m3fnuz"]
    assert (colour, dash, symbol) == ("#5b8c00", "dot", "hexagon") and "second-order backward" in name


@pytest.mark.slow
@pytest.mark.server
def test_a_new_dtype_row_has_ulps_from_its_own_format(newcomers_rows):
    # e4m3fnuz: 1 sign bit, 4 exponent bits with bias 8, 3 fraction bits; no inf, no -0 (0x80 is NaN).
    # 1.0 = 2**(8-8): 0 1000 000 = 0x40; -2.0: 1 1001 000 = 0xc8; 0.5: 0 0111 000 = 0x38 = 56, so
    # 56 representable steps from 0 up to 0.5 and 56 from -0.5 up to the one zero.
    one_ulp, one_step, across_zero, hex_one, hex_minus_two = newcomers_rows["ulp"]
    assert one_ulp == 2.0 ** -3 and one_step == 1 and across_zero == 2 * 0x38
    assert (hex_one, hex_minus_two) == ("0x40", "0xc8")


@pytest.mark.slow
@pytest.mark.server
def test_a_new_dtype_and_scheme_row_are_choices_of_the_cli(newcomers_rows):
    status, swept = newcomers_rows["cli_sweep"]
    assert status == 0
    assert {(r["dtype"], r["scheme"]) for r in swept["rows"]} == {("float8_e4m3fnuz", "backward_2")}
    status, table = newcomers_rows["cli_dtypes"]
    row = next(r for r in table if r["name"] == "float8_e4m3fnuz")
    # Largest finite: 0 1111 111 = 1.875 * 2**(15-8) = 240 (fnuz keeps the all-ones patterns as
    # numbers); smallest normal 2**(1-8); smallest subnormal 2**-7 * 2**-3.
    assert status == 0 and (row["bits"], row["precision_bits"], row["eps"]) == (8, 4, 2.0 ** -3)
    assert (row["largest"], row["smallest_normal"], row["smallest_subnormal"]) == (240.0, 2.0 ** -7, 2.0 ** -10)
    status, grid = newcomers_rows["cli_grid"]
    assert status == 0 and grid["dtype"] == "float8_e4m3fnuz"
