"""All or nothing: an import that fails while writing leaves no row behind.

The failure is real, not mocked: a SQLite trigger makes the database refuse the ratings, which are
written after the contexts, references, systems, annotators and responses of the same import.
"""

from __future__ import annotations

import json

import pytest
from django.apps import apps
from django.db import connection

from annotation.importers import ImportFile, ImportRejected
from annotation.models import Response
from annotation.services.imports import study_import
from annotation.services.studies import study_create


def row_counts() -> dict[str, int]:
    return {
        model.__name__: model._default_manager.count()
        for model in apps.get_app_config("annotation").get_models()
    }


def jsonl(*records: dict) -> bytes:
    return "".join(json.dumps(record) + "\n" for record in records).encode("utf-8")


@pytest.fixture
def refuse_rating_value_2():
    if connection.vendor != "sqlite":
        pytest.skip("the refusing trigger is written for SQLite")
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TRIGGER refuse_rating_2 BEFORE INSERT ON annotation_rating WHEN NEW.value = 2 "
            "BEGIN SELECT RAISE(ABORT, 'rating 2 refused by test trigger'); END"
        )
    yield
    with connection.cursor() as cursor:
        cursor.execute("DROP TRIGGER IF EXISTS refuse_rating_2")


@pytest.mark.django_db
def test_a_failure_detected_only_while_writing_rolls_back_everything(researcher, refuse_rating_value_2):
    study = study_create(owner=researcher, name="atomic")
    earlier = {
        "context": ["Hello ?"],
        "response": "hi .",
        "system": "old",
        "ratings": {"appropriateness": [1]},
    }
    study_import(study=study, format="jsonl", files=[ImportFile("earlier.jsonl", jsonl(earlier))])
    before = row_counts()

    context = ["Lunch ?", "Sure ."]
    lines = [
        {
            "context": context,
            "response": "at noon .",
            "system": "new",
            "references": ["where ?"],
            "ratings": {"appropriateness": [0, 1]},
        },
        {
            "context": context,
            "response": "ok .",
            "system": "newer",
            "ratings": {"appropriateness": [2]},
            "annotators": ["named-rater"],
        },
    ]
    with pytest.raises(ImportRejected) as rejected:
        study_import(study=study, format="jsonl", files=[ImportFile("late-failure.jsonl", jsonl(*lines))])

    assert row_counts() == before
    assert "rating 2 refused by test trigger" in str(rejected.value)
    assert str(rejected.value.problems[0]).startswith("the database refused the import")
    assert list(Response.objects.values_list("text", flat=True)) == ["hi ."]


@pytest.mark.django_db
def test_the_same_import_without_the_refused_value_goes_through(researcher, refuse_rating_value_2):
    """The trigger refuses only what it should: the test above fails for the right reason."""
    study = study_create(owner=researcher, name="atomic ok")
    line = {
        "context": ["Lunch ?"],
        "response": "at noon .",
        "system": "new",
        "ratings": {"appropriateness": [0, 1]},
    }
    record = study_import(study=study, format="jsonl", files=[ImportFile("fine.jsonl", jsonl(line))])
    assert record.counts["ratings_created"] == 2
