"""Nothing clipped: every page at a laptop's width (1280 px) and a phone's (390 px).

A reader should never have to scroll a page sideways or find text cut off.
What may scroll sideways inside its own box is a code block (source or
printed output: a line of code cannot wrap) and a table whose box says it
scrolls (the hint ``course.js`` or the status page puts above it).  Displayed
equations must fit the column: ``course.js`` scales a wide one down, but not
below 70 % of its size, so an equation that still does not fit has to be
written as shorter aligned lines.  Table columns must not run together.

In the browser (headless Chromium, see ``built_site.py``), for every page of
the table of contents at both widths.
"""

from __future__ import annotations

from urllib.parse import urljoin

import pytest

from built_site import TOC
from built_site import browser, server, site  # noqa: F401  (fixtures)
from test_site_browser import open_page

WIDTHS = {"laptop": 1280, "phone": 390}

#: run in the page: what sticks out, what is cut off, what scrolls, which columns touch
LAYOUT = r"""() => {
  const found = {page: 0, equations: [], clipped: [], scrolls: [], columns: []};
  const doc = document.documentElement;
  found.page = doc.scrollWidth - doc.clientWidth;
  const article = document.querySelector('article.bd-article') || document.querySelector('main');
  const describe = (element, extra) => {
    const text = (element.textContent || '').trim().replace(/\s+/g, ' ').slice(0, 70);
    return `<${element.tagName.toLowerCase()} class="${element.className}"> "${text}" ${extra}`;
  };
  // what makes the page wider than the window: the outermost elements past its right edge
  found.sticking = [];
  if (found.page > 0) {
    const boxed = element => {   // inside a box that scrolls or clips: not the page's width
      for (let up = element.parentElement; up && up !== document.body; up = up.parentElement) {
        if (getComputedStyle(up).overflowX !== 'visible') return true;
      }
      return false;
    };
    for (const element of document.body.querySelectorAll('*')) {
      const right = element.getBoundingClientRect().right;
      if (right > doc.clientWidth + 1 && !found.sticking.some(e => e.contains(element))
          && !boxed(element)) {
        found.sticking.push(element);
      }
    }
    found.sticking = found.sticking.slice(0, 5).map(
      e => describe(e, `ends at ${Math.round(e.getBoundingClientRect().right)} px`));
  }
  const inMaths = element => element.closest('mjx-container, span.math, div.math');
  const hidden = element => !element.getClientRects().length;

  // displayed equations: the typeset maths must fit its box
  for (const box of article.querySelectorAll('div.math')) {
    const maths = box.querySelector('mjx-container[display="true"] > mjx-math');
    if (!maths || hidden(box)) continue;
    const width = maths.getBoundingClientRect().width;
    if (width > box.clientWidth + 1) {
      found.equations.push(describe(box, `${Math.round(width)} px in ${box.clientWidth} px`));
    }
  }

  for (const element of article.querySelectorAll('*')) {
    if (inMaths(element) || hidden(element)) continue;
    const over = element.scrollWidth - element.clientWidth;
    if (over <= 1 || element.clientWidth === 0) continue;
    const overflow = getComputedStyle(element).overflowX;
    if (overflow === 'hidden' || overflow === 'clip') {
      found.clipped.push(describe(element, `cut by ${over} px`));
    } else if (overflow === 'auto' || overflow === 'scroll') {
      const code = element.matches('pre, div.highlight, .cell_output .output.text_plain, .output.stream');
      const table = element.querySelector('table');
      let hinted = false;
      if (table && !code) {
        const container = element.closest('.course-scroll') || element;
        const before = container.previousElementSibling;
        hinted = !!before && before.classList.contains('course-scroll-hint')
                 && !hidden(before) && element.tabIndex >= 0;
      }
      if (!code && !hinted) found.scrolls.push(describe(element, `scrolls by ${over} px`));
    }
  }

  // table columns: the text of one cell must not touch the next cell's
  const range = document.createRange();
  for (const row of article.querySelectorAll('tr')) {
    if (hidden(row)) continue;
    const cells = [...row.children];
    for (let i = 0; i + 1 < cells.length; i++) {
      range.selectNodeContents(cells[i]);
      const left = range.getBoundingClientRect();
      range.selectNodeContents(cells[i + 1]);
      const right = range.getBoundingClientRect();
      if (left.width && right.width && Math.abs(left.top - right.top) < left.height
          && right.left - left.right < 6) {
        found.columns.push(describe(row, `cells ${i}-${i + 1} ${(right.left - left.right).toFixed(1)} px apart`));
        break;
      }
    }
  }
  return found;
}"""


@pytest.fixture(scope="module", params=list(WIDTHS), ids=list(WIDTHS))
def sized_page(request, browser, server):
    width = WIDTHS[request.param]
    context = browser.new_context(viewport={"width": width, "height": 900}, base_url=server)
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


@pytest.mark.parametrize("docname", TOC)
def test_nothing_sticks_out_or_is_cut_off(sized_page, server, docname):
    open_page(sized_page, urljoin(server, f"{docname}.html"))
    # course.js lays the page out once MathJax has typeset it
    sized_page.wait_for_function("() => document.readyState === 'complete'")
    sized_page.wait_for_timeout(50)
    found = sized_page.evaluate(LAYOUT)
    width = sized_page.viewport_size["width"]
    problems = []
    if found["page"] > 0:
        problems.append(f"the page scrolls sideways by {found['page']} px; past the window's "
                        f"edge: {found['sticking']}")
    problems += [f"equation too wide: {e}" for e in found["equations"]]
    problems += [f"cut off: {e}" for e in found["clipped"]]
    problems += [f"scrolls without saying so: {e}" for e in found["scrolls"]]
    problems += [f"columns run together: {e}" for e in found["columns"]]
    assert problems == [], f"{docname} at {width} px:\n" + "\n".join(problems)


def test_the_layout_check_sees_overflow_cut_text_and_touching_columns(sized_page, server):
    """The check itself: a page made too wide, a line cut off, columns with no gap."""
    open_page(sized_page, urljoin(server, f"{TOC[0]}.html"))
    sized_page.evaluate(r"""() => {
      const article = document.querySelector('article.bd-article');
      const wide = document.createElement('div');
      wide.style.width = '3000px'; wide.textContent = 'wide';
      article.appendChild(wide);
      const table = document.createElement('table');
      table.innerHTML = '<tr><td style="padding:0">100.0%</td><td style="padding:0">100.0%</td></tr>';
      article.appendChild(table);
      const cut = document.createElement('div');
      cut.style.cssText = 'overflow:hidden; width:50px; white-space:nowrap';
      cut.textContent = 'a long line of printed text that is cut off';
      article.appendChild(cut);
    }""")
    found = sized_page.evaluate(LAYOUT)
    assert found["page"] > 0
    assert any("100.0%" in c for c in found["columns"])
    assert any("cut off" in c for c in found["clipped"])
