"""The feedback page a student opens: formulas offline, explanations that wrap, cells named, hand grades said.

One small nbgrader assignment (Markdown with TeX, a test with a long
explanation of a mistake, a test named by its first comment, a written answer
graded by hand) is graded by the command, and its feedback page is opened in
Chromium with the network cut off, at a laptop's width and a phone's.
"""

import copy
import sys
from pathlib import Path

import nbformat
import pytest

from grading_support import LIMITS, ROOT

FORMULA = r"$\operatorname{softmax}(QK^\top/\sqrt{d_k})$"
EXPLANATION = ("this looks like the scores were divided by d_k instead of its square root: the softmax of "
               "q · k / d_k is far flatter than the softmax of q · k / sqrt(d_k) for any key length above "
               "one, so every attention weight is too close to uniform; divide by np.sqrt(d_k)") * 2


# TeX in a submission that would make a link (MathJax 2's "Safe" extension filtered it in nbgrader's page)
LINK_IN_MATH = r"$\href{javascript:alert('mathjax')}{see}$"


SIGNATURES = ("* `attention(query, key, value, scale=1.0, query_mask=None, value_mask=None, use_causal_mask=False)`\n"
              "  * compared with `attention_course.reference.scaled_dot_product_attention_with_weights`\n\n"
              "| function | what it returns |\n|---|---|\n"
              "| `scaled_dot_product_attention(query, key, value, mask=None)` | `(output, weights)` |\n")


def _meta(**nbgrader):
    return {"nbgrader": {"schema_version": 3, "locked": False, "solution": False, "grade": False,
                         "task": False, **nbgrader}}


def _assignment(folder: Path):
    cells = [
        nbformat.v4.new_markdown_cell(f"Scaled dot-product attention: {FORMULA}.",
                                      metadata=_meta(grade_id="intro", locked=True)),
        nbformat.v4.new_code_cell("def scale(d_k):\n    ### BEGIN SOLUTION\n    return d_k ** 0.5\n"
                                  "    ### END SOLUTION", metadata=_meta(grade_id="answer", solution=True)),
        nbformat.v4.new_code_cell("# The scale is the square root of the key length\n"
                                  f"assert scale(16) == 4, {EXPLANATION!r}",
                                  metadata=_meta(grade_id="scale_is_sqrt", grade=True, locked=True, points=1)),
        nbformat.v4.new_code_cell('"""Scaling keeps unit-variance scores."""\nassert scale(1) == 1',
                                  metadata=_meta(grade_id="scale_of_one", grade=True, locked=True, points=1)),
        nbformat.v4.new_markdown_cell("Why scale? YOUR ANSWER HERE",
                                      metadata=_meta(grade_id="why_scale", grade=True, solution=True, points=2)),
        # what pushed a real assignment's page 11 px sideways on a phone: a signature in inline
        # code (a name with no space to break at), in a list and in a table (a2's text)
        nbformat.v4.new_markdown_cell(SIGNATURES, metadata=_meta(grade_id="signatures", locked=True)),
    ]
    nb = nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": {
        "name": "python3", "display_name": "Python 3", "language": "python"}})
    folder.mkdir(parents=True)
    nbformat.write(nb, folder / "attn.ipynb")
    return nb


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    from course_grader import grade

    tmp = tmp_path_factory.mktemp("feedback-page")
    nb = _assignment(tmp / "source" / "attn")
    nb.cells[1].source = "def scale(d_k):\n    return d_k"                  # the catalogued mistake
    nb.cells[4].source = ("Without it the softmax saturates as $d_k$ grows. "  # awaits a hand grade
                          f"{LINK_IN_MATH}")
    (tmp / "inbox" / "ada").mkdir(parents=True)
    nbformat.write(nb, tmp / "inbox" / "ada" / "attn.ipynb")
    report = grade.grade(tmp / "inbox", "attn", course_dir=tmp / "course", workers=1, **LIMITS, quiet=True,
                         config_file=ROOT / "nbgrader_config.py",
                         source_dir=tmp / "source", course_id="feedback")
    (result,) = report["results"]
    assert result["status"] == "graded" and result["to_grade_by_hand"] == 2.0, result
    return tmp / "course" / "feedback" / "ada" / "attn" / "attn.html"


def _soup(page: Path):
    from bs4 import BeautifulSoup

    return BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")


def test_the_page_loads_nothing_from_elsewhere(page):
    soup = _soup(page)
    assert [s["src"] for s in soup.find_all("script", src=True)] == []
    assert [link["href"] for link in soup.find_all("link", href=True)] == []
    assert any("MathJax" in (s.string or "") for s in soup.find_all("script"))
    assert "cdnjs" not in page.read_text(encoding="utf-8")


def test_the_index_names_test_cells_as_the_assignment_does(page):
    entries = [li.get_text(" ", strip=True) for li in _soup(page).select("#toc li")]
    assert not any(entry.startswith("Test cell") for entry in entries), entries
    assert "scale_is_sqrt \N{EM DASH} The scale is the square root of the key length (Score: 0.0 / 1.0)" in entries
    assert "scale_of_one \N{EM DASH} Scaling keeps unit-variance scores. (Score: 1.0 / 1.0)" in entries


def test_an_answer_awaiting_a_hand_grade_says_so(page):
    soup = _soup(page)
    entries = [li.get_text(" ", strip=True) for li in soup.select("#toc li")]
    # named by its grade id, so two written answers are never both "Written response"
    assert "Written response \N{EM DASH} why_scale (to be graded by hand, 2.0 points)" in entries, entries
    assert "2.0 of the points still to be graded by hand" in soup.h4.get_text()
    assert "Score: 0.0 / 2.0" not in soup.get_text()


@pytest.mark.parametrize("width", [1280, 375])
def test_offline_the_formulas_render_and_the_explanation_wraps(page, width):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "site"))
    from built_site import CHROMIUM_ARGS, chromium_path, in_own_thread
    from playwright.sync_api import sync_playwright

    fetched, dialogs = [], []

    def look():
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium_path(), headless=True,
                                                 args=CHROMIUM_ARGS)
            try:
                view = browser.new_page(viewport={"width": width, "height": 900})
                view.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
                view.route("**/*", lambda route: (fetched.append(route.request.url), route.abort())
                           if not route.request.url.startswith("file:") else route.continue_())
                view.goto(page.as_uri(), wait_until="load")
                explanation = view.evaluate("""() => {
                    const pre = [...document.querySelectorAll('div.output_error pre, div.output_text pre')]
                        .find(p => p.textContent.includes('divided by d_k'));
                    const box = pre.getBoundingClientRect();
                    return {scroll: pre.scrollWidth, client: pre.clientWidth, right: box.right,
                            page: document.documentElement.scrollWidth};
                }""")
                view.wait_for_function("document.querySelectorAll('mjx-container').length >= 3", timeout=60_000)
                text = view.inner_text("body")
                links_in_math = view.evaluate("""() => [...document.querySelectorAll('mjx-container *')].filter(
                    e => e.tagName.toLowerCase() === 'a'
                         || [...e.attributes].some(a => a.value.toLowerCase().includes('javascript'))).length""")
                for element in view.query_selector_all("mjx-container"):
                    element.click()
            finally:
                browser.close()
        return explanation, text, links_in_math

    explanation, text, links_in_math = in_own_thread(look)
    assert explanation["scroll"] <= explanation["client"] + 1, explanation     # nothing hidden to scroll to
    assert explanation["right"] <= width and explanation["page"] <= width, explanation
    assert fetched == [] and dialogs == [] and links_in_math == 0
    assert r"\operatorname" not in text and "$d_k$" not in text
    assert "divide by np.sqrt(d_k)" in text


PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")


def test_the_page_is_nbconverts_without_its_soup_pass():
    """The feedback page skips nbconvert's last pass over the page with BeautifulSoup (two thirds
    of its time) and gives images their alt text itself: parsed, the page is the tree nbconvert's
    own pass gives, MathJax included, and every image has an alt text."""
    from bs4 import BeautifulSoup
    from nbconvert.exporters import HTMLExporter

    from course_grader.feedback import NO_ALT, FeedbackExporter, mathjax_script

    def graded(cell, **meta):
        cell.metadata["nbgrader"] = {"grade": True, "solution": False, "grade_id": meta.get("id", "t"),
                                     "points": 2, "score": 1.0, **meta}
        return cell

    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("The score is $\\operatorname{softmax}(x)_i$ and ![a plot](data:image/png;base64,"
                                      + PNG + ") and <img src='data:image/png;base64," + PNG + "'>"),
        graded(nbformat.v4.new_code_cell("plot()  # draws '<img src=x>'", outputs=[
            nbformat.v4.new_output("display_data", data={"image/png": PNG, "text/plain": "<Figure>"}),
            nbformat.v4.new_output("display_data", data={"text/html": "<b>bold</b><img src='y.png'><!-- <img src='z.png'> -->"}),
            nbformat.v4.new_output("stream", name="stdout", text="<img src=escaped> & more\n")]), id="test_plot"),
    ])
    nb.metadata["language_info"] = {"name": "python"}
    resources = {"nbgrader": {"notebook": "nb", "score": 1.0, "max_score": 2.0, "to_grade_by_hand": 0,
                              "late_penalty": 0}}
    def exporter():   # configured as nbgrader's generate_feedback configures it
        from nbgrader.converters import GenerateFeedback

        return FeedbackExporter(config=GenerateFeedback().config)

    ours, _ = exporter().from_notebook_node(copy.deepcopy(nb), copy.deepcopy(resources))
    with_math = {**copy.deepcopy(resources), "mathjax_script": mathjax_script()}
    theirs, _ = HTMLExporter.from_notebook_node(exporter(), copy.deepcopy(nb), with_math)
    ours_tree, theirs_tree = BeautifulSoup(ours, "html.parser"), BeautifulSoup(theirs, "html.parser")
    assert ours_tree == theirs_tree
    images = ours_tree.find_all("img")
    assert len(images) >= 3 and all(img.get("alt") for img in images)
    assert [img["alt"] for img in images].count(NO_ALT) >= 2     # the plot, and the HTML output's image
    assert mathjax_script() in ours
    assert "<!-- <img src='z.png'> -->" in ours    # a comment stays as it was
