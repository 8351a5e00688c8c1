"""Plausible wrong answers to assignment 10 (top-p sampling),
for the grader's feedback (the format: ``course_grader.mistakes``; not released)."""

MISTAKES = {
    'crossing_token_dropped': dict(
        explain=('your nucleus stops before the token at which the cumulative probability reaches p: '
                 'keep that token too (a token is kept when the tokens ranked above it add up to less '
                 'than p), so that the kept tokens add up to at least p'),
        edits=[
            ('top_p_filter', 'above < p', 'above + ranked <= p'),
        ],
        fails=['filter_visible', 'filter_hidden', 'filter_edges', 'topk_visible', 'topk_hidden'],
        passes=[]),
    'not_renormalised': dict(
        explain=('your nucleus distribution is not renormalised: after setting the other tokens to 0, '
                 'divide by the sum of the kept probabilities so that each row sums to 1'),
        edits=[
            ('top_p_filter', 'return kept / kept.sum(axis=-1, keepdims=True)', 'return kept'),
        ],
        fails=['filter_visible', 'filter_hidden', 'filter_edges', 'topk_visible', 'topk_hidden'],
        passes=[]),
    'ranked_least_likely_first': dict(
        explain=('your ranking starts from the least likely token: sort from the most likely down '
                 '(np.argsort(-q)), so that the nucleus is made of the likeliest tokens'),
        edits=[
            ('top_p_filter', 'np.argsort(-probs, axis=-1, kind="stable")', 'np.argsort(probs, axis=-1, kind="stable")'),
        ],
        fails=['filter_visible', 'filter_hidden', 'filter_edges', 'sample_visible', 'sample_hidden',
               'topk_visible', 'topk_hidden'],
        passes=[]),
    'temperature_after_the_nucleus': dict(
        explain=('your nucleus is chosen from the distribution at temperature 1 and the temperature is '
                 'applied afterwards: divide the logits by the temperature first, then choose the '
                 'nucleus of that distribution'),
        edits=[
            ('top_p_filter', 'probs = softmax(scaled, axis=-1)', 'probs = softmax(np.asarray(logits), axis=-1)'),
            ('top_p_filter', 'kept = np.where(keep, probs, 0.0)', 'kept = np.where(keep, softmax(scaled, axis=-1), 0.0)'),
        ],
        fails=['filter_visible', 'filter_hidden'],
        passes=['filter_edges', 'topk_visible', 'topk_hidden']),
    'top_p_before_top_k': dict(
        explain=('your top-k and top-p are applied the other way round (or the nucleus is measured in the '
                 'full distribution): keep the k most likely tokens first, renormalise, and choose the '
                 'nucleus among them'),
        edits=[
            ('top_k_top_p_filter', 'return top_p_filter(top_k, p)',
             'kept = top_p_filter(scaled, p) * (rank < k)\n    return kept / kept.sum(axis=-1, keepdims=True)'),
        ],
        fails=['topk_visible', 'topk_hidden'],
        passes=['filter_visible', 'filter_hidden', 'filter_edges', 'sample_visible', 'sample_hidden']),
}
