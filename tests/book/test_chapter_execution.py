"""What a chapter's cached outputs are keyed on, and the order chapters execute in."""

import ast
import os
import tempfile
from pathlib import Path

import pytest

from book_build import build as build_book
from book_build import chapters, execution

ROOT = Path(__file__).resolve().parents[2]


def names(paths):
    return {str(p.relative_to(ROOT)) for p in paths}


def test_dependencies_follow_imports_through_the_package():
    found = names(chapters.dependencies(["from attention_course.training import experiments"]))
    # experiments imports fitting, cache, decoding, ... and the data module of the task
    for module in ("training/experiments.py", "training/fitting.py", "training/cache.py", "decoding.py",
                   "seeding.py", "data/toy_translation.py", "__init__.py", "training/__init__.py",
                   "data/__init__.py"):
        assert f"attention_course/{module}" in found, module
    assert "attention_course/vision.py" not in found   # nothing imports it from there


def test_dependencies_include_imports_inside_functions_and_package_data():
    # experiments.rnn_translator imports models.rnn_seq2seq inside the function
    found = names(chapters.dependencies(["import attention_course.training.experiments as e"]))
    assert "attention_course/models/rnn_seq2seq.py" in found
    found = names(chapters.dependencies(["from attention_course.data import char_gpt"]))
    assert "attention_course/data/char_gpt.npz" in found   # the shipped weights


def test_a_chapter_without_the_package_depends_on_nothing():
    assert chapters.dependencies(["import numpy as np", "x = 1"]) == []


def test_the_key_changes_with_code_module_and_seed(tmp_path):
    chapter = ROOT / "book" / "chapters" / "07_positional_encoding.md"
    notebook = chapters.read_chapter(chapter)
    key = chapters.chapter_key(chapter, notebook, {"ATTENTION_COURSE_SEED": "0"})
    assert key == chapters.chapter_key(chapter, notebook, {"ATTENTION_COURSE_SEED": "0"})
    assert key != chapters.chapter_key(chapter, notebook, {"ATTENTION_COURSE_SEED": "1"})
    code = next(cell for cell in notebook.cells if cell.cell_type == "code")
    code.source += "\n# edited"
    assert key != chapters.chapter_key(chapter, notebook, {"ATTENTION_COURSE_SEED": "0"})


def test_chapters_that_reuse_a_trained_model_run_after_the_chapter_that_trains_it(tmp_path):
    def write(name, text):
        (tmp_path / name).write_text(text)
        return tmp_path / name

    first = write("01.md", "baseline = experiments.rnn_translator(attention=False)")
    second = write("03.md", "a = experiments.rnn_translator(attention=True)\n"
                            "train, test = experiments.translation_data()")
    other = write("05.md", "train, test = experiments.translation_data()")
    third = write("11.md", "experiments.transformer_translator()\nexperiments.rnn_translator(True)")
    needs = chapters.shared_models([first, second, other, third])
    assert needs == {first: set(), second: {first}, other: set(), third: {first, second}}


def test_every_training_module_of_the_package_orders_the_pages_that_share_its_models(tmp_path):
    assert {"experiments", "marker_heads", "digit_classifiers"} <= set(chapters.training_modules())
    first = tmp_path / "14.md"
    first.write_text("vit_run = digit_classifiers.vision_transformer(train)")
    second = tmp_path / "14b.md"
    second.write_text("vit = digit_classifiers.vision_transformer(train).model")
    unrelated = tmp_path / "15.md"
    unrelated.write_text("digit_classifiers_note = 1; marker_heads.EPOCHS")
    needs = chapters.shared_models([first, second, unrelated])
    assert needs == {first: set(), second: {first}, unrelated: set()}


def test_jobs_wait_for_the_jobs_they_come_after(monkeypatch):
    finished = []

    def execute(job, timeout=0):
        finished.append(job.path.name)
        return execution.Result(job, 0.0, None)

    monkeypatch.setattr(execution, "execute", execute)
    a, b, c = (execution.Job(Path(n)) for n in ("a", "b", "c"))
    c.after, b.expected_seconds = [a], 10    # b first (longest); c only after a
    c.expected_seconds = 20
    results = execution.execute_all([a, b, c], workers=1, report=lambda line: None)
    assert finished.index("c") > finished.index("a") and len(results) == 3
    assert all(job.environment["TF_NUM_INTRAOP_THREADS"] == str(len(execution.usable_cpus()))
               for job in (a, b, c))
    assert all(job.cpus is None for job in (a, b, c))   # one kernel: not pinned


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or len(execution.usable_cpus()) < 2,
                    reason="pinning needs Linux's affinity calls and two CPUs")
def test_parallel_kernels_run_on_cpus_of_their_own(tmp_path):
    """Two kernels at a time: each on its own half of the CPUs, as its thread counts assume."""
    cpus = execution.usable_cpus()
    chapters = tmp_path / "chapters"
    chapters.mkdir()
    header = (ROOT / "book" / "chapters" / "09_encoder_block.md").read_text().split("---", 2)[1]
    jobs = []
    for name in ("a", "b", "c"):
        chapter = chapters / f"{name}.md"
        chapter.write_text(f"---{header}---\n\n# {name}\n\n```{{code-cell}} ipython3\nimport os\n"
                           "print(sorted(os.sched_getaffinity(0)))\n```\n")
        jobs.append(execution.Job(chapter))
    results = execution.execute_all(jobs, workers=2, report=lambda line: None)
    assert [r.error for r in results] == [None] * 3
    seen = [ast.literal_eval(r.job.notebook.cells[-1].outputs[0]["text"]) for r in results]
    halves = [cpus[:len(cpus) // 2], cpus[len(cpus) // 2:2 * (len(cpus) // 2)]]
    assert all(s in halves for s in seen), seen
    assert set(map(tuple, seen)) == set(map(tuple, halves))   # two kernels side by side: both halves
    assert sorted(os.sched_getaffinity(0)) == cpus                 # this process is not pinned


def test_an_executed_chapter_hashes_like_the_one_sphinx_reads(tmp_path):
    """myst-nb finds the outputs in jupyter-cache only if executing left the hashed parts alone."""
    from jupyter_cache.cache.main import JupyterCacheBase

    chapter = tmp_path / "tiny.md"
    chapter.write_text((ROOT / "book" / "chapters" / "09_encoder_block.md").read_text().split("---", 2)[1]
                       .join(["---", "---\n\n# Tiny\n\n```{code-cell} ipython3\nx = 1 + 1\nx\n```\n"]))
    job = execution.Job(chapter)
    result = execution.execute(job)
    assert result.error is None, result.error
    assert job.notebook.cells[-1].outputs     # it did execute
    cache = JupyterCacheBase(str(tmp_path / "cache"))
    assert cache.create_hashed_notebook(job.notebook)[1] == \
        cache.create_hashed_notebook(chapters.read_chapter(chapter))[1]


def test_a_chapter_whose_dependencies_changed_is_executed_again(tmp_path, monkeypatch):
    """Same code cells, other key: the stale outputs leave the cache and the chapter runs again."""
    from jupyter_cache.cache.main import JupyterCacheBase
    from jupyter_cache.base import CacheBundleIn

    chapter = tmp_path / "tiny.md"
    chapter.write_text((ROOT / "book" / "chapters" / "09_encoder_block.md").read_text().split("---", 2)[1]
                       .join(["---", "---\n\n# Tiny\n\n```{code-cell} ipython3\nx = 1 + 1\n```\n"]))
    monkeypatch.setattr(build_book, "BOOK", tmp_path)
    monkeypatch.setattr(build_book, "KEYS", tmp_path / "keys.json")
    monkeypatch.setattr(build_book, "DOCTREES", tmp_path / "doctrees")
    monkeypatch.setattr(build_book, "CLAIMS", tmp_path / "claims")
    executed = []

    def execute_all(jobs, workers):
        executed.extend(job.path.name for job in jobs)
        return [execution.Result(job, 1.0, None) for job in jobs]

    monkeypatch.setattr(execution, "execute_all", execute_all)
    cache = JupyterCacheBase(str(tmp_path / "cache"))
    notebook = chapters.read_chapter(chapter)
    cache.cache_notebook_bundle(CacheBundleIn(notebook, str(chapter), data={"execution_seconds": 3.0}),
                                check_validity=False)
    keys = {"tiny": "a key made with other dependencies"}
    build_book.execute_changed(cache, keys, [chapter])
    assert executed == ["tiny.md"] and keys["tiny"] != "a key made with other dependencies"
    build_book.execute_changed(cache, keys, [chapter])      # now up to date: nothing runs
    assert executed == ["tiny.md"]


def test_a_kernel_leaves_no_files_behind_and_logs_no_warning(tmp_path, monkeypatch, capfd):
    """Kernels talk over Unix sockets in a folder of their own, removed afterwards.

    Over TCP every kernel logs a warning about unencrypted ports into the
    build's output; the sockets' default place would be the chapter's folder.
    The kernel is killed, not asked to exit, so the temporary files it would
    delete at exit (TensorFlow's AutoGraph writes one per function it converts)
    must be in that folder too.
    """
    chapters, temporary = tmp_path / "chapters", tmp_path / "tmp"
    chapters.mkdir(), temporary.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(temporary))
    monkeypatch.setenv("TMPDIR", str(temporary))
    chapter = chapters / "tiny.md"
    chapter.write_text((ROOT / "book" / "chapters" / "09_encoder_block.md").read_text().split("---", 2)[1]
                       .join(["---", "---\n\n# Tiny\n\n```{code-cell} ipython3\nimport os, tempfile\n"
                              "tempfile.NamedTemporaryFile(prefix='left-at-exit', delete=False).close()\n"
                              "print(sorted(os.listdir('.')))\n```\n"]))
    result = execution.execute(execution.Job(chapter))
    assert result.error is None, result.error
    assert result.job.notebook.cells[-1].outputs[0]["text"] == "['tiny.md']\n"
    assert sorted(p.name for p in chapters.iterdir()) == ["tiny.md"]
    assert list(temporary.iterdir()) == []
    assert "without encryption" not in capfd.readouterr().err


def test_kernel_sockets_fit_even_under_a_deep_temporary_folder(tmp_path, monkeypatch):
    """pytest's own folders grow deep (``/tmp/pytest-of-root/pytest-171/popen-gw1/test_...``):
    a socket path over 107 bytes failed the kernel's start with "File name too long"."""
    deep = tmp_path / ("deep-" * 20)
    deep.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(deep))
    folder = execution.socket_folder()
    try:
        assert len(os.fsencode(os.path.join(folder, "kernel-99999"))) <= 107
    finally:
        os.rmdir(folder)
    shallow = tempfile.mkdtemp(prefix="t", dir="/tmp")   # where it fits, the folder stays under $TMPDIR
    try:
        monkeypatch.setattr("tempfile.tempdir", shallow)
        folder = execution.socket_folder()
        assert os.path.dirname(folder) == shallow
        os.rmdir(folder)
    finally:
        os.rmdir(shallow)
