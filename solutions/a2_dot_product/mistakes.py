"""Plausible wrong answers to assignment 2 (dot-product attention),
for the grader's feedback (the format: ``course_grader.mistakes``; not released)."""

MISTAKES = {
    'unscaled_scores': dict(
        explain=('your scores are not divided by √d_k: scaled dot-product attention divides q · k by '
                 'the square root of the key width'),
        edits=[
            ('scaled_dot_product_attention', '1.0 / np.sqrt(d_k)', '1.0'),
        ],
        fails=['scaled_visible', 'scaled_hidden'],
        passes=['attention_visible', 'attention_masks']),
    'off_by_one_causal_mask': dict(
        explain=('your causal mask hides each position from itself: position t may attend to positions'
                 ' 0 … t, itself included'),
        edits=[
            ('causal_mask', '<= np.arange(T_q)', '< np.arange(T_q)'),
        ],
        fails=['causal_visible', 'causal_hidden', 'attention_causal'],
        passes=['attention_masks', 'scaled_hidden']),
    'mask_applied_after_softmax': dict(
        explain=('your attention zeroes the masked weights after the softmax, so each row no longer '
                 'sums to 1: mask the scores before the softmax'),
        edits=[
            ('attention', 'scores = np.where(visible, scores, scores - 1e9)\n    weights = softmax(scores, axis=-1)', 'weights = softmax(scores, axis=-1) * visible'),
        ],
        fails=['attention_visible', 'attention_masks', 'attention_causal'],
        passes=['scaled_hidden', 'causal_hidden']),
    'softmax_over_queries': dict(
        explain=("your attention normalises over the queries (axis -2): each query's weights over the "
                 'keys (the last axis) must sum to 1'),
        edits=[
            ('attention', 'weights = softmax(scores, axis=-1)', 'weights = softmax(scores, axis=-2)'),
        ],
        fails=['attention_visible', 'attention_masks'],
        passes=['scores_hidden', 'scaled_hidden']),
}
