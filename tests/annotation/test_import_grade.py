"""The grade importer (GRADE human_judgement layout) on a small project-written file."""

from __future__ import annotations

import json

import pytest

from annotation.importers import ImportFile, ImportRejected
from annotation.models import Annotator, DialogContext, Rating, Reference, Response
from annotation.services.imports import study_import
from annotation.services.studies import study_create
from tests.factories import AnnotatorFactory

CONTEXT = "Where is the station ?|||Turn left at the bank ."


def _item(item_id: int, model: str, scores: list[int], context: str = CONTEXT) -> dict:
    return {
        "ID": item_id,
        "Dataset": "dailydialog_EVAL",
        "DialogModel": model,
        "Context": context,
        "Response": f"reply {item_id} .",
        "HumanScores": json.dumps(scores),
        "Reference": "thank you very much .",
    }


def _file(items: list[dict], name: str = "human_judgement.jsonl") -> ImportFile:
    return ImportFile(name=name, data="".join(json.dumps(item) + "\n" for item in items).encode("utf-8"))


@pytest.fixture
def study(researcher):
    return study_create(owner=researcher, name="grade", scale="1-5")


@pytest.mark.django_db
def test_systems_share_contexts_and_each_score_position_is_one_anonymous_annotator(study):
    items = [
        _item(0, "generator", [3, 5, 1]),
        _item(1, "ranker", [4, 4]),
        _item(2, "ranker", [2], "Hi .|||Hello ."),
    ]
    record = study_import(study=study, format="grade", files=[_file(items)])

    assert DialogContext.objects.filter(study=study).count() == 2
    context = DialogContext.objects.get(study=study, turns__0__text="Where is the station ?")
    assert context.turns == [
        {"speaker": "A", "text": "Where is the station ?"},
        {"speaker": "B", "text": "Turn left at the bank ."},
    ]
    assert list(Reference.objects.filter(context=context).values_list("text", "origin")) == [
        ("thank you very much .", "original")
    ]
    assert sorted(Response.objects.values_list("external_id", flat=True)) == ["0", "1", "2"]
    scores = sorted(Rating.objects.filter(response__external_id="0").values_list("value", flat=True))
    assert scores == [1, 3, 5]
    # One anonymous annotator per position in HumanScores (3 at most here), not one per score.
    assert Annotator.objects.filter(study=study, origin="imported").count() == 3
    assert Rating.objects.values("annotator").distinct().count() == 3
    assert sorted(
        Rating.objects.filter(response__external_id="1").values_list("annotator__pseudonym", "value")
    ) == [("grade-anon-1", 4), ("grade-anon-2", 4)]
    assert record.counts["annotators_created"] == 3
    assert record.counts["ratings_created"] == 6
    # Nobody knows who gave which score: reports must not treat these raters as people.
    assert not Annotator.objects.filter(study=study, identity_known=True).exists()


@pytest.mark.django_db
def test_named_imported_annotators_keep_their_identity(study):
    jsonl = ImportFile(
        name="named.jsonl",
        data=(
            json.dumps(
                {
                    "context": ["Hi ."],
                    "response": "Hello .",
                    "system": "s",
                    "ratings": {"appropriateness": [3, 4]},
                    "annotators": ["ann", "bob"],
                }
            )
            + "\n"
        ).encode("utf-8"),
    )
    study_import(study=study, format="jsonl", files=[jsonl])
    assert sorted(
        Annotator.objects.filter(study=study, identity_known=True).values_list("pseudonym", flat=True)
    ) == [
        "ann",
        "bob",
    ]


@pytest.mark.django_db
def test_anonymous_annotators_of_a_later_import_get_new_pseudonyms(study):
    AnnotatorFactory.create(study=study, pseudonym="grade-anon-7", origin="imported")
    study_import(study=study, format="grade", files=[_file([_item(0, "generator", [3, 5])])])
    study_import(study=study, format="grade", files=[_file([_item(1, "generator", [4], "Hi .|||Hello .")])])

    pseudonyms = sorted(Annotator.objects.filter(study=study).values_list("pseudonym", flat=True))
    assert pseudonyms == ["grade-anon-10", "grade-anon-7", "grade-anon-8", "grade-anon-9"]


@pytest.mark.django_db
def test_a_second_item_for_the_same_system_and_context_is_a_second_sample(study):
    items = [_item(0, "generator", [3]), _item(5, "generator", [4])]
    record = study_import(study=study, format="grade", files=[_file(items)])

    assert sorted(Response.objects.values_list("external_id", "sample_index")) == [("0", 0), ("5", 1)]
    assert record.warnings == [
        'human_judgement.jsonl, line 2, field "ID": item 5 rates another reply of generator to the context '
        "of line 1; stored as sample 1"
    ]


@pytest.mark.django_db
def test_scores_are_checked_against_the_scale_and_must_be_integers(study):
    items = [
        _item(0, "generator", [3, 6]),
        {**_item(1, "generator", [2], "Hi .|||Yo ."), "HumanScores": "[2.5]"},
    ]
    with pytest.raises(ImportRejected) as rejected:
        study_import(study=study, format="grade", files=[_file(items)])

    assert [str(problem) for problem in rejected.value.problems] == [
        'human_judgement.jsonl, line 1, field "HumanScores[1]": 6 is outside the study\'s scale 1-5',
        'human_judgement.jsonl, line 2, field "HumanScores[0]": 2.5 is not an integer rating',
    ]
    assert Response.objects.count() == 0
