"""Plausible wrong answers to assignment 12 (ViT patches),
for the grader's feedback (the format: ``course_grader.mistakes``; not released)."""

MISTAKES = {
    'reshape_without_transpose': dict(
        explain=("your patchify reshapes the image without the transpose, so a 'patch' is made of "
                 'pieces of several rows of patches: reshape to (batch, rows, P, cols, P, C), then '
                 'bring the two patch-grid axes together'),
        edits=[
            ('patchify', 'P, C).transpose(0, 1, 3, 2, 4, 5)', 'P, C)'),
        ],
        fails=['patchify_visible', 'patchify_hidden', 'embed_hidden'],
        passes=['unpatchify_hidden']),
    'channels_flattened_first': dict(
        explain=('your patchify flattens a patch channel by channel: each patch is flattened pixel by '
                 'pixel, the channels of a pixel next to each other (row, column, channel order)'),
        edits=[
            ('patchify', 'transpose(0, 1, 3, 2, 4, 5)', 'transpose(0, 1, 3, 5, 2, 4)'),
        ],
        fails=['patchify_hidden', 'embed_hidden'],
        passes=['patchify_visible']),
    'class_token_last': dict(
        explain=('your embed_patches puts the class token after the patches: it comes first, at '
                 'position 0'),
        edits=[
            ('embed_patches', 'np.concatenate([cls, tokens], axis=1)', 'np.concatenate([tokens, cls], axis=1)'),
        ],
        fails=['embed_visible', 'embed_hidden'],
        passes=['patchify_hidden']),
    'patches_without_transpose_both_ways': dict(
        explain=('your patchify and unpatchify both skip the transpose: they undo each other, but the '
                 "patches are not the image's P × P squares"),
        edits=[
            ('patchify', 'P, C).transpose(0, 1, 3, 2, 4, 5)', 'P, C)'),
            ('unpatchify', 'grid = patches.reshape(batch, height // P, width // P, P, P, C).transpose(0, 1, 3, 2, 4, 5)\n    return grid.reshape(batch, height, width, C)', 'return patches.reshape(batch, height, width, C)'),
        ],
        fails=['patchify_visible', 'patchify_hidden', 'unpatchify_visible', 'unpatchify_hidden'],
        passes=[]),
}
