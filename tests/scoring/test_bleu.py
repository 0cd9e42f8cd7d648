"""BLEU against nltk.translate.bleu_score (the implementation dialog papers report) to 1e-9."""

from __future__ import annotations

import random
import warnings
from collections.abc import Sequence

import pytest
from nltk.translate.bleu_score import SmoothingFunction
from nltk.translate.bleu_score import corpus_bleu as nltk_corpus_bleu
from nltk.translate.bleu_score import sentence_bleu as nltk_sentence_bleu

from scoring.metrics.bleu import (
    SMOOTHING_METHODS,
    corpus_bleu,
    sentence_bleu,
    sentence_bleu_batch,
    sentence_bleu_orders,
    sentence_bleu_orders_batch,
)

TOLERANCE = 1e-9
ORDERS = (1, 2, 3, 4)


def nltk_bleu(hypothesis: list[str], references: list[list[str]], n: int, smoothing: str) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # method0 warns about zero n-gram overlaps
        return float(
            nltk_sentence_bleu(
                references,
                hypothesis,
                weights=tuple(1 / n for _ in range(n)),
                smoothing_function=getattr(SmoothingFunction(), smoothing),
            )
        )


def nltk_corpus(
    hypotheses: Sequence[list[str]], references: Sequence[list[list[str]]], n: int, smoothing: str
) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(
            nltk_corpus_bleu(
                list(references),
                list(hypotheses),
                weights=tuple(1 / n for _ in range(n)),
                smoothing_function=getattr(SmoothingFunction(), smoothing),
            )
        )


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


@pytest.mark.parametrize("smoothing", SMOOTHING_METHODS)
@pytest.mark.parametrize("n", ORDERS)
@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_sentence_bleu_equals_nltk_on_edge_cases(case: tuple[str, list[str]], n: int, smoothing: str) -> None:
    hypothesis, references = words(case[0]), [words(reference) for reference in case[1]]
    expected = nltk_bleu(hypothesis, references, n, smoothing)
    assert sentence_bleu(hypothesis, references, n, smoothing) == pytest.approx(expected, abs=TOLERANCE)


def random_pairs(seed: int, count: int) -> list[tuple[list[str], list[list[str]]]]:
    """Short replies over a small vocabulary, so that overlaps of every order (and none) occur."""
    rng = random.Random(seed)
    vocabulary = [
        "i",
        "you",
        "the",
        "a",
        "is",
        "am",
        "fine",
        "good",
        "thanks",
        ",",
        ".",
        "?",
        "!",
        "what",
        "how",
        "are",
        "day",
    ]
    pairs = []
    for _ in range(count):
        hypothesis = [rng.choice(vocabulary) for _ in range(rng.randint(0, 14))]
        references = [
            [rng.choice(vocabulary) for _ in range(rng.randint(0, 14))] for _ in range(rng.randint(1, 5))
        ]
        pairs.append((hypothesis, references))
    return pairs


@pytest.mark.parametrize("smoothing", SMOOTHING_METHODS)
@pytest.mark.parametrize("seed", [7, 2024])
def test_sentence_bleu_equals_nltk_on_random_pairs(seed: int, smoothing: str) -> None:
    pairs = random_pairs(seed, 300)
    nonzero = 0
    for hypothesis, references in pairs:
        ours = sentence_bleu_orders(hypothesis, references, 4, smoothing)
        for n in ORDERS:
            expected = nltk_bleu(hypothesis, references, n, smoothing)
            assert ours[n - 1] == pytest.approx(expected, abs=TOLERANCE), (hypothesis, references, n)
            nonzero += expected > 1e-6
    assert nonzero > 300  # the random pairs exercise real overlaps, not only zeros


@pytest.mark.parametrize("smoothing", SMOOTHING_METHODS)
def test_batch_functions_equal_nltk_per_pair(smoothing: str) -> None:
    pairs = random_pairs(11, 120)
    shared = [words("i am fine thanks"), words("good , how are you ?")]
    # several hypotheses share one reference-list object, as the replies of several systems to one context do
    pairs += [(words(text), shared) for text in ("i am fine", "how are you ?", "fine thanks , you ?", "")]
    hypotheses = [hypothesis for hypothesis, _ in pairs]
    references = [refs for _, refs in pairs]
    rows = sentence_bleu_orders_batch(hypotheses, references, 4, smoothing)
    for n in ORDERS:
        expected = [nltk_bleu(h, r, n, smoothing) for h, r in pairs]
        assert sentence_bleu_batch(hypotheses, references, n, smoothing) == pytest.approx(
            expected, abs=TOLERANCE
        )
        assert [row[n - 1] for row in rows] == pytest.approx(expected, abs=TOLERANCE)


@pytest.mark.parametrize("smoothing", SMOOTHING_METHODS)
@pytest.mark.parametrize("n", ORDERS)
def test_corpus_bleu_equals_nltk(n: int, smoothing: str) -> None:
    pairs = random_pairs(3, 80) + [(words(h), [words(r) for r in refs]) for h, refs in CASES.values()]
    hypotheses = [hypothesis for hypothesis, _ in pairs]
    references = [refs for _, refs in pairs]
    expected = nltk_corpus(hypotheses, references, n, smoothing)
    assert corpus_bleu(hypotheses, references, n, smoothing) == pytest.approx(expected, abs=TOLERANCE)


def test_corpus_bleu_defaults_to_no_smoothing_like_nltk() -> None:
    hypotheses = [words("i am fine"), words("what a day")]
    references = [[words("i am fine thanks")], [words("it is a lovely day")]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = nltk_corpus_bleu(references, hypotheses)
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
