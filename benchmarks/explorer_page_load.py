"""How heavy the attention explorer makes a page, and how fast it loads and redraws.

    .venv/bin/python benchmarks/explorer_page_load.py            # after `make book`

For every page that shows an explorer: the size of the page and of the JSON it
embeds, the page's DOMContentLoaded and load times in headless Chromium from
``file://`` with every other request blocked (the median of ``--rounds`` fresh
loads), and the time a click on a head takes to redraw (the median over every
head button of the page's first explorer of trained maps).
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "_build" / "html"
from book_build.browser import CHROMIUM_ARGS, find_chromium  # the flags the browser tests use

PAGES = ["05_self_attention", "05_what_it_refers_to", "06_what_heads_learn",
         "11_training_transformer", "12_bert", "14_what_the_vit_learned"]

TIMING = """() => { const n = performance.getEntriesByType('navigation')[0];
                    return [n.domContentLoadedEventEnd, n.loadEventEnd]; }"""
REDRAW = """root => [...root.querySelectorAll('button[data-head]')].map(b => {
                const start = performance.now(); b.click(); return performance.now() - start; })"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    chromium = find_chromium()
    if chromium is None:
        raise SystemExit("no Chromium found: install Debian's chromium or set CHROMIUM=/path/to/chrome")
    print(f"{'page':<28}{'page KB':>9}{'JSON KB':>9}{'DOM ready ms':>14}{'load ms':>9}{'redraw ms':>11}")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        for name in PAGES:
            path = SITE / "chapters" / f"{name}.html"
            timings, redraws, json_bytes = [], [], 0
            for _ in range(args.rounds):
                context = browser.new_context()
                context.route("**/*", lambda route: route.continue_()
                              if route.request.url.startswith(("file:", "data:")) else route.abort())
                page = context.new_page()
                page.goto(path.as_uri(), wait_until="load")
                timings.append(page.evaluate(TIMING))
                json_bytes = sum(len(text.encode()) for text in page.locator(
                    "script.attention-explorer-data").all_text_contents())
                trained = page.locator(".attention-explorer:has(button[data-head])")
                if trained.count():
                    redraws += trained.first.evaluate(REDRAW)
                context.close()
            dom, load = (statistics.median(t[i] for t in timings) for i in (0, 1))
            redraw = f"{statistics.median(redraws):.1f}" if redraws else "-"
            print(f"{name:<28}{path.stat().st_size / 1e3:>9.0f}{json_bytes / 1e3:>9.1f}{dom:>14.0f}"
                  f"{load:>9.0f}{redraw:>11}")
        browser.close()


if __name__ == "__main__":
    main()
