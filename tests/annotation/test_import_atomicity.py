"""All or nothing: an import that fails while writing leaves no row behind.

The failure is real, not mocked: a trigger (SQLite or PostgreSQL) makes the database refuse the ratings, which are
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
    """A trigger that makes the database itself refuse ratings of value 2 (SQLite or PostgreSQL)."""
    if connection.vendor == "sqlite":
        create = [
            "CREATE TRIGGER refuse_rating_2 BEFORE INSERT ON annotation_rating WHEN NEW.value = 2 "
            "BEGIN SELECT RAISE(ABORT, 'rating 2 refused by test trigger'); END"
        ]
        drop = ["DROP TRIGGER IF EXISTS refuse_rating_2"]
    elif connection.vendor == "postgresql":
        create = [
            "CREATE FUNCTION refuse_rating_2() RETURNS trigger AS $$ BEGIN IF NEW.value = 2 THEN "
            "RAISE EXCEPTION 'rating 2 refused by test trigger'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql",
            "CREATE TRIGGER refuse_rating_2 BEFORE INSERT ON annotation_rating FOR EACH ROW "
            "EXECUTE FUNCTION refuse_rating_2()",
        ]
        drop = [
            "DROP TRIGGER IF EXISTS refuse_rating_2 ON annotation_rating",
            "DROP FUNCTION IF EXISTS refuse_rating_2()",
        ]
    else:
        pytest.fail(f"no refusing trigger written for {connection.vendor}")
    with connection.cursor() as cursor:
        for statement in create:
            cursor.execute(statement)
    yield
    with connection.cursor() as cursor:
        for statement in drop:
            cursor.execute(statement)


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
