"""BLEU (Papineni et al., 2002) against nltk.translate.bleu_score (the implementation dialog papers report) to
1e-9: through the metric tester (:mod:`tests.scoring.metric_tester`) on pre-tokenized text (``tokenizer="none"``
hands both sides the same tokens), and the library's corpus BLEU of orders the engine does not offer."""

from __future__ import annotations

import pytest

from scoring.metrics.bleu import SMOOTHING_METHODS, corpus_bleu, sentence_bleu, sentence_bleu_batch
from tests.scoring.metric_batches import MetricBatch, random_token_pairs
from tests.scoring.metric_tester import MetricTester, SystemMetricTester
from tests.scoring.reference_metrics import (
    nltk_bleu_reference,
    nltk_corpus_bleu,
    nltk_corpus_bleu_reference,
    nltk_sentence_bleu,
)

TOLERANCE = 1e-9
ORDERS = (1, 2, 3, 4)
VOCABULARY = ["i", "you", "the", "a", "is", "am", "fine", "good", "thanks", ",", ".", "?", "!", "what", "how"]
VOCABULARY += ["are", "day"]


def words(text: str) -> list[str]:
    return text.split()


# (hypothesis, references): the edge cases nltk treats specially, and ordinary dialog replies.
CASES = {
    "empty hypothesis": ("", ["i am fine"]),
    "hypothesis of one word": ("fine", ["i am fine"]),
    "hypothesis shorter than 4": ("am fine", ["i am fine thanks"]),
    "no overlap": ("what a lovely day", ["i am fine thanks"]),
    "identical": ("i am fine , thank you .", ["i am fine , thank you ."]),
    "unigrams only": ("fine am i", ["i am fine"]),
    "repeated words clipped": (
        "the the the the the the the",
        ["the cat is on the mat", "there is a cat on the mat"],
    ),
    "longer than the reference": ("i am fine , thank you , and how are you today ?", ["i am fine ."]),
    "references of different lengths": (
        "i am fine thank you",
        ["fine", "i am quite fine thank you very much", "i am fine thanks", "thank you i am fine , really"],
    ),
    "closest length tie picks the shorter": ("a b c d e", ["a b c d", "a b c d e f"]),
    "an empty reference among others": ("sure , how much ?", ["", "sure how much ?"]),
    "only an empty reference": ("sure", [""]),
    "dailydialog reply": (
        "oh , umm , no thanks .",
        ["oh , umm , no thanks .", "oh . then no , i 'm not interested .", "sure how much does it cost ."],
    ),
    "nltk docstring example": (
        "It is a guide to action which ensures that the military always obeys the commands of the party",
        [
            "It is a guide to action that ensures that the military will forever heed Party commands",
            "It is the guiding principle which guarantees the military forces always being under the command "
            "of the Party",
            "It is the practical guide for the army always to heed the directions of the party",
        ],
    ),
}
CASES_BATCH = MetricBatch.of_pairs(list(CASES.values()))


def joint_bleu(n: int, smoothing: str) -> MetricTester:
    """BLEU-n with nltk's multi-reference counts (``refagg:joint``) on whitespace tokens, against nltk."""
    return MetricTester(
        f"bleu-{n}",
        nltk_bleu_reference(n, smoothing, refagg="joint", tokenizer="none"),
        TOLERANCE,
        params={"smooth": smoothing, "refagg": "joint"},
        tokenizer="none",
    )


@pytest.mark.parametrize("smoothing", SMOOTHING_METHODS)
@pytest.mark.parametrize("n", ORDERS)
def test_sentence_bleu_equals_nltk_on_edge_cases(n: int, smoothing: str) -> None:
    joint_bleu(n, smoothing).check(CASES_BATCH)


@pytest.mark.parametrize("smoothing", SMOOTHING_METHODS)
@pytest.mark.parametrize("seed", [7, 2024])
def test_sentence_bleu_equals_nltk_on_random_pairs(seed: int, smoothing: str) -> None:
    batch = MetricBatch.of_tokens(random_token_pairs(seed, 300, VOCABULARY))
    nonzero = 0
    for n in ORDERS:
        values = joint_bleu(n, smoothing).check(batch)
        nonzero += sum(value is not None and value > 1e-6 for value in values)
    assert nonzero > 300  # the random pairs exercise real overlaps, not only zeros


@pytest.mark.parametrize("smoothing", SMOOTHING_METHODS)
def test_several_systems_sharing_reference_lists_equal_nltk(smoothing: str) -> None:
    pairs = random_token_pairs(11, 120, VOCABULARY)
    shared = [words("i am fine thanks"), words("good , how are you ?")]
    # several hypotheses share one reference list, as the replies of several systems to one context do
    replies = ("i am fine", "how are you ?", "fine thanks , you ?", "")
    pairs += [(words(text), shared) for text in replies]
    batch = MetricBatch.of_tokens(pairs)
    batch = MetricBatch.of(
        batch.hypotheses,
        batch.references,
        queries=[*batch.queries[:120], *["one context"] * len(replies)],
        systems=[*batch.systems[:120], *(f"system {index}" for index in range(len(replies)))],
    )
    for n in ORDERS:
        joint_bleu(n, smoothing).check(batch)


@pytest.mark.parametrize("smoothing", SMOOTHING_METHODS)
def test_corpus_bleu_4_equals_nltk(smoothing: str) -> None:
    pairs = random_token_pairs(3, 80, VOCABULARY) + [
        (words(h), [words(r) for r in refs]) for h, refs in CASES.values()
    ]
    reference = nltk_corpus_bleu_reference(4, smoothing, tokenizer="none")
    SystemMetricTester(
        "corpus-bleu", reference, TOLERANCE, params={"smooth": smoothing}, tokenizer="none"
    ).check(MetricBatch.of_tokens(pairs))


@pytest.mark.parametrize("smoothing", SMOOTHING_METHODS)
@pytest.mark.parametrize("n", ORDERS)
def test_corpus_bleu_of_every_order_equals_nltk(n: int, smoothing: str) -> None:
    """The library's corpus BLEU of orders 1-3, which the engine's corpus BLEU-4 does not offer."""
    pairs = random_token_pairs(3, 80, VOCABULARY) + [
        (words(h), [words(r) for r in refs]) for h, refs in CASES.values()
    ]
    hypotheses = [hypothesis for hypothesis, _ in pairs]
    references = [refs for _, refs in pairs]
    expected = nltk_corpus_bleu(hypotheses, references, n, smoothing)
    assert corpus_bleu(hypotheses, references, n, smoothing) == pytest.approx(expected, abs=TOLERANCE)


def test_corpus_bleu_defaults_to_no_smoothing_like_nltk() -> None:
    hypotheses = [words("i am fine"), words("what a day")]
    references = [[words("i am fine thanks")], [words("it is a lovely day")]]
    expected = nltk_corpus_bleu(hypotheses, references)
    assert corpus_bleu(hypotheses, references) == pytest.approx(expected, abs=TOLERANCE)


def test_corpus_bleu_is_not_the_mean_of_sentence_scores() -> None:
    hypotheses = [words("i am fine thank you"), words("no")]
    references = [[words("i am fine thank you")], [words("yes of course")]]
    mean = sum(sentence_bleu_batch(hypotheses, references, 2, "method1")) / 2
    assert corpus_bleu(hypotheses, references, 2, "method1") != pytest.approx(mean, abs=1e-3)


def test_known_values() -> None:
    """Hand-computed: BLEU-2 of 'a b c' vs 'a b d': p1 = 2/3, p2 = 1/2, equal lengths, so sqrt(1/3)."""
    assert sentence_bleu(["a", "b", "c"], [["a", "b", "d"]], 2, "method0") == pytest.approx(
        3**-0.5, abs=1e-12
    )
    assert sentence_bleu(["x"], [["a", "b"]], 1) == 0.0
    assert sentence_bleu(["a", "b"], [["a", "b"]], 4, "method1") == pytest.approx((0.1 / 1) ** 0.5, abs=1e-12)
    assert nltk_sentence_bleu(["a", "b", "c"], [["a", "b", "d"]], 2, "method0") == pytest.approx(3**-0.5)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: sentence_bleu(["a"], [], 2), "at least one reference"),
        (lambda: sentence_bleu(["a"], [["a"]], 0), "max_n >= 1"),
        (lambda: sentence_bleu(["a"], [["a"]], 2, "method7"), "unknown BLEU smoothing 'method7'"),
        (lambda: sentence_bleu_batch([["a"]], [], 2), "1 hypotheses but 0 reference lists"),
    ],
)
def test_invalid_input_is_refused_with_a_clear_message(call: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()  # type: ignore[operator]
