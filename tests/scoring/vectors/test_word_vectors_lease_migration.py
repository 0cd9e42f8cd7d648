"""The data migration that moved a conversion's attempt number and last progress time out of the JSON
``progress`` into the lease's columns (``attempts``, ``heartbeat_at``)."""

from __future__ import annotations

import importlib
from datetime import timedelta

import pytest
from django.apps import apps
from django.utils import timezone

from scoring.models import VectorsStatus, WordVectorsFile

pytestmark = pytest.mark.django_db


def test_progress_attempts_and_time_become_the_lease_columns() -> None:
    migration = importlib.import_module("scoring.migrations.0012_word_vectors_lease")
    last = timezone.now() - timedelta(minutes=20)
    converting = WordVectorsFile.objects.create(
        name="converting",
        format="glove-text",
        source="path",
        source_path="/x",
        status=VectorsStatus.CONVERTING,
        progress={"attempts": 2, "updated_at": last.isoformat(), "note": "converting"},
    )
    waiting = WordVectorsFile.objects.create(
        name="waiting", format="glove-text", source="path", source_path="/y", progress={"note": "waiting"}
    )
    migration.attempts_from_progress(apps, None)
    converting.refresh_from_db()
    waiting.refresh_from_db()
    assert (converting.attempts, converting.heartbeat_at) == (2, last)
    assert converting.progress["attempts"] == 2  # what the page shows stays
    assert (waiting.attempts, waiting.heartbeat_at) == (0, None)
