"""Keras weights as NumPy arrays: the one helper every function of ``from_keras`` uses.

Each function of :mod:`attention_course.weights.from_keras` reads a built Keras
layer or model into a NumPy weight class of the course
(``MultiHeadAttentionWeights``, ``LayerNormWeights``, ``TransformerWeights``,
...); they all read a variable with :func:`to_numpy`.
"""

from __future__ import annotations


def to_numpy(variable):
    """A Keras variable or tensor as a NumPy array; ``None`` (a layer built without that weight, such as a bias) stays ``None``."""
    import keras

    return None if variable is None else keras.ops.convert_to_numpy(variable)
