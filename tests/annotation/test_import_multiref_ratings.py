"""The multiref-ratings importer (mturk_rating_processed_output.csv layout) on small project-written files."""

from __future__ import annotations

import csv
import io

import pytest

from annotation.importers import ImportFile, ImportRejected
from annotation.models import DialogContext, ImportedMeanRating, Reference, Response, System
from annotation.services.imports import study_import
from annotation.services.studies import QuestionSpec, study_create
from tests.factories import DialogContextFactory

COLUMNS = ["model", "context_id", "human_average_rating", "response", "prevgt", "all_references", "context"]
CONTEXT = "Is it raining outside ?||||Yes , take an umbrella ."
REFERENCES = "thanks , i will .\toh no , i left it at home .\tthanks , i will ."


def _csv(rows: list[list[str]], name: str = "ratings.csv") -> ImportFile:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(COLUMNS)
    writer.writerows(rows)
    return ImportFile(name=name, data=out.getvalue().encode("utf-8"))


ROWS = [
    ["human", "7_1", "4.8", "thanks , see you !", "thanks , i will .", REFERENCES, CONTEXT],
    ["seq2seq", "7_1", "2.25", "i do n't know .", "thanks , i will .", REFERENCES, CONTEXT],
]


@pytest.fixture
def study(researcher):
    return study_create(owner=researcher, name="ratings", scale="1-5")


@pytest.mark.django_db
def test_rows_create_their_context_replies_and_mean_ratings(study):
    record = study_import(study=study, format="multiref-ratings", files=[_csv(ROWS)])

    context = DialogContext.objects.get(study=study)
    assert context.external_id == "7_1"
    assert [turn["speaker"] for turn in context.turns] == ["A", "B"]
    assert list(context.references.values_list("text", "origin")) == [
        ("thanks , i will .", "original"),
        ("oh no , i left it at home .", "imported"),
    ]
    means = {
        m.response.system.name: m.value for m in ImportedMeanRating.objects.select_related("response__system")
    }
    assert means == {"human": 4.8, "seq2seq": 2.25}
    assert ImportedMeanRating.objects.filter(raters__isnull=True).count() == 2
    assert System.objects.get(name="human").is_human
    assert not System.objects.get(name="seq2seq").is_human
    assert record.counts["contexts_created"] == 1
    assert record.counts["mean_ratings_created"] == 2


@pytest.mark.django_db
def test_an_existing_context_id_is_reused_and_a_differing_text_is_only_a_warning(study):
    DialogContextFactory.create(
        study=study, external_id="7_1", turns=[{"speaker": "A", "text": "Something else ?"}]
    )

    record = study_import(study=study, format="multiref-ratings", files=[_csv(ROWS)])

    assert DialogContext.objects.filter(study=study).count() == 1
    assert Response.objects.filter(context__external_id="7_1").count() == 2
    assert record.counts["contexts_reused"] == 1
    assert record.warnings == [
        'ratings.csv, line 2: context id "7_1" is already in the study with a different text; '
        "the study's context is kept"
    ]


@pytest.mark.django_db
def test_tokenization_and_case_differences_are_not_a_different_context(study):
    DialogContextFactory.create(
        study=study,
        external_id="7_1",
        turns=[
            {"speaker": "A", "text": "Is it raining outside?"},
            {"speaker": "B", "text": "YES, take an umbrella."},
        ],
    )
    record = study_import(study=study, format="multiref-ratings", files=[_csv(ROWS)])
    assert record.warnings == []


@pytest.mark.django_db
def test_the_ratings_go_to_the_chosen_question(researcher):
    study = study_create(
        owner=researcher,
        name="two questions",
        questions=[QuestionSpec("fluency", 1, 3), QuestionSpec("appropriateness", 1, 5)],
    )
    study_import(study=study, format="multiref-ratings", files=[_csv(ROWS)], question="appropriateness")
    assert set(ImportedMeanRating.objects.values_list("question__name", flat=True)) == {"appropriateness"}

    other_context = [["human", "8_1", "4.8", "sure .", "", "", "Can you help me ?"]]
    with pytest.raises(ImportRejected) as rejected:  # the first question's scale is 1-3: 4.8 does not fit
        study_import(study=study, format="multiref-ratings", files=[_csv(other_context, name="again.csv")])
    assert str(rejected.value.problems[0]) == (
        'again.csv, line 2, field "human_average_rating": '
        '4.8 is outside the study\'s scale 1-3 of question "fluency"'
    )


@pytest.mark.django_db
def test_a_row_without_context_text_for_an_unknown_id_is_rejected(study):
    rows = [["human", "9_9", "3", "fine .", "", "", ""]]
    with pytest.raises(ImportRejected) as rejected:
        study_import(study=study, format="multiref-ratings", files=[_csv(rows)])

    problem = rejected.value.problems[0]
    assert (problem.file, problem.line, problem.field) == ("ratings.csv", 2, "context_id")
    assert problem.message.startswith('unknown context id "9_9"')
    assert Reference.objects.count() == 0
    assert Response.objects.count() == 0
