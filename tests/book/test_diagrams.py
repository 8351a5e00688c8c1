"""The architecture diagrams: drawn the same every time, kept in step with book/figures,
well-formed and accessible SVG that says what the figure claims, in a readable palette."""

import itertools
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from book_build import diagrams  # a build-time tool: python scripts/diagrams.py FOLDER

ROOT = Path(__file__).resolve().parents[2]
FIGURES = ROOT / "book" / "figures"
SVG = "{http://www.w3.org/2000/svg}"


def labels(svg_text: str) -> list[str]:
    """The text of every ``<text>`` element, a lowered run written as ``_x``, a raised one ``^x``."""
    root = ET.fromstring(svg_text)
    found = []
    for element in root.iter(SVG + "text"):
        parts = [element.text or ""]
        for run in element:
            shifted = run.get("font-size") is not None
            mark = ("_" if float(run.get("dy", "0")) > 0 else "^") if shifted else ""
            parts += [mark + (run.text or ""), run.tail or ""]
        found.append("".join(parts))
    return found


@pytest.fixture(scope="module")
def drawn():
    return {name: draw() for name, draw in diagrams.FIGURES.items()}


def test_the_committed_figures_are_what_the_code_draws(tmp_path):
    written = diagrams.write_figures(tmp_path)
    assert sorted(p.name for p in written) == sorted(p.name for p in FIGURES.glob("*")), \
        "book/figures holds exactly the drawn figures"
    for path in written:
        assert path.read_bytes() == (FIGURES / path.name).read_bytes(), (
            f"book/figures/{path.name} is out of date: "
            "run `python scripts/diagrams.py book/figures`")


def test_a_fresh_process_draws_the_same_bytes(tmp_path):
    """No set or dict order, time or randomness leaks into the files (another hash seed)."""
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    subprocess.run([sys.executable, str(ROOT / "scripts" / "diagrams.py"), str(tmp_path)],
                   check=True, env=env, capture_output=True, cwd=ROOT)
    for name, draw in diagrams.FIGURES.items():
        assert (tmp_path / name).read_text(encoding="utf-8") == draw(), name


def test_the_command_says_how_to_use_it_without_a_folder(capsys):
    assert diagrams.main([]) == 2
    assert "python scripts/diagrams.py FOLDER" in capsys.readouterr().err


@pytest.mark.parametrize("name", diagrams.FIGURES)
def test_every_figure_is_accessible_svg_that_scales(drawn, name):
    root = ET.fromstring(drawn[name])
    assert root.tag == SVG + "svg"
    width, height = float(root.get("width")), float(root.get("height"))
    assert root.get("viewBox") == f"0 0 {root.get('width')} {root.get('height')}"
    assert width == diagrams.WIDTH and 200 <= height <= 800
    title, desc = root.find(SVG + "title"), root.find(SVG + "desc")
    assert title is not None and title.text.strip()
    assert desc is not None and len(desc.text.split()) >= 30   # says what the picture shows
    assert root.get("role") == "img"
    assert root.get("aria-labelledby").split() == [title.get("id"), desc.get("id")]
    assert root.get("font-family").startswith("DejaVu Sans,")
    # every arrowhead refers to a marker of this figure
    markers = {m.get("id") for m in root.iter(SVG + "marker")}
    used = {e.get("marker-end")[5:-1] for e in root.iter() if e.get("marker-end")}
    assert used and used <= markers
    # no image fetched from anywhere, no script
    assert not list(root.iter(SVG + "image")) and not list(root.iter(SVG + "script"))
    assert "http" not in drawn[name].replace("http://www.w3.org/2000/svg", "")


#: What each figure must name (the text of one <text> element each), as the chapters say it.
CLAIMS = {
    "seq2seq.svg": ["the", "old", "boat", "h_1", "h_3", "c", "s_1", "s_4", "<s>", "le", "bateau",
                    "vieux", "</s>"],
    "seq2seq_attention.svg": ["h_1", "h_2", "h_3", "s_0", "c_1", "c_2", "c_3", "c_4", "0.84",
                              "query s_2", "c_3 = Σ_j α_3j h_j:"],
    "queries_keys_values.svg": ["X", "W_Q", "W_K", "W_V", "Q", "K", "V", "(T_q, d_k)",
                                "(T_k, d_k)", "(T_k, d_v)", "Q K^T / √d_k", "scores (T_q, T_k)",
                                "softmax", "weights A (T_q, T_k)", "A V",
                                "(T_q, d_v): a new vector per query"],
    "multi_head_attention.svg": ["(B, T, d_model)", "W_Q", "W_K", "W_V", "(B, T, N·d_k)",
                                 "split heads", "(B, N, T, d_k)", "weights (B, N, T, T):",
                                 "merge heads (concatenate)", "W_O", "d_k = d_model / N:"],
    "encoder_block.svg": ["post-LN:  LN(x + F(x))", "pre-LN:  x + F(LN(x))",
                          "Multi-head self-attention", "Feed-forward network", "Layer norm",
                          "N ×", "x: (B, S, d_model)", "once, after"],
    "decoder_block.svg": ["Masked multi-head self-attention", "Multi-head cross-attention",
                          "Feed-forward network", "Layer norm", "keys, values", "queries",
                          "m: encoder output", "(B, S, d_model)", "causal mask:", "N ×"],
    "transformer.svg": ["Encoder", "Decoder", "Embedding × √d_model", "positions",
                        "Multi-head self-attention", "Masked multi-head self-attention",
                        "Multi-head cross-attention", "Feed-forward network", "Layer norm",
                        "N ×", "Linear (to the vocabulary)", "Softmax", "keys and values"],
    "bert_gpt_vit.svg": ["BERT: encoder only", "GPT: decoder only", "ViT: encoder only",
                         "[CLS]", "[MASK]", "cat", "[class]", "a causal mask", "3"],
    "vit_patches.svg": ["image, 8 × 8", "P = 2: 16 patches", "15", "16", "class token",
                        "× E: one learned linear map for every patch, 4 → d_model",
                        "+ position", "17 × d_model", "Layer norm, linear head",
                        "scores of the 10 digits"],
}


def test_every_figure_has_its_claims():
    assert sorted(CLAIMS) == sorted(diagrams.FIGURES)


@pytest.mark.parametrize("name", diagrams.FIGURES)
def test_the_labels_are_what_the_figure_claims(drawn, name):
    found = labels(drawn[name])
    missing = [label for label in CLAIMS[name] if label not in found]
    assert not missing, f"{name} does not say {missing}; it says {found}"


def test_the_number_of_things_drawn_matches_the_model():
    """Counts a reader would check: three sub-layers in the decoder, three projections, ..."""
    figures = {name: labels(draw()) for name, draw in diagrams.FIGURES.items()}
    assert figures["transformer.svg"].count("Layer norm") == 2 + 3 + 2   # pre-LN, final norms
    assert figures["encoder_block.svg"].count("Layer norm") == 2 + 3     # post-LN | pre-LN + final
    assert figures["decoder_block.svg"].count("Layer norm") == 3         # post-LN
    assert figures["multi_head_attention.svg"].count("split heads") == 3
    assert figures["multi_head_attention.svg"].count("(B, N, T, d_k)") == 4
    assert [figures["vit_patches.svg"].count(str(n)) for n in (0, 15, 16)] == [2, 2, 1]
    assert figures["seq2seq_attention.svg"].count("0.08") == 2


def test_the_causal_mask_is_lower_triangular():
    shades = diagrams.mask_shades(4, causal=True)
    assert shades == [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]]
    assert all(v == 1 for row in diagrams.mask_shades(3, causal=False) for v in row)


def test_patches_are_cut_row_by_row():
    image = [[10 * r + c for c in range(4)] for r in range(4)]
    assert diagrams.patch(image, 0) == [[0, 1], [10, 11]]
    assert diagrams.patch(image, 1) == [[2, 3], [12, 13]]
    assert diagrams.patch(image, 2) == [[20, 21], [30, 31]]


def test_sub_and_superscripts_return_to_the_baseline():
    text = diagrams.rich_text("Q K^{T} / √d_{k} & <x>", 12)
    assert "&amp;" in text and "&lt;x&gt;" in text
    shifts = [float(v) for v in re.findall(r'dy="([-\d.]+)"', text)]
    assert shifts == [-4.8, 4.8, 3.6, -3.6]
    assert diagrams.rich_text("plain", 12) == "plain"


# --- the palette: readable text on every colour, distinct colours for colour-blind readers ----

def _linear(colour: str) -> np.ndarray:
    rgb = np.array([int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)])
    return np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)


def _contrast(a: str, b: str) -> float:
    """WCAG 2 contrast ratio."""
    luminance = [float(_linear(c) @ [0.2126, 0.7152, 0.0722]) for c in (a, b)]
    light, dark = max(luminance), min(luminance)
    return (light + 0.05) / (dark + 0.05)


def _lab(linear_rgb: np.ndarray) -> np.ndarray:
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722],
                    [0.0193, 0.1192, 0.9505]]) @ np.clip(linear_rgb, 0, 1)
    t = xyz / np.array([0.95047, 1.0, 1.08883])
    f = np.where(t > 0.008856, np.cbrt(t), 7.787 * t + 16 / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


#: Machado, Oliveira & Fernandes (2009), full severity, on linear RGB.
DICHROMACY = {
    "protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216],
                   [-0.003882, -0.048116, 1.051998]],
    "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413],
                     [-0.011820, 0.042940, 0.968881]],
    "tritanopia": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602],
                   [0.004733, 0.691367, 0.303900]],
}


@pytest.mark.parametrize("role", diagrams.PALETTE)
def test_text_is_readable_on_every_colour(role):
    assert _contrast(diagrams.INK, diagrams.PALETTE[role].fill) >= 4.5   # WCAG AA
    assert _contrast(diagrams.MUTED, "#FFFFFF") >= 4.5


@pytest.mark.parametrize("vision", ["normal", *DICHROMACY])
def test_the_roles_colours_stay_apart_for_colour_blind_readers(vision):
    matrix = np.eye(3) if vision == "normal" else np.array(DICHROMACY[vision])
    roles = [role for role in diagrams.PALETTE if role != "tensor"]
    for a, b in itertools.combinations(roles, 2):
        seen = [_lab(matrix @ _linear(diagrams.PALETTE[r].fill)) for r in (a, b)]
        assert np.linalg.norm(seen[0] - seen[1]) >= 10, f"{a} and {b} look alike ({vision})"


def test_every_text_is_at_least_9_px_where_the_site_shows_it(drawn):
    """The site shows a diagram at most SHOWN_WIDTH px wide, its text scaled with it: every
    font size, subscripts included, must still be 9 CSS px there (the figure check's bar)."""
    scale = diagrams.SHOWN_WIDTH / diagrams.WIDTH
    for name, svg in drawn.items():
        root = ET.fromstring(svg)
        width = float(root.get("width"))
        sizes = [float(e.get("font-size")) for e in root.iter() if e.get("font-size")]
        smallest = min(sizes) * min(1.0, diagrams.SHOWN_WIDTH / width)
        assert smallest >= 9.0, f"{name}: text of {smallest:.2f} px on the site (width {width:g})"
    assert 12 * 0.75 * scale < 9.0 <= diagrams.SMALL_SIZE * diagrams.SCRIPT_SHARE * scale
