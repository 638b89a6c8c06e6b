"""Every visible button, link, tab and chip label fits its box on every page, on a projector
(1280x720, also in presentation mode) and a phone (390x844): no label cut with an ellipsis or clipped."""

from __future__ import annotations

import pytest
from browser_helpers import open_page, screenshot

from gradlab.ui.navigation import PAGES as PAGE_SPECS

#: (viewport, query): the presentation bar's buttons, quiz switch and theme links are labels too.
VIEWPORTS = {"1280x720": ({"width": 1280, "height": 720}, None), "390x844": ({"width": 390, "height": 844}, None),
             "1280x720-present": ({"width": 1280, "height": 720}, {"present": "1"})}
PAGES = {("home" if spec.default else spec.url_path): ("" if spec.default else spec.url_path) for spec in PAGE_SPECS}

#: For each visible label (a button's, a link's, a tab's, a multiselect chip's), every element
#: inside it whose text is wider than its box while that box hides the overflow. Elements of
#: a width of 1 px or less are screen-reader-only text (KaTeX's MathML, "Skip to main content").
CLIPPED_LABELS = """() => {
  const clipped = [];
  const labels = document.querySelectorAll(
    '[data-testid=stMain] :is(button, a, [role=tab], [data-tag])');
  for (const label of labels) {
    const box = label.getBoundingClientRect();
    if (box.width <= 1 || box.height <= 1 || !label.innerText.trim()) continue;
    for (const el of [label, ...label.querySelectorAll('*')]) {
      const style = getComputedStyle(el);
      const hides = style.overflowX !== 'visible' || style.textOverflow === 'ellipsis';
      if (el.clientWidth > 1 && hides && el.scrollWidth > el.clientWidth + 1) {
        clipped.push(`${label.innerText.trim().replace(/\\s+/g, ' ').slice(0, 60)} `
                     + `(${el.scrollWidth} px of text in ${el.clientWidth} px)`);
        break;
      }
    }
  }
  return clipped;
}"""


@pytest.mark.parametrize("viewport", VIEWPORTS)
@pytest.mark.parametrize("page_name", PAGES)
def test_every_visible_label_fits_its_box(streamlit_server, tab, page_name, viewport):
    size, query = VIEWPORTS[viewport]
    page = tab(size)
    open_page(page, streamlit_server, PAGES[page_name], query, timeout=60_000)
    page.wait_for_timeout(500)  # fonts and Plotly's layout settle the widths
    clipped = page.evaluate(CLIPPED_LABELS)
    if clipped:
        screenshot(page, f"labels-{page_name}-{viewport}")
    assert not clipped, f"{page_name} at {viewport}: labels cut: " + "; ".join(clipped)
