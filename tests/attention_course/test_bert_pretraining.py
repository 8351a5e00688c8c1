"""MLM corruption (15 %; 80/10/10) and next-sentence pairs, checked statistically and exactly."""

import numpy as np
import pytest

from attention_course.bert_pretraining import IGNORE_INDEX, make_sentence_pairs, mask_tokens

PAD, UNK, CLS, SEP, MASK = 0, 100, 101, 102, 103
SPECIAL = [PAD, UNK, CLS, SEP, MASK]
VOCAB = 30522


def within_binomial_bound(count, n, p, z=5.0):
    """|count - n p| <= z standard deviations of Binomial(n, p)."""
    return abs(count - n * p) <= z * np.sqrt(n * p * (1 - p))


def make_batch(seed=0, B=600, T=256):
    """(B, T) ids shaped like real batches: [CLS] ... [SEP] then padding, some [UNK]s."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(999, VOCAB, size=(B, T))
    lengths = rng.integers(T // 2, T + 1, size=B)
    positions = np.arange(T)
    ids[positions[None] == (lengths[:, None] - 1)] = SEP
    attention_mask = positions[None] < lengths[:, None]
    ids[~attention_mask] = PAD
    ids[rng.random((B, T)) < 0.01] = UNK
    ids[:, 0] = CLS
    return ids, attention_mask


@pytest.fixture(scope="module")
def corrupted():
    ids, attention_mask = make_batch()
    return ids, attention_mask, mask_tokens(ids, mask_id=MASK, vocab_size=VOCAB, special_ids=SPECIAL,
                                            seed=1, attention_mask=attention_mask)


def test_fifteen_percent_of_ordinary_tokens_selected(corrupted):
    ids, attention_mask, out = corrupted
    candidates = ~np.isin(ids, SPECIAL) & attention_mask
    n = candidates.sum()
    assert n > 1e5
    assert within_binomial_bound(out.selected.sum(), n, 0.15)


@pytest.mark.parametrize("which, p", [("masked", 0.8), ("randomized", 0.1), ("unchanged", 0.1)])
def test_eighty_ten_ten_split_of_selected(corrupted, which, p):
    _, _, out = corrupted
    unchanged = out.selected & ~out.masked & ~out.randomized
    chosen = {"masked": out.masked, "randomized": out.randomized, "unchanged": unchanged}[which]
    assert within_binomial_bound(chosen.sum(), out.selected.sum(), p)


def test_special_and_padding_tokens_never_selected(corrupted):
    ids, attention_mask, out = corrupted
    assert not out.selected[np.isin(ids, SPECIAL)].any()
    assert not out.selected[~attention_mask].any()


def test_inputs_and_labels_are_consistent(corrupted):
    ids, _, out = corrupted
    np.testing.assert_array_equal(out.inputs[~out.selected], ids[~out.selected])
    assert (out.inputs[out.masked] == MASK).all()
    unchanged = out.selected & ~out.masked & ~out.randomized
    np.testing.assert_array_equal(out.inputs[unchanged], ids[unchanged])
    random_tokens = out.inputs[out.randomized]
    assert not np.isin(random_tokens, SPECIAL).any() and random_tokens.max() < VOCAB
    # random replacements are spread over the vocabulary, not one token
    assert len(np.unique(random_tokens)) > 0.9 * len(random_tokens)
    np.testing.assert_array_equal(out.labels[out.selected], ids[out.selected])
    assert (out.labels[~out.selected] == IGNORE_INDEX).all()
    assert not (out.masked & out.randomized).any()
    assert out.inputs.shape == out.labels.shape == ids.shape


def test_seeded_and_deterministic():
    ids, mask = make_batch(B=8, T=32)
    a = mask_tokens(ids, mask_id=MASK, vocab_size=VOCAB, special_ids=SPECIAL, seed=7, attention_mask=mask)
    b = mask_tokens(ids, mask_id=MASK, vocab_size=VOCAB, special_ids=SPECIAL, seed=7, attention_mask=mask)
    c = mask_tokens(ids, mask_id=MASK, vocab_size=VOCAB, special_ids=SPECIAL, seed=8, attention_mask=mask)
    np.testing.assert_array_equal(a.inputs, b.inputs)
    np.testing.assert_array_equal(a.labels, b.labels)
    assert not np.array_equal(a.selected, c.selected)


@pytest.mark.parametrize("select_prob, mask_prob, random_prob", [(0.3, 1.0, 0.0), (0.5, 0.0, 1.0),
                                                                 (0.25, 0.5, 0.25)])
def test_other_proportions(select_prob, mask_prob, random_prob):
    ids, mask = make_batch(seed=3, B=200, T=128)
    out = mask_tokens(ids, mask_id=MASK, vocab_size=VOCAB, special_ids=SPECIAL, seed=0,
                      attention_mask=mask, select_prob=select_prob, mask_prob=mask_prob,
                      random_prob=random_prob)
    n = (~np.isin(ids, SPECIAL) & mask).sum()
    assert within_binomial_bound(out.selected.sum(), n, select_prob)
    assert within_binomial_bound(out.masked.sum(), out.selected.sum(), mask_prob)
    assert within_binomial_bound(out.randomized.sum(), out.selected.sum(), random_prob)


def test_without_attention_mask_padding_is_still_excluded_as_special():
    ids, _ = make_batch(B=50, T=64)
    out = mask_tokens(ids, mask_id=MASK, vocab_size=VOCAB, special_ids=SPECIAL, seed=0)
    assert not out.selected[ids == PAD].any() and out.selected.any()


def test_mask_tokens_errors():
    ids, _ = make_batch(B=2, T=8)
    kwargs = dict(mask_id=MASK, vocab_size=VOCAB, special_ids=SPECIAL)
    with pytest.raises(ValueError, match="integer"):
        mask_tokens(ids.astype(float), **kwargs)
    with pytest.raises(ValueError, match="vocab_size"):
        mask_tokens(ids, mask_id=MASK, vocab_size=500, special_ids=SPECIAL)
    with pytest.raises(ValueError, match="attention_mask"):
        mask_tokens(ids, attention_mask=np.ones((2, 7), bool), **kwargs)
    with pytest.raises(ValueError, match="mask_prob"):
        mask_tokens(ids, mask_prob=0.9, random_prob=0.2, **kwargs)
    with pytest.raises(ValueError, match="mask_id"):
        mask_tokens(ids, mask_id=MASK, vocab_size=VOCAB, special_ids=[PAD, CLS, SEP])
    with pytest.raises(ValueError, match="ignore_index"):
        mask_tokens(ids, ignore_index=0, **kwargs)


# ------------------------------------------------------------ next-sentence prediction

DOCUMENTS = [[f"d{d} s{s}." for s in range(length)] for d, length in enumerate([5, 1, 8, 3, 12, 2])]


def test_half_of_the_pairs_are_next():
    pairs = make_sentence_pairs(DOCUMENTS, 20000, seed=0)
    assert len(pairs) == 20000
    assert within_binomial_bound(pairs.is_next.sum(), 20000, 0.5)


def test_is_next_pairs_are_consecutive_and_not_next_from_other_documents():
    pairs = make_sentence_pairs(DOCUMENTS, 5000, seed=1)
    doc_a, sent_a = pairs.first_index.T
    doc_b, sent_b = pairs.second_index.T
    nxt = pairs.is_next
    np.testing.assert_array_equal(doc_b[nxt], doc_a[nxt])
    np.testing.assert_array_equal(sent_b[nxt], sent_a[nxt] + 1)
    assert (doc_b[~nxt] != doc_a[~nxt]).all()
    assert all(DOCUMENTS[d][s] == text for (d, s), text in zip(pairs.first_index, pairs.first))
    assert all(DOCUMENTS[d][s] == text for (d, s), text in zip(pairs.second_index, pairs.second))
    # A is never a document's last sentence; the one-sentence document is never A
    lengths = np.array([len(doc) for doc in DOCUMENTS])
    assert (sent_a < lengths[doc_a] - 1).all() and not (doc_a == 1).any()
    # NotNext B is drawn from every other document, the one-sentence one included
    assert set(doc_b[~nxt]) == set(range(len(DOCUMENTS)))


def test_not_next_second_sentence_is_uniform_over_other_documents():
    pairs = make_sentence_pairs(DOCUMENTS, 40000, seed=2)
    nxt = pairs.is_next
    from_doc4 = ~nxt & (pairs.first_index[:, 0] == 4)   # 31 - 12 = 19 sentences elsewhere
    counts = np.bincount(pairs.second_index[from_doc4, 0], minlength=len(DOCUMENTS))
    lengths = np.array([len(doc) for doc in DOCUMENTS])
    expected_share = np.where(np.arange(len(DOCUMENTS)) == 4, 0, lengths) / (lengths.sum() - 12)
    for doc in range(len(DOCUMENTS)):
        assert within_binomial_bound(counts[doc], from_doc4.sum(), expected_share[doc])


def test_sentence_pairs_deterministic_and_errors():
    a = make_sentence_pairs(DOCUMENTS, 50, seed=3)
    b = make_sentence_pairs(DOCUMENTS, 50, seed=3)
    assert a.first == b.first and a.second == b.second
    with pytest.raises(ValueError, match="2 documents"):
        make_sentence_pairs(DOCUMENTS[:1], 5)
    with pytest.raises(ValueError, match="two sentences"):
        make_sentence_pairs([["a"], ["b"]], 5)
    with pytest.raises(ValueError, match="at least one sentence"):
        make_sentence_pairs([["a", "b"], []], 5)
    with pytest.raises(ValueError, match="str"):
        make_sentence_pairs([["a", 3], ["b"]], 5)


def test_same_document_not_next_shares_the_document_but_is_neither_a_nor_its_successor():
    """The control of chapter 12: NotNext pairs whose B has A's topic (its document)."""
    documents = [doc for doc in DOCUMENTS if len(doc) >= 3]
    pairs = make_sentence_pairs(documents, 20000, seed=4, not_next_from="same document")
    usual = make_sentence_pairs(documents, 20000, seed=4)
    np.testing.assert_array_equal(pairs.is_next, usual.is_next)          # the same A's and labels
    assert pairs.first == usual.first
    nxt = pairs.is_next
    (doc_a, sent_a), (doc_b, sent_b) = pairs.first_index.T, pairs.second_index.T
    np.testing.assert_array_equal(sent_b[nxt], sent_a[nxt] + 1)
    assert (doc_b == doc_a).all()
    assert not ((sent_b[~nxt] == sent_a[~nxt]) | (sent_b[~nxt] == sent_a[~nxt] + 1)).any()
    assert all(documents[d][s] == text for (d, s), text in zip(pairs.second_index, pairs.second))
    # uniform over the others: from sentence 0 of the 5-sentence document, B is 2, 3 or 4
    from_first = ~nxt & (doc_a == 0) & (sent_a == 0)
    counts = np.bincount(sent_b[from_first], minlength=5)
    assert counts[:2].sum() == 0
    for s in (2, 3, 4):
        assert within_binomial_bound(counts[s], from_first.sum(), 1 / 3)


def test_same_document_not_next_needs_three_sentences_a_document():
    with pytest.raises(ValueError, match="at least 3 sentences"):
        make_sentence_pairs(DOCUMENTS, 5, not_next_from="same document")
    with pytest.raises(ValueError, match="not_next_from"):
        make_sentence_pairs(DOCUMENTS, 5, not_next_from="next document")
