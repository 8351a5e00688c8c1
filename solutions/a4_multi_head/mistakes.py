"""Plausible wrong answers to assignment 4 (multi-head attention),
for the grader's feedback (the format: ``course_grader.mistakes``; not released)."""

MISTAKES = {
    'heads_split_in_wrong_order': dict(
        explain=('your split_heads reshapes straight to (batch, heads, T, depth) without the '
                 'transpose, which mixes positions into heads: reshape to (batch, T, heads, depth), '
                 'then move the heads axis forward'),
        edits=[
            ('heads', 'x.reshape(batch, T, num_heads, width // num_heads).transpose(0, 2, 1, 3)', 'x.reshape(batch, num_heads, T, width // num_heads)'),
        ],
        fails=['heads_visible', 'heads_hidden', 'mha_visible', 'mha_hidden'],
        passes=[]),
    'heads_merged_in_wrong_order': dict(
        explain=('your merge_heads reshapes without moving the heads axis back first, which mixes '
                 'heads into positions: transpose to (batch, T, heads, depth), then reshape'),
        edits=[
            ('heads', 'x.transpose(0, 2, 1, 3).reshape(batch, T, num_heads * depth)', 'x.reshape(batch, T, num_heads * depth)'),
        ],
        fails=['heads_visible', 'heads_hidden', 'mha_visible', 'mha_hidden'],
        passes=[]),
    'unscaled_scores': dict(
        explain=('your multi-head attention does not divide the scores by √d_k, the width of one head'),
        edits=[
            ('multi_head_attention', ' / np.sqrt(q.shape[-1])', ''),
        ],
        fails=['mha_visible', 'mha_hidden', 'mha_masks_hidden'],
        passes=['heads_visible', 'heads_hidden']),
    'mask_applied_after_softmax': dict(
        explain=('your multi-head attention applies the mask after the softmax, so the weights left no'
                 ' longer sum to 1: mask the scores before it'),
        edits=[
            ('multi_head_attention', 'scores = np.where(visible[:, None], scores, -np.inf)', 'pass'),
            ('multi_head_attention', 'where=total > 0)', 'where=total > 0) * visible[:, None]'),
        ],
        fails=['mha_masks_hidden'],
        passes=['mha_visible', 'mha_hidden']),
}
