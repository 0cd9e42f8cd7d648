"""A tiny RUBER training run on synthetic topic pairs: s_U learns (with in-batch and with separately
drawn random negatives), the artifact round-trips and is hashed; length-bucketed batches and
length-sorted scoring keep every item and its order."""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path
from typing import Any

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
from scoring.metrics.ruber.training import (
    RANDOM,
    RuberArtifact,
    RuberConfig,
    length_bucketed_batches,
    train_ruber,
)
from scoring.metrics.ruber.word2vec import Word2VecConfig
from tests.waiting import TRAINING_FIXTURE_TIMEOUT, watched_training

# The module's model trains in a fixture, which may take past 300 s on a loaded machine: the training is watched
# for progress (tests/waiting.py), and pytest-timeout's limit counts each test's body only.
pytestmark = TRAINING_FIXTURE_TIMEOUT

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
    with watched_training("RUBER on 400 topic pairs") as on_progress:
        return train_ruber(
            topic_pairs(400, seed=1),
            topic_pairs(60, seed=2),
            config=CONFIG,
            output_dir=tmp_path_factory.mktemp("ruber"),
            progress=False,
            on_progress=on_progress,
        )


def gradient(parameter: Any) -> Any:
    assert parameter.grad is not None
    return parameter.grad.clone()


def test_trained_scorer_ranks_true_replies_above_random_ones(artifact: RuberArtifact) -> None:
    model = load_ruber(artifact.path)
    triples = ranking_triples(topic_pairs(200, seed=3), seed=4)
    # A random reply shares the topic 1 time in 6 and ties count as failures, so chance is about
    # 5/6 * 1/2 = 0.42 and a scorer that only knows topics about 0.83 (it may also order same-topic
    # replies by their words); this seeded run reaches 0.845 with in-batch negatives (torch 2.13.0).
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


def test_random_negatives_drawn_outside_the_batch_also_train(tmp_path: Path) -> None:
    artifact = train_ruber(
        topic_pairs(400, seed=1),
        topic_pairs(60, seed=2),
        config=dataclasses.replace(CONFIG, negatives=RANDOM),
        output_dir=tmp_path,
        progress=False,
    )
    assert artifact.config["negatives"] == "random"
    triples = ranking_triples(topic_pairs(200, seed=3), seed=4)
    assert ranking_accuracy(load_ruber(artifact.path).unreferenced, triples) > 0.6


def test_length_bucketed_batches_keep_every_index_once_and_cut_padding() -> None:
    lengths = [random.Random(index).randint(1, 40) for index in range(1000)]

    def padding(batches: list[list[int]]) -> int:
        return sum(
            max(lengths[i] for i in batch) * len(batch) - sum(lengths[i] for i in batch) for batch in batches
        )

    generator = random.Random(0)
    first = length_bucketed_batches(lengths, batch_size=32, chunk_batches=10, generator=generator)
    second = length_bucketed_batches(lengths, batch_size=32, chunk_batches=10, generator=generator)
    for batches in (first, second):
        assert sorted(index for batch in batches for index in batch) == list(range(1000))
        assert all(2 <= len(batch) <= 32 for batch in batches)
    assert first != second  # a new order every epoch
    again = length_bucketed_batches(lengths, batch_size=32, chunk_batches=10, generator=random.Random(0))
    assert again == first  # seeded
    unsorted = length_bucketed_batches(lengths, batch_size=32, chunk_batches=1, generator=random.Random(0))
    assert padding(first) < 0.2 * padding(unsorted)
    # the batches are shuffled: not in length order
    means = [sum(lengths[i] for i in batch) / len(batch) for batch in first]
    assert means != sorted(means)


def test_length_bucketed_batches_never_leave_a_pair_alone() -> None:
    batches = length_bucketed_batches([3] * 33, batch_size=16, chunk_batches=50, generator=random.Random(1))
    assert sorted(len(batch) for batch in batches) == [16, 17]
    assert length_bucketed_batches([1, 2], batch_size=1, chunk_batches=1, generator=random.Random(1)) in (
        [[0, 1]],
        [[1, 0]],
    )


def test_in_batch_negatives_need_batches_of_two(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="batch_size"):
        train_ruber(
            topic_pairs(20, seed=1),
            topic_pairs(5, seed=2),
            config=dataclasses.replace(CONFIG, batch_size=1),
            output_dir=tmp_path,
        )


def test_scores_in_length_sorted_batches_come_back_in_the_callers_order(artifact: RuberArtifact) -> None:
    model = load_ruber(artifact.path)
    generator = random.Random(5)
    words = ["q1x0", "q2x3", "the", "r1x2", "r4x1", "so", "unknownword"]
    queries = [" ".join(generator.choices(words, k=generator.randint(0, 12))) for _ in range(40)]
    replies = [" ".join(generator.choices(words, k=generator.randint(0, 12))) for _ in range(40)]
    together = model.unreferenced(queries, replies)
    alone = [model.unreferenced([query], [reply])[0] for query, reply in zip(queries, replies, strict=True)]
    assert together == pytest.approx(alone, abs=1e-6)
    assert len(set(together)) > 10


def test_cpu_grouped_bi_gru_matches_torchs_packed_bi_gru() -> None:
    """The CPU encoder (one direction at a time over padded groups) against nn.GRU on packed sequences:
    the same last states and the same gradients."""
    import torch
    from torch.nn.utils.rnn import pack_padded_sequence

    from scoring.metrics.ruber.unreferenced_model import GROUP_ROWS, UnreferencedScorer, pad_all

    torch.manual_seed(0)
    model = UnreferencedScorer(vocabulary_size=50, embedding_dim=8, hidden_size=6, mlp_hidden=4)
    generator = random.Random(0)
    sequences = [[generator.randrange(1, 52) for _ in range(generator.randint(1, 15))] for _ in range(150)]
    assert len(sequences) > 2 * GROUP_ROWS  # several groups, of different lengths
    ids, lengths = pad_all(sequences)

    grouped = model.encode_reply(ids, lengths)
    grouped.pow(2).sum().backward()
    grouped_grads = [gradient(parameter) for parameter in model.reply_gru.parameters()]
    model.zero_grad()
    packed = pack_padded_sequence(model.embedding(ids), lengths, batch_first=True, enforce_sorted=False)
    _, last = model.reply_gru(packed)
    reference = torch.cat([last[0], last[1]], dim=1)
    reference.pow(2).sum().backward()

    torch.testing.assert_close(grouped, reference, rtol=0, atol=1e-6)
    for mine, theirs in zip(grouped_grads, [p.grad for p in model.reply_gru.parameters()], strict=True):
        torch.testing.assert_close(mine, theirs, rtol=1e-5, atol=1e-5)
    # the helper GRU is no part of the model: the saved weights are the paper's modules only
    assert {name.split(".")[0] for name in model.state_dict()} == {
        "embedding",
        "query_gru",
        "reply_gru",
        "quadratic",
        "mlp",
    }
