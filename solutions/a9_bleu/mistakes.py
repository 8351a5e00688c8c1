"""Plausible wrong answers to assignment 9 (BLEU),
for the grader's feedback (the format: ``course_grader.mistakes``; not released)."""

MISTAKES = {
    'last_ngram_missed': dict(
        explain=('your n-gram counts miss the last n-gram of the sentence: a sentence of L tokens has '
                 'L − n + 1 n-grams, the last one starting at token L − n'),
        edits=[
            ('ngram_counts', 'range(len(tokens) - n + 1)', 'range(len(tokens) - n)'),
        ],
        fails=['ngram_visible', 'ngram_hidden', 'clipped_visible', 'clipped_hidden', 'bleu_visible', 'bleu_hidden'],
        passes=['bp_visible', 'bp_hidden']),
    'unclipped_counts': dict(
        explain=('your matches are not clipped: a hypothesis n-gram counts at most as many times as it '
                 'occurs in the reference where it is most frequent, so "le le le le" against '
                 '"le chien et le chat" has 2 unigram matches, not 4'),
        edits=[
            ('clipped_matches', 'min(k, max_ref.get(gram, 0))', 'k * (gram in max_ref)'),
        ],
        fails=['clipped_visible', 'clipped_hidden', 'bleu_hidden'],
        passes=['ngram_hidden', 'bp_hidden']),
    'brevity_penalty_inverted': dict(
        explain=('your brevity penalty has the ratio upside down: for a hypothesis shorter than the '
                 'reference it is exp(1 − r / c), which is below 1 (yours is above 1)'),
        edits=[
            ('brevity_penalty', 'np.exp(1 - r / c)', 'np.exp(1 - c / r)'),
        ],
        fails=['bp_visible', 'bp_hidden', 'bleu_visible', 'bleu_hidden'],
        passes=['ngram_hidden', 'clipped_hidden']),
    'arithmetic_mean': dict(
        explain=('your BLEU averages the n-gram precisions with an arithmetic mean: BLEU takes their '
                 'geometric mean, exp of the mean of their logarithms'),
        edits=[
            ('corpus_bleu', 'np.exp(np.mean(np.log(precisions)))', 'np.mean(precisions)'),
        ],
        fails=['bleu_visible', 'bleu_hidden'],
        passes=['ngram_hidden', 'clipped_hidden', 'bp_hidden']),
    'sentence_average': dict(
        explain=("your BLEU is the mean of the sentences' own BLEU scores: corpus BLEU adds up the "
                 'matches, totals and lengths of all the sentences first, then computes one score'),
        edits=[
            ('corpus_bleu', 'def corpus_bleu(hypotheses, references, max_n=4):\n',
             'def corpus_bleu(hypotheses, references, max_n=4):\n'
             '    return float(np.mean([_corpus_bleu([h], [rs], max_n) for h, rs in zip(hypotheses, references)]))\n\n\n'
             'def _corpus_bleu(hypotheses, references, max_n=4):\n'),
        ],
        fails=['bleu_visible', 'bleu_hidden'],
        passes=['ngram_hidden', 'clipped_hidden', 'bp_hidden']),
    'longest_reference': dict(
        explain=('your reference length takes the longest reference of each sentence: BLEU takes the '
                 "one closest in length to the hypothesis (on a tie, the shorter)"),
        edits=[
            ('corpus_bleu', 'min((len(ref.split()) for ref in refs), key=lambda L: (abs(L - length), L))',
             'max(len(ref.split()) for ref in refs)'),
        ],
        fails=['bleu_visible', 'bleu_hidden'],
        passes=['ngram_hidden', 'clipped_hidden', 'bp_hidden']),
}
