"""The attention explorer's HTML and data (its behaviour in a browser: tests/site/test_site_explorer.py)."""

import html
import json
import re

import numpy as np
import pytest
from matplotlib import colormaps
from matplotlib.colors import to_hex

from attention_course.attention import dot_product_attention, scaled_dot_product_attention
from attention_course.chapter_tools import explorer
from attention_course.masks import causal_mask


def softmax_rows(rng, *shape):
    x = np.exp(rng.normal(size=shape) * 2)
    return x / x.sum(-1, keepdims=True)


def embedded_json(page: str) -> dict:
    match = re.search(r'<script type="application/json" class="attention-explorer-data">(.*?)</script>', page, re.S)
    return json.loads(match.group(1))


def test_the_page_holds_the_maps_rounded_as_shown():
    rng = np.random.default_rng(0)
    weights = softmax_rows(rng, 2, 3, 4, 5)
    shown = explorer.attention_explorer("maps", [explorer.Example("one", list("abcd"), list("vwxyz"), weights)])
    data = embedded_json(shown._repr_html_())
    assert data["layers"] == ["layer 1", "layer 2"] and data["heads"] == ["head 1", "head 2", "head 3"]
    stored = np.asarray(data["examples"][0]["weights"]) / data["precision"]
    assert stored.shape == (2, 3, 4, 5)
    np.testing.assert_allclose(stored, weights, atol=0.5 / data["precision"] + 1e-12)


def test_the_static_picture_draws_the_first_head():
    rng = np.random.default_rng(1)
    weights = softmax_rows(rng, 1, 2, 3, 3)
    page = explorer.attention_explorer("maps", [explorer.Example("x", list("abc"), list("abc"), weights)])._repr_html_()
    static = page.split('<div class="attention-explorer-static">')[1].split('<div class="attention-explorer-live"')[0]
    titles = re.findall(r"<title>(.*?)</title>", static)
    assert len(titles) == 9
    values = [float(html.unescape(t).rsplit(": ", 1)[1]) for t in titles]
    np.testing.assert_allclose(values, weights[0, 0].ravel(), atol=0.006)
    # Each cell has the colour matplotlib's viridis gives its weight, as in the figures.
    fills = re.findall(r'<rect [^>]*fill="(#[0-9a-f]{6})"><title>', static)
    assert fills == [to_hex(colormaps["viridis"](w)) for w in np.asarray(values)]


def test_colours_are_matplotlibs_viridis_from_0_to_1():
    viridis = colormaps["viridis"]
    weights = np.concatenate([np.linspace(0, 1, 1001), np.arange(257) / 256, [0.37, 0.999999, 1e-9]])
    assert [explorer.colour(w) for w in weights] == [to_hex(viridis(w)) for w in weights]
    assert (explorer.colour(-0.1), explorer.colour(1.2)) == (to_hex(viridis(0.0)), to_hex(viridis(1.0)))
    # The page carries the whole table, from which explorer.js takes the same colours.
    data = embedded_json(explorer.toy_explorer("t", ["a"], np.ones((1, 1)), np.ones((1, 1)))._repr_html_())
    assert data["colours"] == [to_hex(c) for c in viridis(np.arange(viridis.N))]


def test_the_static_picture_has_a_colour_bar_from_0_to_1():
    weights = np.full((1, 1, 2, 2), 0.5)
    page = explorer.attention_explorer("maps", [explorer.Example("x", list("ab"), list("ab"), weights)])._repr_html_()
    static = page.split('<div class="attention-explorer-static">')[1].split('<div class="attention-explorer-live"')[0]
    bar = static.split('<svg class="attention-explorer-colour-bar"')[1]
    ticks = re.findall(r'y="([\d.]+)" dominant-baseline="middle">([\d.]+)</text>', bar)
    assert [label for _, label in ticks] == ["0", "0.5", "1"]
    assert float(ticks[2][0]) < float(ticks[1][0]) < float(ticks[0][0])           # 1 at the top
    assert "attention weight</text>" in bar
    bands = sorted((float(y), fill) for y, fill in re.findall(r'<rect x="\d+" y="([\d.]+)"[^>]*fill="(#\w+)"', bar))
    centres = 1 - (np.arange(len(bands)) + 0.5) / len(bands)                     # top to bottom
    assert [fill for _, fill in bands] == [to_hex(colormaps["viridis"](c)) for c in centres]


def test_tokens_and_titles_are_escaped():
    weights = np.full((1, 1, 1, 1), 1.0)
    page = explorer.attention_explorer("</script><b>", [explorer.Example("<i>", ["</script>"], ["&"], weights)])._repr_html_()
    assert page.count("</script>") == 2            # the data's own and the script's
    assert embedded_json(page)["examples"][0]["queries"] == ["</script>"]


@pytest.mark.parametrize("scale, causal", [(True, False), (False, False), (True, True), (False, True)])
def test_toy_weights_are_the_course_attention(scale, causal):
    rng = np.random.default_rng(2)
    q, k = rng.normal(size=(5, 4)), rng.normal(size=(5, 4))
    mask = causal_mask(5) if causal else None
    if scale:
        _, expected = scaled_dot_product_attention(q, k, k, mask=mask)
    else:
        _, expected = dot_product_attention(q, k, k, mask=mask)
    np.testing.assert_allclose(explorer.toy_weights(q, k, scale=scale, causal=causal), expected, rtol=1e-12)


def test_the_toy_stores_what_the_page_computes_from():
    rng = np.random.default_rng(3)
    q, k = rng.normal(size=(3, 2)), rng.normal(size=(3, 2))
    data = embedded_json(explorer.toy_explorer("toy", ["a", "b", "c"], q, k)._repr_html_())["toy"]
    np.testing.assert_allclose(data["query"], q, atol=5e-5)
    assert data["tokens"] == ["a", "b", "c"]


@pytest.mark.parametrize("weights, message", [
    (np.ones((2, 3, 3)), "must be \\(layers, heads, T_q, T_k\\)"),
    (np.ones((1, 1, 3, 4)), "must be \\(layers, heads, T_q, T_k\\)"),
    (np.full((1, 1, 3, 3), 2.0), "must lie in \\[0, 1\\]"),
    (np.full((1, 1, 3, 3), np.nan), "must lie in \\[0, 1\\]"),
])
def test_wrong_maps_get_a_message_that_names_the_problem(weights, message):
    with pytest.raises(ValueError, match=message):
        explorer.attention_explorer("t", [explorer.Example("bad", list("abc"), list("abc"), weights)])


def test_examples_must_agree_on_layers_and_heads():
    one = explorer.Example("a", ["x"], ["y"], np.ones((1, 2, 1, 1)))
    other = explorer.Example("b", ["x"], ["y"], np.ones((2, 2, 1, 1)))
    with pytest.raises(ValueError, match="layers and heads"):
        explorer.attention_explorer("t", [one, other])
    with pytest.raises(ValueError, match="head names"):
        explorer.attention_explorer("t", [one], head_names=["only one"])
    with pytest.raises(ValueError, match="at least one query and one key"):
        explorer.attention_explorer("t", [explorer.Example("empty", [], [], np.ones((1, 1, 0, 0)))])
    with pytest.raises(ValueError, match="at least one example"):
        explorer.attention_explorer("t", [])
    with pytest.raises(ValueError, match="\\(T, d_k\\)"):
        explorer.toy_explorer("t", ["a", "b"], np.ones((2, 3)), np.ones((3, 3)))
