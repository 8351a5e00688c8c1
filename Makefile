# The two commands of the README:
#   make book   build the book strictly (every chapter executed; any warning fails)
#   make test   build the book, then run every test (installing Chromium for the
#               browser tests and Slurm for the cluster test where it can, or saying
#               at once what to install)
# and, for maintainers:
#   make check  the tests that need neither the built book nor root, in minutes (no
#               Chromium, no Slurm, no book build): what to run while working
#   make claims execute the chapters that train under seeds 0-7 (about an hour) and
#               write the table of their claims
#               (attention_course/chapter_tools/claims_by_seed.json)
#   make tune   run every comparison's search (each arm tuned alike, outside the build) and
#               write the table the chapters use (attention_course/training/tuned_settings.json)
#   make book CPU=avx2, make test CPU=avx2
#               the same, with the numerics of a CPU without AVX-512 (scripts/other_cpu.py)
# Both create the virtual environment in .venv on first use and reuse it after.

PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

# TensorFlow stays quiet in the built pages (its oneDNN kernels stay on: they train
# faster); trained models are cached in _build.
export TF_CPP_MIN_LOG_LEVEL := 3
export PYTHONHASHSEED := 0
export ATTENTION_COURSE_CACHE := $(CURDIR)/_build/course_cache

# CPU=avx2 runs the build and the tests with another CPU's code paths (scripts/other_cpu.py)
CPU ?=
AS_CPU := $(if $(CPU),$(PY) scripts/other_cpu.py $(CPU) --,)

.PHONY: book test check browser slurm claims tune clean

$(STAMP): requirements.txt requirements-nodeps.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps -r requirements-nodeps.txt
	$(PY) -m pip install --quiet --no-deps -e .
	touch $@

book: $(STAMP)
	$(AS_CPU) $(PY) scripts/build_book.py

# The browser and cluster checks come first, so that a machine without them hears it at once;
# pytest lists the thirty slowest tests at the end, for whoever makes the suite faster.
test: browser slurm book
	$(AS_CPU) $(PY) -m pytest -n 2 --durations=30

# Markers set in tests/conftest.py: needs_book (tests/site/), needs_root (tests/course_grader/)
check: $(STAMP)
	$(AS_CPU) $(PY) -m pytest -n 2 -m "not needs_book and not needs_root"

browser:
	@scripts/ensure_chromium.sh

slurm:
	@scripts/ensure_slurm.sh

claims: $(STAMP)
	$(AS_CPU) $(PY) scripts/check_claims.py

tune: $(STAMP)
	$(AS_CPU) $(PY) scripts/tune_comparisons.py

clean:
	rm -rf _build
