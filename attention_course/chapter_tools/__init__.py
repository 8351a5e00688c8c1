"""What the chapters use to show things, not what they teach.

* :mod:`~attention_course.chapter_tools.notebook` -- a chapter's set-up (seed, threads)
  and gluing numbers into the prose;
* :mod:`~attention_course.chapter_tools.display` -- ``show_source``: the package's code,
  printed where a chapter explains it;
* :mod:`~attention_course.chapter_tools.claims` -- ``claim``: a statement of the prose
  about a trained result, checked with its margin and recorded for the
  multi-seed table; ``measure``: a quantity the prose says varies, recorded
  for the same table and never asserted;
* :mod:`~attention_course.chapter_tools.plotting` -- attention heatmaps and curves;
* :mod:`~attention_course.chapter_tools.figure_check` -- the strict build's check that
  every figure can be read on the site (colour bars, text size, whole-number positions);
* :mod:`~attention_course.chapter_tools.attention_graph` -- attention weights drawn as a
  graph of tokens (chapter 5);
* :mod:`~attention_course.chapter_tools.timing` -- ``best_time``: timing code on a busy
  machine, for the tables that set measured costs beside the formulas;
* :mod:`~attention_course.chapter_tools.sequence_layer_cost` -- self-attention, recurrence
  and convolution timed at several sizes, their slopes and their figure (chapter 5);
* :mod:`~attention_course.chapter_tools.attention_cost` -- a multi-head attention layer's
  time, arithmetic limit and memory over sequence lengths, in one table and one figure
  (chapter 6);
* :mod:`~attention_course.chapter_tools.explorer` -- the interactive attention explorer
  of the site.
"""
