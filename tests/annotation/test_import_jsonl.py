"""The generic jsonl format (docs/import-formats.md) on tests/data/import/example.jsonl and variants."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotation.importers import ImportFile, ImportRejected
from annotation.models import Annotator, DialogContext, Rating, Reference, Response, System
from annotation.services.imports import study_import
from annotation.services.studies import QuestionSpec, study_create
from tests.factories import AnnotatorFactory, UserFactory

EXAMPLE = Path(__file__).resolve().parent.parent / "data" / "import" / "example.jsonl"


def _lines(records: list[dict], name: str = "replies.jsonl") -> ImportFile:
    return ImportFile(name=name, data="".join(json.dumps(r) + "\n" for r in records).encode("utf-8"))


@pytest.fixture
def study(researcher):
    return study_create(owner=researcher, name="jsonl")


@pytest.mark.django_db
def test_the_documented_example_imports(study):
    record = study_import(study=study, format="jsonl", files=[ImportFile(EXAMPLE.name, EXAMPLE.read_bytes())])

    assert DialogContext.objects.filter(study=study).count() == 2  # r1 and r2 share their context
    shared = DialogContext.objects.get(study=study, turns__0__text="Are you free for lunch tomorrow ?")
    assert [turn["speaker"] for turn in shared.turns] == ["A", "B"]
    assert sorted(shared.references.values_list("text", "origin")) == [
        ("noon is fine .", "imported"),
        ("twelve thirty , if that works .", "imported"),
    ]
    wifi = DialogContext.objects.get(study=study, turns__0__text="The wifi is not working .")
    assert [turn["speaker"] for turn in wifi.turns] == ["guest", "host"]
    named = dict(
        Rating.objects.filter(response__external_id="r2").values_list("annotator__pseudonym", "value")
    )
    assert named == {"ann": 0, "cy": 1}  # bob's null: did not rate r2
    anonymous = Rating.objects.filter(response__external_id="r3").values_list(
        "annotator__pseudonym", flat=True
    )
    assert sorted(anonymous) == ["jsonl-anon-1", "jsonl-anon-2"]
    assert set(Annotator.objects.filter(study=study).values_list("origin", flat=True)) == {"imported"}
    assert record.counts == {
        "contexts_created": 2,
        "contexts_reused": 0,
        "references_created": 2,
        "references_reused": 0,
        "systems_created": 2,
        "systems_reused": 0,
        "responses_created": 3,
        "annotators_created": 5,
        "annotators_reused": 0,
        "ratings_created": 7,
        "mean_ratings_created": 0,
    }


@pytest.mark.django_db
def test_named_annotators_and_contexts_are_reused_by_a_later_import(study):
    AnnotatorFactory.create(study=study, pseudonym="ann", origin="imported")
    first = {
        "context": ["Hi ."],
        "response": "hello .",
        "system": "s1",
        "references": ["hey ."],
        "ratings": {"appropriateness": [1]},
        "annotators": ["ann"],
    }
    study_import(study=study, format="jsonl", files=[_lines([first])])
    second = {**first, "system": "s2", "references": ["hey .", "hi there ."]}
    record = study_import(study=study, format="jsonl", files=[_lines([second])])

    assert record.counts["contexts_reused"] == 1
    assert record.counts["annotators_reused"] == 1
    assert record.counts["references_created"] == 1
    assert record.counts["references_reused"] == 1
    assert Annotator.objects.filter(study=study).count() == 1
    assert System.objects.filter(study=study).count() == 2
    assert Reference.objects.filter(context__study=study).count() == 2


@pytest.mark.django_db
def test_ratings_name_their_question(researcher):
    study = study_create(
        owner=researcher,
        name="two questions",
        questions=[QuestionSpec("appropriateness", 0, 2), QuestionSpec("fluency", 1, 5)],
    )
    line = {
        "context": ["Hi ."],
        "response": "hello .",
        "system": "s",
        "ratings": {"fluency": [5], "appropriateness": [2]},
    }
    study_import(study=study, format="jsonl", files=[_lines([line])])

    assert sorted(Rating.objects.values_list("question__name", "value")) == [
        ("appropriateness", 2),
        ("fluency", 5),
    ]


@pytest.mark.django_db
def test_a_context_id_attaches_replies_to_a_context_already_in_the_study(study):
    study_import(
        study=study, format="dailydialog", files=[ImportFile("d.txt", b"Hi . __eou__ Hello . __eou__\n")]
    )
    line = {"context_id": "0_0", "response": "good day .", "system": "polite-bot"}
    record = study_import(study=study, format="jsonl", files=[_lines([line])])

    assert record.counts["contexts_reused"] == 1
    assert Response.objects.get().context.external_id == "0_0"


@pytest.mark.django_db
def test_a_volunteer_pseudonym_cannot_receive_imported_ratings(study):
    AnnotatorFactory.create(study=study, pseudonym="ann", user=UserFactory.create())
    line = {
        "context": ["Hi ."],
        "response": "hello .",
        "system": "s",
        "ratings": {"appropriateness": [1]},
        "annotators": ["ann"],
    }
    with pytest.raises(ImportRejected) as rejected:
        study_import(study=study, format="jsonl", files=[_lines([line])])
    assert "is a volunteer of this study" in str(rejected.value)
