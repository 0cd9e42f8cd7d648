"""Tiny BERT-RUBER training runs on synthetic topic pairs (Ghazarian et al., 2019, sections 2.1 and 4.3): the scorers
learn, all 12 cells train and score, the artifact round-trips, is hashed and checks its encoder."""

from __future__ import annotations

import dataclasses
import json
import random
import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

from scoring.metrics.bert_ruber.artifact import (
    BertRuberArtifact,
    BertRuberArtifactError,
    EncoderMismatchError,
    bert_ruber_artifact_hash,
    cell_weights_file,
    clear_bert_ruber_cache,
    load_bert_ruber,
)
from scoring.metrics.bert_ruber.cells import ALL_CELLS
from scoring.metrics.bert_ruber.training import BertRuberConfig, train_bert_ruber
from scoring.metrics.ruber.artifact import ArtifactError
from scoring.metrics.ruber.corpus import CorpusError, QueryReplyPair
from scoring.metrics.ruber.ranking import ranking_accuracy, ranking_triples
from scoring.metrics.ruber.word2vec import Word2VecConfig

pytest.importorskip("transformers")
from scoring.metrics.contextual_encoder import ContextualEncoder, minilm_encoder
from tests.waiting import TRAINING_FIXTURE_TIMEOUT, watched_training

# The module's model trains in a fixture, which may take past 300 s on a loaded machine: the training is watched
# for progress (tests/waiting.py), and pytest-timeout's limit counts each test's body only.
pytestmark = TRAINING_FIXTURE_TIMEOUT

# Query words and reply words of a topic differ: only an association learned from the pairs (or
# the encoder's sense of relatedness) tells which reply belongs to a query.
TOPICS = {
    "food": ("hungry dinner lunch restaurant eat cook", "pizza pasta salad soup noodles sandwich"),
    "weather": ("weather outside forecast cold sunny umbrella", "rain snow storm clouds wind degrees"),
    "sport": ("game match team play score watch", "football tennis goal coach players stadium"),
    "travel": ("trip vacation flight holiday visit travel", "paris beach hotel airport passport luggage"),
    "music": ("song concert band listen album sing", "guitar piano jazz drums melody rock"),
    "work": ("job office boss meeting salary work", "project deadline report manager promotion contract"),
}
FILLER = ["i", "you", "the", "a", "is", "it", "so", "and", "very", "then", "do", "we"]


def topic_pairs(count: int, seed: int) -> list[QueryReplyPair]:
    generator = random.Random(seed)
    pairs = []
    for _ in range(count):
        query_words, reply_words = TOPICS[generator.choice(sorted(TOPICS))]
        query = generator.sample(query_words.split(), 3) + generator.sample(FILLER, 3)
        reply = generator.sample(reply_words.split(), 3) + generator.sample(FILLER, 3)
        generator.shuffle(query)
        generator.shuffle(reply)
        pairs.append(QueryReplyPair(" ".join(query), " ".join(reply)))
    return pairs


# Small GRUs, many word2vec epochs (a 300-pair corpus), one torch thread (the test machine is shared;
# see BertRuberConfig.torch_threads).
LEARNING_CONFIG = BertRuberConfig(
    cells=("bert-max-ce", "word2vec-rnn-ranking"),
    word2vec=Word2VecConfig(dimension=32, min_count=1, epochs=50),
    rnn_hidden=32,
    learning_rate=3e-3,
    batch_size=32,
    epochs=5,
    patience=3,
    seed=3,
    device="cpu",
    torch_threads=1,
    corpus_description="synthetic topic pairs",
)


class RenamedHashEncoder:
    """MiniLM's vectors under another content hash: what a different or altered encoder looks like."""

    def __init__(self, inner: ContextualEncoder) -> None:
        self.inner = inner
        self.name = "minilm-altered"
        self.dimension = inner.dimension
        self.language = inner.language
        self.content_hash = "f" * 64

    def encode_tokens(self, sentences: Sequence[str]) -> list[NDArray[np.float32]]:
        return self.inner.encode_tokens(sentences)


@pytest.fixture(scope="module")
def encoder() -> ContextualEncoder:
    return minilm_encoder(device="cpu")


@pytest.fixture(scope="module")
def learned(tmp_path_factory: pytest.TempPathFactory, encoder: ContextualEncoder) -> BertRuberArtifact:
    with watched_training("BERT-RUBER on 300 topic pairs") as on_progress:
        return train_bert_ruber(
            topic_pairs(300, seed=1),
            topic_pairs(60, seed=2),
            config=LEARNING_CONFIG,
            output_dir=tmp_path_factory.mktemp("learned"),
            encoder=encoder,
            progress=False,
            on_progress=on_progress,
        )


@pytest.fixture(scope="module")
def every_cell(tmp_path_factory: pytest.TempPathFactory, encoder: ContextualEncoder) -> BertRuberArtifact:
    """All 12 cells, one epoch each, with the paper's sizes (GRU 2 x 128, MLP 256-512-128)."""
    config = BertRuberConfig(epochs=1, batch_size=32, seed=5, device="cpu", torch_threads=1)
    with watched_training("BERT-RUBER, all 12 cells") as on_progress:
        return train_bert_ruber(
            topic_pairs(64, seed=11),
            topic_pairs(16, seed=12),
            config=config,
            output_dir=tmp_path_factory.mktemp("every_cell"),
            encoder=encoder,
            progress=False,
            on_progress=on_progress,
        )


@pytest.mark.parametrize("cell", ["bert-max-ce", "word2vec-rnn-ranking"])
def test_trained_cells_rank_true_replies_above_random_ones(
    learned: BertRuberArtifact, encoder: ContextualEncoder, cell: str
) -> None:
    model = load_bert_ruber(learned.path, device="cpu", encoder=encoder)
    triples = ranking_triples(topic_pairs(120, seed=3), seed=4)

    def score(queries: Sequence[str], replies: Sequence[str]) -> list[float]:
        return model.unreferenced(queries, replies, cell=cell)

    # A random reply shares the topic 1 time in 6, so chance is about 0.5 and a perfect scorer about
    # 0.92; these seeded runs reach about 0.9 (torch 2.13.0).
    assert ranking_accuracy(score, triples) > 0.75


def test_every_cell_trains_and_scores_in_the_unit_interval(
    every_cell: BertRuberArtifact, encoder: ContextualEncoder
) -> None:
    model = load_bert_ruber(every_cell.path, device="cpu", encoder=encoder)
    assert model.cells == ALL_CELLS
    queries = ["are you hungry for dinner", "what is the weather like", "nothing known here", ""]
    replies = ["pizza and salad", "", "zzz qqq", "rain"]
    for cell in ALL_CELLS:
        scores = model.unreferenced(queries, replies, cell=cell)
        assert len(scores) == 4
        assert all(0.0 <= score <= 1.0 for score in scores), (cell, scores)
        assert len(every_cell.curve[cell]) == 1
    assert model.unreferenced([], []) == []


def test_artifact_files_config_and_curve(every_cell: BertRuberArtifact, encoder: ContextualEncoder) -> None:
    path = every_cell.path
    names = {p.relative_to(path).as_posix() for p in path.rglob("*") if p.is_file()}
    expected = {
        "config.json",
        "vocabulary.json",
        "word2vec.npy",
        "training_curve.json",
        "timings.json",
        "hash.txt",
    }
    assert names == expected | {cell_weights_file(cell) for cell in ALL_CELLS}
    config = json.loads((path / "config.json").read_text())
    assert config["cells"] == list(ALL_CELLS)
    assert config["encoder"] == {
        "name": encoder.name,
        "content_hash": encoder.content_hash,
        "dimension": 384,
        "language": "en",
    }
    assert (config["mlp_hidden"], config["rnn_hidden"], config["rnn_layers"]) == ([256, 512, 128], 128, 2)
    assert config["corpus"]["training_pairs"] == 64
    assert len(config["corpus"]["training_sha256"]) == 64
    assert "torch" in config["versions"]
    assert "device" not in config
    assert set(config["results"]) == set(ALL_CELLS)
    row = every_cell.curve["bert-max-ce"][0]
    assert {"epoch", "train_loss", "validation_accuracy", "validation_loss", "learning_rate"} <= set(row)
    assert config["results"]["bert-max-ce"]["validation_accuracy"] == row["validation_accuracy"]
    timings = json.loads((path / "timings.json").read_text())
    assert set(timings["cells"]) == set(ALL_CELLS)
    assert timings["bert_inputs_seconds"] >= 0
    assert (path / "hash.txt").read_text().strip() == every_cell.content_hash


def test_save_load_round_trip_gives_identical_scores_and_hash(
    learned: BertRuberArtifact, encoder: ContextualEncoder
) -> None:
    clear_bert_ruber_cache()
    first = load_bert_ruber(learned.path, device="cpu", encoder=encoder)
    assert load_bert_ruber(learned.path, device="cpu", encoder=encoder) is first  # cached per process
    queries = ["are you hungry", "what a storm outside", "are you hungry"]
    replies = ["soup and noodles", "the football coach", "pizza"]
    expected = {cell: first.unreferenced(queries, replies, cell=cell) for cell in first.cells}
    clear_bert_ruber_cache()
    second = load_bert_ruber(learned.path, device="cpu", encoder=encoder)
    assert second is not first
    assert second.content_hash == first.content_hash == learned.content_hash
    assert {cell: second.unreferenced(queries, replies, cell=cell) for cell in second.cells} == expected
    assert second.cells == ("word2vec-rnn-ranking", "bert-max-ce")
    assert second.language == "en"
    assert "hungry" in second.vectors
    assert second.config["seed"] == 3
    # batching does not change a score: the same pair alone scores the same as in the batch
    alone = second.unreferenced(queries[:1], replies[:1], cell="bert-max-ce")
    assert alone[0] == pytest.approx(expected["bert-max-ce"][0], abs=1e-6)


def test_a_cell_that_was_not_trained_is_refused_by_name(
    learned: BertRuberArtifact, encoder: ContextualEncoder
) -> None:
    model = load_bert_ruber(learned.path, device="cpu", encoder=encoder)
    with pytest.raises(
        ValueError, match=r"'bert-mean-ce' is not trained .*trained: word2vec-rnn-ranking, bert-max-ce"
    ):
        model.unreferenced(["hi"], ["hello"], cell="bert-mean-ce")
    with pytest.raises(ValueError, match="unknown representation"):
        model.unreferenced(["hi"], ["hello"], cell="bert-sum-ce")


def test_a_tampered_weight_fails_the_hash_check(learned: BertRuberArtifact, tmp_path: Path) -> None:
    import torch

    copy = tmp_path / "copy"
    shutil.copytree(learned.path, copy)
    assert bert_ruber_artifact_hash(copy) == learned.content_hash
    weights = copy / cell_weights_file("bert-max-ce")
    state = torch.load(weights, weights_only=True)
    state["quadratic"][0, 0] += 1e-3
    torch.save(state, weights)
    assert bert_ruber_artifact_hash(copy) != learned.content_hash
    with pytest.raises(BertRuberArtifactError, match=r"do not match hash\.txt"):
        load_bert_ruber(copy, device="cpu")
    weights.unlink()
    with pytest.raises(ArtifactError, match=r"missing cells/bert-max-ce\.pt"):
        load_bert_ruber(copy, device="cpu")


def test_an_encoder_with_another_content_hash_is_refused(
    learned: BertRuberArtifact, encoder: ContextualEncoder
) -> None:
    other = RenamedHashEncoder(encoder)
    with pytest.raises(EncoderMismatchError) as caught:
        load_bert_ruber(learned.path, device="cpu", encoder=other)
    assert encoder.content_hash in str(caught.value)
    assert "f" * 64 in str(caught.value)


def test_training_is_deterministic_for_a_seed(tmp_path: Path) -> None:
    config = dataclasses.replace(LEARNING_CONFIG, cells=("word2vec-max-ce",), epochs=1)
    hashes = [
        train_bert_ruber(
            topic_pairs(60, seed=1),
            topic_pairs(20, seed=2),
            config=config,
            output_dir=tmp_path / str(run),
            progress=False,
        ).content_hash
        for run in range(2)
    ]
    assert hashes[0] == hashes[1]
    assert json.loads((tmp_path / "0" / "config.json").read_text())["encoder"] is None


def test_bert_cells_refuse_a_chinese_corpus(tmp_path: Path) -> None:
    config = dataclasses.replace(LEARNING_CONFIG, language="zh")
    with pytest.raises(ValueError, match=r"bert-max-ce.*English.*'zh'"):
        train_bert_ruber(topic_pairs(20, 1), topic_pairs(5, 2), config=config, output_dir=tmp_path)


def test_training_refuses_too_few_pairs(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="at least 2"):
        train_bert_ruber(topic_pairs(1, 1), topic_pairs(5, 2), config=LEARNING_CONFIG, output_dir=tmp_path)


def test_training_reports_the_word2vec_stage_then_its_epochs(tmp_path: Path) -> None:
    """``on_progress`` hears the word2vec stage start, each of word2vec's epochs (step i of n), then the
    cells' batches and epochs (what the training job's page shows)."""
    from scoring.metrics.training_progress import EPOCH_STAGE, WORD2VEC_STAGE, TrainingReport

    reports: list[TrainingReport] = []
    config = dataclasses.replace(LEARNING_CONFIG, cells=("word2vec-max-ce",), epochs=1)
    train_bert_ruber(
        topic_pairs(60, seed=1),
        topic_pairs(20, seed=2),
        config=config,
        output_dir=tmp_path,
        progress=False,
        on_progress=reports.append,
    )
    stages = [report.stage for report in reports]
    word2vec = [report for report in reports if report.stage == WORD2VEC_STAGE]
    assert word2vec[0].step == 0  # the start, before any epoch
    assert word2vec[0].cells == 1
    assert [report.step for report in word2vec[1:]] == list(range(1, config.word2vec.epochs + 1))
    assert {report.steps for report in word2vec[1:]} == {config.word2vec.epochs}
    assert stages.index(EPOCH_STAGE) > stages.index(WORD2VEC_STAGE)
