"""The peers' own test vectors, each through the project's implementation that claims to match that peer.

Sources (read from the peers' repositories; the inputs and expected numbers are theirs, the code is ours):

- nltk BLEU: nltk/nltk nltk/test/unit/translate/test_bleu.py and the doctests of
  nltk/nltk nltk/translate/bleu_score.py -> :mod:`scoring.metrics.bleu`;
- nltk METEOR: nltk/nltk nltk/test/unit/translate/test_meteor.py and the doctests of
  nltk/nltk nltk/translate/meteor_score.py -> :mod:`scoring.metrics.meteor`;
- rouge-score: google-research/google-research rouge/rouge_scorer_test.py (with rouge/testdata/) ->
  :func:`scoring.metrics.rouge_score_metrics.rouge_score_batch`, and the plain ROUGE-L/LCS cases on plain
  lowercase words also -> :mod:`scoring.metrics.rouge`;
- sacrebleu: mjpost/sacrebleu test/test_bleu.py, test/test_sentence_bleu.py, test/test_chrf.py ->
  :mod:`scoring.metrics.sacrebleu_metrics`.

Each peer's tolerance is kept: unittest's ``assertAlmostEqual(places=p)`` is ``round(a - b, p) == 0``, a
doctest ``0.5045...`` is a prefix of the printed float, sacrebleu's ``EPSILON`` is on its 0..100 scale
(so divided by 100 here). Cases that cannot apply are listed in comments where they would be, with why.

Argument order: nltk and rouge-score take the reference first; the project takes the hypothesis first.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import pytest

NLTK_DATA = Path(__file__).resolve().parents[2] / "var" / "nltk_data"
# Before nltk is first imported: nltk reads NLTK_DATA only then (the METEOR module reads it per call too).
os.environ.setdefault("NLTK_DATA", str(NLTK_DATA))

from scoring.metrics import bleu as project_bleu  # noqa: E402
from scoring.metrics.meteor import meteor, meteor_batch  # noqa: E402
from scoring.metrics.rouge import lcs_length, rouge_l, rouge_l_batch  # noqa: E402
from scoring.metrics.rouge_score_metrics import rouge_score_batch  # noqa: E402
from scoring.metrics.sacrebleu_metrics import (  # noqa: E402
    sacrebleu_corpus_bleu,
    sacrebleu_corpus_chrf,
    sacrebleu_sentence_bleu_batch,
    sacrebleu_sentence_chrf_batch,
)
from scoring.metrics.tokenize import tokenize  # noqa: E402


def almost_equal(value: float, expected: float, places: int) -> bool:
    """unittest's ``assertAlmostEqual(value, expected, places=places)``."""
    return round(abs(value - expected), places) == 0


def doctest_prefix(value: float, expected: str) -> bool:
    """A doctest's ``0.5045...`` under ELLIPSIS: the printed float starts with the digits shown."""
    return str(value).startswith(expected)


def words(text: str) -> list[str]:
    return text.split()


# =====================================================================================================
# nltk BLEU -> scoring.metrics.bleu
# nltk's sentence_bleu/corpus_bleu default to no smoothing (method0), the project's sentence_bleu to
# method1, so every case names its smoothing. nltk's ``weights=(1/n,)*n`` is the project's ``max_n=n``.
# =====================================================================================================

# BLEU paper examples, used by both nltk sources
PAPER_REF1 = words("It is a guide to action that ensures that the military will forever heed Party commands")
PAPER_REF2 = words(
    "It is the guiding principle which guarantees the military forces always being under the command of the Party"
)
PAPER_REF3 = words("It is the practical guide for the army always to heed the directions of the party")
PAPER_HYP1 = words(
    "It is a guide to action which ensures that the military always obeys the commands of the party"
)
PAPER_HYP2 = words("It is to insure the troops forever hearing the activity guidebook that party direct")
PAPER_REFS = [PAPER_REF1, PAPER_REF2, PAPER_REF3]
CORPUS_HYP2 = words("he read the book because he was interested in world history")
CORPUS_REF2A = words("he was interested in world history because he read the book")
NO_ALIGNMENT = words("The candidate has no alignment to any of the references")

# nltk/nltk nltk/test/unit/translate/test_bleu.py, TestBLEU.test_modified_precision (the same values are
# in the doctest of modified_precision in nltk/translate/bleu_score.py). nltk's modified_precision is a
# helper; its counterpart here is the per-order (clipped matches, hypothesis n-grams >= 1) counts of
# scoring.metrics.bleu._pair_stats, which every BLEU value of the project is computed from.
# (hypothesis, references, n, expected, places: None for exact equality)
NLTK_MODIFIED_PRECISION = {
    "the* example, unigrams": (
        words("the the the the the the the"),
        [words("the cat is on the mat"), words("there is a cat on the mat")],
        1,
        0.28571428,
        4,
    ),
    "the* example, bigrams": (
        words("the the the the the the the"),
        [words("the cat is on the mat"), words("there is a cat on the mat")],
        2,
        0.0,
        None,
    ),
    "of the example, unigrams": (words("of the"), PAPER_REFS, 1, 1.0, None),
    "of the example, bigrams": (words("of the"), PAPER_REFS, 2, 1.0, None),
    "MT output 1, unigrams": (PAPER_HYP1, PAPER_REFS, 1, 0.94444444, 4),
    "MT output 2, unigrams": (PAPER_HYP2, PAPER_REFS, 1, 0.57142857, 4),
    "MT output 1, bigrams": (PAPER_HYP1, PAPER_REFS, 2, 0.58823529, 4),
    "MT output 2, bigrams": (PAPER_HYP2, PAPER_REFS, 2, 0.07692307, 4),
}


@pytest.mark.parametrize(
    ("hypothesis", "references", "n", "expected", "places"),
    NLTK_MODIFIED_PRECISION.values(),
    ids=NLTK_MODIFIED_PRECISION.keys(),
)
def test_nltk_bleu_modified_precision(
    hypothesis: list[str], references: list[list[str]], n: int, expected: float, places: int | None
) -> None:
    matches, totals, _, _ = project_bleu._pair_stats(hypothesis, references, 4, {})
    precision = matches[n - 1] / totals[n - 1]
    if places is None:
        assert precision == expected
    else:
        assert almost_equal(precision, expected, places)
        assert round(precision, 4) == round(expected, 4)  # the test's second check, "round(p, 4) == ..."


# nltk/nltk nltk/test/unit/translate/test_bleu.py: sentence-level cases.
# (hypothesis, references, max_n, smoothing, expected, places: None for exact equality)
NLTK_SENTENCE_BLEU = {
    # TestBLEU.test_brevity_penalty: all tokens match, so BLEU-1 is the brevity penalty itself
    "brevity penalty, closest reference 8": (["a"] * 7, [["a"] * 11, ["a"] * 8], 1, "method0", 0.8669, 4),
    "brevity penalty, a reference of equal length": (
        ["a"] * 7,
        [["a"] * 11, ["a"] * 8, ["a"] * 6, ["a"] * 7],
        1,
        "method0",
        1.0,
        None,
    ),
    # TestBLEU.test_zero_matches: n in range(1, len(hypothesis))
    "zero matches, n=1": (words("John loves Mary"), [NO_ALIGNMENT], 1, "method0", 0.0, None),
    "zero matches, n=2": (words("John loves Mary"), [NO_ALIGNMENT], 2, "method0", 0.0, None),
    # TestBLEU.test_full_matches
    "full matches, n=1": (words("John loves Mary"), [words("John loves Mary")], 1, "method0", 1.0, None),
    "full matches, n=2": (words("John loves Mary"), [words("John loves Mary")], 2, "method0", 1.0, None),
    # TestBLEU.test_partial_matches_hypothesis_longer_than_reference (no 4-gram match: 0 to 4 places)
    "hypothesis longer than reference": (
        words("John loves Mary who loves Mike"),
        [words("John loves Mary")],
        4,
        "method0",
        0.0,
        4,
    ),
    # TestBLEUFringeCases.test_case_where_n_is_bigger_than_hypothesis_length (n = len(hypothesis) + 1)
    "n bigger than the hypothesis": (
        words("John loves Mary"),
        [words("John loves Mary ?")],
        4,
        "method0",
        0.0,
        4,
    ),
    "n bigger than hypothesis and reference, identical": (
        words("John loves Mary"),
        [words("John loves Mary")],
        4,
        "method0",
        0.0,
        4,
    ),
    # TestBLEUFringeCases.test_empty_hypothesis / test_empty_references / ..._and_hypothesis
    "empty hypothesis": ([], [NO_ALIGNMENT], 4, "method0", 0.0, None),
    "empty reference": (words("John loves Mary"), [[]], 4, "method0", 0.0, None),
    "empty reference and hypothesis": ([], [[]], 4, "method0", 0.0, None),
    # TestBLEUFringeCases.test_reference_or_hypothesis_shorter_than_fourgrams
    "shorter than four-grams": (words("let go it"), [words("let it go")], 4, "method0", 0.0, 4),
    # Left out: TestBLEUFringeCases.test_length_one_hypothesis (smoothing method4, which the project does
    # not offer; the test only checks that nltk does not crash). The UserWarnings nltk's tests also check
    # are nltk's messages, not values; the project does not warn.
}


@pytest.mark.parametrize(
    ("hypothesis", "references", "max_n", "smoothing", "expected", "places"),
    NLTK_SENTENCE_BLEU.values(),
    ids=NLTK_SENTENCE_BLEU.keys(),
)
def test_nltk_bleu_sentence(
    hypothesis: list[str],
    references: list[list[str]],
    max_n: int,
    smoothing: str,
    expected: float,
    places: int | None,
) -> None:
    for value in (
        project_bleu.sentence_bleu(hypothesis, references, max_n, smoothing),
        project_bleu.sentence_bleu_batch([hypothesis], [references], max_n, smoothing)[0],
    ):
        if places is None:
            assert value == expected
        else:
            assert almost_equal(value, expected, places)


# nltk/nltk nltk/test/unit/translate/test_bleu.py, TestBLEUWithBadSentence.test_corpus_bleu_with_bad_sentence
def test_nltk_bleu_corpus_with_bad_sentence() -> None:
    hypothesis = words("Teo S yb , oe uNb , R , T t , , t Tue Ar saln S , , 5istsi l , 5oe R ulO sae oR R")
    reference = words(
        "Their tasks include changing a pump on the faulty stokehold ."
        "Likewise , two species that are very similar in morphology "
        "were distinguished using genetics ."
    )
    assert almost_equal(project_bleu.corpus_bleu([hypothesis], [[reference]], 4, "method0"), 0.0, 4)


# nltk/nltk nltk/test/unit/translate/test_bleu.py, TestBLEUWithMultipleWeights: the test gives no number, it
# checks that a list of weights gives what each weight gives alone, i.e. nltk's corpus_bleu with that
# weight, which is the expected value here. weight_1 = (1, 0, 0, 0) is BLEU-1 (zero weights add nothing to
# the log sum), weight_2 uniform BLEU-4. Left out: weight_3 = (0, 0, 0, 0, 1), 5-gram precision alone, not
# a BLEU-n the project computes.
@pytest.mark.parametrize(("max_n", "nltk_weights"), [(1, (1, 0, 0, 0)), (4, (0.25, 0.25, 0.25, 0.25))])
def test_nltk_bleu_corpus_with_multiple_weights(max_n: int, nltk_weights: tuple[float, ...]) -> None:
    from nltk.translate.bleu_score import corpus_bleu as nltk_corpus_bleu

    references = [PAPER_REFS, [CORPUS_REF2A]]
    hypotheses = [PAPER_HYP1, CORPUS_HYP2]
    expected = nltk_corpus_bleu(references, hypotheses, nltk_weights)
    assert project_bleu.corpus_bleu(hypotheses, references, max_n, "method0") == pytest.approx(
        expected, abs=1e-12
    )


# Left out: TestBLEUvsMteval13a.test_corpus_bleu needs nltk's models/wmt15_eval data (not installed; the
# project fetches nothing from nltk's hub) and, for its second half, smoothing method3.

# nltk/nltk nltk/translate/bleu_score.py, doctests of sentence_bleu, SmoothingFunction.__init__ and
# brevity_penalty. (hypothesis, references, max_n, smoothing, expected: a doctest prefix, or a float for
# the doctests that print the whole value or compare with round(..., 4))
NLTK_BLEU_DOCTESTS: dict[str, tuple[list[str], list[list[str]], int, str, str | float]] = {
    "sentence_bleu: BLEU-4": (PAPER_HYP1, PAPER_REFS, 4, "method0", "0.5045"),
    "sentence_bleu: no 3- and 4-gram overlap": (PAPER_HYP2, PAPER_REFS, 4, "method0", 0.0),
    "sentence_bleu: method1 smoothing": (PAPER_HYP2, PAPER_REFS, 4, "method1", "0.0370"),
    "sentence_bleu: BLEU-5": (PAPER_HYP1, PAPER_REFS, 5, "method0", "0.3920"),
    # "a list of weights": BLEU-2, BLEU-3, BLEU-4 in one call
    "sentence_bleu: BLEU-2 of a weight list": (PAPER_HYP1, PAPER_REFS, 2, "method0", "0.7453"),
    "sentence_bleu: BLEU-3 of a weight list": (PAPER_HYP1, PAPER_REFS, 3, "method0", "0.6240"),
    "sentence_bleu: BLEU-4 of a weight list": (PAPER_HYP1, PAPER_REFS, 4, "method0", "0.5045"),
    # SmoothingFunction.__init__: one reference; methods 3 to 7 are not offered by the project (left out)
    "smoothing: nltk's default (none)": (PAPER_HYP1, [PAPER_REF1], 4, "method0", "0.4118"),
    "smoothing: method0": (PAPER_HYP1, [PAPER_REF1], 4, "method0", "0.4118"),
    "smoothing: method1": (PAPER_HYP1, [PAPER_REF1], 4, "method1", "0.4118"),
    "smoothing: method2": (PAPER_HYP1, [PAPER_REF1], 4, "method2", "0.4452"),
    # brevity_penalty: the hypothesis is all "a" and so are the references, so BLEU-1 is the penalty;
    # the last two brevity_penalty doctests are test_bleu.py's two cases above
    "brevity penalty: a reference of equal length": (
        ["a"] * 12,
        [["a"] * 12, ["a"] * 15, ["a"] * 17],
        1,
        "method0",
        1.0,
    ),
    "brevity penalty: references much longer": (
        ["a"] * 12,
        [["a"] * 28, ["a"] * 28],
        1,
        "method0",
        0.2635971381157267,
    ),
    "brevity penalty: closest reference 13": (["a"] * 12, [["a"] * 13, ["a"] * 2], 1, "method0", "0.9200"),
    "brevity penalty: tie, shorter reference taken": (
        ["a"] * 12,
        [["a"] * 13, ["a"] * 11],
        1,
        "method0",
        1.0,
    ),
    "brevity penalty: tie, references reversed": (["a"] * 12, [["a"] * 11, ["a"] * 13], 1, "method0", 1.0),
}


@pytest.mark.parametrize(
    ("hypothesis", "references", "max_n", "smoothing", "expected"),
    NLTK_BLEU_DOCTESTS.values(),
    ids=NLTK_BLEU_DOCTESTS.keys(),
)
def test_nltk_bleu_doctests_sentence(
    hypothesis: list[str], references: list[list[str]], max_n: int, smoothing: str, expected: str | float
) -> None:
    value = project_bleu.sentence_bleu(hypothesis, references, max_n, smoothing)
    if isinstance(expected, str):
        assert doctest_prefix(value, expected)
    else:
        assert round(value, 4) == round(expected, 4)
        if expected != 0.0:  # a doctest that prints the value prints it all
            assert value == expected


# nltk/nltk nltk/translate/bleu_score.py, doctests of corpus_bleu (references of item 0: ref1a..ref1c, the
# paper's three references). Left out: weights (0.1, 0.3, 0.5, 0.1) and the list entry
# (0.333, 0.333, 0.334), which are not the uniform weights of a BLEU-n.
@pytest.mark.parametrize(("max_n", "expected"), [(4, "0.5920"), (2, "0.8242"), (5, "0.4719")])
def test_nltk_bleu_doctests_corpus(max_n: int, expected: str) -> None:
    value = project_bleu.corpus_bleu(
        [PAPER_HYP1, CORPUS_HYP2], [PAPER_REFS, [CORPUS_REF2A]], max_n, "method0"
    )
    assert doctest_prefix(value, expected)


def test_nltk_bleu_doctests_corpus_differs_from_mean_of_sentences() -> None:
    # corpus_bleu doctest: "(score1 + score2) / 2" of nltk's default sentence BLEU is 0.6223...
    scores = project_bleu.sentence_bleu_batch(
        [PAPER_HYP1, CORPUS_HYP2], [PAPER_REFS, [CORPUS_REF2A]], 4, "method0"
    )
    assert doctest_prefix(sum(scores) / 2, "0.6223")


# =====================================================================================================
# nltk METEOR -> scoring.metrics.meteor (needs WordNet in var/nltk_data)
# =====================================================================================================


@pytest.fixture(scope="module")
def wordnet_present() -> None:
    corpus = NLTK_DATA / "corpora" / "wordnet"
    if not (corpus / "lexnames").is_file():
        pytest.skip(f"METEOR needs NLTK's WordNet at {corpus}: run `bash scripts/setup.sh` to build it")


# nltk/nltk nltk/test/unit/translate/test_meteor.py, TestMETEOR.test_meteor (older versions:
# test_preprocess, same inputs and value): the second reference is ["this", "istest"] ("is" "test" is one
# string literal there); the candidate's case is removed by preprocess=str.lower, which the project always
# applies. Left out: test_reference_type_check and test_candidate_type_check (nltk raises TypeError for a
# string where it wants tokens; the project's functions take token sequences and do no such check).
def test_nltk_meteor_multiple_references(wordnet_present: None) -> None:
    references = [["this", "is", "a", "test"], ["this", "istest"]]
    assert meteor_batch([["THIS", "Is", "a", "tEST"]], [references]) == [0.9921875]


# nltk/nltk nltk/test/unit/translate/test_meteor.py, test_single_meteor_score_values_preserved, and the
# doctests of single_meteor_score and meteor_score in nltk/nltk nltk/translate/meteor_score.py.
# (hypothesis, references, expected, places: None for exact equality)
NLTK_METEOR = {
    "test_meteor.py: documented score": (PAPER_HYP1, [PAPER_REF1], 0.6944, 4),
    "test_meteor.py: no overlap": (["x", "y", "z"], [words("this is a cat")], 0.0, None),
    "doctest single_meteor_score": (PAPER_HYP1, [PAPER_REF1], 0.6944, 4),
    "doctest single_meteor_score, no match": (
        words("non matching hypothesis"),
        [words("this is a cat")],
        0.0,
        4,
    ),
    "doctest meteor_score, three references": (PAPER_HYP1, PAPER_REFS, 0.6944, 4),
    "doctest meteor_score, no match": (words("non matching hypothesis"), [words("this is a cat")], 0.0, 4),
}


@pytest.mark.parametrize(
    ("hypothesis", "references", "expected", "places"), NLTK_METEOR.values(), ids=NLTK_METEOR.keys()
)
def test_nltk_meteor(
    wordnet_present: None,
    hypothesis: list[str],
    references: list[list[str]],
    expected: float,
    places: int | None,
) -> None:
    values = meteor_batch([hypothesis], [references])
    if len(references) == 1:
        values.append(meteor(hypothesis, references[0]))
    for value in values:
        if places is None:
            assert value == expected
        else:
            assert round(value, places) == expected


# nltk/nltk nltk/test/unit/translate/test_meteor.py, test_meteor_on_disjoint_text_is_linear_time: 32,000
# disjoint tokens on each side must score within 30 s (nltk's fix for quadratic matching, CWE-770), kept
# as pytest-timeout's limit rather than a timed assertion. The project's synonym stage once walked every
# free reference word for each unmatched hypothesis word (32,000 tokens: 60-80 s); it now looks the
# synonyms up as nltk does (about a second). tests/scoring/test_meteor.py checks the growth by line count.
@pytest.mark.timeout(30)
def test_nltk_meteor_long_disjoint_texts(wordnet_present: None) -> None:
    size = 32000
    reference = [f"r{i}" for i in range(size)]
    hypothesis = [f"h{i}" for i in range(size)]
    assert meteor(hypothesis, reference) == 0.0


# =====================================================================================================
# rouge-score -> scoring.metrics.rouge_score_metrics (google-research/google-research rouge/rouge_scorer_test.py)
# rouge-score's score(target, prediction) is rouge_score_batch([prediction], [[target]]).
# =====================================================================================================

# rouge/testdata/target.txt and prediction.txt, lines 0 and 1 (as readlines() gives them)
ROUGE_TARGETS = [
    "ZfbCUIUuePaiLVUlCaUXxkpu XPeWing tUHfPMuZ',-Xd Y BrUgVJing M-HV.-DgdDaY.rFDJCRing Ht-LM "
    "EKBDXkME,yz'RBr q'wtion wIojNbN wL,b .a-'XdQggyFl jB-RPP'iyOIcUxer tKM L\n",
    "KsJdPByEtAor fE-Qg Dpdbring cw-WeFyu vC MoBL Xdn g wkvcEiGvKtion BDFhrpMtion psing sbKao Q m qiing "
    "LMmer HqqLFXe,XPY,J XsurkMer ,ed nB'wH'bWVHjWFEing tQ.saefZwJtKrTlixYpMMsJing UCAPwNHeYVjDing c T "
    "BUySKtion gMPfJpwGw p'NvxAoping eu pBwMBKV'I DNxqelhu,PHPxDEq,mtion SN\n",
]
ROUGE_PREDICTIONS = [
    "rFDJCRtion Ht-LM EKtDXkME,yz'RBr q'wer wrojNbN wL,b .a-'XdQggyFl jB-RPP'iyOIcUxi\n",
    "n cw-WeFyu vC MoBL Xdn g wkvcEiGvKtion BDFhrpMer pstion sbKao Q m qier LMmed HqqLFXe,XPY,J XsurkMeo "
    ",ed nB'wH'bWVHjWFEer tQ.saefZwJtKrTlixYpMMNJtion UCAPwNHeYVjD\n",
]
# rouge/testdata/pyrouge_files/target_multi.0.txt and prediction_multi.0.txt (whole files)
ROUGE_TARGET_MULTI = (
    ROUGE_TARGETS[0]
    + ROUGE_TARGETS[1]
    + "NhETebUbBk'er WOvoHMTjSRizKgH'vHiing Xu,hWxfs VkNE QhgKiLHE -HidivzoM.dO anhtion "
    "jbLQiSGDTCsuhREebUaKM dv J dVN tmbOT\n"
    "vMR HDm,xOAetion D,tion HJtodT.mHl UIv-p VjWH'BdyWjnfGU-OjT aEMdFICyLWfQMtion wEMfdOKing AwkeKbO "
    "'DxqNOHBH qKtVvm OYJl mM\n"
)
ROUGE_PREDICTION_MULTI = (
    ROUGE_PREDICTIONS[0]
    + ROUGE_PREDICTIONS[1]
    + "xfs VkJE QhgKiLHE -HidivzoM.dO anhing jbLQiSGDTCsuhREebUaKM dv J\n"
    "VjWH'BdyWjnfGU-OjTNaEMdFICyLWfQMing wEMfdOKijg AwkeKbO 'DxqNO\n"
)

# (prediction, targets, rouge type, use_stemmer, expected (precision, recall, fmeasure) with None for a
# value the test does not check, places: None for assertAlmostEqual's default of 7)
ROUGE_SCORE_CASES = {
    "testRouge1": ("testing", ["testing one two"], "rouge1", False, (1, 1 / 3, 1 / 2), None),
    "testRouge1Multi": ("testing", ["testing one two"], "rouge1", False, (1, 1 / 3, 1 / 2), None),
    "testRougeAllMulti rouge1": (
        "text first",
        ["first text", "first something"],
        "rouge1",
        False,
        (None, None, 1),
        None,
    ),
    "testRougeAllMulti rouge2": (
        "text first",
        ["first text", "first something"],
        "rouge2",
        False,
        (None, None, 0),
        None,
    ),
    "testRougeAllMulti rougeL": (
        "text first",
        ["first text", "first something"],
        "rougeL",
        False,
        (None, None, 0.5),
        None,
    ),
    "testRougeEmpty rouge1": ("", ["testing one two"], "rouge1", False, (0, 0, 0), None),
    "testRougeEmpty rouge2": ("", ["testing one two"], "rouge2", False, (0, 0, 0), None),
    "testRougeEmpty rougeL": ("", ["testing one two"], "rougeL", False, (0, 0, 0), None),
    "testRougeEmpty rougeLsum": ("", ["testing one two"], "rougeLsum", False, (0, 0, 0), None),
    "testRouge2": ("testing one", ["testing one two"], "rouge2", False, (1, 1 / 2, 2 / 3), None),
    "testRougeLConsecutive": ("testing one", ["testing one two"], "rougeL", False, (1, 2 / 3, 4 / 5), None),
    "testRougeLNonConsecutive": (
        "testing two",
        ["testing one two"],
        "rougeL",
        False,
        (1, 2 / 3, 4 / 5),
        None,
    ),
    "testMultipleRougeTypes rouge1": (
        "testing one",
        ["testing one two"],
        "rouge1",
        False,
        (1, 2 / 3, 4 / 5),
        None,
    ),
    "testMultipleRougeTypes rougeL": (
        "testing one",
        ["testing one two"],
        "rougeL",
        False,
        (1, 2 / 3, 4 / 5),
        None,
    ),
    "testRouge1AgainstRouge155 0": (
        ROUGE_PREDICTIONS[0],
        [ROUGE_TARGETS[0]],
        "rouge1",
        False,
        (0.68750, 0.40741, 0.51163),
        5,
    ),
    "testRouge1AgainstRouge155 1": (
        ROUGE_PREDICTIONS[1],
        [ROUGE_TARGETS[1]],
        "rouge1",
        False,
        (0.65385, 0.40476, 0.50000),
        5,
    ),
    "testRouge1AgainstRouge155WithStemming 0": (
        ROUGE_PREDICTIONS[0],
        [ROUGE_TARGETS[0]],
        "rouge1",
        True,
        (0.68750, 0.40741, 0.51163),
        5,
    ),
    "testRouge1AgainstRouge155WithStemming 1": (
        ROUGE_PREDICTIONS[1],
        [ROUGE_TARGETS[1]],
        "rouge1",
        True,
        (0.69231, 0.42857, 0.52941),
        5,
    ),
    "testRouge2AgainstRouge155 0": (
        ROUGE_PREDICTIONS[0],
        [ROUGE_TARGETS[0]],
        "rouge2",
        False,
        (0.53333, 0.30769, 0.39024),
        5,
    ),
    "testRouge2AgainstRouge155 1": (
        ROUGE_PREDICTIONS[1],
        [ROUGE_TARGETS[1]],
        "rouge2",
        False,
        (0.48000, 0.29268, 0.36364),
        5,
    ),
    "testRouge2AgainstRouge155WithStemming 0": (
        ROUGE_PREDICTIONS[0],
        [ROUGE_TARGETS[0]],
        "rouge2",
        True,
        (0.53333, 0.30769, 0.39024),
        5,
    ),
    "testRouge2AgainstRouge155WithStemming 1": (
        ROUGE_PREDICTIONS[1],
        [ROUGE_TARGETS[1]],
        "rouge2",
        True,
        (0.48000, 0.29268, 0.36364),
        5,
    ),
    "testRougeLAgainstRouge155 0": (
        ROUGE_PREDICTIONS[0],
        [ROUGE_TARGETS[0]],
        "rougeL",
        False,
        (0.68750, 0.40741, 0.51163),
        5,
    ),
    "testRougeLAgainstRouge155 1": (
        ROUGE_PREDICTIONS[1],
        [ROUGE_TARGETS[1]],
        "rougeL",
        False,
        (0.65385, 0.40476, 0.50000),
        5,
    ),
    "testRougeLSumAgainstRouge155WithStemming": (
        ROUGE_PREDICTION_MULTI,
        [ROUGE_TARGET_MULTI],
        "rougeLsum",
        True,
        (0.66667, 0.36538, 0.47205),
        5,
    ),
    # testRougeLSumSentenceSplitting: sentences on newlines (rouge-score's default, this wrapper's rule);
    # then the same texts on one line each (split_summaries=False). Left out: its third part,
    # split_summaries=True (nltk's sentence splitter, which this wrapper does not offer).
    "testRougeLSumSentenceSplitting, newlines": (
        "Second sentence.\nFirst Sentence.",
        ["First sentence.\nSecond Sentence."],
        "rougeLsum",
        True,
        (None, None, 1.0),
        5,
    ),
    "testRougeLSumSentenceSplitting, one line": (
        "Second sentence. First Sentence.",
        ["First sentence. Second Sentence."],
        "rougeLsum",
        True,
        (None, None, 0.50),
        5,
    ),
    # testSummaryLevelLcs: rouge-score's _summary_level_lcs on integer lists; the same through rougeLsum,
    # with one token per integer and one line per candidate sentence (its comments give 4/5 and 4/10)
    "testSummaryLevelLcs": ("1 2 6 7 8\n1 3 8 9 5", ["1 2 3 4 5"], "rougeLsum", False, (0.4, 0.8, 0.5333), 3),
    "testSummaryLevelLcs, empty candidate": ("", ["reference"], "rougeLsum", False, (None, 0.0, None), None),
    # testRougeLsum
    "testRougeLsum": (
        "w1 w2 w6 w7 w8\nw1 w3 w8 w9 w5",
        ["w1 w2 w3 w4 w5"],
        "rougeLsum",
        False,
        (0.4, 0.8, 0.5333),
        3,
    ),
    "testRougeLsum, empty prediction": ("", ["w1 w2 w3 w4 w5"], "rougeLsum", False, (0.0, 0.0, 0.0), 3),
    "testRougeLsum, empty target": ("w1", [""], "rougeLsum", False, (0.0, 0.0, 0.0), 3),
    "testRougeLsum, prediction of non-word characters": (
        "/",
        ["w1 w2 w3 w4 w5"],
        "rougeLsum",
        False,
        (0.0, 0.0, 0.0),
        3,
    ),
    # testRougeTokenizerInit: tokenizers.DefaultTokenizer() passed explicitly is the default tokenizer
    "testRougeTokenizerInit": (
        "this is a test",
        ["this is a test"],
        "rouge1",
        False,
        (None, None, 1.0),
        None,
    ),
    # Left out: testRougeLsumLarge (rouge/testdata/*_large.txt, about 90 kB each, not shipped with the
    # installed package); testUnionLcs and the index half of testLcsTable (helpers returning LCS indices,
    # which neither this wrapper nor the project's ROUGE-L exposes).
}


@pytest.mark.parametrize(
    ("prediction", "targets", "rouge_type", "use_stemmer", "expected", "places"),
    ROUGE_SCORE_CASES.values(),
    ids=ROUGE_SCORE_CASES.keys(),
)
def test_rouge_score(
    prediction: str,
    targets: list[str],
    rouge_type: str,
    use_stemmer: bool,
    expected: tuple[float | None, float | None, float | None],
    places: int | None,
) -> None:
    (triple,) = rouge_score_batch([prediction], [targets], [rouge_type], use_stemmer=use_stemmer)[rouge_type]
    for value, wanted in zip(triple, expected, strict=True):
        if wanted is not None:
            assert almost_equal(value, wanted, 7 if places is None else places)


# testValidRougeTypes: the result has exactly the type asked for. Left out: "rouge9", which rouge-score
# accepts (any rougeN, N >= 1) but this wrapper restricts to rouge1, rouge2, rougeL and rougeLsum.
@pytest.mark.parametrize("rouge_type", ["rouge1", "rougeL", "rougeLsum"])
def test_rouge_score_valid_types(rouge_type: str) -> None:
    assert list(rouge_score_batch(["testing"], [["testing one two"]], [rouge_type])) == [rouge_type]


# testInvalidRougeTypes
@pytest.mark.parametrize("rouge_type", ["rougen", "rouge0", "rouge10"])
def test_rouge_score_invalid_types(rouge_type: str) -> None:
    with pytest.raises(ValueError, match="rouge"):
        rouge_score_batch(["testing"], [["testing one two"]], [rouge_type])


# The plain ROUGE-L cases above on plain lowercase words, also through the project's own ROUGE-L
# (F-measure only, beta 1), after checking that the project's tokenizer leaves those words as they are.
ROUGE_L_PLAIN = {
    "testRougeLConsecutive": ("testing one", ["testing one two"], 4 / 5),
    "testRougeLNonConsecutive": ("testing two", ["testing one two"], 4 / 5),
    "testMultipleRougeTypes rougeL": ("testing one", ["testing one two"], 4 / 5),
    "testRougeAllMulti rougeL": ("text first", ["first text", "first something"], 0.5),
}


@pytest.mark.parametrize(
    ("prediction", "targets", "expected"), ROUGE_L_PLAIN.values(), ids=ROUGE_L_PLAIN.keys()
)
def test_rouge_score_plain_rouge_l_through_project_rouge(
    prediction: str, targets: list[str], expected: float
) -> None:
    for text in [prediction, *targets]:
        assert tokenize(text) == text.split()
    hypothesis = tokenize(prediction)
    references = [tokenize(target) for target in targets]
    assert almost_equal(rouge_l_batch([hypothesis], [references])[0], expected, 7)
    if len(references) == 1:
        assert almost_equal(rouge_l(hypothesis, references[0]), expected, 7)


# testLcsTable: the LCS length of [1, 2, 3, 4, 5] and [2, 5, 3, 4] is 3, of [1, 2, 3, 4, 5] and [8, 9] 0;
# through the project's LCS, one token per integer.
@pytest.mark.parametrize(
    ("first", "second", "expected"), [("1 2 3 4 5", "2 5 3 4", 3), ("1 2 3 4 5", "8 9", 0)]
)
def test_rouge_score_lcs_table_through_project_lcs(first: str, second: str, expected: int) -> None:
    assert lcs_length(words(first), words(second)) == expected


# =====================================================================================================
# sacrebleu -> scoring.metrics.sacrebleu_metrics (values 0..1: sacrebleu's 0..100 divided by 100)
# sacrebleu's corpus references are streams (refs[k][i]); the project's are per item (references[i][k]).
# =====================================================================================================


def per_item(streams: Sequence[Sequence[str]]) -> list[list[str]]:
    """sacrebleu's reference streams as the project's per-item reference lists."""
    return [list(item) for item in zip(*streams, strict=True)]


# mjpost/sacrebleu test/test_bleu.py
SACREBLEU_REFS = [
    ["The dog bit the man.", "It was not unexpected.", "The man bit him first."],
    ["The dog had bit the man.", "No one was surprised.", "The man had bitten the dog."],
]
SACREBLEU_HYPS = ["The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."]

# test_corpus_bleu: (hypotheses, reference streams, options, expected on sacrebleu's 0..100 scale)
SACREBLEU_CORPUS_BLEU = {
    "default settings": (SACREBLEU_HYPS, SACREBLEU_REFS, {}, 48.530827),
    "empty hypotheses are not removed": (["", "", ""], SACREBLEU_REFS, {}, 0.0),
    "tokenize none": (SACREBLEU_HYPS, SACREBLEU_REFS, {"tokenize": "none"}, 49.1919566),
    "tokenize 13a": (SACREBLEU_HYPS, SACREBLEU_REFS, {"tokenize": "13a"}, 48.530827),
    "tokenize intl": (SACREBLEU_HYPS, SACREBLEU_REFS, {"tokenize": "intl"}, 43.91623493),
    "smooth none": (SACREBLEU_HYPS, SACREBLEU_REFS, {"smooth": "none"}, 48.530827),
}


@pytest.mark.parametrize(
    ("hypotheses", "streams", "options", "expected"),
    SACREBLEU_CORPUS_BLEU.values(),
    ids=SACREBLEU_CORPUS_BLEU.keys(),
)
def test_sacrebleu_corpus_bleu(
    hypotheses: list[str], streams: list[list[str]], options: dict[str, str], expected: float
) -> None:
    value = sacrebleu_corpus_bleu(hypotheses, per_item(streams), **options)  # type: ignore[arg-type]
    assert abs(value - expected / 100) < 1e-8 / 100


# test_raw_bleu, test_effective_order, test_offset: sacrebleu.raw_corpus_bleu(hyps, refs, smooth_value) is
# corpus BLEU with tokenize="none", floor smoothing (default value 0.1) and effective order. Expected
# values are already on the 0..1 scale there (the tests divide by 100). (hypotheses, reference streams,
# floor value, expected)
SACREBLEU_RAW_BLEU = {
    "raw: no match": (["this is a test", "another test"], [["ref1", "ref2"]], 0.01, 0.0),
    "raw: identical": (["this is a test"], [["this is a test"]], 0.01, 1.0),
    "raw: one word differs": (["this is a fest"], [["this is a test"]], 0.01, 0.223606797749979),
    "effective order: one word": (["test"], [["a test"]], 0.01, 0.3678794411714425),
    "effective order: identical": (["a test"], [["a test"]], 0.01, 1.0),
    "effective order: one word more": (["a little test"], [["a test"]], 0.01, 0.03218297948685433),
    "offset 0": (["am I am a character sequence"], [["I am a symbol string sequence a a"]], 0.0, 0.0),
    # test_offset passes None and also leaves the value out: both are sacrebleu's floor default, 0.1
    "offset: sacrebleu's default": (
        ["am I am a character sequence"],
        [["I am a symbol string sequence a a"]],
        None,
        0.1555722182,
    ),
    # Left out: test_statistics (BLEUScore.counts/totals), test_scoring and test_degenerate_statistics
    # (BLEU.compute_bleu on hand-made statistics): the wrapper takes text and returns scores only.
}


@pytest.mark.parametrize(
    ("hypotheses", "streams", "floor", "expected"), SACREBLEU_RAW_BLEU.values(), ids=SACREBLEU_RAW_BLEU.keys()
)
def test_sacrebleu_raw_corpus_bleu(
    hypotheses: list[str], streams: list[list[str]], floor: float | None, expected: float
) -> None:
    value = sacrebleu_corpus_bleu(
        hypotheses,
        per_item(streams),
        tokenize="none",
        smooth="floor",
        smooth_value=floor,
        effective_order=True,
    )
    assert abs(value - expected) < 1e-8


# test_max_ngram_order: f"{score:.2f}" on sacrebleu's scale
@pytest.mark.parametrize(
    ("order", "expected"),
    [(1, "77.65"), (2, "60.50"), (3, "53.93"), (4, "48.53"), (5, "46.14"), (6, "43.28")],
)
def test_sacrebleu_max_ngram_order(order: int, expected: str) -> None:
    value = sacrebleu_corpus_bleu(SACREBLEU_HYPS, per_item(SACREBLEU_REFS), max_order=order)
    assert f"{value * 100:.2f}" == expected


# mjpost/sacrebleu test/test_sentence_bleu.py (its Romanian example, test_cases), EPSILON = 1e-3 on 0..100.
# (smooth, smooth_value, lowercase, tokenize, expected on 0..100); the file runs each case through
# sacrebleu.compat.sentence_bleu and sacrebleu.metrics.BLEU, with effective_order=True.
SENTENCE_REF = "producţia de zahăr brut se exprimă în zahăr alb;"
SENTENCE_SYS = "Producția de zahăr primă va fi exprimată în ceea ce privește zahărul alb;"
SACREBLEU_SENTENCE_BLEU = [
    ("exp", None, False, "13a", 8.493),
    ("none", None, False, "13a", 0.0),
    ("floor", None, False, "13a", 4.51688),
    ("floor", 0.1, False, "13a", 4.51688),
    ("floor", 0.5, False, "13a", 10.10),
    ("add-k", None, False, "13a", 14.882),
    ("add-k", 1, False, "13a", 14.882),
    ("add-k", 2, False, "13a", 21.389),
    ("exp", None, False, "none", 7.347),
    ("exp", None, False, "intl", 8.493),
    ("exp", None, False, "char", 40.8759),
    ("exp", None, True, "char", 42.0267),
]
# test_cases_zero_bleu (the same file): no match at all is 0 whatever the smoothing
SENTENCE_REF_0 = "okay thanks"
SENTENCE_SYS_0 = "this is a cat"
SACREBLEU_SENTENCE_BLEU_ZERO = [
    ("exp", None, False, "13a", 0.0),
    ("none", None, False, "13a", 0.0),
    ("floor", None, False, "13a", 0.0),
    ("floor", 0.1, False, "13a", 0.0),
    ("add-k", None, False, "13a", 0.0),
    ("add-k", 1, False, "13a", 0.0),
]


@pytest.mark.parametrize(
    ("hypothesis", "reference", "smooth", "smooth_value", "lowercase", "tokenizer", "expected"),
    [(SENTENCE_SYS, SENTENCE_REF, *case) for case in SACREBLEU_SENTENCE_BLEU]
    + [(SENTENCE_SYS_0, SENTENCE_REF_0, *case) for case in SACREBLEU_SENTENCE_BLEU_ZERO],
)
def test_sacrebleu_sentence_bleu(
    hypothesis: str,
    reference: str,
    smooth: str,
    smooth_value: float | None,
    lowercase: bool,
    tokenizer: str,
    expected: float,
) -> None:
    ((value,),) = sacrebleu_sentence_bleu_batch(
        [hypothesis],
        [[reference]],
        [4],
        tokenize=tokenizer,
        smooth=smooth,
        smooth_value=smooth_value,
        lowercase=lowercase,
        effective_order=True,
    )
    assert abs(value - expected / 100) < 1e-3 / 100


# mjpost/sacrebleu test/test_chrf.py, EPSILON = 1e-4 on 0..100. The corpus cases pass one reference stream.
# test_chrf: corpus chrF, char_order 6, word_order 0, beta 3, eps_smoothing=True
SACREBLEU_CHRF_EPS = [
    (["abcdefg"], ["hijklmnop"], 0.0),
    (["a"], ["b"], 0.0),
    ([""], ["b"], 0.0),
    ([""], ["ref"], 0.0),
    ([""], ["reference"], 0.0),
    (["aa"], ["ab"], 8.3333),
    (["a", "b"], ["a", "c"], 8.3333),
    (["a"], ["a"], 16.6667),
    (["a b c"], ["a b c"], 50.0),
    (["a b c"], ["abc"], 50.0),
    (
        [
            " risk assessment must be made of those who are qualified and expertise in the sector - these are the scientists ."
        ],
        [
            "risk assessment has to be undertaken by those who are qualified and expert in that area - that is the scientists ."
        ],
        63.361730,
    ),
    (
        [" Die    Beziehung zwischen  Obama und Netanjahu ist nicht gerade  freundlich. "],
        ["Das Verhältnis zwischen Obama und Netanyahu ist nicht gerade freundschaftlich."],
        64.1302698,
    ),
    (
        ["Niemand hat die Absicht, eine Mauer zu errichten"],
        ["Niemand hat die Absicht, eine Mauer zu errichten"],
        100.0,
    ),
]
# test_chrf_eff_order: the same with eps_smoothing=False (sacrebleu 2's effective order)
SACREBLEU_CHRF_EFFECTIVE_ORDER = [
    (["a"], ["a"], 100.0),
    ([""], ["reference"], 0.0),
    (["a b c"], ["a b c"], 100.0),
    (["a b c"], ["abc"], 100.0),
    ([""], ["c"], 0.0),
    (["a", "b"], ["a", "c"], 50.0),
    (["aa"], ["ab"], 25.0),
]
# test_chrf_keep_whitespace: remove_whitespace=False, i.e. CHRF(whitespace=True)
SACREBLEU_CHRF_WHITESPACE = [
    (
        ["Die Beziehung zwischen Obama und Netanjahu ist nicht gerade freundlich."],
        ["Das Verhältnis zwischen Obama und Netanyahu ist nicht gerade freundschaftlich."],
        67.3481606,
    ),
    (
        [
            "risk assessment must be made of those who are qualified and expertise in the sector - these are the scientists ."
        ],
        [
            "risk assessment has to be undertaken by those who are qualified and expert in that area - that is the scientists ."
        ],
        65.2414427,
    ),
]


@pytest.mark.parametrize(
    ("hypotheses", "stream", "eps_smoothing", "whitespace", "expected"),
    [(*case[:2], True, False, case[2]) for case in SACREBLEU_CHRF_EPS]
    + [(*case[:2], False, False, case[2]) for case in SACREBLEU_CHRF_EFFECTIVE_ORDER]
    + [(*case[:2], False, True, case[2]) for case in SACREBLEU_CHRF_WHITESPACE],
)
def test_sacrebleu_corpus_chrf(
    hypotheses: list[str], stream: list[str], eps_smoothing: bool, whitespace: bool, expected: float
) -> None:
    value = sacrebleu_corpus_chrf(
        hypotheses,
        per_item([stream]),
        char_order=6,
        word_order=0,
        beta=3,
        eps_smoothing=eps_smoothing,
        whitespace=whitespace,
    )
    assert abs(value - expected / 100) < 1e-4 / 100


# test_chrf_sentence_level: sacrebleu.sentence_chrf(hypothesis, references, eps_smoothing=True), beta 2
SACREBLEU_CHRF_SENTENCE = [
    (
        "Co nás nejvíc trápí, protože lékaři si vybírají, kdo bude žít a kdo zemře.",
        ["Nejvíce smutní jsme z toho, že musíme rozhodovat o tom, kdo bude žít a kdo zemře."],
        39.14078509,
    ),
    (
        "Nebo prostě nemají vybavení, které by jim pomohlo, uvedli lékaři.",
        ["A někdy nemáme ani potřebný materiál, abychom jim pomohli, popsali lékaři."],
        31.22557079,
    ),
    (
        "Lapali po dechu, jejich životy skončily dřív, než skutečně začaly.",
        ["Lapali po dechu a pak jejich život skončil - dřív, než skutečně mohl začít, připomněli."],
        57.15704367,
    ),
]


@pytest.mark.parametrize(("hypothesis", "references", "expected"), SACREBLEU_CHRF_SENTENCE)
def test_sacrebleu_sentence_chrf(hypothesis: str, references: list[str], expected: float) -> None:
    (value,) = sacrebleu_sentence_chrf_batch([hypothesis], [references], eps_smoothing=True)
    assert abs(value - expected / 100) < 1e-4 / 100
