"""The architecture figures in the chapters: each file shown where the prose introduces it,
named and captioned, with alt text, referred to by number, and no file left unused."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BOOK = ROOT / "book"
CHAPTERS = sorted((BOOK / "chapters").glob("*.md"))
FIGURE = re.compile(r"^(?P<fence>`{3,}|:{3,})\{figure\}\s*(?P<path>\S+)\s*\n"
                    r"(?P<body>.*?)^(?P=fence)\s*$", re.M | re.S)

#: figure file -> (the chapter that shows it, its name, the chapters that refer to it by number)
PLACES = {
    "seq2seq.svg": ("01_seq2seq_rnn", "fig-ch1-seq2seq",
                    {"01_seq2seq_rnn", "03_additive_attention"}),
    "seq2seq_attention.svg": ("03_additive_attention", "fig-ch3-seq2seq-attention",
                              {"03_additive_attention"}),
    "queries_keys_values.svg": ("05_self_attention", "fig-ch5-qkv", {"05_self_attention"}),
    "multi_head_attention.svg": ("06_multi_head_attention", "fig-ch6-multi-head",
                                 {"06_multi_head_attention"}),
    "encoder_block.svg": ("09_encoder_block", "fig-ch9-encoder-block",
                          {"08_residuals_layer_norm", "09_encoder_block", "10_decoder_block",
                           "11_training_transformer"}),
    "decoder_block.svg": ("10_decoder_block", "fig-ch10-decoder-block", {"10_decoder_block"}),
    "transformer.svg": ("11_training_transformer", "fig-ch11-transformer",
                        {"11_training_transformer"}),
    "bert_gpt_vit.svg": ("12_bert", "fig-ch12-bert-gpt-vit",
                         {"12_bert", "13_gpt", "14_vision_transformer"}),
    "vit_patches.svg": ("14_vision_transformer", "fig-ch14-vit-patches", {"14_vision_transformer"}),
}


def figure_directives() -> list[dict]:
    found = []
    for chapter in CHAPTERS:
        for match in FIGURE.finditer(chapter.read_text(encoding="utf-8")):
            options = dict(re.findall(r"^:([a-z-]+):\s*(.*)$", match["body"], re.M))
            caption = re.sub(r"^:[a-z-]+:.*$", "", match["body"], flags=re.M).strip()
            found.append({"chapter": chapter.stem, "path": match["path"], "options": options,
                          "caption": caption, "file": (chapter.parent / match["path"]).resolve()})
    return found


DIRECTIVES = figure_directives()


def test_every_figure_file_is_shown_once_where_it_belongs():
    files = sorted(p.name for p in (BOOK / "figures").iterdir())
    assert files == sorted(PLACES)
    shown = {d["file"].name: d for d in DIRECTIVES if d["file"].parent == BOOK / "figures"}
    assert sorted(shown) == files
    assert len([d for d in DIRECTIVES if d["file"].parent == BOOK / "figures"]) == len(files)
    for name, (chapter, label, _) in PLACES.items():
        assert (shown[name]["chapter"], shown[name]["options"].get("name")) == (chapter, label)


@pytest.mark.parametrize("directive", DIRECTIVES, ids=lambda d: f"{d['chapter']}:{d['path']}")
def test_every_figure_directive_is_complete(directive):
    assert directive["file"].is_file(), f"{directive['chapter']}: no file {directive['path']}"
    chapter_number = int(directive["chapter"][:2])
    assert directive["options"].get("name", "").startswith(f"fig-ch{chapter_number}-")
    alt = directive["options"].get("alt", "")
    assert len(alt.split()) >= 15, "alt text that says what the figure shows"
    assert len(directive["caption"].split()) >= 15, "a caption that says what to see"


@pytest.mark.parametrize("name", PLACES)
def test_every_figure_is_referred_to_by_number(name):
    chapter, label, referring = PLACES[name]
    referring_now = {c.stem for c in CHAPTERS
                     if f"{{numref}}`{label}`" in c.read_text(encoding="utf-8")}
    assert referring_now == referring
    text = (BOOK / "chapters" / f"{chapter}.md").read_text(encoding="utf-8")
    # the prose points at the figure before the reader reaches it
    assert text.index(f"{{numref}}`{label}`") < text.index(f":name: {label}")
