"""Plausible wrong answers to assignment 3 (local-p attention),
for the grader's feedback (the format: ``course_grader.mistakes``; not released)."""

MISTAKES = {
    'centre_not_scaled': dict(
        explain=('your predicted centre is the sigmoid alone, a number between 0 and 1: multiply it by '
                 'the source length S, so that p_t can be any position 0 … S'),
        edits=[
            ('predict_centre', 'return S / (1.0 + np.exp', 'return 1.0 / (1.0 + np.exp'),
        ],
        fails=['centre_visible', 'centre_hidden', 'local_p_visible', 'local_p_hidden', 'local_p_wide'],
        passes=['window_visible', 'window_hidden']),
    'window_rounds_centre': dict(
        explain=('your window is centred on p_t rounded to a whole position: keep p_t as it is, so that '
                 'the window holds the positions s with |s − p_t| ≤ D'),
        edits=[
            ('window_around', 'np.asarray(centre)[..., None]', 'np.round(centre)[..., None]'),
        ],
        fails=['window_visible', 'window_hidden', 'local_p_hidden'],
        passes=['centre_hidden', 'local_p_visible', 'local_p_wide']),
    'softmax_over_all_keys': dict(
        explain=('your softmax runs over all the keys and the keys outside the window are zeroed '
                 'afterwards, so the weights inside the window no longer sum to 1 before the Gaussian: '
                 'leave the outside keys out of the softmax'),
        edits=[
            ('local_p_attention', 'align = softmax(np.where(inside, scores, -np.inf), axis=-1)',
             'align = softmax(scores, axis=-1) * inside'),
        ],
        fails=['local_p_visible', 'local_p_hidden'],
        passes=['centre_hidden', 'window_hidden', 'local_p_wide']),
    'renormalised_after_gaussian': dict(
        explain=('your weights are renormalised after the Gaussian, so each row sums to 1: local-p '
                 'multiplies the softmax by the Gaussian and stops there'),
        edits=[
            ('local_p_attention', 'weights = align * gauss\n',
             'weights = align * gauss\n    weights = weights / weights.sum(axis=-1, keepdims=True)\n'),
        ],
        fails=['local_p_visible', 'local_p_hidden', 'local_p_wide'],
        passes=['centre_hidden', 'window_hidden']),
    'sigma_equals_D': dict(
        explain=('your Gaussian has standard deviation σ = D: Luong et al. use σ = D / 2, a Gaussian '
                 'twice as narrow as the window'),
        edits=[
            ('local_p_attention', 'sigma = D / 2\n', 'sigma = D\n'),
        ],
        fails=['local_p_visible', 'local_p_hidden', 'local_p_wide'],
        passes=['centre_hidden', 'window_hidden']),
}
