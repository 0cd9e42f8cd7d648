"""Learned metrics asked for without a trained model: the refusal named only the first missing kind
(ruber; then, once a ruber model was trained, maude). It names every missing kind at once, in a sentence
that starts with a capital letter and has no code markup."""

from __future__ import annotations

import pytest

from scoring.models import ScoringRun
from scoring.services import ScoringRequestError, scoring_run_create
from scoring.services.file_scoring import FileScoringError, texts_score
from tests.scoring.training_builders import topic_study

pytestmark = pytest.mark.django_db

METRICS = ["ruber-unreferenced", "maude"]


def assert_reads_as_a_sentence(message: str) -> None:
    assert message[:1].isupper(), message
    assert "`" not in message, message


def test_a_run_with_two_missing_kinds_names_both() -> None:
    study = topic_study()
    with pytest.raises(ScoringRequestError) as caught:
        scoring_run_create(study=study, metrics=METRICS, enqueue=False)
    message = str(caught.value)
    assert_reads_as_a_sentence(message)
    assert "a trained ruber model" in message
    assert "a trained maude model" in message
    assert "manage.py train_metric ruber --corpus" in message
    assert "manage.py train_metric maude --corpus" in message
    assert not ScoringRun.objects.exists()


def test_scoring_files_with_two_missing_kinds_names_both() -> None:
    with pytest.raises(FileScoringError) as caught:
        texts_score(
            replies=["yes ."], references=[["yes ."]], contexts=[["are you there ?"]], metrics=METRICS
        )
    message = str(caught.value)
    assert_reads_as_a_sentence(message)
    assert "a trained ruber model" in message
    assert "a trained maude model" in message
