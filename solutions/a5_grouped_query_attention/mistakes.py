"""Plausible wrong answers to assignment 5 (grouped-query attention),
for the grader's feedback (the format: ``course_grader.mistakes``; not released)."""

MISTAKES = {
    'tiled_kv_heads': dict(
        explain=('your repeat_kv_heads tiles the key/value heads (0, 1, 0, 1) instead of repeating '
                 'each one (0, 0, 1, 1): consecutive query heads share a key/value head, so use '
                 'np.repeat along the heads axis, not np.tile'),
        edits=[
            ('repeat_kv_heads', 'np.repeat(x, num_query_heads // groups, axis=1)',
             'np.tile(x, (1, num_query_heads // groups, 1, 1))'),
        ],
        fails=['repeat_visible', 'repeat_hidden', 'gqa_visible', 'gqa_hidden', 'gqa_masks_hidden'],
        passes=['pool_hidden', 'counts_hidden']),
    'scaled_by_model_width': dict(
        explain=('your grouped-query attention divides the scores by the square root of the model '
                 "width d: divide by √K, the width of one head (the layer's head_dim)"),
        edits=[
            ('grouped_query_attention', '/ np.sqrt(q.shape[-1])', '/ np.sqrt(query.shape[-1])'),
        ],
        fails=['gqa_visible', 'gqa_hidden', 'gqa_masks_hidden'],
        passes=['repeat_hidden', 'pool_hidden']),
    'softmax_over_queries': dict(
        explain=("your grouped-query attention normalises over the queries (axis -2): each query's "
                 'weights over the keys (the last axis) must sum to 1'),
        edits=[
            ('grouped_query_attention', 'softmax(scores, axis=-1)', 'softmax(scores, axis=-2)'),
        ],
        fails=['gqa_visible', 'gqa_hidden', 'gqa_masks_hidden'],
        passes=['repeat_hidden', 'counts_hidden']),
    'pooled_strided_groups': dict(
        explain=('your mean_pool_heads averages heads g, g + G, g + 2G, ... (every G-th head) instead '
                 'of the N/G consecutive heads g·r … g·r + r − 1 that share key/value head g: '
                 'reshape the heads axis to (G, r), then average over r'),
        edits=[
            ('mean_pool_heads',
             'kernel.reshape(d, groups, r, depth).mean(axis=2), bias.reshape(groups, r, depth).mean(axis=1)',
             'kernel.reshape(d, r, groups, depth).mean(axis=1), bias.reshape(r, groups, depth).mean(axis=0)'),
        ],
        fails=['pool_visible', 'pool_hidden'],
        passes=['gqa_hidden', 'counts_hidden']),
    'cache_keys_only': dict(
        explain=('your kv_cache_floats counts only the keys: the cache holds the keys and the values '
                 'of every layer, key/value head and position'),
        edits=[
            ('counts', 'return 2 * batch * length', 'return batch * length'),
        ],
        fails=['counts_visible', 'counts_hidden'],
        passes=['gqa_hidden', 'pool_hidden']),
    'key_value_heads_per_query_head': dict(
        explain=('your attention_parameters counts a key and a value projection for every query '
                 'head, as in multi-head attention: a grouped layer has only num_key_value_heads of '
                 'them'),
        edits=[
            ('counts', '2 * (d_model + 1) * num_key_value_heads * head_dim',
             '2 * (d_model + 1) * num_query_heads * head_dim'),
        ],
        fails=['counts_visible', 'counts_hidden'],
        passes=['gqa_hidden', 'pool_hidden']),
}
