"""Keras models the chapters train (importing one imports Keras).

One naming rule: ``models/<name>.py`` is the Keras twin of the NumPy module
``attention_course/<name>.py``, into whose weights ``weights/from_keras/`` reads it --
``attention_only`` (chapters 5-6), ``transformer`` (9-11), ``bert`` (12), ``gpt``
(13), ``vision`` (14).  ``rnn_seq2seq`` (chapters 1 and 3) and
``show_attend_tell`` (15) have no NumPy twin: those chapters check their
attention against the NumPy functions of :mod:`attention_course.attention`.
"""
