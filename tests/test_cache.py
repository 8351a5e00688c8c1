import numpy as np
import pytest

from attention_course import cache
from attention_course.data import toy_translation


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_COURSE_CACHE", str(tmp_path / "cache"))


def test_key_changes_with_config_and_code():
    a = cache.fingerprint({"units": 128})
    assert a == cache.fingerprint({"units": 128})
    assert a != cache.fingerprint({"units": 64})
    assert a != cache.fingerprint({"units": 128}, modules=(toy_translation,))


def test_entries_appear_only_when_complete(tmp_path):
    folder = cache.entry("demo", {"x": 1})
    assert not folder.exists()

    def write(tmp):
        assert not folder.exists()  # still being written
        np.save(tmp / "a.npy", np.arange(3))

    cache.write_atomically(folder, write)
    np.testing.assert_array_equal(np.load(folder / "a.npy"), np.arange(3))
    assert [p.name for p in folder.parent.iterdir()] == [folder.name]  # no temporary left


def test_a_failed_write_leaves_no_entry():
    folder = cache.entry("demo", {"x": 2})

    def write(tmp):
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError):
        cache.write_atomically(folder, write)
    assert not folder.exists()
    assert list(folder.parent.iterdir()) == []  # the temporary folder is gone too
