"""Plausible wrong answers to assignment 11 (a key/value cache),
for the grader's feedback (the format: ``course_grader.mistakes``; not released)."""

MISTAKES = {
    'only_new_position': dict(
        explain=("your attend_with_cache lets the new query attend only to its own key and value: it "
                 'must attend to every cached position as well (the cached keys and values, then the '
                 'new ones)'),
        edits=[
            ('attend_with_cache', 'scores = q @ keys.swapaxes(-1, -2) / np.sqrt(q.shape[-1])',
             'scores = q @ k.swapaxes(-1, -2) / np.sqrt(q.shape[-1])'),
            ('attend_with_cache', 'attention_output(weights @ values, attention)', 'attention_output(weights @ v, attention)'),
        ],
        fails=['attend_visible', 'attend_hidden', 'step_visible', 'step_hidden', 'cache_hidden', 'generate_visible',
               'generate_hidden'],
        passes=[]),
    'causal_mask_from_position_zero': dict(
        explain=('your attend_with_cache applies a causal mask aligned at the first position, as if '
                 'the new query were at position 0, so it sees only the first cached key: the one new '
                 'query is the latest position and may attend to every cached key, with no mask'),
        edits=[
            ('attend_with_cache', 'weights = softmax(scores, axis=-1)',
             'causal = np.arange(keys.shape[2])[None, :] <= np.arange(q.shape[2])[:, None]\n'
             '    weights = softmax(np.where(causal, scores, -np.inf), axis=-1)'),
        ],
        fails=['attend_visible', 'attend_hidden', 'step_visible', 'step_hidden', 'cache_hidden', 'generate_visible',
               'generate_hidden'],
        passes=[]),
    'unscaled_scores': dict(
        explain=('your attend_with_cache does not divide the scores by √depth, the width of one head, '
                 'as causal_self_attention does'),
        edits=[
            ('attend_with_cache', ' / np.sqrt(q.shape[-1])', ''),
        ],
        fails=['attend_visible', 'attend_hidden', 'step_visible', 'step_hidden', 'cache_hidden', 'generate_visible',
               'generate_hidden'],
        passes=[]),
    'cache_not_updated': dict(
        explain=('your attend_with_cache returns the cache it was given: the new position\'s key and '
                 'value must be in the cache it returns, so that the next step sees them'),
        edits=[
            ('attend_with_cache', '{"keys": keys, "values": values}', 'layer_cache'),
        ],
        fails=['attend_visible', 'attend_hidden', 'step_visible', 'step_hidden', 'cache_hidden', 'generate_visible',
               'generate_hidden'],
        passes=[]),
    'position_zero': dict(
        explain=('your decode_with_cache adds the position embedding of position 0 to every new token: '
                 'the token goes at the position after the cached ones, which is how many positions '
                 'the cache holds'),
        edits=[
            ('decode_with_cache', 'np.array([position])', 'np.arange(1)'),
        ],
        fails=['step_visible', 'step_hidden', 'cache_hidden', 'generate_visible', 'generate_hidden'],
        passes=['attend_visible', 'attend_hidden']),
    'attention_input_not_normalised': dict(
        explain=("your decode_with_cache gives attention the residual stream x itself: in this pre-LN model "
                 'each layer attends from layer_norm(x) with its norm_1 weights, as gpt_forward does, '
                 'so the cache must hold the keys and values of the normalised vectors'),
        edits=[
            ('decode_with_cache', 'attend_with_cache(layer_norm(x, *layer["norm_1"]), layer["attention"],',
             'attend_with_cache(x, layer["attention"],'),
        ],
        fails=['step_visible', 'step_hidden', 'cache_hidden', 'generate_visible', 'generate_hidden'],
        passes=['attend_visible', 'attend_hidden']),
    'prompt_not_in_cache': dict(
        explain=('your generate_greedy reads the prompt with gpt_forward and leaves the cache empty, so '
                 'the generated tokens are read as if the text began with them, at positions 0, 1, …, '
                 'without the prompt: read the prompt into the cache with decode_with_cache'),
        edits=[
            ('generate_greedy', 'for t in range(prompt.shape[1]):                                     # read the prompt\n'
                                '        logits, cache = decode_with_cache(params, prompt[:, t], cache)',
             'logits = gpt_forward(params, prompt)[:, -1]'),
        ],
        fails=['generate_visible', 'generate_hidden'],
        passes=['attend_hidden', 'step_hidden', 'cache_hidden']),
}
