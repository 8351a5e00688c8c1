"""Comparisons tuned alike (``attention_course.training.tuning``, ``scripts/tune_comparisons.py``)."""

import json
import math
import re
from pathlib import Path

import pytest

from attention_course.training import tuning

from book_build import tuning_search as tune_comparisons

ROOT = Path(__file__).resolve().parents[3]

CHAPTERS = ROOT / "book" / "chapters"


# --- the book's comparisons and their table --------------------------------------------

def test_every_comparison_has_a_search_made_by_its_code_as_it_is():
    """The table's numbers were made by the code of the comparison as it stands (its key)."""
    table = tuning.read_table()["comparisons"]
    for name, comparison in tuning.comparisons().items():
        assert name in table, f"no search for {name}: run scripts/tune_comparisons.py --only {name}"
        assert table[name]["key"] == comparison.key(), \
            f"{name}'s code changed since its search: run scripts/tune_comparisons.py --only {name}"
        assert table[name]["values"] == list(comparison.values)
        assert sorted(table[name]["results"]) == sorted(comparison.arms)
    assert set(table) <= set(tuning.comparisons()), "searches of comparisons that no longer exist"


def test_every_best_value_is_the_best_of_its_results_and_inside_its_grid():
    """An arm whose best value is the grid's smallest or largest was not bracketed: a value
    beyond might have changed the verdict."""
    for name, comparison in tuning.comparisons().items():
        entry = tuning.read_table()["comparisons"][name]
        assert entry["best"] == comparison.best(entry["results"]), name
        assert tune_comparisons.edges(entry) == [], f"{name}: best value at an edge of the grid"


def test_every_comparison_is_run_at_its_tuned_settings_in_its_chapter():
    """The page runs each arm at the value its search chose (``best_setting("name", ...)``), so
    no arm is left at a setting that suits another."""
    for name, comparison in tuning.comparisons().items():
        pages = [p for p in CHAPTERS.glob(f"{comparison.chapter:02d}_*.md")
                 if re.search(rf"best_setting\(\s*[\"']{name}[\"']", p.read_text())]
        assert pages, f"no page of chapter {comparison.chapter} takes {name}'s settings from its search"


# --- the machinery, on a toy comparison -------------------------------------------------

def quadratic(arm: str, value: float, seed: int) -> float:
    """A 'held-out loss' with its best value at 1e-3 for arm a and 1e-2 for arm b."""
    best = {"a": -3.0, "b": -2.0}[arm]
    return (math.log10(value) - best) ** 2 + 0.01 * seed


def toy(**changes) -> tuning.Comparison:
    settings = dict(name="ch99_toy", question="a or b?", arms=("a", "b"), setting="learning rate",
                    values=(1e-4, 1e-3, 1e-2, 1e-1), metric="loss", higher_is_better=False,
                    run=quadratic, seeds=(0, 1))
    return tuning.Comparison(**(settings | changes))


def test_each_arm_gets_its_own_best_value():
    comparison = toy()
    results = {arm: {str(v): [quadratic(arm, v, s) for s in comparison.seeds] for v in comparison.values}
               for arm in comparison.arms}
    assert comparison.best(results) == {"a": 1e-3, "b": 1e-2}
    flipped = toy(higher_is_better=True)
    assert flipped.best(results) == {"a": 1e-1, "b": 1e-4}
    results["a"]["0.001"][1] = None              # a run that diverged never wins
    assert comparison.best(results)["a"] != 1e-3


@pytest.mark.parametrize("changes, message", [
    ({"name": "toy"}, "starts with its chapter"),
    ({"arms": ("a",)}, "two or more distinct arms"),
    ({"arms": ("a", "a")}, "two or more distinct arms"),
    ({"values": (1e-3, 1e-2)}, "three or more"),
    ({"values": (1e-2, 1e-3, 1e-1)}, "increasing"),
    ({"seeds": ()}, "at least one seed"),
])
def test_a_malformed_comparison_is_refused_with_a_reason(changes, message):
    with pytest.raises(ValueError, match=message):
        toy(**changes)


def test_the_search_runs_every_arm_at_every_value_and_the_table_says_which_is_best(
        monkeypatch, tmp_path, capsys):
    comparison = toy()
    monkeypatch.setattr(tuning, "comparisons", lambda: {comparison.name: comparison})
    monkeypatch.setattr(tuning, "TABLE", tmp_path / "tuned.json")
    assert tune_comparisons.main(["--workers", "1"]) == 0
    table = json.loads((tmp_path / "tuned.json").read_text())
    entry = table["comparisons"]["ch99_toy"]
    assert entry["best"] == {"a": 1e-3, "b": 1e-2} and entry["key"] == comparison.key()
    assert entry["results"]["b"]["0.01"] == [0.0, 0.01]
    assert tuning.best_setting("ch99_toy", "b", tmp_path / "tuned.json") == 1e-2
    frame = tuning.search_table("ch99_toy", tmp_path / "tuned.json")
    assert frame.loc["a", "0.001"].endswith("*") and not frame.loc["a", "0.01"].endswith("*")
    with pytest.raises(KeyError, match="no arm 'c'"):
        tuning.best_setting("ch99_toy", "c", tmp_path / "tuned.json")
    with pytest.raises(KeyError, match="tune_comparisons.py --only ch99_other"):
        tuning.best_setting("ch99_other", "a", tmp_path / "tuned.json")


def test_a_best_value_at_an_edge_fails_the_search(monkeypatch, tmp_path, capsys):
    comparison = toy(values=(1e-3, 1e-2, 1e-1))        # arm a's best (1e-3) is now the edge
    monkeypatch.setattr(tuning, "comparisons", lambda: {comparison.name: comparison})
    monkeypatch.setattr(tuning, "TABLE", tmp_path / "tuned.json")
    assert tune_comparisons.main(["--workers", "1"]) == 1
    assert "best value of a is at an edge of the grid" in capsys.readouterr().err


def test_a_best_value_of_0_is_no_edge(monkeypatch, tmp_path, capsys):
    """No dropout best: nothing smaller could be tried, so the grid brackets it; its top is still
    an edge, and so is a lowest value above 0."""
    def dropout_loss(arm, value, seed):
        return {"a": value, "b": -value}[arm]        # a: best at 0; b: best at the top

    comparison = toy(values=(0.0, 0.1, 0.2), run=dropout_loss)
    monkeypatch.setattr(tuning, "comparisons", lambda: {comparison.name: comparison})
    monkeypatch.setattr(tuning, "TABLE", tmp_path / "tuned.json")
    assert tune_comparisons.main(["--workers", "1", "--no-write"]) == 1
    err = capsys.readouterr().err
    assert "best value of b is at an edge" in err and "of a" not in err
    entry = {"values": [0.0, 0.1, 0.2], "best": {"a": 0.0, "b": 0.1}}
    assert tune_comparisons.edges(entry) == []
    assert tune_comparisons.edges({"values": [0.05, 0.1, 0.2], "best": {"a": 0.05}}) == ["a"]


def test_a_failed_run_is_reported_and_writes_no_table(monkeypatch, tmp_path, capsys):
    def broken(arm, value, seed):
        raise RuntimeError("out of memory")

    comparison = toy(run=broken)
    monkeypatch.setattr(tuning, "comparisons", lambda: {comparison.name: comparison})
    monkeypatch.setattr(tuning, "TABLE", tmp_path / "tuned.json")
    assert tune_comparisons.main(["--workers", "1"]) == 1
    assert "out of memory" in capsys.readouterr().err and not (tmp_path / "tuned.json").exists()


def test_the_key_covers_the_code_not_the_data():
    """Two comparisons differing only in values have other keys; the key of a package
    function's comparison is the same in every process (no computed floats in it)."""
    assert toy().key() != toy(values=(1e-4, 1e-3, 1e-2)).key()
    assert toy().key() == toy().key()


def test_every_module_of_the_package_that_declares_comparisons_is_found():
    """No list to keep: a module with a top-level ``COMPARISONS`` is found by reading the files (and
    adding one changes no other comparison's key)."""
    package = ROOT / "attention_course" / "training"
    declaring = {f"attention_course.training.{path.stem}" for path in package.glob("*.py")
                 if re.search(r"^COMPARISONS\b", path.read_text(encoding="utf-8"), re.MULTILINE)}
    assert {"attention_course.training.deep_stacks", "attention_course.training.learned_lookup"} <= declaring
    assert set(tuning.comparison_modules()) == declaring
    assert {c.run.__module__ for c in tuning.comparisons().values()} == declaring
