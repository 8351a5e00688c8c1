"""The first cells of every chapter: TensorFlow imported quietly, without scikit-learn."""

import os
import subprocess
import sys
import textwrap


def run_fresh(code: str) -> subprocess.CompletedProcess:
    """``code`` in a new interpreter (this one has imported Keras long ago), set as a chapter sets it.

    With oneDNN's kernels on, as in the book (the tests turn them off), so that
    TensorFlow has its start-up line to announce.
    """
    environment = {k: v for k, v in os.environ.items() if k != "TF_ENABLE_ONEDNN_OPTS"}
    environment["TF_CPP_MIN_LOG_LEVEL"] = "3"
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=300, env=environment)


def test_keras_is_imported_silently_without_scikit_learn_which_still_imports_afterwards():
    done = run_fresh("""
        import sys
        from attention_course.chapter_tools.notebook import import_tensorflow_quietly
        import_tensorflow_quietly()
        print("keras" in sys.modules, "tensorflow" in sys.modules, "sklearn" in sys.modules)
        import_tensorflow_quietly()   # a second call changes nothing
        print("sklearn" in sys.modules)
        from sklearn.datasets import load_digits   # chapter 14's data
        print(load_digits().images.shape)
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:3] == ["True True False", "False", "(1797, 8, 8)"]
    assert "oneDNN" not in done.stderr, done.stderr


def test_scikit_learn_already_imported_stays_imported():
    done = run_fresh("""
        import sys
        import sklearn
        from attention_course.chapter_tools.notebook import import_tensorflow_quietly
        import_tensorflow_quietly()
        print(sys.modules["sklearn"] is sklearn, "keras" in sys.modules)
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True True"
