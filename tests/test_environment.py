"""Each test starts from the session's environment (tests/environment.py)."""

import os

from environment import environment_restored


def test_a_changed_a_new_and_a_removed_variable_are_put_back(monkeypatch):
    monkeypatch.setenv("COURSE_TEST_CHANGED", "before")
    monkeypatch.setenv("COURSE_TEST_REMOVED", "here")
    monkeypatch.delenv("COURSE_TEST_NEW", raising=False)
    with environment_restored() as changed:
        os.environ["COURSE_TEST_CHANGED"] = "after"
        os.environ["COURSE_TEST_NEW"] = "1"
        del os.environ["COURSE_TEST_REMOVED"]
    assert changed == ["COURSE_TEST_CHANGED", "COURSE_TEST_NEW", "COURSE_TEST_REMOVED"]
    assert os.environ["COURSE_TEST_CHANGED"] == "before"
    assert os.environ["COURSE_TEST_REMOVED"] == "here"
    assert "COURSE_TEST_NEW" not in os.environ


def test_an_untouched_environment_is_left_alone():
    with environment_restored() as changed:
        pass
    assert changed == []

