"""Plausible wrong answers to assignment 1 (softmax and additive attention),
for the grader's feedback (the format: ``course_grader.mistakes``; not released)."""

MISTAKES = {
    'no_max_subtraction': dict(
        explain=('your softmax overflows for large scores (exp of a large number is inf, and inf/inf '
                 "is NaN): subtract each slice's maximum before taking exp, which leaves the result "
                 'unchanged'),
        edits=[
            ('softmax', 'shifted = x - x.max(axis=axis, keepdims=True)', 'shifted = x'),
            ('softmax', 'e = np.exp(masked - row_max)', 'e = np.exp(masked)'),
        ],
        fails=['softmax_stability'],
        passes=['softmax_visible', 'softmax_axes', 'additive_keras']),
    'softmax_over_last_axis_only': dict(
        explain=('your softmax always normalises over the last axis: use the axis it is given'),
        edits=[
            ('softmax', 'axis=axis', 'axis=-1', 4),
        ],
        fails=['softmax_axes'],
        passes=['softmax_visible', 'softmax_stability', 'softmax_masks']),
    'mask_applied_after_softmax': dict(
        explain=('your softmax zeroes the masked entries after normalising, so the weights that are '
                 'left no longer sum to 1: mask the scores before the softmax'),
        edits=[
            ('softmax', 'mask = np.broadcast_to(np.asarray(mask, dtype=bool), x.shape)', 'return np.where(mask, softmax(x, axis), 0.0)'),
        ],
        fails=['softmax_visible', 'softmax_masks'],
        passes=['softmax_stability', 'softmax_axes']),
    'no_tanh': dict(
        explain=('your additive score adds query and key without the tanh: the score is v · tanh(q + '
                 'k)'),
        edits=[
            ('additive_attention', 'np.tanh(query[:, :, None, :] + key[:, None, :, :])', '(query[:, :, None, :] + key[:, None, :, :])'),
        ],
        fails=['additive_visible', 'additive_keras'],
        passes=['softmax_visible', 'softmax_masks']),
    'query_mask_ignored': dict(
        explain=('your additive attention ignores the query mask: rows of masked queries must come out'
                 ' as zeros'),
        edits=[
            ('additive_attention', 'if query_mask is not None:', 'if False:'),
        ],
        fails=['additive_keras'],
        passes=['additive_visible']),
}
