"""Plausible wrong answers to assignment 7 (rotary position embeddings),
for the grader's feedback (the format: ``course_grader.mistakes``; not released)."""

MISTAKES = {
    'half_frequency_exponent': dict(
        explain=('your rotary_angles uses the frequencies base^(−i/d): pair i turns at '
                 'θ_i = base^(−2i/d), the frequencies of the sinusoidal encoding'),
        edits=[
            ('rotary_angles', 'theta = base ** (-np.arange(0, d, 2) / d)', 'theta = base ** (-np.arange(d // 2) / d)'),
        ],
        fails=['angles_visible', 'angles_hidden', 'rotary_visible', 'rotary_hidden', 'rotary_properties_hidden',
               'attention_hidden'],
        passes=[]),
    'rotate_half_pairing': dict(
        explain=('your apply_rotary pairs feature i with feature i + d/2 (the "rotate half" '
                 'convention of GPT-NeoX): this assignment pairs neighbours, (x_2i, x_2i+1)'),
        edits=[
            ('apply_rotary', 'even, odd = x[..., 0::2], x[..., 1::2]', 'even, odd = np.split(x, 2, axis=-1)'),
            ('apply_rotary', 'np.stack([rotated_even, rotated_odd], axis=-1).reshape(x.shape)',
             'np.concatenate([rotated_even, rotated_odd], axis=-1)'),
        ],
        fails=['rotary_visible', 'rotary_hidden', 'rotary_properties_hidden', 'attention_hidden'],
        passes=['angles_visible', 'angles_hidden']),
    'rotating_clockwise': dict(
        explain=('your apply_rotary turns the pairs the wrong way (clockwise, a minus sign on the '
                 "other sine): x'_2i = x_2i cos φ − x_2i+1 sin φ and x'_2i+1 = x_2i sin φ + x_2i+1 cos φ. "
                 'The scores still depend only on the offset, but they are those of the offset '
                 'with its sign flipped'),
        edits=[
            ('apply_rotary', 'rotated_even = even * cos - odd * sin', 'rotated_even = even * cos + odd * sin'),
            ('apply_rotary', 'rotated_odd = even * sin + odd * cos', 'rotated_odd = -even * sin + odd * cos'),
        ],
        fails=['rotary_visible', 'rotary_hidden', 'rotary_properties_hidden', 'attention_hidden'],
        passes=['angles_hidden']),
    'values_rotated': dict(
        explain=('your rotary_attention rotates the values too: only the queries and keys are '
                 'rotated, so that the positions enter the scores and nothing else'),
        edits=[
            ('rotary_attention', 'return weights @ value, weights',
             'return weights @ apply_rotary(value, key_positions), weights'),
        ],
        fails=['attention_visible', 'attention_hidden', 'relative_hidden'],
        passes=['rotary_hidden', 'rotary_properties_hidden']),
    'unscaled_scores': dict(
        explain=('your rotary_attention does not divide the scores by √d, the width of the queries '
                 'and keys'),
        edits=[
            ('rotary_attention', 'scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d)', 'scores = q @ np.swapaxes(k, -1, -2)'),
        ],
        fails=['attention_visible', 'attention_hidden', 'relative_hidden'],
        passes=['rotary_hidden', 'angles_hidden']),
}
