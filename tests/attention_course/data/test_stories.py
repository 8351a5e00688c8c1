"""The stories of chapter 12's next-sentence section: seeded, five ordered sentences, disjoint topics."""

import numpy as np
import pytest

from attention_course.bert_pretraining import make_sentence_pairs
from attention_course.data import stories


def test_same_seed_same_stories():
    assert stories.make_stories(10, seed=5) == stories.make_stories(10, seed=5)
    assert stories.make_stories(10, seed=5) != stories.make_stories(10, seed=6)


def test_topics_in_turn_and_steps_in_order():
    topics = stories.TRAINING_TOPICS
    made = stories.make_stories(2 * len(topics), topics, seed=0)
    assert len(made) == 2 * len(topics) and all(len(s) == 5 for s in made)
    for i, story in enumerate(made):
        steps = stories.TOPICS[topics[i % len(topics)]]
        # some person tells the whole story: each sentence is a variant of its step
        assert any(all(sentence in {stories._fill(v, name, pronouns) for v in variants}
                       for sentence, variants in zip(story, steps))
                   for name, pronouns in stories.PEOPLE.items()), story


def test_one_person_per_story():
    for story in stories.make_stories(40, seed=1):
        named = {name for name in stories.PEOPLE for sentence in story if name in sentence}
        assert len(named) <= 1


def test_topic_sets_are_disjoint_and_cover_all():
    assert not set(stories.TRAINING_TOPICS) & set(stories.NEW_TOPICS)
    assert set(stories.TRAINING_TOPICS) | set(stories.NEW_TOPICS) == set(stories.TOPICS)
    new_sentences = {s for story in stories.make_stories(100, stories.NEW_TOPICS, seed=0)
                     for s in story}
    training_sentences = {s for story in stories.make_stories(100, seed=0) for s in story}
    assert not new_sentences & training_sentences


def test_pairs_from_stories():
    pairs = make_sentence_pairs(stories.make_stories(16, seed=2), 100, seed=2)
    assert len(pairs) == 100
    nxt = pairs.is_next
    assert np.all(pairs.second_index[nxt, 0] == pairs.first_index[nxt, 0])
    assert np.all(pairs.second_index[~nxt, 0] != pairs.first_index[~nxt, 0])


@pytest.mark.parametrize("topics", [(), ("baking", "cooking"), ("nonsense",)])
def test_bad_topics(topics):
    with pytest.raises(ValueError, match="topics must be"):
        stories.make_stories(3, topics)


def test_bad_n():
    with pytest.raises(ValueError, match="n must be"):
        stories.make_stories(-1)
    assert stories.make_stories(0) == []
