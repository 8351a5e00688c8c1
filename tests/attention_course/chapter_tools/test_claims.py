"""Claims about trained results: asserted under the course seed, recorded for the multi-seed table."""

import json
import math
import re
from pathlib import Path

import pytest

from attention_course.chapter_tools import claims
from attention_course import seeding


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv(claims.FOLDER_VARIABLE, str(tmp_path))
    monkeypatch.delenv(claims.MODE_VARIABLE, raising=False)
    monkeypatch.delenv(seeding.SEED_VARIABLE, raising=False)
    return tmp_path


def test_a_claim_that_holds_is_recorded_and_returns_nothing_to_display(folder):
    assert claims.claim("ch3_long_gain", 0.7, ">=", 0.5, "gain on long sentences") is None
    recorded = claims.load(folder)
    claim = recorded[0]["ch3_long_gain"]
    assert claim.holds and claim.chapter == 3 and claim.seed == 0
    assert claim.margin == pytest.approx(0.2)


def test_a_claim_that_fails_in_the_strict_build_names_itself_its_value_and_threshold(folder, monkeypatch):
    monkeypatch.setenv(claims.MODE_VARIABLE, "assert")   # what scripts/build_book.py sets
    with pytest.raises(AssertionError, match=r"ch8_warmup_gain .*0\.1 > 0\.2 \(seed 0\)"):
        claims.claim("ch8_warmup_gain", 0.1, ">", 0.2, "loss without minus with warm-up")
    assert not claims.load(folder)[0]["ch8_warmup_gain"].holds   # recorded all the same


def test_in_a_students_notebook_a_failing_claim_prints_one_line_with_the_books_range(folder, capsys):
    """No mode variable (Jupyter, Colab): the claim, this run's value, the table's range; no error."""
    row = next(r for r in json.loads(claims.TABLE.read_text(encoding="utf-8"))["claims"]
               if r["name"] == "ch1_short_accuracy")
    values = [v for v in row["values"].values() if v is not None]
    assert claims.claim("ch1_short_accuracy", 0.25, ">=", 0.8, "exact match, short sentences") is None
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1, lines
    line = lines[0]
    assert "exact match, short sentences" in line and "0.25" in line and ">= 0.8" in line
    assert f"{min(values):.3g} to {max(values):.3g}" in line
    assert "over seeds 0-" in line
    assert not claims.load(folder)[0]["ch1_short_accuracy"].holds   # recorded all the same


def test_in_a_students_notebook_a_claim_that_holds_prints_nothing(folder, capsys):
    claims.claim("ch1_short_accuracy", 0.95, ">=", 0.8, "exact match, short sentences")
    claims.measure("ch1_something", 0.1, "a measurement")
    assert capsys.readouterr().out == ""


def test_book_values_are_a_rows_values_by_seed_without_the_missing_ones(monkeypatch):
    """What a page counts from the table (chapter 8: the seeds under which a stack did not train)."""
    table = {"seeds": [0, 1, 2], "claims": [
        {"name": "ch8_a", "values": {"0": 0.1, "1": None, "2": 0.5}},
        {"name": "ch8_b", "values": {"0": 9.0, "1": 8.0, "2": 7.0}}]}
    monkeypatch.setattr(claims, "_table", lambda: table)
    assert claims.book_values("ch8_a") == {0: 0.1, 2: 0.5}
    assert claims.book_values("ch8_b") == {0: 9.0, 1: 8.0, 2: 7.0}
    assert claims.book_values("ch8_not_there") == {}
    assert claims.book_range("ch8_a") == ([0, 1, 2], 0.1, 0.5)     # the same row, as a range


def test_a_failing_claim_missing_from_the_table_still_prints_one_line(folder, capsys):
    claims.claim("ch99_not_in_the_table", 1.0, "<", 0.5, "something new")
    (line,) = capsys.readouterr().out.splitlines()
    assert "something new" in line and "not in the book's table" in line


def test_record_mode_records_a_failing_claim_instead_of_raising(folder, monkeypatch, capsys):
    monkeypatch.setenv(claims.MODE_VARIABLE, "record")
    monkeypatch.setenv(seeding.SEED_VARIABLE, "2")
    claims.claim("ch14_cnn_ahead", -0.01, ">", 0, "CNN minus ViT")
    claim = claims.load(folder)[2]["ch14_cnn_ahead"]
    assert not claim.holds and claim.margin == pytest.approx(-0.01) and claim.seed == 2
    assert capsys.readouterr().out == ""   # the table is make claims' report, not a line per claim


@pytest.mark.parametrize("op, value, holds", [("<", 0.4, True), ("<", 0.5, False), ("<=", 0.5, True),
                                              (">", 0.5, False), (">=", 0.5, True)])
def test_every_operator(folder, monkeypatch, op, value, holds):
    monkeypatch.setenv(claims.MODE_VARIABLE, "record")
    claims.claim("ch1_x", value, op, 0.5, "x")
    assert claims.load(folder)[0]["ch1_x"].holds is holds


def test_nan_never_holds(folder, monkeypatch):
    monkeypatch.setenv(claims.MODE_VARIABLE, "record")
    claims.claim("ch1_nan", float("nan"), "<", 1, "a diverged loss")
    claim = claims.load(folder)[0]["ch1_nan"]
    assert not claim.holds and claim.margin == -math.inf


def test_a_measurement_is_recorded_and_never_asserted(folder):
    assert claims.measure("ch14_hiding_gap", -0.05, "hiding least minus most attended", fmt=".1%") is None
    measured = claims.load(folder)[0]["ch14_hiding_gap"]
    assert measured.value == -0.05 and measured.op == claims.MEASURED and measured.threshold is None
    assert not measured.asserted and measured.holds and math.isnan(measured.margin)
    assert "measured" in measured.describe() and "-5.0%" in measured.describe()
    with pytest.raises(ValueError, match="chapter"):
        claims.measure("hiding_gap", 0.1, "no chapter in the name")


@pytest.mark.parametrize("name", ["warmup_gain", "ch8", "Ch8_gain", "ch8-gain"])
def test_names_start_with_the_chapter(folder, name):
    with pytest.raises(ValueError, match="chapter"):
        claims.claim(name, 1, ">", 0, "x")


def test_bad_operator_and_mode_are_refused(folder, monkeypatch):
    with pytest.raises(ValueError, match="op must be"):
        claims.claim("ch1_x", 1, "==", 1, "x")
    monkeypatch.setenv(claims.MODE_VARIABLE, "warn")
    with pytest.raises(ValueError, match=claims.MODE_VARIABLE):
        claims.claim("ch1_x", 1, ">", 0, "x")


def test_forget_page_removes_one_pages_records_under_one_seed(folder, monkeypatch):
    """Chapter 11 has two pages: re-executing one must not drop the other's claims."""
    for seed in (0, 1):
        monkeypatch.setenv(seeding.SEED_VARIABLE, str(seed))
        for page, name in (("11_one", "ch11_a"), ("11_two", "ch11_b"), ("03_x", "ch3_a")):
            monkeypatch.setenv(claims.PAGE_VARIABLE, page)
            claims.claim(name, 1, ">", 0, "x")
    claims.forget_page(folder, "11_one", 0)
    recorded = claims.load(folder)
    assert set(recorded[0]) == {"ch11_b", "ch3_a"} and set(recorded[1]) == {"ch11_a", "ch11_b", "ch3_a"}
    assert recorded[1]["ch11_a"].page == "11_one"


def test_records_are_plain_json(folder):
    claims.claim("ch5_accuracy", 0.97, ">=", 0.95, "accuracy", fmt=".1%")
    data = json.loads((folder / "seed-0" / "ch5_accuracy.json").read_text())
    assert data["value"] == 0.97 and data["fmt"] == ".1%" and data["about"] == "accuracy"


@pytest.mark.parametrize("text, seed", [("", 0), ("  ", 0), ("3", 3), (" 12 ", 12)])
def test_course_seed(monkeypatch, text, seed):
    monkeypatch.setenv(seeding.SEED_VARIABLE, text)
    assert seeding.course_seed() == seed


@pytest.mark.parametrize("text", ["one", "-1", "1.5"])
def test_a_bad_course_seed_is_refused_with_its_name(monkeypatch, text):
    monkeypatch.setenv(seeding.SEED_VARIABLE, text)
    with pytest.raises(ValueError, match=seeding.SEED_VARIABLE):
        seeding.course_seed()


def test_setup_returns_and_applies_the_course_seed(monkeypatch, graph_rewrites_restored):
    import numpy as np
    from attention_course.chapter_tools import notebook
    from attention_course.training import fitting

    monkeypatch.setenv(seeding.SEED_VARIABLE, "7")
    assert notebook.setup() == 7
    first = np.random.rand()
    notebook.setup()
    assert np.random.rand() == first
    assert not fitting.graph_rewrites_on()   # the chapters' graphs run as traced ...
    monkeypatch.setenv(notebook.GRAPH_REWRITES_VARIABLE, "1")
    notebook.setup()
    assert fitting.graph_rewrites_on()       # ... unless check_claims.py --graph-rewrites asks



# --- the committed table (``make claims``) against the chapters ------------------------

ROOT = Path(__file__).resolve().parents[3]
CLAIM_NAME = re.compile(r"(?:\bclaims\.)?\b(?:claim|measure)\(\s*(f?)\"([^\"]+)\"")


def _claim_patterns() -> dict[str, re.Pattern]:
    """``{name as written in a chapter: pattern matching the names it records}``."""
    patterns = {}
    for path in sorted((ROOT / "book" / "chapters").glob("[0-9][0-9]_*.md")):
        for is_f_string, name in CLAIM_NAME.findall(path.read_text(encoding="utf-8")):
            parts = re.split(r"\{[^}]*\}", name) if is_f_string else [name]
            pattern = re.compile("[a-z0-9_]+".join(map(re.escape, parts)))
            assert pattern.pattern.startswith(f"ch{int(path.stem[:2])}_"), \
                f"{path.name}: claim {name!r} does not start with its chapter's prefix"
            patterns[name] = pattern
    return patterns


def test_the_claims_table_is_complete_and_every_claim_holds_with_its_margin_under_every_seed():
    table = json.loads(claims.TABLE.read_text(encoding="utf-8"))
    patterns = _claim_patterns()
    names = [row["name"] for row in table["claims"]]
    assert len(names) == len(set(names)), "a claim is listed twice"
    unknown = [n for n in names if not any(p.fullmatch(n) for p in patterns.values())]
    assert not unknown, f"claims_by_seed.json lists claims no chapter makes: {unknown}; run `make claims`"
    unmeasured = [w for w, p in patterns.items() if not any(p.fullmatch(n) for n in names)]
    assert not unmeasured, f"claims missing from claims_by_seed.json: {unmeasured}; run `make claims`"
    # make claims measures seeds 0-7; the committed table must cover all eight (a run
    # stopped early writes the whole seeds it has, which is not a table to ship)
    assert table["seeds"] == list(range(8)), f"the table covers seeds {table['seeds']}, not 0-7: run `make claims`"
    for row in table["claims"]:
        values = [row["values"].get(str(seed)) for seed in table["seeds"]]
        assert None not in values, f"{row['name']}: no value for some seed"
        if row["op"] == claims.MEASURED:
            assert row["threshold"] is None and row["margin"] is None and row["holds"]
            continue
        holds = [claims.OPERATORS[row["op"]](v, row["threshold"]) for v in values]
        assert all(holds) and row["holds"], f"{row['name']} fails under a seed: {values}"
        # room for a seed or a CPU not tried: a quarter of the spread beyond the worst seed
        worst = min(values) if row["op"] in (">", ">=") else max(values)
        margin = worst - row["threshold"] if row["op"] in (">", ">=") else row["threshold"] - worst
        spread = max(values) - min(values)
        assert margin >= 0.25 * spread - 1e-12, (
            f"{row['name']}: margin {margin:.4g} beyond the worst seed is under a quarter of the "
            f"seeds' spread {spread:.4g}: {values}")
