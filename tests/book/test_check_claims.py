"""The multi-seed claims table (``make claims``): which chapters it runs, how it reads its records.

``make claims`` is not part of ``make test`` (it trains every chapter under
eight seeds), so these tests are what keeps its script importable and its table right.
"""

import math
from pathlib import Path

import pytest

from attention_course.chapter_tools.claims import MEASURED, Claim
from book_build import claims_run as check_claims

ROOT = Path(__file__).resolve().parents[2]


def test_it_runs_every_chapter_that_makes_a_claim_and_no_other():
    found = {p.stem[:2] for p in check_claims.chapters_with_claims()}
    assert {"01", "03", "08", "11", "14"} <= found
    assert "02" not in found   # a chapter without a claim() call is not executed three times
    # chapters 11 and 14 have two pages each, all with claims, in reading order
    assert [p.stem for p in check_claims.chapters_with_claims([11, 14])] == [
        "11_training_transformer", "11_transformer_experiments",
        "14_vision_transformer", "14_what_the_vit_learned"]


def test_a_row_holds_only_if_its_claim_holds_under_every_seed():
    def claim(seed, value, name="ch11_accuracy"):
        return Claim(name, "exact match", value, ">=", 0.9, seed)

    recorded = {0: {"ch11_accuracy": claim(0, 0.99), "ch3_gain": claim(0, 0.95, "ch3_gain")},
                1: {"ch11_accuracy": claim(1, 0.93), "ch3_gain": claim(1, 0.97, "ch3_gain")},
                2: {"ch11_accuracy": claim(2, 0.85)}}
    rows = {row["name"]: row for row in check_claims.table_rows(recorded, [0, 1, 2])}
    assert list(rows) == ["ch3_gain", "ch11_accuracy"]       # by chapter number, not as text
    assert rows["ch11_accuracy"]["values"] == {"0": 0.99, "1": 0.93, "2": 0.85}
    assert math.isclose(rows["ch11_accuracy"]["margin"], 0.85 - 0.9)   # the worst seed's
    assert not rows["ch11_accuracy"]["holds"]
    assert rows["ch3_gain"]["values"]["2"] is None             # a seed without a record
    assert not rows["ch3_gain"]["holds"]                       # ... does not count as holding


def test_a_claim_needs_a_quarter_of_its_spread_beyond_the_worst_seed(capsys):
    def row(values, threshold=0.5):
        recorded = {seed: {"ch6_gain": Claim("ch6_gain", "a gain", v, ">=", threshold, seed)}
                    for seed, v in enumerate(values)}
        return check_claims.table_rows(recorded, list(range(len(values))))[0]

    # worst seed 0.6: margin 0.1; spread 0.9 - 0.6 = 0.3, a quarter of it 0.075
    steady = row([0.9, 0.6, 0.75])
    assert math.isclose(steady["spread"], 0.3) and steady["holds"] and steady["steady"]
    assert math.isclose(check_claims.margin_share(steady), 0.1 / 0.3)
    # same spread, margin 0.05: holds under every seed, yet too close for an unseen one
    thin = row([0.85, 0.55, 0.7])
    assert thin["holds"] and not thin["steady"]
    # a claim every seed agrees on needs no margin
    exact = row([0.5, 0.5, 0.5])
    assert exact["steady"] and check_claims.margin_share(exact) == math.inf
    failing = row([0.9, 0.4])
    assert not failing["holds"] and not failing["steady"]
    assert check_claims.margin_share(failing) == -math.inf
    check_claims.print_table([thin], [0, 1, 2])
    assert "margin under a quarter of the spread" in capsys.readouterr().out


def test_the_default_run_measures_eight_seeds(executed):
    check_claims.main(["--chapters", "14", "--no-write"])
    # chapter 14's two pages under each seed
    assert sorted(int(job.environment["ATTENTION_COURSE_SEED"]) for job in executed) == sorted(list(range(8)) * 2)


def test_table_only_executes_nothing_and_writes_the_table_from_the_records(executed, tmp_path):
    for seed in range(8):
        for path in check_claims.chapters_with_claims():
            name = f"ch{int(path.stem[:2])}_x_{path.stem[3:].replace('_', '')}"
            check_claims.claims.record(Claim(name, "x", 1.0, ">=", 0.5, seed, page=path.stem),
                                       tmp_path / "records")
    assert check_claims.main(["--table-only"]) == 0
    assert not executed
    table = check_claims.json.loads((tmp_path / "claims_by_seed.json").read_text())
    assert table["seeds"] == list(range(8)) and all(row["steady"] for row in table["claims"])


def test_a_measurement_has_its_values_and_no_margin(capsys):
    recorded = {seed: {"ch14_gap": Claim("ch14_gap", "a gap that varies", value, MEASURED, None, seed)}
                for seed, value in enumerate([0.3, -0.05, 0.15])}
    rows = check_claims.table_rows(recorded, [0, 1, 2])
    assert rows[0]["values"] == {"0": 0.3, "1": -0.05, "2": 0.15}
    assert rows[0]["margin"] is None and rows[0]["holds"]     # a negative value fails nothing
    check_claims.print_table(rows, [0, 1, 2])
    assert "(measured)" in capsys.readouterr().out



@pytest.fixture
def executed(tmp_path, monkeypatch):
    """``check_claims.main`` with a fake executor and its outputs under ``tmp_path``: the jobs it ran."""
    jobs = []
    monkeypatch.setattr(check_claims.execution, "execute_all",
                        lambda given, workers, report: jobs.extend(given) or [])
    monkeypatch.setattr(check_claims, "TABLE", tmp_path / "claims_by_seed.json")
    for name in ("RECORDS", "RECORDS_WITH_REWRITES"):
        monkeypatch.setattr(check_claims, name, tmp_path / name.lower())
    monkeypatch.setenv("ATTENTION_COURSE_CACHE", str(tmp_path / "cache"))
    return jobs


def test_graph_rewrites_run_keeps_its_models_and_records_apart_and_writes_no_table(executed, tmp_path):
    check_claims.main(["--graph-rewrites", "--chapters", "14", "--seeds", "0", "1"])
    assert [job.path.stem for job in executed] == ["14_vision_transformer", "14_what_the_vit_learned"] * 2
    for job in executed:
        assert job.environment["ATTENTION_COURSE_GRAPH_REWRITES"] == "1"
        assert job.environment["ATTENTION_COURSE_CLAIMS"] == str(tmp_path / "records_with_rewrites")
    # the trained-model cache cannot tell the settings apart: a folder of its own
    assert check_claims.os.environ["ATTENTION_COURSE_CACHE"] == str(tmp_path / "cache-graph-rewrites")
    assert not (tmp_path / "claims_by_seed.json").exists()


def test_the_book_setting_is_explicit_in_an_ordinary_run(executed, tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_COURSE_GRAPH_REWRITES", "1")    # left over in the shell
    check_claims.main(["--chapters", "14", "--seeds", "0", "--no-write"])
    assert executed and all(job.environment["ATTENTION_COURSE_GRAPH_REWRITES"] == "0" for job in executed)
    assert all(job.environment["ATTENTION_COURSE_CLAIMS"] == str(tmp_path / "records") for job in executed)
    assert check_claims.os.environ["ATTENTION_COURSE_CACHE"] == str(tmp_path / "cache")


def test_every_chapter_runs_under_a_seed_before_any_runs_under_the_next(executed):
    check_claims.main(["--chapters", "8", "14", "--seeds", "0", "1", "--no-write"])
    order = sorted(executed, key=lambda job: -job.expected_seconds)   # as execute_all takes them
    assert [(job.environment["ATTENTION_COURSE_SEED"], job.path.stem[:2]) for job in order] == [
        ("0", "08"), ("0", "14"), ("0", "14"), ("1", "08"), ("1", "14"), ("1", "14")]


def _record_every_page(folder, seeds, skip=None):
    for seed in seeds:
        for path in check_claims.chapters_with_claims():
            if (seed, path.stem) == skip:
                continue
            name = f"ch{int(path.stem[:2])}_x_{path.stem[3:].replace('_', '')}"
            check_claims.claims.record(Claim(name, "x", 1.0, ">=", 0.5, seed, page=path.stem), folder)


def test_a_run_stopped_early_gives_a_table_of_the_whole_seeds_it_has(executed, tmp_path, capsys):
    # seeds 0-4 complete; under seed 5 one page of a two-page chapter has no records
    _record_every_page(tmp_path / "records", range(6), skip=(5, "11_transformer_experiments"))
    check_claims.main(["--table-only"])
    table = check_claims.json.loads((tmp_path / "claims_by_seed.json").read_text())
    assert table["seeds"] == [0, 1, 2, 3, 4]
    assert "no records under seed 5 for 11_transformer_experiments" in capsys.readouterr().out


def test_fewer_than_three_whole_seeds_write_no_table(executed, tmp_path):
    _record_every_page(tmp_path / "records", range(2))
    check_claims.main(["--table-only"])
    assert not (tmp_path / "claims_by_seed.json").exists()


def test_pages_picks_pages_not_whole_chapters(executed):
    check_claims.main(["--pages", "11_training_transformer", "--seeds", "0", "--no-write"])
    assert [job.path.stem for job in executed] == ["11_training_transformer"]


def test_a_pages_run_without_the_other_pages_records_judges_its_own_pages_and_writes_no_table(
        executed, tmp_path, capsys):
    """Records of one page only (the others' never made here): the run judges that page's claims
    under its seeds (it used to stop with StopIteration) and does not write a table of one page."""
    for seed in range(8):
        check_claims.claims.record(Claim("ch14_x_good", "x", 1.0, ">=", 0.5, seed, page="14_vision_transformer"),
                                   tmp_path / "records")
    assert check_claims.main(["--table-only", "--pages", "14_vision_transformer"]) == 0
    out = capsys.readouterr().out
    assert "no seed has records of every page with claims" in out and "ch14_x_good" in out
    assert "not every page with claims has records" in out
    assert not (tmp_path / "claims_by_seed.json").exists()
    check_claims.claims.record(Claim("ch14_x_bad", "x", 0.1, ">=", 0.5, 3, page="14_vision_transformer"),
                               tmp_path / "records")
    assert check_claims.main(["--table-only", "--pages", "14_vision_transformer"]) == 1
