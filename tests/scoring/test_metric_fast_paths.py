"""The faster code paths of the word-overlap metrics give the same values as the slow ones and the
reference libraries: the ASCII tokenizer, BLEU's single-reference counting, ROUGE-L's masks, and METEOR's
own alignment with its caches and WordNet lemma reader."""

from __future__ import annotations

import os
import random
import re
import warnings
from pathlib import Path

import pytest

NLTK_DATA = Path(__file__).resolve().parents[2] / "var" / "nltk_data"
os.environ.setdefault("NLTK_DATA", str(NLTK_DATA))  # before nltk is first imported

from nltk.corpus.reader.wordnet import WordNetCorpusReader  # noqa: E402
from nltk.translate.bleu_score import SmoothingFunction  # noqa: E402
from nltk.translate.bleu_score import sentence_bleu as nltk_sentence_bleu  # noqa: E402
from nltk.translate.meteor_score import meteor_score as nltk_meteor_score  # noqa: E402
from rouge_score import rouge_scorer  # noqa: E402

from scoring.metrics import meteor as meteor_module  # noqa: E402
from scoring.metrics import rouge as rouge_module  # noqa: E402
from scoring.metrics import tokenize as tokenize_module  # noqa: E402
from scoring.metrics.bleu import (  # noqa: E402
    sentence_bleu,
    sentence_bleu_best_batch,
    sentence_bleu_orders_batch,
)
from scoring.metrics.meteor import load_wordnet, meteor_batch, meteor_caches_clear  # noqa: E402
from scoring.metrics.rouge import lcs_length, rouge_l_batch  # noqa: E402
from scoring.metrics.tokenize import tokenize  # noqa: E402

# en-v1 as first written: the plain pattern, the translation tables, no ASCII shortcut
PLAIN_EN_TOKEN = re.compile(r"\w+(?:'\w+)*|'(?:s|re|ve|ll|d|m|t)\b|[^\w\s]+")


def slow_english_tokens(text: str) -> list[str]:
    normalised = text.translate(tokenize_module._QUOTES).lower().translate(tokenize_module._EN_PUNCTUATION)
    return PLAIN_EN_TOKEN.findall(normalised)


# --- tokenizer ------------------------------------------------------------------------------------------


def test_ascii_text_gets_the_same_tokens_as_through_the_unicode_path() -> None:
    rng = random.Random(5)
    alphabet = [chr(code) for code in range(128)]
    fragments = ["'s", "'ll", "'re", "'t", "n't", "don't", "o'clock", "''", "' s", " ", " ", "\t", "_", "a_b"]
    texts = []
    for _ in range(4000):
        pieces = [rng.choice(alphabet) if rng.random() < 0.6 else rng.choice(fragments) for _ in range(12)]
        texts.append("".join(pieces))
    texts += ["a\x1cb\x1d c\x1e\x1fd", "Hello , World !", "It's 5.30 - LATE", "I 'M fine ... ok ?!"]
    assert all(text.isascii() for text in texts)
    for text in texts:
        assert tokenize(text) == slow_english_tokens(text), repr(text)


def test_unicode_text_gets_the_same_tokens_as_with_the_plain_pattern() -> None:
    rng = random.Random(6)
    alphabet = [chr(code) for code in range(160)] + list("’‘“”„—–。éüßİıﬁ²½٣\u2028\u3000\xa0\u200b中文")
    fragments = ["'s", "'ll", "n't", "don’t", "o'clock", " ", "\u3000", "_"]
    for _ in range(4000):
        pieces = [rng.choice(alphabet) if rng.random() < 0.6 else rng.choice(fragments) for _ in range(12)]
        text = "".join(pieces)
        assert tokenize(text) == slow_english_tokens(text), repr(text)


def test_information_separators_split_words_as_unicode_whitespace_does() -> None:
    # \x1c-\x1f are whitespace for Unicode patterns but not for re.ASCII ones: the shortcut must agree
    assert tokenize("one\x1ctwo\x1f!") == ["one", "two", "!"]


def test_non_ascii_text_still_maps_quotes_and_dashes() -> None:
    assert tokenize("I don’t — “know”") == ["i", "don't", "--", '"', "know", '"']


# --- BLEU -----------------------------------------------------------------------------------------------

SMOOTH = SmoothingFunction()


def nltk_bleu(hypothesis: list[str], references: list[list[str]], n: int, smoothing: str) -> float:
    return float(
        nltk_sentence_bleu(
            references,
            hypothesis,
            weights=tuple(1.0 / n for _ in range(n)),
            smoothing_function=getattr(SMOOTH, smoothing),
        )
    )


def random_sentence(rng: random.Random, vocabulary: list[str], low: int = 0, high: int = 12) -> list[str]:
    return [rng.choice(vocabulary) for _ in range(rng.randint(low, high))]


@pytest.mark.filterwarnings("ignore::UserWarning")  # nltk's notes on method0's zero precisions
@pytest.mark.parametrize("smoothing", ["method0", "method1", "method2"])
def test_single_reference_counting_equals_nltk_with_repeated_ngrams(smoothing: str) -> None:
    # a four-word vocabulary repeats unigrams and bigrams on both sides: the counted (not set) branch
    rng = random.Random(7)
    vocabulary = ["a", "b", "c", "d"]
    for _ in range(400):
        hypothesis = random_sentence(rng, vocabulary)
        reference = random_sentence(rng, vocabulary, low=1)
        for n in (1, 2, 3, 4):
            assert sentence_bleu(hypothesis, [reference], n, smoothing) == nltk_bleu(
                hypothesis, [reference], n, smoothing
            ), (hypothesis, reference, n)


def test_best_batch_is_the_per_order_maximum_over_single_references() -> None:
    rng = random.Random(3)
    vocabulary = ["i", "am", "fine", "thanks", ".", ",", "you", "no", "yes", "the", "train"]
    hypotheses = [random_sentence(rng, vocabulary) for _ in range(300)]
    shared = [random_sentence(rng, vocabulary, low=1) for _ in range(3)]
    references = [
        shared if index % 3 == 0 else [random_sentence(rng, vocabulary, low=1) for _ in range(index % 4)]
        for index in range(300)
    ]
    rows = sentence_bleu_best_batch(hypotheses, references, [1, 2, 3, 4], "method1")
    only_two_and_four = sentence_bleu_best_batch(hypotheses, references, [2, 4], "method1")
    for hypothesis, refs, row, subset in zip(hypotheses, references, rows, only_two_and_four, strict=True):
        expected = [
            max((nltk_bleu(hypothesis, [ref], n, "method1") for ref in refs), default=0.0)
            for n in (1, 2, 3, 4)
        ]
        assert row == expected, (hypothesis, refs)
        assert subset == [row[1], row[3]]
    assert any(value > 0 for row in rows for value in row[1:])


def test_joint_references_still_clip_by_the_maximum_count_as_nltk() -> None:
    rng = random.Random(9)
    vocabulary = ["a", "b", "c", "d", "e"]
    hypotheses = [random_sentence(rng, vocabulary) for _ in range(200)]
    references = [[random_sentence(rng, vocabulary, low=1) for _ in range(3)] for _ in range(200)]
    rows = sentence_bleu_orders_batch(hypotheses, references, 4, "method1")
    for hypothesis, refs, row in zip(hypotheses, references, rows, strict=True):
        assert row == [nltk_bleu(hypothesis, refs, n, "method1") for n in (1, 2, 3, 4)]


def test_best_batch_refuses_bad_options() -> None:
    with pytest.raises(ValueError, match="at least one order"):
        sentence_bleu_best_batch([["a"]], [[["a"]]], [])
    with pytest.raises(ValueError, match="unknown BLEU smoothing"):
        sentence_bleu_best_batch([["a"]], [[["a"]]], [2], "method9")
    with pytest.raises(ValueError, match="reference lists"):
        sentence_bleu_best_batch([["a"]], [], [2])


# --- ROUGE-L --------------------------------------------------------------------------------------------


def table_lcs(first: list[str], second: list[str]) -> int:
    """The textbook dynamic programme."""
    previous = [0] * (len(second) + 1)
    for token in first:
        current = [0]
        for j, other in enumerate(second):
            current.append(previous[j] + 1 if token == other else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


def test_lcs_equals_the_table_with_repeats_and_beyond_256_tokens() -> None:
    rng = random.Random(13)
    for size in (0, 1, 5, 40, 300, 700):
        for _ in range(5):
            first = [rng.choice("abcde") for _ in range(size)]
            second = [rng.choice("abcdef") for _ in range(rng.randint(0, size + 3))]
            assert lcs_length(first, second) == table_lcs(first, second)
            assert lcs_length(second, first) == table_lcs(first, second)
    assert len(rouge_module._BITS) >= 700  # the shared powers of two grew for the long reference


def test_rouge_l_equals_rouge_score_on_the_same_tokens_with_repeats() -> None:
    class Whitespace:
        def tokenize(self, text: str) -> list[str]:
            return text.split()

    scorer = rouge_scorer.RougeScorer(["rougeL"], tokenizer=Whitespace())
    rng = random.Random(17)
    hypotheses = [random_sentence(rng, list("abcdefg")) for _ in range(300)]
    references = [random_sentence(rng, list("abcdefg"), low=1) for _ in range(300)]
    scores = rouge_l_batch(hypotheses, [[reference] for reference in references])
    for hypothesis, reference, score in zip(hypotheses, references, scores, strict=True):
        expected = scorer.score(" ".join(reference), " ".join(hypothesis))["rougeL"].fmeasure
        assert score == expected


# --- METEOR ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def wordnet() -> WordNetCorpusReader:
    """nltk's own reader on the project's corpus, independent of the module under test."""
    corpus = NLTK_DATA / "corpora" / "wordnet"
    if not (corpus / "lexnames").is_file():
        pytest.skip(f"METEOR tests need NLTK's WordNet at {corpus}: run `bash scripts/setup.sh` to build it")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return WordNetCorpusReader(str(corpus), None)


def nltk_names(wordnet: WordNetCorpusReader, word: str) -> list[str]:
    return [lemma.name() for synset in wordnet.synsets(word) for lemma in synset.lemmas()]


def test_lemma_names_read_from_the_data_files_equal_nltks(wordnet: WordNetCorpusReader) -> None:
    ours = meteor_module._LemmaNames(load_wordnet())
    assert ours.direct
    rng = random.Random(21)
    index_words = sorted(wordnet._lemma_pos_offset_map)
    words = rng.sample(index_words, 1500)
    # inflected forms (morphology), adjectives with syntactic markers ("(a)", "(p)", "(ip)"), stems
    words += [
        "running",
        "went",
        "geese",
        "better",
        "elder",
        "galore",
        "movi",
        "happi",
        "car",
        "auto",
        "xyzzy",
    ]
    for word in words:
        assert ours.of_word(word) == nltk_names(wordnet, word), word
    # "galore" is written "galore(ip)" in data.adj: the marker is cut off, as nltk does
    assert "galore" in ours.of_word("galore")
    assert not any("(" in name for word in words for name in ours.of_word(word))


def test_lemma_names_without_a_corpus_folder_go_through_nltk(wordnet: WordNetCorpusReader) -> None:
    fallback = meteor_module._LemmaNames(load_wordnet())
    fallback.direct = False
    for word in ["car", "running", "movi", "glad"]:
        assert fallback.of_word(word) == nltk_names(wordnet, word)


def test_scores_do_not_depend_on_the_caches(
    wordnet: WordNetCorpusReader, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(23)
    vocabulary = [
        "the",
        "movie",
        "film",
        "car",
        "auto",
        "cars",
        "running",
        "ran",
        "runs",
        "glad",
        "happy",
        "i",
    ]
    hypotheses = [random_sentence(rng, vocabulary) for _ in range(150)]
    references = [[random_sentence(rng, vocabulary, low=1)] for _ in range(150)]
    expected = [
        float(nltk_meteor_score(refs, hyp, wordnet=wordnet))
        for hyp, refs in zip(hypotheses, references, strict=True)
    ]
    meteor_caches_clear()
    assert meteor_batch(hypotheses, references) == expected  # filling the caches
    assert meteor_batch(hypotheses, references) == expected  # from the caches
    monkeypatch.setattr(meteor_module, "CACHE_LIMIT", 3)  # caches cleared again and again when full
    meteor_caches_clear()
    assert meteor_batch(hypotheses, references) == expected
    assert len(meteor_module._STEMS) <= 3


def test_uppercase_tokens_are_lowercased_as_nltk_does(wordnet: WordNetCorpusReader) -> None:
    hypothesis = ["The", "MOVIE", "was", "Great"]
    reference = ["the", "movie", "was", "GREAT", "!"]
    assert meteor_batch([hypothesis], [[reference]]) == [
        float(nltk_meteor_score([reference], hypothesis, wordnet=wordnet))
    ]


def test_consecutive_items_sharing_references_score_as_with_copies(wordnet: WordNetCorpusReader) -> None:
    # scoring runs hand the replies of one context the same reference token lists, one after the other;
    # what is kept for them between items must not leak into the next context's replies
    rng = random.Random(29)
    vocabulary = ["i", "am", "fine", "the", "car", "auto", "film", "movie", "running", "ran", ".", ","]
    hypotheses, shared, copied = [], [], []
    for _ in range(40):  # 40 contexts x 3 systems
        references = [random_sentence(rng, vocabulary, low=1) for _ in range(rng.randint(0, 3))]
        for _ in range(3):
            hypotheses.append(random_sentence(rng, vocabulary))
            shared.append(references)
            copied.append([list(reference) for reference in references])
    assert sentence_bleu_best_batch(hypotheses, shared, [1, 2, 4]) == sentence_bleu_best_batch(
        hypotheses, copied, [1, 2, 4]
    )
    assert rouge_l_batch(hypotheses, shared) == rouge_l_batch(hypotheses, copied)
    assert meteor_batch(hypotheses, shared) == meteor_batch(hypotheses, copied)
    assert meteor_batch(hypotheses, shared) == [
        max((float(nltk_meteor_score([ref], hyp, wordnet=wordnet)) for ref in refs), default=0.0)
        for hyp, refs in zip(hypotheses, shared, strict=True)
    ]
