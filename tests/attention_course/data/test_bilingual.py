"""The bilingual sentence pairs of chapter 12: layout, segments and the word alignment."""

import numpy as np
import pytest

from attention_course.data import bilingual
from attention_course.data import toy_translation as task


def test_bilingual_pairs_layout_and_alignment():
    data = bilingual.make_pairs(200, min_length=2, max_length=8, seed=0)
    assert data.ids.shape == (200, 19) and set(data.lengths) <= set(range(2, 9))
    english = {v: k for k, v in {**task.DETERMINERS, **task.ADJECTIVES, **task.NOUNS,
                                 task.CONJUNCTION[0]: task.CONJUNCTION[1]}.items()}
    for i in range(200):
        n = int(data.lengths[i])
        tokens = bilingual.decode(data.ids[i])
        assert tokens[0] == "[CLS]" and tokens[n + 1] == "[SEP]" and tokens[-1] == "[SEP]"
        assert len(tokens) == 2 * n + 3 == data.attention_mask[i].sum()
        np.testing.assert_array_equal(data.type_ids[i, : 2 * n + 3], [0] * (n + 2) + [1] * (n + 1))
        partner = data.partner[i]
        real_words = np.flatnonzero(partner >= 0)
        assert len(real_words) == 2 * n
        np.testing.assert_array_equal(partner[partner[real_words]], real_words)   # a pairing
        for position in range(n + 2, 2 * n + 2):                                 # French word -> English
            assert english[tokens[position]] == tokens[partner[position]]
    with pytest.raises(ValueError, match="not in the vocabulary"):
        bilingual.encode(["the", "chien"], ["le", "dog!"])
    with pytest.raises(ValueError, match="min_length"):
        bilingual.make_pairs(3, min_length=1)
