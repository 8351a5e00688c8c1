"""The from-scratch WordPiece tokenizer == the `tokenizers` library on the shipped tokenizer.json."""

import numpy as np
import pytest
from tokenizers import Tokenizer

from attention_course.weights.pretrained import load_tokenizer, model_dir
from attention_course.tokenization import (CLS, SEP, UNK, WordPieceTokenizer, is_punctuation,
                                           normalize, pre_tokenize)


@pytest.fixture(scope="module")
def ours():
    return load_tokenizer()


@pytest.fixture(scope="module")
def theirs():
    tokenizer = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
    # the shipped file pads/truncates to 128 tokens; compare the plain encodings
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


TEXTS = {
    "sentence": "The animal didn't cross the street because it was too tired.",
    "punctuation": "Wait... what?! (Really) -- yes; no: maybe/perhaps [sic] {x} <tag> \"q\" 'a'",
    "ascii symbols": "Price: $3.50 + 20% tax = $4.20 ^_^ a|b ~c `d` #e @f &g *h",
    "accents": "Café naïve résumé Ångström Ñandú façade coöperate",
    "accents only combining": "e\u0301 a\u0300\u0301 n\u0303",
    "unknown word": "Pneumonoultramicroscopicsilicovolcanoconiosis xqzjvw",
    "subwords": "tokenization unbelievably transformers embeddings",
    "long word 100": "a" * 100,
    "long word 101": "a" * 101 + " ok",
    "numbers": "123456789 3.14159 1,000,000 2nd 10x 0.5e-3",
    "mixed case": "MiXeD CaSe iPhone McDonald's NASA eBay",
    "emoji": "I ❤️ NLP 😀👍🏽 🦀 🫠 🙂",
    "chinese": "我爱北京天安门",
    "japanese": "日本語のテキストです",
    "korean": "한국어 텍스트",
    "cjk mixed with latin": "BERT模型is很好",
    "greek": "ΟΔΟΣ Σ σ ς Ελληνικά",
    "turkish dotted I": "İstanbul ıi",
    "whitespace": "tab\there\nnewline\r\nend   many   spaces\u00a0nbsp\u3000ideographic",
    "control characters": "a\x0bb\x0cc\x85d\x07e\u200bf\u00adg\u200dh\x1ci\ufffdj\x00k",
    "unassigned and private use": "x \U0010ffff y \ue000 z",
    "empty": "",
    "only spaces": "   \t ",
    "special tokens in text": "Paris is the [MASK] of France. [SEP] [UNK] [CLS]x",
    "url and e-mail": "mail someone@example.com or see http://x.y/z?q=1&r=2#frag",
    "typographic": "«quotes» “smart” ‘single’ — dash … ellipsis • bullet",
    "ligatures and fullwidth": "ﬁne ß ẞ Ｆｕｌｌｗｉｄｔｈ ①②",
    "shakespeare": "O Romeo, Romeo! wherefore art thou Romeo? 'Tis now struck twelve.",
}


@pytest.mark.parametrize("name", TEXTS)
def test_encode_matches_tokenizers_library(ours, theirs, name):
    text = TEXTS[name]
    expected = theirs.encode(text)
    got = ours.encode(text)
    assert list(got.tokens) == expected.tokens
    np.testing.assert_array_equal(got.ids, expected.ids)
    np.testing.assert_array_equal(got.type_ids, expected.type_ids)


@pytest.mark.parametrize("name", TEXTS)
def test_decode_matches_tokenizers_library(ours, theirs, name):
    ids = theirs.encode(TEXTS[name]).ids
    assert ours.decode(ids) == theirs.decode(ids)
    assert ours.decode(ids, skip_special_tokens=False) == theirs.decode(ids, skip_special_tokens=False)


def test_pairs_match_tokenizers_library(ours, theirs):
    a, b = TEXTS["sentence"], "It was too wide, wasn't it?"
    expected = theirs.encode(a, b)
    got = ours.encode(a, b)
    assert list(got.tokens) == expected.tokens
    np.testing.assert_array_equal(got.ids, expected.ids)
    np.testing.assert_array_equal(got.type_ids, expected.type_ids)
    assert got.type_ids[0] == 0 and got.type_ids[-1] == 1
    assert got.tokens.count(SEP) == 2


def test_random_texts_match_tokenizers_library(ours, theirs):
    """Seeded random strings over a pool mixing every kind of character above."""
    pool = list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                "      .,;:!?'\"()[]{}<>-_/\\@#$%^&*+=|~`éèêëàâäôöüçñÉÀÖÜßøåæœ"
                "\t\n\u00a0\u0301\u200b\x0b我爱北京日本語のカ한국😀🦀❤️ΣσςΩ«»—…")
    rng = np.random.default_rng(0)
    texts = ["".join(rng.choice(pool, size=rng.integers(1, 60))) for _ in range(200)]
    for text in texts:
        assert list(ours.encode(text).tokens) == theirs.encode(text).tokens, repr(text)


def test_vocab_txt_equals_tokenizer_json_vocab(ours, theirs):
    vocab = theirs.get_vocab()
    assert len(ours) == len(vocab) == 30522
    assert all(vocab[token] == i for i, token in enumerate(ours.id_to_token))


# A tiny vocabulary where the greedy choice differs from the best one.
TINY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",
        "un", "##aff", "##affa", "##able", "##ble", "play", "##ing", "##s", "p", "##l",
        "##a", "##y", "!", "the"]


def test_longest_match_first_is_greedy():
    tokenizer = WordPieceTokenizer(TINY)
    assert tokenizer.tokenize("playing") == ["play", "##ing"]        # not p ##l ##a ##y ##ing
    assert tokenizer.tokenize("plays!") == ["play", "##s", "!"]
    # "##affa" is the longest match after "un"; then "##ble" finishes the word.
    assert tokenizer.tokenize("unaffable") == ["un", "##affa", "##ble"]


def test_word_that_cannot_be_covered_is_one_unk():
    tokenizer = WordPieceTokenizer([t for t in TINY if t != "##ble"])
    # greedy takes "##affa" and is then stuck at "ble": the whole word is [UNK],
    # even though un ##aff ##able would have covered it (WordPiece does not backtrack)
    assert tokenizer.tokenize("unaffable the") == [UNK, "the"]
    assert tokenizer.tokenize("xplay") == [UNK]   # no piece starts with x


@pytest.mark.parametrize("max_chars, expected", [(100, ["play", "##ing"]),
                                                 (7, ["play", "##ing"]),   # len("playing") == 7
                                                 (6, [UNK])])
def test_max_chars_per_word(max_chars, expected):
    tokenizer = WordPieceTokenizer(TINY, max_chars_per_word=max_chars)
    assert tokenizer.tokenize("playing") == expected


def test_basic_tokenization_steps():
    assert normalize("Héllo\tWÖRLD\x0bx") == "hello worldx"   # \x0b is removed, not a space
    assert normalize("a中b") == "a 中 b"
    assert normalize("Crème", lowercase=False) == "Crème"
    assert normalize("Crème", lowercase=False, strip_accents=True) == "Creme"
    assert pre_tokenize("isn't it?! $5") == ["isn", "'", "t", "it", "?", "!", "$", "5"]
    assert all(is_punctuation(c) for c in "$+<=>^`|~«»—…")
    assert not any(is_punctuation(c) for c in "a5é中 ")


def test_encode_batch_pads_and_masks(ours):
    texts = ["a short one", "a somewhat longer sentence than the first one", ("pair a", "pair b")]
    batch = ours.encode_batch(texts)
    singles = [ours.encode(*t) if isinstance(t, tuple) else ours.encode(t) for t in texts]
    assert batch.ids.shape == batch.type_ids.shape == batch.attention_mask.shape
    assert batch.ids.shape == (3, max(len(s) for s in singles))
    for row, single in enumerate(singles):
        n = len(single)
        np.testing.assert_array_equal(batch.ids[row, :n], single.ids)
        np.testing.assert_array_equal(batch.type_ids[row, :n], single.type_ids)
        assert batch.attention_mask[row, :n].all() and not batch.attention_mask[row, n:].any()
        assert (batch.ids[row, n:] == 0).all()
    with pytest.raises(ValueError, match="max_length"):
        ours.encode_batch(texts, max_length=5)


def test_encode_and_decode_round_trip(ours):
    encoding = ours.encode("Transformers, embeddings and tokenization!")
    assert encoding.tokens[0] == CLS and encoding.tokens[-1] == SEP
    assert ours.decode(encoding.ids) == "transformers, embeddings and tokenization!"


def test_clear_errors(ours):
    with pytest.raises(ValueError, match="special tokens"):
        WordPieceTokenizer(["a", "b"])
    with pytest.raises(ValueError, match="duplicate"):
        WordPieceTokenizer(TINY + ["play"])
    with pytest.raises(ValueError, match="str"):
        ours.tokenize(b"bytes")
    with pytest.raises(ValueError, match="ids must lie"):
        ours.decode([101, 99999])
    with pytest.raises(ValueError, match="1-D"):
        ours.decode([[101, 102]])
    with pytest.raises(ValueError, match="list of texts"):
        ours.encode_batch("one text")
