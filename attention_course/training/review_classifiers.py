"""Chapter 12's fine-tuning experiment: one review classifier, trained three ways.

Explained in chapter 12, *Fine-tuning BERT and next-sentence prediction*,
section "Fine-tuning: using what pre-training learnt".  The classifier is
all-MiniLM-L6-v2's architecture with a classification head
(:class:`~attention_course.models.bert.BertClassifier`), trained on the
reviews of :mod:`attention_course.bert_finetuning` by one of three recipes,
the arms of the comparison:

* ``"pretrained"``: from the pretrained weights, fine-tuned briefly, as BERT
  is (its authors took two to four passes; here one pass at a constant rate);
* ``"pretrained, frozen (probe)"``: the pretrained encoder frozen, only the
  classification head trains, for more passes (one dense layer can take them);
* ``"from scratch"``: the same architecture from random weights, for as many
  passes as it needs to fit the training words, with a linear warm-up (which
  a post-LN stack trained from random weights needs, chapter 8) and a cosine
  decay to zero.

The word-embedding table stays frozen in all three.  Each arm's learning rate
is the one :mod:`.fine_tuning_rates` searched for it; the runs go through
:func:`~attention_course.training.cache.trained_model`.
"""

from __future__ import annotations

import functools

from ..bert_finetuning import Reviews
from ..models.bert import BertClassifier, BertEncoder
from ..weights import pretrained
from .cache import TrainedModel, trained_model

#: the arms, by the names the chapter's tables show, and each one's passes over the reviews
EPOCHS = {"pretrained": 1, "pretrained, frozen (probe)": 30, "from scratch": 24}
ARMS = tuple(EPOCHS)
#: reviews per step; the from-scratch arm's warm-up steps; tokens per review at most
BATCH_SIZE, WARMUP_STEPS, MAX_TOKENS = 16, 16, 16
#: how many reviews the chapter (and the search) trains on
TRAINING_REVIEWS = 128
#: the cache names of the arms' runs
RUN_NAMES = {"pretrained": "ch12-finetune-pretrained", "pretrained, frozen (probe)": "ch12-finetune-probe",
             "from scratch": "ch12-finetune-scratch"}


@functools.cache
def _tokenizer():
    return pretrained.load_tokenizer()


@functools.cache
def _pretrained_weights():
    return pretrained.load_encoder_weights()


def encode(texts: list[str]):
    """Token ids and segments ``(n, T)`` each, padded to the longest text (at most 16 tokens)."""
    batch = _tokenizer().encode_batch(list(texts), max_length=MAX_TOKENS)
    return batch.ids, batch.type_ids


def fit(classifier: BertClassifier, arm: str, inputs, labels,
        learning_rate: float) -> dict:
    """Train ``classifier`` by ``arm``'s recipe; returns its history.

    ``inputs``: token ids and segments ``(n, T)`` each; ``labels``: ``(n,)``;
    ``learning_rate``: Adam's rate (the from-scratch arm's peak).
    """
    import keras

    if arm == "pretrained, frozen (probe)":
        classifier.encoder.trainable = False     # only the classification head learns
    else:
        # A test word gets no gradient anyway (it never occurs in a training sentence):
        # a fixed table spares every step the update of half the parameters.
        classifier.encoder.embedding.word_embedding.trainable = False
    rate = learning_rate
    if arm == "from scratch":                    # linear warm-up, then cosine to 0
        steps = EPOCHS[arm] * -(-len(labels) // BATCH_SIZE)
        rate = keras.optimizers.schedules.CosineDecay(
            0.0, steps - WARMUP_STEPS, warmup_target=learning_rate,
            warmup_steps=WARMUP_STEPS)
    classifier.compile(optimizer=keras.optimizers.Adam(rate), metrics=["accuracy"],
                       loss=keras.losses.SparseCategoricalCrossentropy(
                           from_logits=True),
                       # one pass of 8 steps: tracing the step into a graph would cost
                       # more than it saves
                       run_eagerly=EPOCHS[arm] == 1)
    return classifier.fit(inputs, labels, batch_size=BATCH_SIZE, epochs=EPOCHS[arm],
                          verbose=0).history


def review_classifier(arm: str, reviews: Reviews, learning_rate: float,
                      seed: int | None = None) -> TrainedModel:
    """The classifier of ``arm`` trained on ``reviews`` by :func:`fit` at ``learning_rate``,
    under ``seed`` (default: the course seed), or loaded if this recipe ran before."""
    if arm not in EPOCHS:
        raise ValueError(f"arm must be one of {list(ARMS)}, got {arm!r}")
    inputs = encode(reviews.texts)
    if arm == "from scratch":
        def build():        # MiniLM's sizes, random weights
            return BertClassifier(BertEncoder())
    else:
        weights = _pretrained_weights()

        def build():
            return BertClassifier(BertEncoder.from_numpy(weights))
    return trained_model(RUN_NAMES[arm], build,
                         lambda classifier: fit(classifier, arm, inputs, reviews.labels, learning_rate),
                         example=(inputs[0][:2], inputs[1][:2]), seed=seed)
