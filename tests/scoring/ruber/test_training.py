"""A tiny RUBER training run on synthetic topic pairs: s_U learns, the artifact round-trips and is hashed."""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path

import pytest

from scoring.metrics.ruber.artifact import (
    HASH_FILE,
    WEIGHTS_FILE,
    ArtifactError,
    artifact_hash,
    clear_ruber_cache,
    load_ruber,
)
from scoring.metrics.ruber.corpus import CorpusError, QueryReplyPair
from scoring.metrics.ruber.ranking import ranking_accuracy, ranking_triples
from scoring.metrics.ruber.training import RuberArtifact, RuberConfig, train_ruber
from scoring.metrics.ruber.word2vec import Word2VecConfig

TOPICS = 6
FILLER = ["the", "a", "is", "it", "so", "and", "very", "then"]


def topic_pairs(count: int, seed: int) -> list[QueryReplyPair]:
    """A query of topic k uses words qk_*, its reply words rk_*, both mixed with shared filler words:
    only an association learned from the pairs tells which reply belongs to a query."""
    generator = random.Random(seed)
    pairs = []
    for _ in range(count):
        topic = generator.randrange(TOPICS)
        query = [f"q{topic}x{generator.randrange(4)}" for _ in range(4)] + generator.sample(FILLER, 2)
        reply = [f"r{topic}x{generator.randrange(4)}" for _ in range(4)] + generator.sample(FILLER, 2)
        generator.shuffle(query)
        generator.shuffle(reply)
        pairs.append(QueryReplyPair(" ".join(query), " ".join(reply)))
    return pairs


CONFIG = RuberConfig(
    word2vec=Word2VecConfig(dimension=16, min_count=1, epochs=5),
    hidden_size=32,
    mlp_hidden=16,
    batch_size=16,
    learning_rate=3e-3,
    epochs=6,
    patience=3,
    seed=7,
    device="cpu",
    corpus_description="synthetic topic pairs",
)


@pytest.fixture(scope="module")
def artifact(tmp_path_factory: pytest.TempPathFactory) -> RuberArtifact:
    return train_ruber(
        topic_pairs(400, seed=1),
        topic_pairs(60, seed=2),
        config=CONFIG,
        output_dir=tmp_path_factory.mktemp("ruber"),
        progress=False,
    )


def test_trained_scorer_ranks_true_replies_above_random_ones(artifact: RuberArtifact) -> None:
    model = load_ruber(artifact.path)
    triples = ranking_triples(topic_pairs(200, seed=3), seed=4)
    # A random reply shares the topic 1 time in 6 and ties count as failures, so chance is about
    # 5/6 * 1/2 = 0.42 and a perfect scorer about 0.83; this seeded run reaches 0.74 (torch 2.13.0).
    assert ranking_accuracy(model.unreferenced, triples) > 0.6
    scores = model.unreferenced(["q0x1 the"], ["r0x1 a"])
    assert 0.0 < scores[0] < 1.0


def test_artifact_files_and_curve(artifact: RuberArtifact) -> None:
    names = {path.name for path in artifact.path.iterdir()}
    expected = {"config.json", "vocabulary.json", "word2vec.npy", "unreferenced.pt", "training_curve.json"}
    assert expected | {"hash.txt", "timings.json"} == names
    config = json.loads((artifact.path / "config.json").read_text())
    assert config["hidden_size"] == 32
    assert config["word2vec"]["dimension"] == 16
    assert config["seed"] == 7
    assert config["corpus"]["training_pairs"] == 400
    assert "torch" in config["versions"]
    assert 1 <= len(artifact.curve) <= CONFIG.epochs
    assert {"train_loss", "validation_accuracy", "validation_loss"} <= set(artifact.curve[0])
    assert (artifact.path / HASH_FILE).read_text().strip() == artifact.content_hash


def test_save_load_round_trip_gives_identical_scores_and_hash(artifact: RuberArtifact) -> None:
    clear_ruber_cache()
    first = load_ruber(artifact.path)
    assert load_ruber(artifact.path) is first  # cached per process
    queries = ["q1x0 the q1x2", "q3x1 so", "nothing known here"]
    replies = ["r1x0 a r1x3", "r2x2 is", ""]
    references = [["r1x1 r1x0", "r4x0"], ["r3x3"], ["unknown"]]
    expected = (
        first.unreferenced(queries, replies),
        first.referenced(replies, references),
        first.vector_pool_unreferenced(queries, replies),
    )
    clear_ruber_cache()
    second = load_ruber(artifact.path)
    assert second is not first
    assert second.artifact_hash == first.artifact_hash == artifact.content_hash
    assert (
        second.unreferenced(queries, replies),
        second.referenced(replies, references),
        second.vector_pool_unreferenced(queries, replies),
    ) == expected
    # the third item has no known word: s_R and the vector pool have no score, s_U does
    assert expected[1][2] is None
    assert expected[2][2] is None
    assert expected[1][0] is not None
    assert 0.0 < expected[0][2] < 1.0


def test_hash_changes_when_a_weight_changes(artifact: RuberArtifact, tmp_path: Path) -> None:
    import shutil

    import torch

    copy = tmp_path / "copy"
    shutil.copytree(artifact.path, copy)
    assert artifact_hash(copy) == artifact.content_hash
    state = torch.load(copy / WEIGHTS_FILE, weights_only=True)
    state["quadratic"][0, 0] += 1e-3
    torch.save(state, copy / WEIGHTS_FILE)
    assert artifact_hash(copy) != artifact.content_hash
    with pytest.raises(ArtifactError, match="do not match"):
        load_ruber(copy)


def test_training_is_deterministic_for_a_seed(tmp_path: Path) -> None:
    config = dataclasses.replace(CONFIG, epochs=1)
    hashes = [
        train_ruber(
            topic_pairs(100, seed=1),
            topic_pairs(20, seed=2),
            config=config,
            output_dir=tmp_path / str(run),
            progress=False,
        ).content_hash
        for run in range(2)
    ]
    assert hashes[0] == hashes[1]


def test_training_refuses_too_few_pairs(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="at least 2"):
        train_ruber(topic_pairs(1, seed=1), topic_pairs(5, seed=2), config=CONFIG, output_dir=tmp_path)
