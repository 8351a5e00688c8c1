"""MyST Markdown converted for the published notebooks: each construct becomes what the site shows."""

import base64
import dataclasses
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
from notebook_markdown import (MYST_SYNTAX, References, UnresolvedReference,  # noqa: E402
                               author_year, convert_markdown)

SITE = "https://example.org/book/"


@pytest.fixture
def refs():
    return References(
        site=SITE,
        glue={"ch1_acc": "0.97345", "ch1_params": "'172,570'", "ch1_n": "2000"},
        terms={"teacher forcing": "glossary.html#term-Teacher-forcing",
               "attention": "glossary.html#term-Attention"},
        citations={"vaswani2017attention": ("Vaswani et al., 2017", "bibliography.html#id7"),
                   "bahdanau2015neural": ("Bahdanau et al., 2015", "bibliography.html#id2")},
        labels={"ch-self-attention": ("Self-attention", "chapters/05_self_attention.html#ch-self-attention"),
                "fig-ch1-seq2seq": ("The encoder-decoder",
                                    "chapters/01_seq2seq_rnn.html#fig-ch1-seq2seq")},
        figures={"fig-ch1-loss": "Fig. 1.2", "fig-ch1-seq2seq": "Fig. 1.1"},
        equations={"eq-ch1-decoder": "1.3"},
        pages={"status": "Status", "chapters/02_attention_as_lookup": "Attention as a lookup"})


def convert(text, refs):
    return convert_markdown(text, refs, "chapters/01_seq2seq_rnn")


def test_glued_values_are_formatted_as_on_the_site_and_marked(refs):
    out = convert("Accuracy {glue:text}`ch1_acc:.1%` of {glue:text}`ch1_n` with {glue:text}`ch1_params`.", refs)
    assert ">97.3%</span> of" in out and ">2000</span> with" in out and ">172,570</span>." in out
    assert out.count("the book's own run") == 3   # each value says where it comes from


def test_terms_citations_and_pages_become_links_to_the_published_site(refs):
    out = convert("Trained with {term}`teacher forcing` and {term}`heads <attention>` "
                  "{cite}`vaswani2017attention,bahdanau2015neural`; see the {doc}`status page </status>`, "
                  "{doc}`02_attention_as_lookup` and {ref}`ch-self-attention`.", refs)
    assert f"[teacher forcing]({SITE}glossary.html#term-Teacher-forcing)" in out
    assert f"[heads]({SITE}glossary.html#term-Attention)" in out
    assert (f"[[Vaswani et al., 2017]({SITE}bibliography.html#id7), "
            f"[Bahdanau et al., 2015]({SITE}bibliography.html#id2)]") in out
    assert f"[status page]({SITE}status.html)" in out
    assert f"[Attention as a lookup]({SITE}chapters/02_attention_as_lookup.html)" in out
    assert f"[Self-attention]({SITE}chapters/05_self_attention.html#ch-self-attention)" in out


def test_a_role_broken_across_lines_is_converted_as_myst_reads_it(refs):
    """MyST reads a role across a line break (the site shows it); the notebook must too, not
    leave the raw role for a student to read."""
    out = convert("under every seed of the {doc}`status page\n</status>`: the patch contents, and\n"
                  "{term}`teacher\nforcing` at {glue:text}`ch1_acc:.1%` of {glue:text}`ch1_n`.\n\n"
                  "A new paragraph {term}`attention`.", refs)
    assert MYST_SYNTAX.search(out) is None, out
    assert f"[status page]({SITE}status.html): the patch contents" in out
    assert f"[teacher forcing]({SITE}glossary.html#term-Teacher-forcing)" in out
    assert ">97.3%</span> of" in out and out.endswith(f"A new paragraph [attention]({SITE}glossary.html#term-Attention).")


def test_figure_and_equation_references_become_the_sites_numbers(refs):
    text = "$$\ns_t = f(s_{t-1})\n$$ (eq-ch1-decoder)\n\nBy {eq}`eq-ch1-decoder`, as {numref}`fig-ch1-loss` shows."
    out = convert(text, refs)
    assert out == "$$\ns_t = f(s_{t-1})\n\\tag{1.3}\n$$\n\nBy (1.3), as Fig. 1.2 shows."


def test_answers_fold_and_admonitions_become_titled_blockquotes(refs):
    text = """(ch-seq2seq)=
::::{admonition} Check your understanding
:class: tip

Why {term}`attention`?

:::{admonition} Answer
:class: dropdown

Because of the bottleneck.
:::
::::

```{dropdown} Answers
Two.
```"""
    out = convert(text, refs)
    assert out.splitlines()[:3] == ["> **Check your understanding**", ">",
                                    f"> Why [attention]({SITE}glossary.html#term-Attention)?"]
    assert "> <details>\n> <summary><b>Answer</b></summary>\n>\n> Because of the bottleneck.\n>\n> </details>" in out
    assert out.endswith("<details>\n<summary><b>Answers</b></summary>\n\nTwo.\n\n</details>")
    assert not MYST_SYNTAX.search(out)


def test_what_the_site_cannot_resolve_is_an_error_naming_it(refs):
    with pytest.raises(UnresolvedReference, match=r"\{term\}`transformer`.*glossary"):
        convert("A {term}`transformer`.", refs)
    with pytest.raises(UnresolvedReference, match="ch1_missing"):
        convert("{glue:text}`ch1_missing:.2f`", refs)
    with pytest.raises(UnresolvedReference, match="never closed"):
        convert(":::{admonition} Answer\nforty-two", refs)
    with pytest.raises(UnresolvedReference, match=r"\{image\}"):
        convert("```{image} x.png\n```", refs)


def test_the_check_for_myst_syntax_finds_each_construct():
    for text in ("a {glue:text}`x` b", "{term}`x`", ":::{admonition} T", "::::", "(label)=",
                 "$$ (eq-x)", "```{dropdown} Answers"):
        assert MYST_SYNTAX.search(text), text
    assert not MYST_SYNTAX.search("plain `code`, $x$, [a link](https://x.org), | a | table |")


def test_author_year_follows_the_sites_style():
    assert author_year(["Hochreiter"], "1997") == "Hochreiter, 1997"
    assert author_year(["Hochreiter", "Schmidhuber"], "1997") == "Hochreiter and Schmidhuber, 1997"
    assert author_year(["Vaswani", "Shazeer", "Parmar"], "2017") == "Vaswani et al., 2017"


# --- figures: the image embedded in the cell, the caption numbered as on the site -----------

CHAPTERS = ROOT / "book" / "chapters"
FIGURE_TEXT = """Before.

```{figure} ../figures/seq2seq.svg
:name: fig-ch1-seq2seq
:alt: The encoder reads "the old boat" & hands c to the decoder.
:width: 100%

The model of {numref}`fig-ch1-loss`'s run, after {cite}`vaswani2017attention`:
two lines of caption.
```

After."""


def embedded_images(markdown: str) -> list[tuple[str, bytes, str]]:
    """(type, decoded bytes, alt) of every ``<img>`` with a ``data:`` URI."""
    image = re.compile(r'<img src="data:([\w/+.-]+);base64,([A-Za-z0-9+/=]+)" alt="([^"]*)">')
    return [(kind, base64.b64decode(data), alt) for kind, data, alt in image.findall(markdown)]


def test_a_figure_becomes_its_own_image_embedded_with_the_sites_caption(refs):
    out = convert_markdown(FIGURE_TEXT, refs, "chapters/01_seq2seq_rnn", CHAPTERS)
    (kind, data, alt), = embedded_images(out)
    assert kind == "image/svg+xml"
    assert data == (ROOT / "book" / "figures" / "seq2seq.svg").read_bytes()   # the very file
    assert alt == "The encoder reads &quot;the old boat&quot; &amp; hands c to the decoder."
    lines = out.split("\n")
    image = next(i for i, line in enumerate(lines) if line.startswith("<img "))
    assert lines[image + 1] == ""         # the HTML block ends before the caption
    assert lines[image + 2] == (
        f"**[Fig. 1.1]({SITE}chapters/01_seq2seq_rnn.html#fig-ch1-seq2seq):** The model of "
        f"Fig. 1.2's run, after [[Vaswani et al., 2017]({SITE}bibliography.html#id7)]:")
    assert lines[image + 3] == "two lines of caption."
    assert lines[0] == "Before." and lines[-1] == "After."
    assert not MYST_SYNTAX.search(out)


def test_a_figure_inside_an_admonition_is_converted_too(refs):
    text = ":::{note}\n" + FIGURE_TEXT + "\n:::"
    out = convert_markdown(text, refs, "chapters/01_seq2seq_rnn", CHAPTERS)
    assert out.startswith("> **Note**") and len(embedded_images(out)) == 1
    assert not MYST_SYNTAX.search(out)


def test_a_figure_without_its_number_image_or_folder_is_an_error(refs):
    def figure(name="fig-ch1-seq2seq", path="../figures/seq2seq.svg"):
        return f"```{{figure}} {path}\n:name: {name}\n\nA caption.\n```"

    docname = "chapters/01_seq2seq_rnn"
    with pytest.raises(UnresolvedReference, match="no :name:"):
        convert_markdown("```{figure} ../figures/seq2seq.svg\n\nA caption.\n```", refs, docname,
                         CHAPTERS)
    with pytest.raises(UnresolvedReference, match="fig-ch1-nowhere.*not a numbered figure"):
        convert_markdown(figure(name="fig-ch1-nowhere"), refs, docname, CHAPTERS)
    with pytest.raises(UnresolvedReference, match="no such image file"):
        convert_markdown(figure(path="../figures/missing.svg"), refs, docname, CHAPTERS)
    with pytest.raises(UnresolvedReference, match="folder is unknown"):
        convert_markdown(figure(), refs, docname)
    with pytest.raises(UnresolvedReference, match="cannot embed a .md image"):
        convert_markdown(figure(path="01_seq2seq_rnn.md"), refs, docname, CHAPTERS)


def test_every_figure_of_the_chapters_converts_to_its_file(refs):
    """Each figure of the chapters as a notebook shows it: the image is the file, byte for
    byte, and the caption starts with the figure's number."""
    pattern = re.compile(r"^```\{figure\} (\S+)\n(?:.*\n)*?```$", re.M)
    converted = 0
    for chapter in sorted(CHAPTERS.glob("*.md")):
        for match in pattern.finditer(chapter.read_text(encoding="utf-8")):
            label = re.search(r"^:name: (\S+)$", match[0], re.M)[1]
            page = dataclasses.replace(refs, figures={label: "Fig. 9.9"}, labels={})
            only_the_figure = re.sub(r"\{(numref|eq|cite)\}`[^`]+`", "X", match[0])
            out = convert_markdown(only_the_figure, page, f"chapters/{chapter.stem}", CHAPTERS)
            (kind, data, alt), = embedded_images(out)
            assert data == (chapter.parent / match[1]).read_bytes(), (chapter.name, match[1])
            assert alt and "\n**Fig. 9.9:** " in out
            converted += 1
    assert converted >= 9


def test_a_code_cells_figure_gets_its_number_and_caption_from_the_cells_metadata(refs):
    from notebook_markdown import code_figure_caption

    metadata = {"mystnb": {"figure": {"name": "fig-ch1-loss",
                                      "caption": "Loss of {glue:text}`ch1_n` runs, $\\ln 2$ dotted."}}}
    caption = code_figure_caption(metadata, refs, "chapters/01_seq2seq_rnn")
    assert caption.startswith("**Fig. 1.2:** Loss of <span title=")
    assert ">2000</span> runs, $\\ln 2$ dotted." in caption and not MYST_SYNTAX.search(caption)
    linked = dataclasses.replace(refs, labels={"fig-ch1-loss": (
        "Loss", "chapters/01_seq2seq_rnn.html#fig-ch1-loss")})
    assert code_figure_caption(metadata, linked, "chapters/01_seq2seq_rnn").startswith(
        f"**[Fig. 1.2]({SITE}chapters/01_seq2seq_rnn.html#fig-ch1-loss):** Loss of ")
    assert code_figure_caption({"tags": ["hide-input"]}, refs, "chapters/01_seq2seq_rnn") is None
    with pytest.raises(UnresolvedReference, match="fig-ch1-nowhere.*not a numbered figure"):
        code_figure_caption({"mystnb": {"figure": {"name": "fig-ch1-nowhere", "caption": "x"}}},
                            refs, "chapters/01_seq2seq_rnn")


def test_the_published_notebook_shows_each_code_figures_caption_below_its_cell(refs, tmp_path):
    import nbformat
    from course_notebooks import clean_notebook

    page = tmp_path / "01_seq2seq_rnn.md"
    page.write_text("""---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# A page

As {numref}`fig-ch1-loss` shows:

```{code-cell} ipython3
---
mystnb:
  figure:
    name: fig-ch1-loss
    caption: The loss, falling.
---
print("a figure")
```

```{code-cell} ipython3
print("no figure")
```
""", encoding="utf-8")
    notebook = nbformat.reads(clean_notebook(page, refs, "chapters/01_seq2seq_rnn"), as_version=4)
    kinds = [(cell.cell_type, cell.source) for cell in notebook.cells[1:]]   # after the note
    assert kinds == [("markdown", "# A page\n\nAs Fig. 1.2 shows:"),
                     ("code", 'print("a figure")'),
                     ("markdown", "**Fig. 1.2:** The loss, falling."),
                     ("code", 'print("no figure")')]
    nbformat.validate(notebook)
