"""MaUde trained for real on a small corpus (the MiniLM encoder, torch, CPU): it separates true replies
from corrupted ones better than chance, its artifact round-trips and is tamper-evident, scores are the
same across loads, the number of context turns changes the score, and the registry passes whole contexts."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import numpy as np
import pytest

from scoring.metrics.maude import MaudeArtifactError, clear_maude_cache, load_maude
from scoring.metrics.maude.artifact import MaudeArtifact, maude_artifact_hash, read_maude_artifact
from scoring.metrics.maude.negatives import word_order
from scoring.metrics.registry import compute_metrics, metric_spec
from tests.scoring.maude_builders import dialogs, train_tiny_maude
from tests.waiting import TRAINING_FIXTURE_TIMEOUT, watched_training

# The module's model trains in a fixture, which may take past 300 s on a loaded machine: the training is watched
# for progress (tests/waiting.py), and pytest-timeout's limit counts each test's body only.
pytestmark = TRAINING_FIXTURE_TIMEOUT


@pytest.fixture(scope="module")
def artifact(tmp_path_factory: pytest.TempPathFactory) -> MaudeArtifact:
    with watched_training("tiny MaUde, every variant") as on_progress:
        return train_tiny_maude(tmp_path_factory.mktemp("maude") / "model", on_progress=on_progress)


def held_out() -> tuple[list[list[str]], list[str]]:
    contexts, replies = [], []
    for dialog in dialogs(20, 99):
        for index in (3, 5):  # the answers, each after its question
            contexts.append(list(dialog[:index]))
            replies.append(dialog[index])
    return contexts, replies


def test_trained_maude_ranks_true_replies_above_shuffled_and_random_ones(artifact) -> None:
    model = load_maude(artifact.path, device="cpu")
    contexts, replies = held_out()
    rng = random.Random(5)
    shuffled = [word_order(reply, rng) for reply in replies]
    unrelated = replies[7:] + replies[:7]
    true_scores = np.array(model.score(contexts, replies))
    assert ((true_scores > 0) & (true_scores < 1)).all()
    order_wins = np.mean(true_scores > np.array(model.score(contexts, shuffled)))
    random_wins = np.mean(true_scores > np.array(model.score(contexts, unrelated)))
    assert order_wins >= 0.7, order_wins
    assert random_wins >= 0.7, random_wins
    curve = artifact.curve["maude"]
    assert curve[-1]["validation_accuracy"] > 0.5
    assert set(artifact.config["results"]) == {"maude", "bert-nli", "infersent", "ruber"}


def test_every_variant_scores_and_an_untrained_one_is_refused(artifact) -> None:
    model = load_maude(artifact.path, device="cpu")
    contexts, replies = held_out()
    for variant in ("maude", "bert-nli", "infersent", "ruber"):
        scores = model.score(contexts[:6], replies[:6], variant=variant)
        assert len(scores) == 6
        assert all(0 < value < 1 for value in scores)
    with pytest.raises(ValueError, match="variant 'gpt' is not trained"):
        model.score(contexts[:1], replies[:1], variant="gpt")


def test_artifact_round_trip_same_scores_across_loads(artifact, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(artifact.path, copy)
    assert maude_artifact_hash(copy) == artifact.content_hash == read_maude_artifact(copy).content_hash
    contexts, replies = held_out()
    first = load_maude(copy, device="cpu").score(contexts, replies)
    clear_maude_cache()
    second = load_maude(copy, device="cpu").score(contexts, replies)
    assert first == second
    assert read_maude_artifact(copy).config["paper"].startswith("Sinha et al. 2020")


def test_changed_weights_are_refused(artifact, tmp_path: Path) -> None:
    import torch

    copy = tmp_path / "tampered"
    shutil.copytree(artifact.path, copy)
    weights = copy / "cells" / "maude.pt"
    state = torch.load(weights, weights_only=True)
    first = next(iter(state))
    state[first] = state[first] + 1.0
    torch.save(state, weights)
    clear_maude_cache()
    with pytest.raises(MaudeArtifactError, match=r"do not match hash\.txt"):
        load_maude(copy, device="cpu")


def test_the_number_of_context_turns_changes_the_score(artifact) -> None:
    model = load_maude(artifact.path, device="cpu")
    contexts, replies = held_out()
    every = model.score(contexts, replies)
    last = model.score(contexts, replies, turns=1)
    assert every != last
    assert model.score([context[-1:] for context in contexts], replies) == last


def test_the_registry_gives_maude_every_turn(artifact) -> None:
    contexts, replies = held_out()
    models = {"maude": str(artifact.path)}
    queries = [context[-1] for context in contexts]
    with_contexts = compute_metrics(
        ["maude", "maude:one-turn"],
        replies,
        [[]] * len(replies),
        queries,
        "en",
        models=models,
        contexts=contexts,
    )
    model = load_maude(artifact.path)
    assert with_contexts["maude"] == pytest.approx(model.score(contexts, replies))
    assert with_contexts["maude:one-turn"] == pytest.approx(model.score(contexts, replies, turns=1))
    without = compute_metrics(["maude"], replies, [[]] * len(replies), queries, "en", models=models)
    assert without["maude"] == pytest.approx(with_contexts["maude:one-turn"])
    assert metric_spec("maude").reads_context
    assert not metric_spec("bleu-1").reads_context
