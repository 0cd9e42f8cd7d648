"""METEOR (Banerjee & Lavie, 2005) equals nltk's meteor_score on the same tokens, through the metric tester
(:mod:`tests.scoring.metric_tester`); it uses WordNet, and refuses to run without it."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import pytest

NLTK_DATA = Path(__file__).resolve().parents[2] / "var" / "nltk_data"
# Before nltk is first imported: nltk reads NLTK_DATA only then (the module under test reads it per call).
os.environ.setdefault("NLTK_DATA", str(NLTK_DATA))

from nltk.corpus.reader.wordnet import WordNetCorpusReader  # noqa: E402

from scoring.metrics.inputs import MetricInputs  # noqa: E402
from scoring.metrics.meteor import (  # noqa: E402
    MetricDataMissingError,
    load_wordnet,
    meteor,
    meteor_batch,
)
from scoring.metrics.overlap_specs import meteor_version, overlap_specs  # noqa: E402
from scoring.metrics.tokenize import tokenize  # noqa: E402
from tests.scoring.metric_batches import MetricBatch  # noqa: E402
from tests.scoring.metric_tester import MetricTester  # noqa: E402
from tests.scoring.reference_metrics import nltk_meteor as reference_meteor  # noqa: E402
from tests.scoring.reference_metrics import nltk_meteor_reference  # noqa: E402

TOLERANCE = 1e-12


@pytest.fixture(scope="module")
def wordnet() -> WordNetCorpusReader:
    """nltk's reader on the project's corpus, built here independently of the module under test."""
    corpus = NLTK_DATA / "corpora" / "wordnet"
    if not (corpus / "lexnames").is_file():
        pytest.skip(f"METEOR tests need NLTK's WordNet at {corpus}: run `bash scripts/setup.sh` to build it")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "multilingual functions are not available": English only here
        return WordNetCorpusReader(str(corpus), None)


def meteor_tester(
    wordnet: WordNetCorpusReader, *, tokenizer: str = "default", tolerance: float = TOLERANCE
) -> MetricTester:
    return MetricTester(
        "meteor", nltk_meteor_reference(wordnet, tokenizer=tokenizer), tolerance, tokenizer=tokenizer
    )


CASES = {
    "identical": ("i am fine , thanks .", "i am fine , thanks ."),
    "no overlap": ("absolutely", "no way"),
    "reordered": ("thanks , i am fine .", "i am fine , thanks ."),
    "stems": ("she was running to the stations", "she runs to the station"),
    "synonyms": ("my auto is red", "my car is red"),
    "synonyms whose stems differ": ("the film was great", "the movie was great"),
    "repeated tokens": ("no no no no", "no , i said no"),
    "clitics": ("I don't know what you 're talking about", "i do n't know what you mean"),
    "long reply": (
        "well , i think we should leave at ten because the train is always late on sundays",
        "let's leave at ten , the trains are slow on sunday .",
    ),
    "single token": ("yes", "yes , of course ."),
    "empty hypothesis": ("", "hello there"),
}


def test_equals_nltk_meteor_score(wordnet: WordNetCorpusReader) -> None:
    batch = MetricBatch.of([hyp for hyp, _ in CASES.values()], [[ref] for _, ref in CASES.values()])
    meteor_tester(wordnet).check(batch)


def test_equals_nltk_meteor_score_on_random_pairs(wordnet: WordNetCorpusReader) -> None:
    import random

    rng = random.Random(11)
    vocabulary = [
        "the",
        "a",
        "movie",
        "film",
        "car",
        "automobile",
        "big",
        "large",
        "run",
        "running",
        "ran",
        "happy",
        "glad",
        "go",
        "went",
        ",",
        ".",
        "?",
    ]
    hypotheses = [[rng.choice(vocabulary) for _ in range(rng.randint(0, 10))] for _ in range(200)]
    references = [[[rng.choice(vocabulary) for _ in range(rng.randint(1, 10))]] for _ in range(200)]
    batch = MetricBatch.of_tokens(list(zip(hypotheses, references, strict=True)))
    scores = meteor_tester(wordnet, tokenizer="none").check(batch)
    assert sum(score is not None and score > 0 for score in scores) > 100


def test_a_wordnet_synonym_counts_as_a_match(wordnet: WordNetCorpusReader) -> None:
    reference = ["my", "car", "is", "red"]
    synonym = meteor(["my", "auto", "is", "red"], reference)
    miss = meteor(["my", "zebra", "is", "red"], reference)
    assert synonym > miss
    # "auto" aligns with "car" through WordNet, so the reply scores as if it repeated the reference
    assert synonym == pytest.approx(meteor(reference, reference), abs=TOLERANCE)
    assert "car" in {lemma for synset in wordnet.synsets("auto") for lemma in synset.lemma_names()}


def test_synonyms_are_looked_up_on_stems_as_nltk_does(wordnet: WordNetCorpusReader) -> None:
    # nltk replaces words left unmatched by the exact stage with their Porter stems before the synonym
    # stage, so "movie" (stem "movi") finds no synonym although WordNet lists "film" for it.
    reference = ["the", "film", "was", "great"]
    hypothesis = ["the", "movie", "was", "great"]
    assert "film" in {lemma for synset in wordnet.synsets("movie") for lemma in synset.lemma_names()}
    assert meteor(hypothesis, reference) == pytest.approx(meteor(["the", "zebra", "was", "great"], reference))
    assert meteor(hypothesis, reference) == pytest.approx(
        reference_meteor(wordnet, hypothesis, [reference]), abs=TOLERANCE
    )


def test_synonym_matches_take_the_last_free_reference_word_as_nltk_does(wordnet: WordNetCorpusReader) -> None:
    import random

    # Long texts full of WordNet synonyms of one another, repeated: a hypothesis word often has several
    # free reference synonyms (nltk takes the last), and synonym sets are sometimes larger and sometimes
    # smaller than the set of free reference stems (the alignment walks whichever is smaller).
    rng = random.Random(5)
    vocabulary = [
        "car",
        "auto",
        "automobile",
        "machine",
        "motorcar",
        "big",
        "large",
        "great",
        "huge",
        "good",
        "well",
        "right",
        "fine",
        "happy",
        "glad",
        "get",
        "go",
        "make",
        "the",
        ",",
    ]
    hypotheses = [[rng.choice(vocabulary) for _ in range(rng.randint(1, 80))] for _ in range(60)]
    references = [
        [[rng.choice(vocabulary[: rng.randint(2, 20)]) for _ in range(rng.randint(1, 80))]] for _ in range(60)
    ]
    batch = MetricBatch.of_tokens(list(zip(hypotheses, references, strict=True)))
    meteor_tester(wordnet, tokenizer="none", tolerance=0.0).check(batch)  # exactly nltk's value


def test_alignment_work_grows_linearly_on_disjoint_text(wordnet: WordNetCorpusReader) -> None:
    """nltk's guard against quadratic matching (its test_meteor_on_disjoint_text_is_linear_time: 32,000
    disjoint tokens a side within 30 s, CVE-2026-12929), as a count rather than a time: the lines this
    module runs on disjoint text grow with its length, not with its square (the synonym stage once walked
    every free reference word for every hypothesis word: 16 times the lines for 4 times the tokens)."""
    import sys
    from types import FrameType
    from typing import Any

    from scoring.metrics import meteor as meteor_module

    def lines_run(size: int) -> int:
        hypothesis = [f"h{i}" for i in range(size)]
        reference = [f"r{i}" for i in range(size)]
        assert meteor(hypothesis, reference) == 0.0  # fills the caches: the counted run reads them
        count = 0

        def trace_line(frame: FrameType, event: str, arg: Any) -> Any:
            nonlocal count
            count += event == "line"
            return trace_line

        def trace_call(frame: FrameType, event: str, arg: Any) -> Any:
            return trace_line if frame.f_code.co_filename == meteor_module.__file__ else None

        previous = sys.gettrace()
        sys.settrace(trace_call)
        try:
            meteor(hypothesis, reference)
        finally:
            sys.settrace(previous)
        return count

    small, large = lines_run(250), lines_run(1000)
    assert small > 0
    assert large < 6 * small, (small, large)


def test_batch_takes_the_closest_reference(wordnet: WordNetCorpusReader) -> None:
    hypotheses = [
        "i would love to , but it may rain .",
        "sure , where to ?",
        "no .",
        "the train leaves at ten .",
    ]
    references = [
        ["sure , where do you want to go ?", "i would love to but it might rain on saturday ."],
        ["sure , where do you want to go ?", "no , i am busy ."],
        ["i can not , sorry .", "no way .", "never ."],
        ["it leaves at ten thirty ."],
    ]
    # nltk's multi-reference meteor_score is the maximum over the references (Gupta et al., 2019, eq. 1)
    scores = meteor_tester(wordnet).check(MetricBatch.of(hypotheses, references))
    hyp_tokens = [tokenize(text) for text in hypotheses]
    ref_tokens = [[tokenize(text) for text in refs] for refs in references]
    for hyp, refs, score in zip(hyp_tokens, ref_tokens, scores, strict=True):
        assert score == pytest.approx(max(meteor(hyp, ref) for ref in refs), abs=TOLERANCE)
    assert (scores[0] or 0.0) > meteor(hyp_tokens[0], ref_tokens[0][0])  # the second reference is closer


def test_items_without_references_score_zero(wordnet: WordNetCorpusReader) -> None:
    assert meteor_batch([["hello"], ["hi"]], [[["hello"]], []]) == [
        pytest.approx(meteor(["hello"], ["hello"])),
        0.0,
    ]


def test_batch_rejects_mismatched_lengths(wordnet: WordNetCorpusReader) -> None:
    with pytest.raises(ValueError, match="reference lists"):
        meteor_batch([["a"]], [])


def test_wordnet_is_loaded_once(wordnet: WordNetCorpusReader) -> None:
    assert load_wordnet() is load_wordnet()
    assert load_wordnet([str(NLTK_DATA)]) is load_wordnet([str(NLTK_DATA)])


def test_missing_wordnet_is_a_clear_error_not_a_zero(tmp_path: Path) -> None:
    with pytest.raises(MetricDataMissingError) as raised:
        meteor_batch([["hello"]], [[["hello"]]], search_paths=[str(tmp_path)])
    message = str(raised.value)
    assert "corpora/wordnet" in message
    assert str(tmp_path) in message
    assert "scripts/setup.sh" in message
    assert "wordnet-base" in message
    assert isinstance(raised.value, RuntimeError)
    # even a batch with nothing to compare checks the data first
    with pytest.raises(MetricDataMissingError):
        meteor_batch([["hello"]], [[]], search_paths=[str(tmp_path)])
    with pytest.raises(MetricDataMissingError):
        meteor(["hello"], ["hello"], search_paths=[str(tmp_path)])


def test_a_broken_wordnet_folder_is_a_clear_error(tmp_path: Path) -> None:
    corpus = tmp_path / "corpora" / "wordnet"
    corpus.mkdir(parents=True)
    (corpus / "data.noun").write_text("not wordnet\n")
    with pytest.raises(MetricDataMissingError, match="cannot be read") as raised:
        load_wordnet([str(tmp_path)])
    assert "scripts/setup.sh" in str(raised.value)


def test_a_failed_check_is_not_cached(tmp_path: Path, wordnet: WordNetCorpusReader) -> None:
    with pytest.raises(MetricDataMissingError):
        load_wordnet([str(tmp_path)])
    (tmp_path / "corpora").mkdir()
    (tmp_path / "corpora" / "wordnet").symlink_to(NLTK_DATA / "corpora" / "wordnet")
    assert meteor(["the", "movie"], ["the", "film"], search_paths=[str(tmp_path)]) == pytest.approx(
        reference_meteor(wordnet, ["the", "movie"], [["the", "film"]]), abs=TOLERANCE
    )


def test_spec_tokenizes_and_records_the_nltk_version(wordnet: WordNetCorpusReader) -> None:
    import nltk

    meteor_spec = next(spec for spec in overlap_specs() if spec.name == "meteor")
    assert meteor_spec.needs_references is True
    assert meteor_spec.parameters == {"refagg": "max"}
    assert meteor_spec.version == meteor_version()
    assert meteor_spec.version.endswith(f"+nltk-{nltk.__version__}")
    assert "Lavie and Agarwal, 2007" in meteor_spec.description
    hypotheses = ["The film was GREAT !", "no idea"]
    references = [["the movie was great .", "bad"], ["I have no idea at all"]]
    scores = meteor_tester(wordnet).check(MetricBatch.of(hypotheses, references))
    assert scores == meteor_spec.compute(
        MetricInputs(hypotheses, references, ["", ""], "en"), {"refagg": "max"}
    )
    with pytest.raises(ValueError, match="reference aggregation"):
        meteor_spec.compute(MetricInputs(hypotheses, references, ["", ""], "en"), {"refagg": "nltk"})
