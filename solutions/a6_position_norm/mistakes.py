"""Plausible wrong answers to assignment 6 (positions and layer norm),
for the grader's feedback (the format: ``course_grader.mistakes``; not released)."""

MISTAKES = {
    'sin_and_cos_swapped': dict(
        explain=('your positional encoding has sine and cosine swapped: even dimensions are sines, odd'
                 ' ones cosines'),
        edits=[
            ('positional_encoding', 'pe[:, 0::2] = np.sin(angles)', 'pe[:, 0::2] = np.cos(angles)'),
            ('positional_encoding', 'pe[:, 1::2] = np.cos(angles)', 'pe[:, 1::2] = np.sin(angles)'),
        ],
        fails=['positional_visible', 'positional_hidden'],
        passes=['layer_norm_hidden']),
    'no_epsilon': dict(
        explain=('your layer norm divides by √variance without adding epsilon, which blows up when a '
                 "row's variance is (nearly) zero"),
        edits=[
            ('layer_norm', 'np.sqrt(variance + epsilon)', 'np.sqrt(variance)'),
        ],
        fails=['layer_norm_visible', 'layer_norm_hidden'],
        passes=['positional_hidden']),
    'missing_residual': dict(
        explain=("your add-and-norm normalises the sublayer's output alone: it must add the input "
                 'first (the residual), layer_norm(x + sublayer(x))'),
        edits=[
            ('residuals', 'layer_norm(np.asarray(x) + sublayer_output, gamma, beta)', 'layer_norm(sublayer_output, gamma, beta)'),
        ],
        fails=['residual_visible', 'residual_hidden'],
        passes=['layer_norm_hidden']),
    'layer_norm_without_normalising': dict(
        explain=("your layer norm only scales and shifts: it must first subtract each row's mean and "
                 'divide by its standard deviation'),
        edits=[
            ('layer_norm', 'return gamma * (x - mean) / np.sqrt(variance + epsilon) + beta', 'return gamma * x + beta'),
        ],
        fails=['layer_norm_visible', 'layer_norm_hidden', 'residual_visible', 'residual_hidden'],
        passes=['positional_visible', 'positional_hidden']),
}
