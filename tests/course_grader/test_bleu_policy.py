"""Assignment 9 asks for BLEU written by hand: ``sacrebleu`` (installed for the course's own tests,
which check the reference solution against it) cannot be imported while it is graded.

A submission whose ``corpus_bleu`` calls ``sacrebleu`` loses the BLEU tests, keeps the others,
and its feedback says why (``c.GradingPolicy.forbidden_modules`` in ``nbgrader_config.py``).
"""

import copy

import pytest

from grading_support import cell, cell_scores, feedback_html, graded_batch, max_scores, solved_notebook

A = "a9_bleu"
SACREBLEU = '''
def corpus_bleu(hypotheses, references, max_n=4):
    import sacrebleu
    streams = [list(stream) for stream in zip(*references)]
    return sacrebleu.corpus_bleu(hypotheses, streams, smooth_method="none", tokenize="none", force=True).score / 100
'''


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    pytest.importorskip("sacrebleu")
    user = copy.deepcopy(solved_notebook(A))
    cell(user, "corpus_bleu").source = SACREBLEU
    return graded_batch(tmp_path_factory, "bleu-policy", A, {"sacrebleu-user": user})


def test_sacrebleu_earns_nothing_and_the_feedback_says_why(report):
    scores, full = cell_scores(report, "sacrebleu-user"), max_scores(A)
    assert scores["bleu_visible"] == scores["bleu_hidden"] == 0
    assert {c: scores[c] for c in full if not c.startswith("bleu")} == {c: full[c] for c in full if not c.startswith("bleu")}
    assert "grading policy forbids it" in feedback_html(report, "sacrebleu-user")
    assert "forbidden imports: tensorflow, keras, sacrebleu" in report["policy"]
