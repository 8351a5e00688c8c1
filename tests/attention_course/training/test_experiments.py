"""experiments: length-sorted decoding batches (results in the test set's order), the cache key."""

import numpy as np
import pytest

from attention_course.training import cache, experiments
from attention_course.data import toy_translation as task
from attention_course.seeding import course_seed

END = task.TARGET_VOCAB.index[task.END]


class EchoModel:
    """Writes, for each source word, the target id ``source id + 2``, then ``</s>``.

    The output of every row depends on its own source only, so any mix-up of
    rows by the batching shows up as a wrong translation.
    """

    def __init__(self):
        self.batch_lengths = []

    def greedy_step(self, source):
        source = np.asarray(source)
        lengths = (source != 0).sum(axis=1)
        self.batch_lengths.append(lengths)

        def step(tokens, state):
            t = tokens.shape[1] - 1
            logits = np.zeros((len(source), len(task.TARGET_VOCAB)))
            padded = np.pad(source, ((0, 0), (0, 1)))
            word = np.where(t < lengths, padded[:, min(t, source.shape[1])] + 2, END)
            logits[np.arange(len(source)), word] = 1.0
            attention = np.eye(source.shape[1])[np.minimum(t, source.shape[1] - 1)]
            return logits, state, np.tile(attention, (len(source), 1))

        return step, None


@pytest.mark.parametrize("batch_size", [7, 50, 500])
def test_results_come_back_in_test_order(batch_size):
    test = task.make_dataset(60, max_length=12, seed=3)
    model = EchoModel()
    tokens, attention = experiments.decode_test_set(model, test, batch_size=batch_size)
    for i in range(len(test)):
        n = int(test.lengths[i])
        np.testing.assert_array_equal(tokens[i, :n], test.source[i, :n] + 2)
        assert tokens[i, n] == END and (tokens[i, n + 1:] == 0).all()
        np.testing.assert_array_equal(attention[i, :n].argmax(-1), np.arange(n))
    # Batches are formed from sentences of similar length.
    batches = model.batch_lengths
    assert all(a.max() <= b.min() for a, b in zip(batches, batches[1:]))


def test_a_model_with_a_cache_decodes_with_it():
    """A Transformer's cached_step is what decodes the test set (the same translations, cheaper)."""
    class CachedEcho(EchoModel):
        def cached_step(self, source):
            self.cached_calls = getattr(self, "cached_calls", 0) + 1
            return self.greedy_step(source)

    test = task.make_dataset(30, max_length=8, seed=4)
    model = CachedEcho()
    tokens, _ = experiments.decode_test_set(model, test, batch_size=10)
    assert model.cached_calls == 3
    np.testing.assert_array_equal(tokens, experiments.decode_test_set(EchoModel(), test, batch_size=10)[0])


class _Stop(Exception):
    pass


def test_every_training_setting_is_part_of_the_cache_key(monkeypatch):
    keys = []

    def trained_model(name, build, fit, *, example=None, config=None, seed=None):
        keys.append(cache.content_key(name, build, fit, config, seed))
        raise _Stop

    monkeypatch.setattr(experiments.cache, "trained_model", trained_model)
    for settings in ({}, {"warmup_steps": 50}, {"warmup_steps": 100}, {"learning_rate": 1e-3},
                     {"bucketed": False}, {"batch_size": 32}, {"seed": course_seed() + 1},
                     {"sentences": 100}, {"sentences": 200}, {"snapshot_step": 3},
                     {"steps_per_execution": 2},
                     {"warmup_steps": 50}):   # a seed other than the default (the course seed)
        with pytest.raises(_Stop):
            experiments.run_translation("x", dict, {"units": 4}, epochs=1, **settings)
    assert len(set(keys)) == 11 and keys[1] == keys[-1]


def test_a_run_on_some_sentences_keeps_a_snapshot_part_way(tmp_path, monkeypatch):
    """``sentences`` trains on the first few sentences; ``snapshot_step`` keeps the weights of that step."""
    monkeypatch.setenv("ATTENTION_COURSE_CACHE", str(tmp_path))
    tiny = {"d_model": 8, "num_heads": 2, "d_ff": 8, "num_layers": 1}
    run = experiments.transformer_translator(sentences=48, warmup_steps=1, snapshot_step=2, **tiny)
    assert run.history["loss"] and len(run.correct) == len(experiments.translation_data()[1])
    # one loss per step (48 sentences in batches of 16), whose mean is the epoch's mean
    assert run.step_loss.shape == (3,)
    np.testing.assert_allclose(run.step_loss.mean(), run.history["loss"][0], rtol=1e-5)
    final, snapshot = run.model.get_weights(), run.snapshot.get_weights()
    assert len(final) == len(snapshot)
    assert any(not np.array_equal(a, b) for a, b in zip(final, snapshot))  # one more step changed it
    again = experiments.transformer_translator(sentences=48, warmup_steps=1, snapshot_step=2, **tiny)
    for a, b in zip(again.snapshot.get_weights(), snapshot):   # loaded from the cache, the same
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="beyond the last training step"):
        experiments.transformer_translator(sentences=48, warmup_steps=1, snapshot_step=4, **tiny)
    with pytest.raises(ValueError, match="sentences must be in"):
        experiments.transformer_translator(sentences=0, **tiny)


def test_a_fraction_of_a_pass_trains_the_first_batches_of_another(tmp_path, monkeypatch):
    """``epochs=1.5``: one pass, then half of a second; one held-out loss per (part) pass."""
    from attention_course.models.rnn_seq2seq import RNNSeq2Seq

    monkeypatch.setenv("ATTENTION_COURSE_CACHE", str(tmp_path))
    config = {"source_vocab_size": len(task.SOURCE_VOCAB), "target_vocab_size": len(task.TARGET_VOCAB),
              "units": 4, "embedding_dim": 4}
    run = experiments.run_translation("tiny-rnn", RNNSeq2Seq, config, epochs=1.5, batch_size=16,
                                      sentences=64, warmup_steps=1)
    assert run.epochs == 1.5
    assert run.step_loss.shape == (4 + 2,)                      # 64 sentences: 4 batches a pass
    assert len(run.history["loss"]) == len(run.history["val_loss"]) == 2
    # each entry of the history is the mean loss of its own (part) pass
    np.testing.assert_allclose(run.history["loss"], [run.step_loss[:4].mean(), run.step_loss[4:].mean()],
                               rtol=1e-5)
    with pytest.raises(ValueError, match="needs bucketed batches"):
        experiments.run_translation("tiny-rnn", RNNSeq2Seq, config, epochs=1.5, bucketed=False)
    with pytest.raises(ValueError, match="epochs must be positive"):
        experiments.run_translation("tiny-rnn", RNNSeq2Seq, config, epochs=0)
    with pytest.raises(ValueError, match="less than one step"):
        experiments.run_translation("tiny-rnn", RNNSeq2Seq, config, epochs=0.1, batch_size=16,
                                    sentences=16)


def test_at_most_keeps_the_shorter_sentences_whole_and_cuts_the_padding():
    data = task.make_dataset(200, max_length=20, seed=6)
    short = experiments.at_most(data, 9)
    keep = data.lengths <= 9
    assert len(short) == keep.sum() and (short.lengths <= 9).all()
    assert short.source.shape[1] == 9 and short.decoder_input.shape[1] == short.decoder_target.shape[1] == 10
    np.testing.assert_array_equal(short.source, data.source[keep, :9])
    np.testing.assert_array_equal(data.source[keep, 9:], 0)            # only padding was cut
    np.testing.assert_array_equal(data.decoder_target[keep, 10:], 0)


def test_several_steps_per_execution_train_the_same_weights(tmp_path, monkeypatch):
    """``steps_per_execution``: the same training bit for bit; each step gets its group's mean loss."""
    from attention_course.models.transformer import Transformer

    monkeypatch.setenv("ATTENTION_COURSE_CACHE", str(tmp_path))
    config = {"source_vocab_size": len(task.SOURCE_VOCAB), "target_vocab_size": len(task.TARGET_VOCAB),
              "max_length": experiments.SPLIT["max_length"] + 2, "d_model": 8, "num_heads": 2,
              "d_ff": 8, "num_layers": 1}
    runs = {k: experiments.run_translation("tiny-transformer", Transformer, config, epochs=1,
                                           batch_size=16, bucketed=False, sentences=80,
                                           warmup_steps=1, steps_per_execution=k)
            for k in (1, 2)}
    for a, b in zip(runs[1].model.get_weights(), runs[2].model.get_weights()):
        np.testing.assert_array_equal(a, b)
    one, grouped = runs[1].step_loss, runs[2].step_loss   # 5 steps: groups of 2, 2 and 1
    assert one.shape == grouped.shape == (5,)
    np.testing.assert_allclose(grouped, [one[:2].mean()] * 2 + [one[2:4].mean()] * 2 + [one[4]],
                               rtol=1e-5)
    assert grouped[0] != grouped[2]
    with pytest.raises(ValueError, match="steps_per_execution must be a positive integer"):
        experiments.run_translation("tiny-transformer", Transformer, config, epochs=1,
                                    bucketed=False, steps_per_execution=0)
    with pytest.raises(ValueError, match="must be a multiple of steps_per_execution"):
        experiments.run_translation("tiny-transformer", Transformer, config, epochs=1,
                                    bucketed=False, snapshot_step=3, steps_per_execution=2)


def test_chapter_11_glues_the_settings_its_transformer_trains_with(monkeypatch):
    """The size, batch size, warm-up and peak rate chapter 11 prints are the ones it trains with."""
    seen = {}
    monkeypatch.setattr(experiments, "run_translation",
                        lambda name, build, config, **settings: seen.update(config=config, **settings))
    experiments.transformer_translator()
    assert {key: seen["config"][key] for key in experiments.TRANSFORMER_SIZE} == experiments.TRANSFORMER_SIZE
    assert (seen["batch_size"], seen["warmup_steps"], seen["learning_rate"]) == (
        experiments.TRANSFORMER_BATCH_SIZE, experiments.TRANSFORMER_WARMUP_STEPS,
        experiments.TRANSFORMER_PEAK_RATE)
    experiments.transformer_translator(num_layers=1, warmup_steps=100)   # an ablation row overrides them
    assert seen["config"]["num_layers"] == 1 and seen["warmup_steps"] == 100


@pytest.mark.parametrize("attention", [False, True])
def test_chapters_1_and_3_glue_the_recipes_their_translators_train_with(monkeypatch, attention):
    """The peak rate and warm-up chapters 1 and 3 print are the ones rnn_translator trains with."""
    seen = {}
    monkeypatch.setattr(experiments, "run_translation",
                        lambda name, build, config, **settings: seen.update(settings))
    experiments.rnn_translator(attention=attention)
    assert seen == {**experiments.RNN_RECIPES[attention], "warmup_steps": experiments.RNN_WARMUP_STEPS}
    experiments.rnn_translator(attention=attention, epochs=0.5)   # a shorter run keeps the rest
    assert seen["epochs"] == 0.5
    assert experiments.RNN_RECIPES[attention]["epochs"] != 0.5      # ... and leaves the recipe alone
