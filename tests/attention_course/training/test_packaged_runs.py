"""Packaged runs: what the package ships is loaded exactly as a cache entry, and nothing stale ships."""

import json
import time

import numpy as np
import pytest

import tiny_model
from attention_course.training import cache, packaged_runs


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_COURSE_CACHE", str(tmp_path / "cache"))


_build, _fit = tiny_model.build, tiny_model.fit


def _train_and_package(folder, names=("tiny",), seed=0):
    """What the book's build and scripts/package_runs.py do: a build under seed 0 asks for runs,
    then their entries are packaged into ``folder``."""
    packaged_runs.note_build(seed)
    runs = {name: cache.trained_model(name, _build, _fit, seed=0) for name in names}
    written = packaged_runs.package(list(names), folder=folder)
    return runs, written


def test_a_packaged_run_is_loaded_in_a_new_cache_with_the_same_weights_and_record(tmp_path, monkeypatch):
    folder = tmp_path / "package"
    runs, written = _train_and_package(folder)
    trained = runs["tiny"]
    assert [p.name for p in written] == [p.name for p in packaged_runs.packaged_entries(folder)]

    monkeypatch.setenv("ATTENTION_COURSE_CACHE", str(tmp_path / "fresh cache"))   # a fresh clone
    assert packaged_runs.install(folder=folder) == [written[0].name]
    assert packaged_runs.install(folder=folder) == []                 # installed once
    loaded = cache.trained_model("tiny", _build, _fit, seed=0)
    assert loaded.cached and loaded.seconds == trained.seconds        # loaded, not trained
    for a, b in zip(trained.model.weights, loaded.model.weights):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert loaded.record["loss"] == trained.record["loss"]
    np.testing.assert_array_equal(loaded.record["predictions"], trained.record["predictions"])
    # another seed is another run: trained, not loaded
    assert not cache.trained_model("tiny", _build, _fit, seed=1).cached


def test_a_packaged_run_no_lookup_asks_for_is_reported(tmp_path, monkeypatch):
    folder = tmp_path / "package"
    _, written = _train_and_package(folder, names=("tiny", "other"))
    monkeypatch.setenv("ATTENTION_COURSE_CACHE", str(tmp_path / "fresh cache"))
    packaged_runs.install(folder=folder)
    assert sorted(packaged_runs.unasked(folder=folder)) == sorted(p.name for p in written)
    cache.trained_model("tiny", _build, _fit, seed=0)
    assert packaged_runs.unasked(folder=folder) == [p.name for p in written if p.name.startswith("other")]


def test_packaging_again_replaces_the_entry_of_a_changed_recipe(tmp_path):
    folder = tmp_path / "package"
    _, [old] = _train_and_package(folder)
    time.sleep(0.01)
    packaged_runs.note_build(0)
    assert not cache.trained_model("tiny", _build, _fit, seed=0, config={"changed": True}).cached
    [written] = packaged_runs.package(["tiny"], folder=folder)
    assert written.name != old.name and written.name.startswith("tiny-")
    assert [p.name for p in packaged_runs.packaged_entries(folder)] == [written.name]
    assert not old.exists()


def test_packaging_says_what_is_missing(tmp_path):
    folder = tmp_path / "package"
    with pytest.raises(LookupError, match="make book"):
        packaged_runs.package(["tiny"], folder=folder)                # no build on record
    packaged_runs.note_build(3)
    with pytest.raises(LookupError, match="seed 3"):
        packaged_runs.package(["tiny"], folder=folder)
    packaged_runs.note_build(0)
    cache.trained_model("tiny", _build, _fit, seed=0)
    with pytest.raises(LookupError, match="'tin'"):
        packaged_runs.package(["tiny", "tin"], folder=folder)         # a name is a whole name
    assert not folder.exists() or packaged_runs.packaged_entries(folder) == []   # nothing half done
    # a run asked for before the build started is not the build's
    json_note = cache.cache_dir() / packaged_runs.BUILD_NOTE
    json_note.write_text(json.dumps({"started": time.time() + 60, "seed": 0}))
    with pytest.raises(LookupError, match="'tiny'"):
        packaged_runs.package(["tiny"], folder=folder)


def test_a_folder_that_is_not_a_run_is_refused(tmp_path):
    folder = tmp_path / "package"
    (folder / "tiny-0123456789abcdef").mkdir(parents=True)
    (folder / "tiny-0123456789abcdef" / "run.json").write_text("{}")
    with pytest.raises(ValueError, match="model.weights.h5"):
        packaged_runs.packaged_entries(folder)
    with pytest.raises(ValueError, match="not a packaged run"):
        (folder / "notes.txt").write_text("x")
        packaged_runs.packaged_entries(folder)


# --- what the package ships ----------------------------------------------------------------

#: the most the packaged runs may take together: they are part of every clone
MAX_PACKAGED_MIB = 25


def test_the_shipped_runs_are_complete_small_and_readable():
    entries = packaged_runs.packaged_entries()
    assert entries, "the package ships no runs: a cold build trains every model"
    total = sum(file.stat().st_size for entry in entries for file in entry.iterdir())
    assert total <= MAX_PACKAGED_MIB * 2**20, (
        f"the packaged runs take {total / 2**20:.1f} MiB; package only runs that are slow to train "
        "and small to keep")
    for entry in entries:
        record = json.loads((entry / "run.json").read_text())
        assert record["seconds"] > 0 and isinstance(record["record"], dict), entry.name
        with np.load(entry / "arrays.npz") as arrays:
            assert all(arrays[name].size >= 0 for name in arrays.files)
