"""A grading run's options (``course_grader.options``): declared once, with help; the CLI built from them."""

import argparse
import dataclasses
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

from course_grader import grade, options, workers
from course_grader.options import GradingOptions


def test_every_option_has_a_flag_and_help_and_help_lists_them_all():
    done = subprocess.run([sys.executable, "-m", "course_grader", "--help"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    for spec in dataclasses.fields(GradingOptions):
        flag, text = spec.metadata["flag"], spec.metadata["help"]
        assert flag.startswith("--") and len(text) > 10, spec.name
        assert flag in done.stdout and " ".join(text.split()[:3]) in " ".join(done.stdout.split()), spec.name


def test_merge_takes_the_course_options_from_the_same_declarations():
    done = subprocess.run([sys.executable, "-m", "course_grader", "merge", "--help"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    for name in options.COURSE_OPTIONS:
        assert GradingOptions.__dataclass_fields__[name].metadata["flag"] in done.stdout


def test_options_survive_the_command_line_both_ways(tmp_path):
    given = GradingOptions(course_dir=tmp_path / "course", workers=3, cell_timeout=7, feedback=False,
                           shard=(2, 5), new_secret=True, source_dir=tmp_path / "source", course_id="x")
    parser = argparse.ArgumentParser()
    options.add_arguments(parser)
    assert options.from_arguments(parser.parse_args(options.as_arguments(given))) == given
    assert options.from_arguments(parser.parse_args([])) == GradingOptions()
    assert given.limits == {"cell_timeout": 7, "notebook_timeout": None, "memory_mb": None}
    assert given.course == {"source_directory": (tmp_path / "source").resolve(), "course_id": "x"}


def test_grade_and_the_worker_take_one_options_object():
    assert list(inspect.signature(grade.grade).parameters) == ["source", "assignment", "options", "settings"]
    assert list(inspect.signature(workers.worker).parameters) == ["run", "slot", "forked", "tasks", "results"]
    with pytest.raises(TypeError, match="limit"):       # a mistyped option is an error, not ignored
        grade.grade(Path("nowhere"), "a1", limit=3)


@pytest.mark.parametrize("shard, message", [("3", "K/N"), ("0/4", "between 1 and N"), ("5/4", "between 1 and N")])
def test_a_malformed_shard_is_refused_with_what_it_should_be(shard, message):
    parser = argparse.ArgumentParser()
    options.add_arguments(parser, ["shard"])
    with pytest.raises(SystemExit):
        parser.parse_args(["--shard", shard])
    with pytest.raises(argparse.ArgumentTypeError, match=message):
        options._shard(shard)
