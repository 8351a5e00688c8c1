"""What the first code cells of every chapter call.

``import_tensorflow_quietly()`` (in the hidden install cell) imports
TensorFlow without its start-up announcement; ``SEED = setup()`` seeds the chapter with the course seed
(:mod:`attention_course.seeding`) and makes its figures consistent; ``glue()``
hands a computed number to the prose (Jupyter Book's ``{glue:text}`` role), so
that no number in the text is typed by hand.  Outside Jupyter Book (Colab, a
plain Jupyter) ``glue`` shows nothing and changes nothing.
"""

from __future__ import annotations

import os
import sys

import numpy as np

from ..seeding import course_seed

#: set to 1, the chapters' traced graphs run with Grappler's rewrites (see :func:`setup`)
GRAPH_REWRITES_VARIABLE = "ATTENTION_COURSE_GRAPH_REWRITES"


def import_tensorflow_quietly() -> None:
    """Import TensorFlow and Keras with the process's standard error closed.

    TensorFlow's oneDNN CPU kernels (on by default; they train the course's
    Transformers about 1.4 times faster) are announced on file descriptor 2
    when TensorFlow is first imported, whatever ``TF_CPP_MIN_LOG_LEVEL`` says,
    and a notebook shows that line as the cell's error output.  A later import
    finds TensorFlow already loaded.  Without Keras installed (the NumPy-only
    chapters) this does nothing.

    Keras also imports scikit-learn, if it is installed, for its scikit-learn
    wrappers (``keras.wrappers``), which the course never uses: 0.7-1 s of
    every chapter's start-up, measured.  While Keras is imported, scikit-learn
    is hidden (so those wrappers say it is not installed); afterwards it
    imports as usual (chapter 14 loads its digits from it).
    """
    if "keras" in sys.modules:
        return
    saved = os.dup(2)
    hidden = "sklearn" not in sys.modules
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
            if hidden:
                sys.modules["sklearn"] = None   # ``import sklearn`` raises ImportError
            try:
                import keras  # noqa: F401  (imports TensorFlow, its backend)
            except ImportError:
                pass
    finally:
        if hidden:
            sys.modules.pop("sklearn", None)
        os.dup2(saved, 2)
        os.close(saved)


def setup(seed: int | None = None) -> int:
    """Seed every generator, fix NumPy's print width and the figure style; returns the seed.

    The seed is the course seed (``$ATTENTION_COURSE_SEED``, default 0) unless
    ``seed`` is given.  A chapter passes the returned seed (or ``seed + k``)
    to everything else it seeds: data splits, initialisers, training runs.
    With Keras installed, Keras's input pipelines also stop tuning themselves
    (:func:`attention_course.training.fitting.untuned_input_pipelines`) and
    traced graphs run without Grappler's rewrites
    (:func:`attention_course.training.fitting.set_graph_rewrites`), which
    saves time and changes results only by round-off.

    With ``$ATTENTION_COURSE_GRAPH_REWRITES`` set to 1 the rewrites stay on.
    ``scripts/check_claims.py --graph-rewrites`` executes the chapters that
    way: the same seeds, trained with different round-off, as on another CPU,
    to show which claims depend on it (chapter 14's once did).

    In the strict build (claims asserted), every figure a cell shows is
    checked as the cell ends (:mod:`attention_course.chapter_tools.figure_check`).

    With Keras, the runs that ship inside the package are copied into the model
    cache where it lacks them (:mod:`attention_course.training.packaged_runs`),
    so that a chapter loads the slowest models of the course seed instead of
    training them.
    """
    import matplotlib.pyplot as plt

    if seed is None:
        seed = course_seed()

    np.random.seed(seed)
    np.set_printoptions(precision=4, suppress=True, linewidth=100)
    plt.rcParams.update({"figure.dpi": 110, "savefig.dpi": 110, "figure.figsize": (6, 3.6),
                         "axes.spines.top": False, "axes.spines.right": False})
    from . import figure_check

    if figure_check.enabled():   # the strict build: a figure the site would show unreadable fails
        figure_check.install()
    try:
        import keras
    except ImportError:  # NumPy-only chapters run without Keras installed
        return seed
    from ..training import packaged_runs
    from ..training.fitting import set_graph_rewrites, untuned_input_pipelines

    packaged_runs.install()   # the slowest runs of the course seed, trained once and shipped
    keras.utils.set_random_seed(seed)
    untuned_input_pipelines()
    set_graph_rewrites(os.environ.get(GRAPH_REWRITES_VARIABLE) == "1")
    return seed


def glue(name: str, value, display: bool = False) -> None:
    """Store ``value`` for the prose under ``name``.

    Returns nothing, so that a glue at the end of a cell adds no stray output
    (the value) to the page.
    """
    if isinstance(value, np.generic):
        # Plain Python numbers, so that the prose can format them
        # ({glue:text}`name:.1%`); NumPy scalars' reprs cannot be parsed back.
        value = value.item()
    try:
        from myst_nb import glue as myst_glue
    except ImportError:
        return
    myst_glue(name, value, display=display)
