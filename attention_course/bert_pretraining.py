"""BERT's two pre-training tasks: masked language modelling and next-sentence prediction.

**Masked language model** (Devlin et al. 2019, section 3.1).  Choose 15 % of
the tokens at random; the model must predict the original token at each chosen
position from the rest of the sentence.  Of the chosen tokens

* 80 % are replaced by ``[MASK]``,
* 10 % by a random token,
* 10 % are left unchanged,

so that the model cannot learn "predict only where I see ``[MASK]``" (a token
it never sees in fine-tuning) and must keep a good representation of every
token.  Special tokens (``[CLS]``, ``[SEP]``, ``[PAD]``, ...) are never chosen.

Each token is chosen independently with probability 15 % (as Hugging Face's
``DataCollatorForLanguageModeling`` does), so a sequence may have a few more or
fewer than 15 %; Google's original code instead picks exactly
``round(0.15 * length)`` positions per sequence.  Random replacement tokens are
drawn uniformly from the *non-special* vocabulary.

**Next-sentence prediction** (section 3.1, task 2).  Pairs ``(A, B)`` where half
the time ``B`` is the sentence that follows ``A`` in its document (IsNext) and
half the time a random sentence from another document (NotNext); the model
classifies the pair from the ``[CLS]`` token of ``[CLS] A [SEP] B [SEP]``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .checks import checked

IGNORE_INDEX = -100


@dataclass(frozen=True)
class MaskedTokens:
    """The result of :func:`mask_tokens`; every array has the shape of the input ``(B, T)``.

    Attributes:
        inputs: int token ids the model sees (corrupted at the selected positions).
        labels: the original token id at each selected position and
            ``ignore_index`` (default -100) everywhere else; -100 is what
            ``keras.losses.SparseCategoricalCrossentropy(ignore_class=-100)`` and
            PyTorch's cross-entropy skip, so only selected positions are scored.
        selected: bool, the positions chosen for prediction (15 %).
        masked: bool, selected positions replaced by ``[MASK]`` (80 % of them).
        randomized: bool, selected positions replaced by a random token (10 %).
            Selected positions in neither are left unchanged (10 %).

    Used by the code of chapter 12, *Pre-training BERT: masked words, sentence pairs and WordPiece*.
    """

    inputs: np.ndarray
    labels: np.ndarray
    selected: np.ndarray
    masked: np.ndarray
    randomized: np.ndarray


def check_mask_tokens(ids, mask_id, vocab_size, special_ids, attention_mask, select_prob,
                      mask_prob, random_prob, ignore_index):
    """The arguments of :func:`mask_tokens` (chapter 12), checked and converted.

    ``special_ids`` comes back as a sorted array of distinct ids.
    """
    ids = np.asarray(ids)
    if not np.issubdtype(ids.dtype, np.integer):
        raise ValueError(f"ids must be integer token ids, got dtype {ids.dtype}")
    if ids.size and (ids.min() < 0 or ids.max() >= vocab_size):
        raise ValueError(
            f"ids must lie in [0, vocab_size={vocab_size}); got {ids.min()}..{ids.max()}")
    if not 0 <= select_prob <= 1:
        raise ValueError(f"select_prob must lie in [0, 1], got {select_prob}")
    if mask_prob < 0 or random_prob < 0 or mask_prob + random_prob > 1:
        raise ValueError(f"need mask_prob, random_prob >= 0 with mask_prob + random_prob <= 1; "
                         f"got {mask_prob} and {random_prob}")
    special_ids = np.unique(np.asarray(special_ids, dtype=np.int64))
    if mask_id not in special_ids:
        raise ValueError(f"mask_id {mask_id} must be one of special_ids (it is never a target)")
    if 0 <= ignore_index < vocab_size:
        raise ValueError(f"ignore_index {ignore_index} is a real token id; use e.g. -100")
    if attention_mask is not None:
        attention_mask = np.asarray(attention_mask)
        if attention_mask.shape != ids.shape:
            raise ValueError(f"attention_mask must have the shape of ids {ids.shape}; "
                             f"got {attention_mask.shape}")
    return dict(ids=ids, special_ids=special_ids, attention_mask=attention_mask)


@checked(check_mask_tokens)
def mask_tokens(ids, *, mask_id: int, vocab_size: int, special_ids, seed=None,
                attention_mask=None, select_prob: float = 0.15, mask_prob: float = 0.8,
                random_prob: float = 0.1,
                ignore_index: int = IGNORE_INDEX) -> MaskedTokens:
    """BERT's masked-language-model corruption, for a whole batch at once.

    Args:
        ids: ``(B, T)`` (or any shape) integer token ids.
        mask_id: the id of ``[MASK]``.
        vocab_size: ids lie in ``[0, vocab_size)``.
        special_ids: ids that are never selected nor drawn as random tokens
            (``[PAD] [UNK] [CLS] [SEP] [MASK]``; ``WordPieceTokenizer.special_ids``).
        seed: an int or a ``np.random.Generator``; the same seed gives the same result.
        attention_mask: optional bool, shape of ``ids``; False positions (padding)
            are never selected.
        select_prob: the chance a (non-special) token is selected (0.15).
        mask_prob, random_prob: of the selected, the share replaced by ``[MASK]``
            (0.8) and by a random token (0.1); the rest (0.1) stay unchanged.
        ignore_index: the label of positions that are not predicted.

    Explained in chapter 12, *Pre-training BERT: masked words, sentence pairs and WordPiece*, section "Pre-training task 1: the masked language model".
    """
    candidates = ~np.isin(ids, special_ids)          # special tokens are never chosen
    if attention_mask is not None:
        candidates &= attention_mask.astype(bool)    # nor is padding

    rng = np.random.default_rng(seed)
    selected = candidates & (rng.random(ids.shape) < select_prob)
    action = rng.random(ids.shape)  # one draw decides [MASK] / random / unchanged
    masked = selected & (action < mask_prob)
    randomized = selected & (action >= mask_prob) & (action < mask_prob + random_prob)

    ordinary = np.setdiff1d(np.arange(vocab_size), special_ids)  # the non-special ids
    inputs = ids.copy()
    inputs[masked] = mask_id
    draws = rng.integers(len(ordinary), size=int(randomized.sum()))
    inputs[randomized] = ordinary[draws]
    label_dtype = np.int64 if ids.dtype == np.int64 else np.int32
    labels = np.where(selected, ids, ignore_index).astype(label_dtype)
    return MaskedTokens(inputs=inputs, labels=labels, selected=selected, masked=masked,
                        randomized=randomized)


@dataclass(frozen=True)
class SentencePairs:
    """Next-sentence-prediction examples.

    Attributes:
        first, second: the ``n`` sentences A and B.
        is_next: ``(n,)`` bool, True where B follows A in A's document (IsNext).
        first_index, second_index: ``(n, 2)`` int, (document, sentence) of A and B.

    Used by the code of chapter 12, *Pre-training BERT: masked words, sentence pairs and WordPiece*.
    """

    first: list[str]
    second: list[str]
    is_next: np.ndarray
    first_index: np.ndarray
    second_index: np.ndarray

    def __len__(self) -> int:
        return len(self.first)


def make_sentence_pairs(documents, n: int, seed=None, is_next_prob: float = 0.5,
                        not_next_from: str = "other documents") -> SentencePairs:
    """``n`` (A, B) pairs for next-sentence prediction, half IsNext and half NotNext.

    Args:
        documents: a list of documents, each a list of sentences (str).  At least
            two documents, and one with at least two sentences.
        n: how many pairs.
        seed: an int or a ``np.random.Generator``.
        is_next_prob: the chance that B is A's successor (0.5).
        not_next_from: where a NotNext pair's B comes from: ``"other documents"``
            (BERT's choice) or ``"same document"`` (a control: B shares A's
            document, and so its topic, but is neither A nor A's successor; every
            document then needs at least three sentences).

    Each of A and B is one sentence, not BERT's spans of several sentences (up to 512
    tokens a pair): the simpler variant that Liu et al. (RoBERTa, §4.2) found to do
    worse downstream, kept here because it reads in a table.

    A is drawn uniformly from the sentences that have a successor; for IsNext,
    B is that successor; for NotNext, B is drawn uniformly from the sentences of
    all *other* documents (so it cannot be the successor by chance), or of A's
    own document but for A and its successor.  The same seed draws the same A's
    and the same labels either way.

    Used in chapter 12, *Pre-training BERT: masked words, sentence pairs and WordPiece*, section "Pre-training task 2: next-sentence prediction".
    """
    documents = [list(doc) for doc in documents]
    if len(documents) < 2:
        raise ValueError(f"need at least 2 documents (NotNext draws from another one); got {len(documents)}")
    if any(not isinstance(s, str) for doc in documents for s in doc):
        raise ValueError("documents must be lists of sentences (str)")
    if any(len(doc) == 0 for doc in documents):
        raise ValueError("every document needs at least one sentence")
    if n < 0 or not 0 <= is_next_prob <= 1:
        raise ValueError(f"need n >= 0 and 0 <= is_next_prob <= 1; got {n}, {is_next_prob}")
    if not_next_from not in ("other documents", "same document"):
        raise ValueError(f"not_next_from must be 'other documents' or 'same document'; "
                         f"got {not_next_from!r}")
    if not_next_from == "same document" and min(len(doc) for doc in documents) < 3:
        raise ValueError("a NotNext sentence from the same document needs documents of at "
                         "least 3 sentences")
    lengths = np.array([len(doc) for doc in documents])
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])  # flat index of each doc's first sentence
    sentences = [s for doc in documents for s in doc]
    doc_of = np.repeat(np.arange(len(documents)), lengths)    # (total,) document of each sentence
    has_next = np.ones(len(sentences), dtype=bool)
    has_next[starts + lengths - 1] = False                     # a document's last sentence
    first_candidates = np.flatnonzero(has_next)
    if first_candidates.size == 0:
        raise ValueError("no document has two sentences, so there is no IsNext pair")

    rng = np.random.default_rng(seed)
    first = first_candidates[rng.integers(first_candidates.size, size=n)]
    is_next = rng.random(n) < is_next_prob
    doc = doc_of[first]
    # NotNext: uniform over the sentences outside doc: draw k in [0, total - len(doc)),
    # then skip over doc's contiguous block of sentences.
    uniform = rng.random(n)
    if not_next_from == "other documents":
        k = np.floor(uniform * (len(sentences) - lengths[doc])).astype(np.int64)
        other = np.where(k < starts[doc], k, k + lengths[doc])
    else:   # a sentence of A's document other than A (at p) and its successor (p + 1)
        k = np.floor(uniform * (lengths[doc] - 2)).astype(np.int64)
        p = first - starts[doc]
        other = starts[doc] + np.where(k < p, k, k + 2)
    second = np.where(is_next, first + 1, other)
    return SentencePairs(
        first=[sentences[i] for i in first], second=[sentences[i] for i in second],
        is_next=is_next,
        first_index=np.stack([doc, first - starts[doc]], axis=1),
        second_index=np.stack([doc_of[second], second - starts[doc_of[second]]], axis=1))
