"""Plausible wrong answers to assignment 8 (the encoder block),
for the grader's feedback (the format: ``course_grader.mistakes``; not released)."""

MISTAKES = {
    'missing_residual': dict(
        explain=('your (post-LN) encoder block drops the residual around attention: it is layer_norm(x'
                 ' + attention(x))'),
        edits=[
            ('encoder_block', 'layer_norm(x + multi_head_attention(', 'layer_norm(multi_head_attention('),
        ],
        fails=['encoder_visible', 'encoder_hidden'],
        passes=['ffn_hidden', 'pre_ln_hidden']),
    'padding_mask_ignored': dict(
        explain=('your encoder block ignores the padding mask: padded positions must get no attention'),
        edits=[
            ('encoder_block', 'mask = None if padding_mask is None else', 'mask = None if True else'),
        ],
        fails=['encoder_hidden'],
        passes=['encoder_visible', 'pre_ln_hidden']),
    'pre_ln_missing_residual': dict(
        explain=('your pre-LN block drops the residual around attention: it is x + '
                 'attention(layer_norm(x))'),
        edits=[
            ('encoder_block_pre_ln', 'h = x + multi_head_attention(', 'h = multi_head_attention('),
        ],
        fails=['pre_ln_visible', 'pre_ln_hidden'],
        passes=['encoder_hidden']),
}
