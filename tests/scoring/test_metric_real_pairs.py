"""On 2,000 real DailyDialog pairs the project's BLEU, ROUGE-L, METEOR and tokenizer give exactly the values of
nltk, rouge-score and the slow tokenizer path (faster, with identical values). Skipped, saying so,
when ../shared/data is not in this checkout."""

from __future__ import annotations

import functools
import os
import re
import warnings
from pathlib import Path

import pytest

NLTK_DATA = Path(__file__).resolve().parents[2] / "var" / "nltk_data"
os.environ.setdefault("NLTK_DATA", str(NLTK_DATA))  # before nltk is first imported

from nltk.corpus.reader.wordnet import WordNetCorpusReader  # noqa: E402
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu  # noqa: E402
from nltk.translate.meteor_score import meteor_score  # noqa: E402
from rouge_score import rouge_scorer  # noqa: E402

from scoring.metrics import tokenize as tokenize_module  # noqa: E402
from scoring.metrics.meteor import meteor_caches_clear  # noqa: E402
from scoring.metrics.registry import compute_metrics  # noqa: E402
from scoring.metrics.ruber.corpus import dailydialog_pairs  # noqa: E402
from scoring.metrics.tokenize import tokenize  # noqa: E402

PAIRS = 2000
# en-v1 as first written: the plain pattern (the module now uses a faster equivalent and an ASCII shortcut)
PLAIN_EN_TOKEN = re.compile(r"\w+(?:'\w+)*|'(?:s|re|ve|ll|d|m|t)\b|[^\w\s]+")
BLEU = ["bleu-1", "bleu-2", "bleu-3", "bleu-4"]


Pairs = tuple[list[str], list[list[str]], list[str]]


@pytest.fixture
def pairs(shared_data: Path) -> Pairs:
    """(hypotheses, references, queries): each test pair's reply is scored against another pair's reply."""
    path = shared_data / "dailydialog" / "test" / "dialogues_test.txt"
    if not path.is_file():
        pytest.skip(f"real-data check skipped: {path} is missing")
    return _read_pairs(path)


@functools.cache
def _read_pairs(path: Path) -> Pairs:
    found = dailydialog_pairs(path.read_text(encoding="utf-8").splitlines())[:PAIRS]
    replies = [pair.reply for pair in found]
    hypotheses = [replies[(index * 7 + 3) % len(replies)] for index in range(len(replies))]
    return hypotheses, [[reply] for reply in replies], [pair.query for pair in found]


def test_the_tokenizer_shortcut_changes_no_token(pairs: Pairs) -> None:
    hypotheses, references, queries = pairs
    texts = hypotheses + [refs[0] for refs in references] + queries
    assert sum(text.isascii() for text in texts) > len(texts) // 2  # the shortcut is exercised
    for text in texts:
        normalised = (
            text.translate(tokenize_module._QUOTES).lower().translate(tokenize_module._EN_PUNCTUATION)
        )
        assert tokenize(text) == PLAIN_EN_TOKEN.findall(normalised), text


def test_bleu_equals_nltk_exactly(pairs: Pairs) -> None:
    hypotheses, references, queries = pairs
    ours = compute_metrics(BLEU, hypotheses, references, queries, "en")
    alone = compute_metrics(["bleu-4"], hypotheses, references, queries, "en")["bleu-4"]
    smooth = SmoothingFunction().method1
    for index, (hypothesis, refs) in enumerate(zip(hypotheses, references, strict=True)):
        tokens, ref_tokens = tokenize(hypothesis), [tokenize(ref) for ref in refs]
        for n, name in enumerate(BLEU, start=1):
            expected = sentence_bleu(ref_tokens, tokens, weights=(1.0 / n,) * n, smoothing_function=smooth)
            assert ours[name][index] == expected, (name, hypothesis, refs)
        assert alone[index] == ours["bleu-4"][index]
    assert sum((value or 0.0) > 0.05 for value in ours["bleu-2"]) > 50  # real matches, not smoothed zeros


def test_rouge_l_equals_rouge_score_given_the_same_tokens(pairs: Pairs) -> None:
    class Whitespace:
        def tokenize(self, text: str) -> list[str]:
            return text.split()

    hypotheses, references, queries = pairs
    ours = compute_metrics(["rouge-l"], hypotheses, references, queries, "en")["rouge-l"]
    scorer = rouge_scorer.RougeScorer(["rougeL"], tokenizer=Whitespace())
    for hypothesis, refs, score in zip(hypotheses, references, ours, strict=True):
        expected = scorer.score(" ".join(tokenize(refs[0])), " ".join(tokenize(hypothesis)))[
            "rougeL"
        ].fmeasure
        assert score == expected, (hypothesis, refs)


def test_meteor_equals_nltk_exactly_with_fresh_and_with_filled_caches(pairs: Pairs) -> None:
    corpus = NLTK_DATA / "corpora" / "wordnet"
    if not (corpus / "lexnames").is_file():
        pytest.skip(f"METEOR needs NLTK's WordNet at {corpus}: run `bash scripts/setup.sh` to build it")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wordnet = WordNetCorpusReader(str(corpus), None)  # nltk's own reader, not the project's
    hypotheses, references, queries = pairs
    expected = [
        float(meteor_score([tokenize(ref) for ref in refs], tokenize(hypothesis), wordnet=wordnet))
        for hypothesis, refs in zip(hypotheses, references, strict=True)
    ]
    meteor_caches_clear()
    assert compute_metrics(["meteor"], hypotheses, references, queries, "en")["meteor"] == expected
    assert compute_metrics(["meteor"], hypotheses, references, queries, "en")["meteor"] == expected
    assert sum(value > 0.1 for value in expected) > 500  # real alignments, not only empty ones
