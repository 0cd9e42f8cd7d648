"""The sacrebleu and rouge-score wrappers equal the libraries called directly, scale to 0..1, and check options.

The peers' own test vectors are in test_peer_vectors.py; here the wrappers are compared with sacrebleu and
rouge-score on 200 random pairs (fixed seed) with one to three references each.
"""

from __future__ import annotations

import importlib.metadata
import random
import subprocess
import sys
from typing import Any

import pytest
import sacrebleu
from rouge_score.rouge_scorer import RougeScorer
from sacrebleu.metrics import BLEU, CHRF

from scoring.metrics.rouge_score_metrics import ROUGE_SCORE_TYPES, rouge_score_batch, rouge_score_version
from scoring.metrics.sacrebleu_metrics import (
    SACREBLEU_TOKENIZERS,
    sacrebleu_corpus_bleu,
    sacrebleu_corpus_chrf,
    sacrebleu_sentence_bleu_batch,
    sacrebleu_sentence_chrf_batch,
    sacrebleu_version,
)

VOCABULARY = [
    "the", "The", "a", "dog", "dogs", "bit", "bites", "man", "men", "it", "It", "was", "n't", "wasn't",
    "surprising", "surprised", "i", "I", "am", "fine", "thanks", "running", "runs", "ran", "station",
    "stations", "do", "you", "want", "to", "go", "?", ".", ",", "!", "'s", "don't", "O'Neil", "e-mail",
    "3.5", "café", "naïve", "\u201cquoted\u201d",
]  # fmt: skip


def random_text(rng: random.Random, low: int, high: int) -> str:
    return " ".join(rng.choice(VOCABULARY) for _ in range(rng.randint(low, high)))


@pytest.fixture(scope="module")
def pairs() -> tuple[list[str], list[list[str]]]:
    """200 hypotheses (some empty) and one to three references each (some sharing words with them)."""
    rng = random.Random(20240611)
    hypotheses, references = [], []
    for _ in range(200):
        hypothesis = random_text(rng, 0, 14)
        refs = [random_text(rng, 1, 14) for _ in range(rng.randint(1, 3))]
        if hypothesis and rng.random() < 0.3:  # an exact copy now and then, so that every order matches
            refs[0] = hypothesis
        hypotheses.append(hypothesis)
        references.append(refs)
    return hypotheses, references


def padded_streams(references: list[list[str]]) -> list[list[str]]:
    """Equal-length reference streams for sacrebleu, each item's list padded with its own first reference.

    A repeated reference changes no BLEU or chrF value (BLEU clips with the largest count in any one
    reference and takes the closest length; chrF takes the best reference), so the library called on these
    streams must give what the wrapper's None padding gives.
    """
    width = max(len(refs) for refs in references)
    return [[refs[k] if k < len(refs) else refs[0] for refs in references] for k in range(width)]


# ----------------------------------------------------------------------------------------------- sacrebleu

BLEU_CONFIGURATIONS = [
    {},
    {"tokenize": "none"},
    {"tokenize": "intl", "lowercase": True},
    {"tokenize": "char"},
    {"tokenize": "zh"},
    {"smooth": "floor"},
    {"smooth": "floor", "smooth_value": 0.3},
    {"smooth": "add-k", "smooth_value": 2},
    {"smooth": "none", "effective_order": False},
]


@pytest.mark.parametrize("options", BLEU_CONFIGURATIONS, ids=lambda options: repr(options) or "defaults")
def test_sentence_bleu_equals_sacrebleu(
    pairs: tuple[list[str], list[list[str]]], options: dict[str, Any]
) -> None:
    hypotheses, references = pairs
    orders = [1, 2, 3, 4]
    rows = sacrebleu_sentence_bleu_batch(hypotheses, references, orders, **options)
    metrics = {
        n: BLEU(
            max_ngram_order=n,
            tokenize=options.get("tokenize", "13a"),
            smooth_method=options.get("smooth", "exp"),
            smooth_value=options.get("smooth_value"),
            effective_order=options.get("effective_order", True),
            lowercase=options.get("lowercase", False),
        )
        for n in orders
    }
    for row, hypothesis, refs in zip(rows, hypotheses, references, strict=True):
        assert row == [metrics[n].sentence_score(hypothesis, refs).score / 100 for n in orders]
    assert sum(row[3] > 0 for row in rows) > 20  # BLEU-4 is not zero everywhere


def test_sentence_bleu_defaults_are_sacrebleu_sentence_bleu(pairs: tuple[list[str], list[list[str]]]) -> None:
    hypotheses, references = pairs
    rows = sacrebleu_sentence_bleu_batch(hypotheses, references, [4])
    expected = [
        sacrebleu.sentence_bleu(h, refs).score / 100 for h, refs in zip(hypotheses, references, strict=True)
    ]
    assert [row[0] for row in rows] == expected


@pytest.mark.parametrize("options", BLEU_CONFIGURATIONS[:4], ids=lambda options: repr(options) or "defaults")
@pytest.mark.parametrize("max_order", [2, 4])
def test_corpus_bleu_equals_sacrebleu(
    pairs: tuple[list[str], list[list[str]]], options: dict[str, Any], max_order: int
) -> None:
    hypotheses, references = pairs
    value = sacrebleu_corpus_bleu(hypotheses, references, max_order=max_order, **options)
    metric = BLEU(
        max_ngram_order=max_order,
        tokenize=options.get("tokenize", "13a"),
        lowercase=options.get("lowercase", False),
    )
    assert value == metric.corpus_score(hypotheses, padded_streams(references)).score / 100
    assert 0.0 < value < 1.0


def test_corpus_bleu_defaults_are_sacrebleu_corpus_bleu(pairs: tuple[list[str], list[list[str]]]) -> None:
    hypotheses, references = pairs
    expected = sacrebleu.corpus_bleu(hypotheses, padded_streams(references)).score / 100
    assert sacrebleu_corpus_bleu(hypotheses, references) == expected


def test_corpus_bleu_pads_with_none_not_with_empty_references() -> None:
    # An empty string would be a reference of length 0, the closest length for a short reply; None is no
    # reference at all. A one-word reply against ["hello there friend"] and nothing else: brevity penalty
    # from length 3, not 0.
    value = sacrebleu_corpus_bleu(
        ["hello", "a b c d"], [["hello there friend"], ["a b c d", "x y"]], max_order=1
    )
    # sacrebleu's annotations say str, its code and docstring allow None ("variable number of references")
    none_padded: Any = [["hello there friend", "a b c d"], [None, "x y"]]
    with_none = BLEU(max_ngram_order=1).corpus_score(["hello", "a b c d"], none_padded)
    with_empty = BLEU(max_ngram_order=1).corpus_score(
        ["hello", "a b c d"], [["hello there friend", "a b c d"], ["", "x y"]]
    )
    assert value == with_none.score / 100
    assert value != with_empty.score / 100


@pytest.mark.parametrize("word_order", [0, 2])
def test_sentence_chrf_equals_sacrebleu(pairs: tuple[list[str], list[list[str]]], word_order: int) -> None:
    hypotheses, references = pairs
    values = sacrebleu_sentence_chrf_batch(hypotheses, references, word_order=word_order)
    expected = [
        sacrebleu.sentence_chrf(h, refs, word_order=word_order).score / 100
        for h, refs in zip(hypotheses, references, strict=True)
    ]
    assert values == expected
    assert sum(value > 0 for value in values) > 100


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"word_order": 2},
        {"beta": 3, "char_order": 4},
        {"lowercase": True, "whitespace": True, "eps_smoothing": True},
    ],
    ids=repr,
)
def test_corpus_chrf_equals_sacrebleu(
    pairs: tuple[list[str], list[list[str]]], options: dict[str, Any]
) -> None:
    hypotheses, references = pairs
    value = sacrebleu_corpus_chrf(hypotheses, references, **options)
    assert value == CHRF(**options).corpus_score(hypotheses, padded_streams(references)).score / 100
    assert 0.0 < value < 1.0


def test_scores_are_sacrebleus_divided_by_100() -> None:
    hypothesis, reference = "the dog bit the man", "the dog bit a man"
    ((bleu,),) = sacrebleu_sentence_bleu_batch([hypothesis], [[reference]], [4])
    assert bleu == sacrebleu.sentence_bleu(hypothesis, [reference]).score / 100
    assert 0.0 < bleu < 1.0
    # sacrebleu computes BLEU as exp(mean of log(100 * p_n)): a perfect match is 100.00000000000004, kept
    # as it is (the wrapper divides, it does not round), so "1.0" here is 1.0000000000000004
    perfect = sacrebleu_sentence_bleu_batch([hypothesis], [[hypothesis]], [1, 4])
    assert perfect == [[sacrebleu.sentence_bleu(hypothesis, [hypothesis]).score / 100] * 2]
    assert perfect[0] == pytest.approx([1.0, 1.0], abs=1e-15)
    (chrf,) = sacrebleu_sentence_chrf_batch([hypothesis], [[reference]])
    assert chrf == sacrebleu.sentence_chrf(hypothesis, [reference]).score / 100
    assert 0.0 < chrf < 1.0
    assert sacrebleu_sentence_chrf_batch([hypothesis], [[hypothesis]]) == [1.0]
    assert sacrebleu_corpus_bleu([hypothesis], [[hypothesis]]) == pytest.approx(1.0, abs=1e-15)
    assert sacrebleu_corpus_chrf([hypothesis], [[hypothesis]]) == 1.0


def test_smooth_value_none_is_sacrebleus_default() -> None:
    hypotheses, references = ["the cat sat on a mat"], [["the cat is on the mat"]]
    for smooth, default in (("floor", 0.1), ("add-k", 1)):
        assert sacrebleu_sentence_bleu_batch(hypotheses, references, [4], smooth=smooth) == (
            sacrebleu_sentence_bleu_batch(hypotheses, references, [4], smooth=smooth, smooth_value=default)
        )


def test_several_orders_are_each_a_sacrebleu_bleu_of_that_order() -> None:
    rows = sacrebleu_sentence_bleu_batch(["a b c d e"], [["a b c x e"]], [4, 1, 2])
    assert rows == [
        [
            BLEU(max_ngram_order=n, effective_order=True).sentence_score("a b c d e", ["a b c x e"]).score
            / 100
            for n in (4, 1, 2)
        ]
    ]
    assert sacrebleu_sentence_bleu_batch([], [], [4]) == []


@pytest.mark.parametrize("tokenizer", SACREBLEU_TOKENIZERS)
def test_every_allowed_tokenizer_runs(tokenizer: str) -> None:
    ((value,),) = sacrebleu_sentence_bleu_batch(
        ["这是一个测试 test"], [["这是测试 test"]], [2], tokenize=tokenizer
    )
    assert 0.0 <= value <= 1.0


def test_unknown_tokenizer_is_refused_with_the_allowed_list() -> None:
    with pytest.raises(
        ValueError, match=r"unknown sacrebleu tokenizer 'moses'; choose one of 13a, intl, zh, none, char"
    ):
        sacrebleu_sentence_bleu_batch(["a"], [["a"]], [4], tokenize="moses")
    with pytest.raises(ValueError, match="unknown sacrebleu tokenizer"):
        sacrebleu_corpus_bleu(["a"], [["a"]], tokenize="13A")


@pytest.mark.parametrize("tokenizer", ["ja-mecab", "ko-mecab", "flores101", "flores200", "spm", "spBLEU-1K"])
def test_tokenizers_needing_extra_packages_are_refused_saying_so(tokenizer: str) -> None:
    with pytest.raises(
        ValueError, match=rf"tokenizer '{tokenizer}' needs .*which this project does not install"
    ):
        sacrebleu_sentence_bleu_batch(["a"], [["a"]], [4], tokenize=tokenizer)


def test_smoothing_options_are_checked() -> None:
    with pytest.raises(
        ValueError, match=r"unknown sacrebleu smoothing 'method1'; choose one of exp, floor, add-k, none"
    ):
        sacrebleu_sentence_bleu_batch(["a"], [["a"]], [4], smooth="method1")
    with pytest.raises(
        ValueError, match=r"smooth_value applies to the 'floor' and 'add-k' smoothing only, not to 'exp'"
    ):
        sacrebleu_corpus_bleu(["a"], [["a"]], smooth_value=0.1)


@pytest.mark.parametrize("orders", [[], [0], [2, -1], [1.5]])
def test_bleu_orders_are_checked(orders: list[Any]) -> None:
    with pytest.raises(ValueError, match="order"):
        sacrebleu_sentence_bleu_batch(["a"], [["a"]], orders)


def test_chrf_options_are_checked() -> None:
    with pytest.raises(ValueError, match="char_order"):
        sacrebleu_sentence_chrf_batch(["a"], [["a"]], char_order=0, word_order=0)
    with pytest.raises(ValueError, match="word_order"):
        sacrebleu_corpus_chrf(["a"], [["a"]], word_order=-1)
    with pytest.raises(ValueError, match="beta"):
        sacrebleu_sentence_chrf_batch(["a"], [["a"]], beta=-1)


def test_an_item_without_references_is_named() -> None:
    hypotheses, references = ["a", "b", "c"], [["a"], ["b"], []]
    for call in (
        lambda: sacrebleu_sentence_bleu_batch(hypotheses, references, [4]),
        lambda: sacrebleu_corpus_bleu(hypotheses, references),
        lambda: sacrebleu_sentence_chrf_batch(hypotheses, references),
        lambda: sacrebleu_corpus_chrf(hypotheses, references),
        lambda: rouge_score_batch(hypotheses, references),
    ):
        with pytest.raises(ValueError, match="item 2 has no reference"):
            call()


def test_layout_mistakes_are_refused() -> None:
    with pytest.raises(ValueError, match="2 hypotheses but 1 reference lists"):
        sacrebleu_sentence_bleu_batch(["a", "b"], [["a"]], [4])
    with pytest.raises(TypeError, match=r"references\[0\] must be a list"):
        sacrebleu_corpus_bleu(["a"], ["a"])
    with pytest.raises(ValueError, match="at least one item"):
        sacrebleu_corpus_chrf([], [])


def test_versions_are_the_installed_ones() -> None:
    assert sacrebleu_version() == sacrebleu.__version__ == importlib.metadata.version("sacrebleu")
    assert rouge_score_version() == importlib.metadata.version("rouge-score")


def test_importing_the_wrappers_does_not_import_the_libraries() -> None:
    code = (
        "import sys; import scoring.metrics.sacrebleu_metrics, scoring.metrics.rouge_score_metrics; "
        "print(sorted(m for m in ('sacrebleu', 'rouge_score', 'nltk') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


# ---------------------------------------------------------------------------------------------- rouge-score


@pytest.mark.parametrize("use_stemmer", [False, True])
def test_rouge_score_equals_rouge_scorer(pairs: tuple[list[str], list[list[str]]], use_stemmer: bool) -> None:
    hypotheses, references = pairs
    result = rouge_score_batch(hypotheses, references, ROUGE_SCORE_TYPES, use_stemmer=use_stemmer)
    scorer = RougeScorer(list(ROUGE_SCORE_TYPES), use_stemmer=use_stemmer)
    for index, (hypothesis, refs) in enumerate(zip(hypotheses, references, strict=True)):
        expected = scorer.score_multi(refs, hypothesis)
        for rouge_type in ROUGE_SCORE_TYPES:
            assert result[rouge_type][index] == tuple(expected[rouge_type])
    assert sum(f > 0 for _, _, f in result["rougeL"]) > 100


def test_rouge_score_takes_the_reference_with_the_best_f_per_type() -> None:
    hypothesis = "the cat sat on the mat"
    references = ["on the mat the cat sat", "the cat was sitting"]
    result = rouge_score_batch([hypothesis], [references], ["rouge1", "rougeL"])
    scorer = RougeScorer(["rouge1", "rougeL"])
    per_reference = [scorer.score(reference, hypothesis) for reference in references]
    for rouge_type in ("rouge1", "rougeL"):
        best = max(per_reference, key=lambda scores: scores[rouge_type].fmeasure)[rouge_type]
        assert result[rouge_type] == [tuple(best)]
    # rouge1 is a perfect match with the first reference, rougeL is not (the order differs)
    assert result["rouge1"][0][2] == 1.0
    assert result["rougeL"][0][2] < 1.0


def test_rouge_score_argument_order_is_hypothesis_first() -> None:
    # precision is over the hypothesis, recall over the reference
    result = rouge_score_batch(["testing"], [["testing one two"]], ["rouge1"])
    assert result["rouge1"] == [(1.0, pytest.approx(1 / 3), 0.5)]


def test_rouge_lsum_of_one_line_replies_is_rouge_l(pairs: tuple[list[str], list[list[str]]]) -> None:
    hypotheses, references = pairs
    result = rouge_score_batch(hypotheses, references, ["rougeL", "rougeLsum"])
    assert result["rougeLsum"] == result["rougeL"]
    # on several lines it is the summary-level LCS, which differs
    lines = rouge_score_batch(["b c\na"], [["a b c"]], ["rougeL", "rougeLsum"])
    assert lines["rougeL"][0][2] < lines["rougeLsum"][0][2] == 1.0


def test_rouge_score_values_are_plain_floats() -> None:
    result = rouge_score_batch(["", "a b"], [["a"], ["a b"]], ["rouge2", "rougeL"])
    for triples in result.values():
        for triple in triples:
            assert all(type(value) is float for value in triple)
    assert result["rougeL"] == [(0.0, 0.0, 0.0), (1.0, 1.0, 1.0)]


def test_rouge_score_types_are_checked() -> None:
    with pytest.raises(
        ValueError,
        match=r"unknown rouge-score type\(s\) 'rouge3'; choose from rougeL, rougeLsum, rouge1, rouge2",
    ):
        rouge_score_batch(["a"], [["a"]], ["rougeL", "rouge3"])
    with pytest.raises(ValueError, match="at least one type"):
        rouge_score_batch(["a"], [["a"]], [])
    with pytest.raises(ValueError, match="not one string"):
        rouge_score_batch(["a"], [["a"]], "rougeL")
    with pytest.raises(ValueError, match="2 hypotheses but 1 reference lists"):
        rouge_score_batch(["a", "b"], [["a"]])
    # duplicates are scored once
    assert list(rouge_score_batch(["a"], [["a"]], ["rougeL", "rouge1", "rougeL"])) == ["rougeL", "rouge1"]
