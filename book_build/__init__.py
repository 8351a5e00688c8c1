"""book_build: what builds the book, and what the build checks.

Run through ``make`` (or ``python -m book_build.<module>``; the files in
``scripts/`` are thin entry points to the same):

* :mod:`~book_build.build` -- ``make book``: execute the chapters whose key
  changed, then Sphinx, strictly; a failed chapter still leaves its page;
* :mod:`~book_build.chapters` -- the chapters as notebooks, the table of
  contents, and each chapter's key (what its outputs depend on);
* :mod:`~book_build.execution` -- a pool of kernels, one per core, each chapter
  in its own; :mod:`~book_build.watchdog` -- a cell that hangs is stopped, a
  slow one never;
* :mod:`~book_build.claims_run` -- ``make claims``: the chapters that train,
  under seeds 0-7, and the table of their claims;
* :mod:`~book_build.tuning_search` -- ``make tune``: every comparison's arms
  tuned alike, and the table of the searches;
* :mod:`~book_build.other_cpu` -- ``make book CPU=avx2``: another CPU's numerics
  (and ``scripts/slow_cpu.py``, standard library only: a slower, busier machine);
* :mod:`~book_build.diagrams` -- the architecture diagrams in ``book/figures``;
* :mod:`~book_build.browser` -- the system's Chromium, kept off the network, for
  the site's tests and benchmarks.
"""
