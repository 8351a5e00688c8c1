"""Training the chapters' Keras models, once: every trained model goes through here.

* :mod:`~attention_course.training.cache` -- ``trained_model``: build, train or
  load the weights and record of an earlier run with the same content key;
* :mod:`~attention_course.training.dependencies` -- which package modules code
  imports, recursively: the walker the cache's keys and the book's build share;
* :mod:`~attention_course.training.fitting` -- what training runs share:
  compiling, the warm-up schedule, length-bucketed batches;
* :mod:`~attention_course.training.experiments` -- the toy-translation runs of
  chapters 1, 3 and 11;
* :mod:`~attention_course.training.rnn_comparison` -- chapter 3's translators with
  and without attention (and one without, as large), each at its own best rate;
* :mod:`~attention_course.training.transformer_ablations` -- chapter 11's ablations
  of the Transformer, each row at its own best rate;
* :mod:`~attention_course.training.marker_heads` -- chapter 6's attention-only models
  with one or several heads on the marker task;
* :mod:`~attention_course.training.packaged_runs` -- the slowest runs of the
  course seed, shipped inside the package so that a cold build loads them;
* :mod:`~attention_course.training.char_gpt` -- the character-level
  Shakespeare GPT of chapter 13 and its shipped weights;
* :mod:`~attention_course.training.tuning` -- the book's comparisons, each arm
  tuned alike (``make tune``), and the table of their searches.
"""
