"""Short stories, one topic each, as documents for next-sentence prediction (chapter 12).

A story is a topic's five sentences in their order, told about one person::

    Maya wanted to bake a cake.  She mixed flour, eggs and sugar.  The cake
    baked for an hour.  It came out golden and warm.  Everyone ate a slice.

Each topic has a few variants of most of its sentences, and each story has
its own name and pronoun, so that two stories of one topic differ in their
words but not in their order of events.  Next-sentence prediction
(:func:`attention_course.bert_pretraining.make_sentence_pairs`) pairs a
sentence with the next one of its story (IsNext) or with a sentence of
another story (NotNext), which is usually about another topic.

The topics come in two disjoint sets, :data:`TRAINING_TOPICS` and
:data:`NEW_TOPICS`, so that a model can be tested on stories about things it
never saw.  Everything is generated from a seed; nothing is downloaded.
"""

from __future__ import annotations

import numpy as np

#: Names and their pronouns: (subject, object, possessive).
PEOPLE = {
    "Maya": ("she", "her", "her"), "Tom": ("he", "him", "his"), "Lena": ("she", "her", "her"),
    "Sam": ("he", "him", "his"), "Nora": ("she", "her", "her"), "Ben": ("he", "him", "his"),
    "Ella": ("she", "her", "her"), "Leo": ("he", "him", "his"),
}

#: Each topic: five steps in order; each step, one or more ways to say it.
#: ``{name}``, ``{he}``, ``{him}``, ``{his}`` are filled in per story (capitalised
#: where a sentence starts with them).
TOPICS = {
    "baking": (
        ("{name} wanted to bake a cake.", "{name} decided to bake a cake."),
        ("{He} mixed flour, eggs and sugar.", "{He} stirred butter into the flour."),
        ("The cake baked for an hour.", "The oven was hot, and the cake rose."),
        ("It came out golden and warm.", "The kitchen smelled of vanilla."),
        ("Everyone ate a slice after dinner.", "{His} friends asked for a second piece."),
    ),
    "football": (
        ("{name} played football after school.", "{name} joined a football match in the park."),
        ("{He} ran fast with the ball.", "{He} passed the ball to a teammate."),
        ("{He} kicked it hard towards the goal.", "The goalkeeper jumped too late."),
        ("The ball hit the back of the net.", "It was the winning goal."),
        ("{His} team celebrated on the field.", "The players lifted {him} on their shoulders."),
    ),
    "garden": (
        ("{name} planted tomatoes in the garden.", "{name} dug a small vegetable bed."),
        ("{He} watered the seeds every morning.", "{He} pulled the weeds by hand."),
        ("Soon green shoots appeared.", "After a week the first leaves came up."),
        ("By summer the plants were tall.", "The stems bent under heavy fruit."),
        ("{He} picked a basket of ripe tomatoes.", "{He} made a salad from the harvest."),
    ),
    "doctor": (
        ("{name} woke up with a fever.", "{name} felt ill and had a headache."),
        ("{He} called the doctor.", "{He} went to see the doctor."),
        ("The doctor listened to {his} chest.", "The doctor checked {his} temperature."),
        ("She prescribed some medicine.", "She told {him} to rest for a few days."),
        ("A week later {he} felt better.", "Soon {he} was healthy again."),
    ),
    "exam": (
        ("{name} had a maths exam on Monday.", "{name}'s history exam was coming up."),
        ("{He} studied all weekend.", "{He} read {his} notes late into the night."),
        ("The questions were hard.", "The exam lasted three hours."),
        ("{He} answered every question.", "{He} finished just before the bell."),
        ("A week later {he} got a good grade.", "The teacher praised {his} answers."),
    ),
    "fishing": (
        ("{name} went fishing at the lake.", "{name} took a boat out on the lake."),
        ("{He} cast the line into the water.", "{He} put a worm on the hook."),
        ("For hours nothing happened.", "The float bobbed quietly on the waves."),
        ("Then something pulled hard on the line.", "Suddenly the rod bent down."),
        ("{He} caught a big trout.", "{He} brought home a fish for supper."),
    ),
    "moving": (
        ("{name} moved to a new flat.", "{name} rented an apartment in another town."),
        ("Friends helped carry the boxes.", "A van brought the furniture."),
        ("The sofa barely fit through the door.", "The stairs were narrow and steep."),
        ("{He} unpacked the kitchen first.", "{He} hung pictures on the walls."),
        ("That night {he} slept in {his} new home.", "Soon the place felt like home."),
    ),
    "birthday": (
        ("It was {name}'s birthday.", "{name} turned thirty on Friday."),
        ("{His} friends planned a surprise party.", "{His} friends secretly bought a cake."),
        ("They hid in the dark living room.", "They waited quietly behind the sofa."),
        ("When {he} came in, everyone shouted.", "The lights went on and they sang."),
        ("{He} blew out the candles.", "{He} opened {his} presents."),
    ),
    "rain": (
        ("Dark clouds gathered over the town.", "The sky turned grey in the afternoon."),
        ("Soon it began to rain heavily.", "Thunder rolled and the rain poured down."),
        ("{name} opened {his} umbrella.", "{name} ran for shelter under a bridge."),
        ("The streets filled with puddles.", "Water rushed along the gutters."),
        ("By evening the sun came out again.", "Later a rainbow appeared."),
    ),
    "train": (
        ("{name} took the early train to the city.", "{name} caught a train to the capital."),
        ("{He} found a seat by the window.", "{He} bought a coffee on board."),
        ("Fields and villages rushed past.", "The train sped through the countryside."),
        ("It arrived at the station on time.", "The train pulled into the platform."),
        ("{He} walked from the station to the office.", "{He} took a taxi to the meeting."),
    ),
    "lost dog": (
        ("{name}'s dog ran away one morning.", "{name} could not find the dog anywhere."),
        ("{He} searched the whole neighbourhood.", "{He} called its name in every street."),
        ("{He} put up posters with its photo.", "{He} asked the neighbours for help."),
        ("A woman phoned the next day.", "Someone had seen the dog in the park."),
        ("The dog was safe and wagged its tail.", "{He} hugged the dog and took it home."),
    ),
    "painting": (
        ("{name} decided to paint the bedroom.", "{name} bought a can of blue paint."),
        ("{He} covered the floor with old sheets.", "{He} moved the bed away from the wall."),
        ("{He} painted the walls with a roller.", "The first coat went on quickly."),
        ("The paint dried overnight.", "A second coat covered the old colour."),
        ("The room looked fresh and bright.", "{He} put the furniture back in place."),
    ),
}
#: The topics stories are drawn from for training, and the others, for testing.
TRAINING_TOPICS = ("baking", "football", "garden", "doctor", "exam", "fishing", "moving", "birthday")
NEW_TOPICS = ("rain", "train", "lost dog", "painting")


def _fill(template: str, name: str, pronouns: tuple[str, str, str]) -> str:
    he, him, his = pronouns
    return template.format(name=name, he=he, him=him, his=his,
                           He=he.capitalize(), Him=him.capitalize(), His=his.capitalize())


def make_stories(n: int, topics=TRAINING_TOPICS, seed=0) -> list[list[str]]:
    """``n`` stories (each a list of five sentences), about ``topics`` in turn.

    Story ``i`` is about ``topics[i % len(topics)]``; its person and the
    variant of each sentence are drawn from ``seed``.  The result is what
    :func:`~attention_course.bert_pretraining.make_sentence_pairs` takes.
    """
    unknown = [t for t in topics if t not in TOPICS]
    if unknown or not topics:
        raise ValueError(f"topics must be a non-empty selection of {sorted(TOPICS)}; got {topics}")
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    rng = np.random.default_rng(seed)
    names = list(PEOPLE)
    stories = []
    for i in range(n):
        steps = TOPICS[topics[i % len(topics)]]
        name = names[rng.integers(len(names))]
        stories.append([_fill(variants[rng.integers(len(variants))], name, PEOPLE[name])
                        for variants in steps])
    return stories
