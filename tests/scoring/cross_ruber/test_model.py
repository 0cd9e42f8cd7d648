"""Cross-RUBER trained for real on a tiny corpus (MiniLM, torch, CPU): it separates true replies from
negatives better than chance, the context changes the score, two loads score identically, the artifact
is tamper-evident, the token-state cache is reused, and a training can be cancelled."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import numpy as np
import pytest

from scoring.metrics.cross_ruber import (
    METRIC_NAMES,
    CrossRuberArtifact,
    CrossRuberArtifactError,
    clear_cross_ruber_cache,
    cross_ruber_scores,
    load_cross_ruber,
)
from scoring.metrics.cross_ruber.artifact import read_cross_ruber_artifact
from scoring.metrics.maude.negatives import word_order
from scoring.metrics.training_progress import (
    BATCH_STAGE,
    ENCODING_STAGE,
    EPOCH_STAGE,
    TrainingCancelled,
    TrainingReport,
)
from tests.scoring.cross_ruber.builders import TinyTraining, train_tiny
from tests.scoring.maude_builders import dialogs
from tests.waiting import TRAINING_FIXTURE_TIMEOUT

# tiny_cross_ruber (tests/scoring/conftest.py) trains in its setup: pytest-timeout's limit counts each test's
# body only, the training is watched for progress.
pytestmark = TRAINING_FIXTURE_TIMEOUT


@pytest.fixture
def artifact(tiny_cross_ruber: TinyTraining) -> CrossRuberArtifact:
    """The session's tiny training (tests/scoring/conftest.py), its token-state cache beside the model."""
    return tiny_cross_ruber.artifact


def held_out() -> tuple[list[list[str]], list[str]]:
    contexts, replies = [], []
    for dialog in dialogs(20, 99):
        for index in (3, 5):  # the answers, each after its question
            contexts.append(list(dialog[:index]))
            replies.append(dialog[index])
    return contexts, replies


def test_it_ranks_true_replies_above_shuffled_and_unrelated_ones(
    artifact: CrossRuberArtifact, tiny_cross_ruber: TinyTraining
) -> None:
    model = load_cross_ruber(artifact.path, device="cpu")
    contexts, replies = held_out()
    rng = random.Random(5)
    true_scores = np.array(model.unreferenced(contexts, replies))
    assert ((true_scores > 0) & (true_scores < 1)).all()
    shuffled = np.array(model.unreferenced(contexts, [word_order(reply, rng) for reply in replies]))
    unrelated = np.array(model.unreferenced(contexts, replies[7:] + replies[:7]))
    assert np.mean(true_scores > shuffled) >= 0.7
    assert np.mean(true_scores > unrelated) >= 0.7
    kept = artifact.config["results"]
    assert kept["validation_accuracy"] > 1 / 3  # chance: the true reply first of three candidates
    assert kept["best_epoch"] == min(artifact.curve, key=lambda row: row["validation_loss"])["epoch"]
    assert {ENCODING_STAGE, BATCH_STAGE, EPOCH_STAGE} <= set(tiny_cross_ruber.stages)


def test_the_context_changes_the_score(artifact: CrossRuberArtifact) -> None:
    model = load_cross_ruber(artifact.path, device="cpu")
    contexts, replies = held_out()
    right = np.array(model.unreferenced(contexts, replies))
    wrong = np.array(model.unreferenced(contexts[7:] + contexts[:7], replies))
    assert not np.allclose(right, wrong)
    assert np.mean(right > wrong) >= 0.7
    # the turns before the last one are read too
    longer = model.unreferenced([["Good morning .", *contexts[0]]], [replies[0]])
    assert longer[0] != model.unreferenced([contexts[0][-1:]], [replies[0]])[0]


def test_two_loads_score_identically_and_every_metric_has_values(artifact: CrossRuberArtifact) -> None:
    contexts, replies = held_out()
    references = [[reply] for reply in replies[1:] + replies[:1]]
    first = cross_ruber_scores(replies, contexts, references, artifact.path, device="cpu").by_metric()
    clear_cross_ruber_cache()
    second = cross_ruber_scores(replies, contexts, references, artifact.path, device="cpu").by_metric()
    assert first == second
    assert set(first) == set(METRIC_NAMES)
    assert all(value is not None for values in first.values() for value in values)
    alone = cross_ruber_scores(replies[:3], contexts[:3], None, artifact.path, device="cpu")
    assert alone.referenced == [None, None, None]
    # the same up to float rounding: other batches pad the context and the reply to other lengths
    assert alone.unreferenced == pytest.approx(first["cross-ruber-unreferenced"][:3], abs=1e-6)
    same = cross_ruber_scores(replies[:2], contexts[:2], [[replies[0]], [replies[1], "No ."]], artifact.path)
    assert same.referenced[0] == pytest.approx(1.0)


def test_the_artifact_is_hashed_and_tamper_evident(artifact: CrossRuberArtifact, tmp_path: Path) -> None:
    described = read_cross_ruber_artifact(artifact.path)
    assert described.content_hash == artifact.content_hash
    assert described.config["encoder"]["name"] == "all-minilm-l6-v2"
    assert (artifact.path / "weights.pt").is_file()
    assert (artifact.path / "timings.json").is_file()
    copy = tmp_path / "copy"
    shutil.copytree(artifact.path, copy, ignore=shutil.ignore_patterns("cache"))
    config = json.loads((copy / "config.json").read_text(encoding="utf-8"))
    config["dropout"] = 0.5
    (copy / "config.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(CrossRuberArtifactError, match=r"do not match hash\.txt"):
        load_cross_ruber(copy, device="cpu")


def test_the_cache_is_reused_and_a_training_can_be_cancelled(
    artifact: CrossRuberArtifact, tmp_path_factory: pytest.TempPathFactory
) -> None:
    timings = json.loads((artifact.path / "timings.json").read_text(encoding="utf-8"))
    assert timings["texts_encoded"] == timings["distinct_texts"]  # a new cache: every text encoded
    cache = artifact.path.parent / "cache"
    stages: list[tuple[str, int]] = []

    def cancel(report: TrainingReport) -> None:
        stages.append((report.stage, report.steps))
        if report.stage == BATCH_STAGE:
            raise TrainingCancelled

    output = tmp_path_factory.mktemp("again") / "model"
    with pytest.raises(TrainingCancelled):
        train_tiny(output, cache_dir=cache, on_progress=cancel)
    assert not (output / "hash.txt").exists()
    assert (ENCODING_STAGE, timings["distinct_texts"]) not in stages  # nothing left to encode
    assert stages[-1][0] == BATCH_STAGE
