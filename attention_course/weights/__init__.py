"""Weights between Keras, NumPy and files.

* :mod:`~attention_course.weights.from_keras` -- every Keras-to-NumPy name
  mapping, one function per layer or model (the NumPy modules import nothing
  from here: the chapters call these functions directly);
* :mod:`~attention_course.weights.keras_weights` -- ``to_numpy``: the one way
  a Keras variable becomes a NumPy array (every function of ``from_keras`` uses it);
* :mod:`~attention_course.weights.pretrained` -- reading the pretrained
  all-MiniLM-L6-v2 from its safetensors file (chapter 12).
"""
