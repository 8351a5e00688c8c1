"""WordPiece, the tokenizer of BERT, from scratch.

A text becomes token ids in three steps (Devlin et al. 2019; Wu et al. 2016):

1. **Normalize** (BERT's "basic tokenizer"): drop control characters and turn
   every kind of white space into a plain space; put spaces around CJK
   ideographs, so each becomes a word of its own; strip accents (decompose to
   NFD and drop the combining marks); lower-case.
2. **Pre-tokenize**: split on white space, then cut every punctuation character
   out as a word of its own (``"isn't!"`` -> ``isn`` ``'`` ``t`` ``!``).
3. **WordPiece**: cover each word greedily with the *longest* vocabulary entry
   that matches at the current position; a piece that does not start the word
   is looked up with the prefix ``##`` (``"tokenization"`` -> ``token``
   ``##ization``).  A word that cannot be covered, or is longer than
   ``max_chars_per_word`` characters, becomes a single ``[UNK]``.

Special tokens (``[CLS]``, ``[SEP]``, ``[MASK]``, ...) written in the text are
kept whole, and :meth:`WordPieceTokenizer.encode` wraps the pieces as
``[CLS] A [SEP]`` (or ``[CLS] A [SEP] B [SEP]`` for a pair), with token-type
ids 0 for the first segment and 1 for the second.

Every rule follows the Hugging Face ``tokenizers`` library's ``BertNormalizer``,
``BertPreTokenizer`` and ``WordPiece`` model character for character (the
tests compare the two on a varied set of texts), including its reading of
Unicode: "white space" is the Unicode ``White_Space`` property, and control
characters are removed *before* white space is mapped to spaces, so a vertical
tab vanishes rather than separating two words.  The one difference left is the
Unicode version: Python's ``unicodedata`` knows a few hundred rare characters
(combining marks and format characters of scripts added to Unicode in recent
years) that the library's older tables do not, and treats them differently.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .checks import checked

PAD, UNK, CLS, SEP, MASK = "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"
SPECIAL_TOKENS = (PAD, UNK, CLS, SEP, MASK)
CONTINUATION_PREFIX = "##"

# The Unicode White_Space property (what Rust's char::is_whitespace tests).
# Python's str.isspace() differs: it also counts U+001C..U+001F.
WHITE_SPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")

# The CJK Unified Ideographs blocks BERT splits into single-character words.
# (Japanese kana and Korean Hangul are *not* in them, as in BERT.)  The
# ``tokenizers`` library starts the sixth block at U+2B920 where Google's BERT
# code has U+2B820; we follow the library, whose output the model was used with.
CJK_RANGES = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
              (0x2B740, 0x2B81F), (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))


def is_whitespace(char: str) -> bool:
    """Whether BERT's normaliser treats ``char`` as a space.  Used by :func:`normalize` (chapter 12)."""
    return char in WHITE_SPACE


def is_control(char: str) -> bool:
    """Control, format, private-use and surrogate characters (categories Cc, Cf, Co, Cs)
    -- except tab and newlines, which count as white space.  Unassigned code points
    (Cn) are kept, as the ``tokenizers`` library keeps them; they become ``[UNK]``.

    Used by the code of chapter 12, *BERT: an encoder-only Transformer*.
    """
    if char in "\t\n\r":
        return False
    return unicodedata.category(char) in ("Cc", "Cf", "Co", "Cs")


def is_punctuation(char: str) -> bool:
    """Unicode punctuation (categories P*) and *all* ASCII non-alphanumeric symbols,
    so that ``$``, ``+``, ``<``, ``^``, ``|`` and ``~`` are split off too.

    Used by the code of chapter 12, *BERT: an encoder-only Transformer*.
    """
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def is_cjk(char: str) -> bool:
    """Whether ``char`` is a CJK ideograph, which BERT splits into a word of its own (chapter 12)."""
    code = ord(char)
    return any(low <= code <= high for low, high in CJK_RANGES)


def check_text(text):
    """A text to tokenize (chapter 12): a ``str``."""
    if not isinstance(text, str):
        raise ValueError(f"text must be a str, got {type(text).__name__}")


@checked(check_text)
def normalize(text: str, lowercase: bool = True,
              strip_accents: bool | None = None) -> str:
    """BERT's normalization: clean, isolate CJK ideographs, strip accents, lowercase.

    ``strip_accents=None`` follows ``lowercase``, as in BERT's uncased models.

    Explained in chapter 12, *Pre-training BERT: masked words, sentence pairs and WordPiece*, section "WordPiece: words into pieces".
    """
    strip_accents = lowercase if strip_accents is None else strip_accents
    # Remove NUL, the replacement character and control characters first; then
    # every remaining white-space character becomes a plain space.
    text = "".join(" " if is_whitespace(c) else c for c in text
                   if not (c in "\x00\ufffd" or is_control(c)))
    text = "".join(f" {c} " if is_cjk(c) else c for c in text)
    if strip_accents:
        text = "".join(c for c in unicodedata.normalize("NFD", text)
                       if unicodedata.category(c) != "Mn")
    if lowercase:
        # character by character, as the Rust library does: no context-dependent
        # rules such as the Greek final sigma that str.lower() applies
        text = "".join(c.lower() for c in text)
    return text


def pre_tokenize(text: str) -> list[str]:
    """Split normalized text into words, at white space and around punctuation.

    Every punctuation character becomes a word of its own.

    Explained in chapter 12, *Pre-training BERT: masked words, sentence pairs and WordPiece*, section "WordPiece: words into pieces".
    """
    words = []
    for chunk in "".join(" " if is_whitespace(c) else c for c in text).split(" "):
        word = []
        for char in chunk:
            if is_punctuation(char):
                if word:
                    words.append("".join(word))
                    word = []
                words.append(char)
            else:
                word.append(char)
        if word:
            words.append("".join(word))
    return words


@dataclass(frozen=True)
class Encoding:
    """One encoded text (or text pair).

    Attributes:
        ids: ``(T,)`` int token ids.
        tokens: the ``T`` token strings.
        type_ids: ``(T,)`` segment ids: 0 for ``[CLS] A [SEP]``, 1 for ``B [SEP]``.

    Used by the code of chapter 12, *BERT: an encoder-only Transformer*.
    """

    ids: np.ndarray
    tokens: tuple[str, ...]
    type_ids: np.ndarray

    def __len__(self) -> int:
        return len(self.tokens)


@dataclass(frozen=True)
class Batch:
    """Several encodings, right-padded with ``[PAD]`` to a common length ``T``.

    Attributes:
        ids: ``(B, T)`` int32 token ids.
        type_ids: ``(B, T)`` int32 segment ids (0 on padding).
        attention_mask: ``(B, T)`` bool, True on real tokens, False on padding.

    Used by the code of chapter 12, *BERT: an encoder-only Transformer*.
    """

    ids: np.ndarray
    type_ids: np.ndarray
    attention_mask: np.ndarray


class WordPieceTokenizer:
    """BERT's uncased WordPiece tokenizer over a fixed vocabulary.

    Args:
        vocab: the token strings; a token's id is its position.  Must contain
            the special tokens ``[PAD] [UNK] [CLS] [SEP] [MASK]``.
        max_chars_per_word: longer words become ``[UNK]`` without being split
            (100 in BERT).
        lowercase: lower-case (and, with it, strip accents) before splitting.

    Explained in chapter 12, *Pre-training BERT: masked words, sentence pairs and WordPiece*, section "WordPiece: words into pieces".
    """

    def __init__(self, vocab, max_chars_per_word: int = 100, lowercase: bool = True):
        vocab = list(vocab)
        self.id_to_token = tuple(vocab)
        self.vocab = {token: i for i, token in enumerate(vocab)}
        if len(self.vocab) != len(vocab):
            raise ValueError("vocab has duplicate tokens")
        missing = [t for t in SPECIAL_TOKENS if t not in self.vocab]
        if missing:
            raise ValueError(f"vocab lacks the special tokens {missing}")
        if max_chars_per_word < 1:
            raise ValueError(f"max_chars_per_word must be >= 1, got {max_chars_per_word}")
        self.max_chars_per_word = max_chars_per_word
        self.lowercase = lowercase
        # special tokens typed in the text are matched before normalization
        self._special_pattern = re.compile("(" + "|".join(map(re.escape, SPECIAL_TOKENS)) + ")")

    @classmethod
    def from_vocab_file(cls, path, **kwargs) -> "WordPieceTokenizer":
        """Read a BERT ``vocab.txt``: one token per line, the line number is the id."""
        lines = Path(path).read_text(encoding="utf-8").split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        return cls(lines, **kwargs)

    def __len__(self) -> int:
        return len(self.id_to_token)

    def token_id(self, token: str) -> int:
        return self.vocab[token]

    @property
    def special_ids(self) -> np.ndarray:
        """The ids of ``[PAD] [UNK] [CLS] [SEP] [MASK]``, in that order."""
        return np.array([self.vocab[t] for t in SPECIAL_TOKENS])

    def wordpiece(self, word: str) -> list[str]:
        """Greedy longest-match-first pieces of one (normalized) word."""
        if len(word) > self.max_chars_per_word:
            return [UNK]
        pieces, start = [], 0
        while start < len(word):
            # try the longest candidate first, then shorter ones
            for end in range(len(word), start, -1):
                piece = ("" if start == 0 else CONTINUATION_PREFIX) + word[start:end]
                if piece in self.vocab:
                    pieces.append(piece)
                    start = end
                    break
            else:  # no vocabulary entry matches here: the whole word is unknown
                return [UNK]
        return pieces

    def tokenize(self, text: str) -> list[str]:
        """Text -> WordPiece tokens, without ``[CLS]``/``[SEP]``."""
        if not isinstance(text, str):
            raise ValueError(f"text must be a str, got {type(text).__name__}")
        tokens = []
        for i, part in enumerate(self._special_pattern.split(text)):
            if i % 2:  # a special token written in the text
                tokens.append(part)
                continue
            for word in pre_tokenize(normalize(part, lowercase=self.lowercase)):
                tokens.extend(self.wordpiece(word))
        return tokens

    def encode(self, text: str, text_pair: str | None = None,
               add_special_tokens: bool = True) -> Encoding:
        """``[CLS] text [SEP]`` (``[CLS] text [SEP] text_pair [SEP]`` for a pair) as ids."""
        first = self.tokenize(text)
        second = None if text_pair is None else self.tokenize(text_pair)
        if add_special_tokens:
            tokens = [CLS, *first, SEP]
            type_ids = [0] * len(tokens)
            if second is not None:
                tokens += [*second, SEP]
                type_ids += [1] * (len(second) + 1)
        else:
            tokens = first + (second or [])
            type_ids = [0] * len(first) + [1] * len(second or [])
        return Encoding(ids=np.array([self.vocab[t] for t in tokens], dtype=np.int32),
                        tokens=tuple(tokens), type_ids=np.array(type_ids, dtype=np.int32))

    def encode_batch(self, texts, max_length: int | None = None) -> Batch:
        """Encode several texts and right-pad them to the longest (``[PAD]`` = id 0).

        ``texts``: a list of str, or of ``(text, text_pair)`` tuples.  With
        ``max_length``, longer encodings raise a ValueError (no silent truncation).
        """
        if isinstance(texts, str):
            raise ValueError("encode_batch takes a list of texts; use encode() for one text")
        encodings = [self.encode(*t) if isinstance(t, tuple) else self.encode(t) for t in texts]
        if not encodings:
            raise ValueError("encode_batch needs at least one text")
        T = max(len(e) for e in encodings)
        if max_length is not None and T > max_length:
            raise ValueError(f"an encoding has {T} tokens, more than max_length={max_length}")
        B = len(encodings)
        ids = np.full((B, T), self.vocab[PAD], dtype=np.int32)
        type_ids = np.zeros((B, T), dtype=np.int32)
        lengths = np.array([len(e) for e in encodings])
        attention_mask = np.arange(T)[None, :] < lengths[:, None]
        ids[attention_mask] = np.concatenate([e.ids for e in encodings])
        type_ids[attention_mask] = np.concatenate([e.type_ids for e in encodings])
        return Batch(ids=ids, type_ids=type_ids, attention_mask=attention_mask)

    def convert_ids_to_tokens(self, ids) -> list[str]:
        ids = np.asarray(ids)
        if ids.ndim != 1:
            raise ValueError(f"ids must be 1-D (T,); got shape {ids.shape}")
        if ids.size and (ids.min() < 0 or ids.max() >= len(self)):
            raise ValueError(f"ids must lie in [0, {len(self)}); got {ids.min()}..{ids.max()}")
        return [self.id_to_token[i] for i in ids.tolist()]

    def decode(self, ids, skip_special_tokens: bool = True) -> str:
        """Ids -> text: ``##`` pieces glued to the previous piece, other pieces after a space.

        As in the ``tokenizers`` library's WordPiece decoder, a space before
        ``.`` ``?`` ``!`` ``,`` is removed ("cleanup"); the lower-casing and
        stripped accents of course cannot be undone.
        """
        tokens = self.convert_ids_to_tokens(ids)
        if skip_special_tokens:
            tokens = [t for t in tokens if t not in SPECIAL_TOKENS]
        pieces = []
        for i, token in enumerate(tokens):
            if i:
                token = (token[len(CONTINUATION_PREFIX):] if token.startswith(CONTINUATION_PREFIX)
                         else " " + token)
            pieces.append(_cleanup(token))
        return "".join(pieces)


def _cleanup(token: str) -> str:
    """The ``tokenizers`` WordPiece decoder's clean-up, applied to one token as it does."""
    for before, after in ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"),
                          (" n't", "n't"), (" 'm", "'m"), (" do not", " don't"), (" 's", "'s"),
                          (" 've", "'ve"), (" 're", "'re")):
        token = token.replace(before, after)
    return token
