"""ratings given as means (``mean_rating``, ``n_raters``) in the generic jsonl and csv formats, and
anonymous per-position ratings that make one annotator per position, not one per rating."""

from __future__ import annotations

import csv
import io
import json
from statistics import fmean
from typing import Any

import pytest

from annotation.importers import ImportFile, ImportRejected
from annotation.models import Annotator, ImportedMeanRating, Rating, Response, StudyImport
from annotation.selectors.quality import (
    agreements_from_rows,
    excluded_annotator_ids,
    overall_agreement,
    study_rating_rows,
)
from annotation.services.imports import study_import
from annotation.services.studies import QuestionSpec, study_create
from correlation.report.loading import study_human_scores
from scoring.models import MetricScore
from tests.correlation.builders import signature
from tests.correlation.report_helpers import report_document

pytestmark = pytest.mark.django_db


def _jsonl(records: list[dict[str, Any]], name: str = "means.jsonl") -> ImportFile:
    return ImportFile(name=name, data="".join(json.dumps(r) + "\n" for r in records).encode("utf-8"))


def _csv(header: list[str], rows: list[list[str]], name: str = "means.csv") -> ImportFile:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return ImportFile(name=name, data=buffer.getvalue().encode("utf-8"))


def _rejected(study, format: str, file: ImportFile) -> list[str]:
    with pytest.raises(ImportRejected) as rejected:
        study_import(study=study, format=format, files=[file])
    assert Response.objects.filter(context__study=study).count() == 0  # nothing written
    assert not StudyImport.objects.filter(study=study).exists()
    return [str(problem) for problem in rejected.value.problems]


@pytest.fixture
def study(researcher):
    return study_create(owner=researcher, name="published means", scale="1-5")


@pytest.fixture
def two_questions(researcher):
    return study_create(
        owner=researcher,
        name="two questions",
        questions=[QuestionSpec("appropriateness", 1, 5), QuestionSpec("fluency", 0, 2)],
    )


# --- means in jsonl and csv ------------------------------------------------------------------------------


def test_a_jsonl_mean_of_four_raters_is_one_imported_mean_not_four_invented_raters(study):
    record = study_import(
        study=study,
        format="jsonl",
        files=[
            _jsonl(
                [
                    {
                        "context": ["hi ."],
                        "response": "hello .",
                        "system": "s",
                        "mean_rating": 1.75,
                        "n_raters": 4,
                    },
                    {
                        "context": ["bye ."],
                        "response": "see you .",
                        "system": "s",
                        "mean_rating": {"appropriateness": 3},
                    },
                ]
            )
        ],
    )

    means = sorted(
        ImportedMeanRating.objects.filter(response__context__study=study).values_list(
            "response__text", "question__name", "value", "raters"
        )
    )
    assert means == [("hello .", "appropriateness", 1.75, 4), ("see you .", "appropriateness", 3.0, None)]
    assert not Rating.objects.filter(response__context__study=study).exists()
    assert not Annotator.objects.filter(study=study).exists()
    assert record.counts["mean_ratings_created"] == 2
    assert record.counts["annotators_created"] == 0


def test_jsonl_means_per_question_with_raters_per_question(two_questions):
    study_import(
        study=two_questions,
        format="jsonl",
        files=[
            _jsonl(
                [
                    {
                        "context": ["hi ."],
                        "response": "hello .",
                        "system": "s",
                        "mean_rating": {"appropriateness": 4.25, "fluency": 1.5},
                        "n_raters": {"appropriateness": 4, "fluency": 2},
                    }
                ]
            )
        ],
    )

    assert sorted(ImportedMeanRating.objects.values_list("question__name", "value", "raters")) == [
        ("appropriateness", 4.25, 4),
        ("fluency", 1.5, 2),
    ]


def test_csv_means_in_the_default_and_named_question_columns(two_questions):
    file = _csv(
        ["context", "response", "system", "mean_rating:fluency", "n_raters"],
        [["hi .", "hello .", "s", "1.75", "4"], ["bye .", "see you .", "s", "", ""]],
    )
    study_import(study=two_questions, format="csv", files=[file])
    assert list(
        ImportedMeanRating.objects.values_list("response__text", "question__name", "value", "raters")
    ) == [("hello .", "fluency", 1.75, 4)]

    other = study_create(owner=two_questions.owner, name="default question", scale="1-5")
    file = _csv(["context", "response", "system", "mean_rating"], [["hi .", "hello .", "s", "2.5"]])
    study_import(study=other, format="csv", files=[file])
    assert list(
        ImportedMeanRating.objects.filter(question__study=other).values_list(
            "question__name", "value", "raters"
        )
    ) == [("appropriateness", 2.5, None)]


def test_a_row_with_ratings_and_a_mean_of_the_same_question_is_refused(study):
    jsonl_problems = _rejected(
        study,
        "jsonl",
        _jsonl(
            [
                {"context": ["a ."], "response": "b .", "system": "s", "mean_rating": 2.0},
                {
                    "context": ["hi ."],
                    "response": "hello .",
                    "system": "s",
                    "ratings": {"appropriateness": [1, 2]},
                    "mean_rating": {"appropriateness": 1.5},
                },
            ]
        ),
    )
    assert jsonl_problems == [
        'means.jsonl, line 2, field "mean_rating.appropriateness": question "appropriateness" also has '
        'individual ratings on this line ("ratings.appropriateness[0]"); give either the ratings or their mean'
    ]
    csv_problems = _rejected(
        study,
        "csv",
        _csv(
            ["context", "response", "system", "rating:appropriateness", "mean_rating"],
            [["hi .", "hello .", "s", "1;2", "1.5"]],
        ),
    )
    assert csv_problems == [
        'means.csv, line 2, field "mean_rating": question "appropriateness" also has individual ratings on '
        'this line ("rating:appropriateness[0]"); give either the ratings or their mean'
    ]


def test_means_must_be_numbers_inside_the_scale_and_raters_whole_and_positive(study):
    problems = _rejected(
        study,
        "jsonl",
        _jsonl(
            [
                {"context": ["a ."], "response": "b .", "system": "s", "mean_rating": 5.5},
                {"context": ["c ."], "response": "d .", "system": "s", "mean_rating": "high"},
                {"context": ["e ."], "response": "f .", "system": "s", "mean_rating": 2.0, "n_raters": 0},
                {"context": ["g ."], "response": "h .", "system": "s", "n_raters": 3},
                {"context": ["i ."], "response": "j .", "system": "s", "mean_rating": {"fluency": 2.0}},
                {
                    "context": ["k ."],
                    "response": "l .",
                    "system": "s",
                    "ratings": {"appropriateness": [1.75]},
                },
            ]
        ),
    )
    assert problems == [
        'means.jsonl, line 1, field "mean_rating": 5.5 is outside the study\'s scale 1-5',
        'means.jsonl, line 2, field "mean_rating": must be a number (the mean rating of the import\'s '
        "question) or {\"question-name\": mean}, not 'high'",
        'means.jsonl, line 3, field "n_raters": 0: must be between 1 and 32,767 raters',
        'means.jsonl, line 4, field "n_raters": n_raters needs a mean_rating on the same line (the mean it '
        "counts)",
        'means.jsonl, line 5, field "mean_rating.fluency": unknown question "fluency"; this study\'s '
        "questions are: appropriateness",
        'means.jsonl, line 6, field "ratings.appropriateness[0]": 1.75 is not an integer rating; a mean of '
        'several raters\' scores goes in "mean_rating"',
    ]
    csv_problems = _rejected(
        study,
        "csv",
        _csv(
            ["context", "response", "system", "mean_rating", "n_raters"],
            [
                ["a .", "b .", "s", "0.5", "2"],
                ["c .", "d .", "s", "nan", ""],
                ["e .", "f .", "s", "3", "2.5"],
            ],
        ),
    )
    assert csv_problems == [
        'means.csv, line 2, field "mean_rating": 0.5 is outside the study\'s scale 1-5',
        "means.csv, line 3, field \"mean_rating\": 'nan' is not a number (the mean of several raters' scores)",
        "means.csv, line 4, field \"n_raters\": '2.5': must be a whole number of raters",
    ]


def test_the_report_takes_the_human_scores_of_replies_rated_only_by_means(study):
    rows = [
        ("good-bot", "ok , see you at noon .", 4.75, 0.6),
        ("good-bot", "sure , the station is north .", 4.25, 0.5),
        ("dull-bot", "i do n't know .", 1.75, 0.1),
        ("dull-bot", "what ?", 1.5, 0.2),
        ("mid-bot", "maybe later .", 3.0, 0.3),
        ("mid-bot", "it is fine .", 3.5, 0.4),
    ]
    study_import(
        study=study,
        format="jsonl",
        files=[
            _jsonl(
                [
                    {
                        "context": [f"question {i} ?"],
                        "response": text,
                        "system": system,
                        "mean_rating": mean,
                        "n_raters": 4,
                    }
                    for i, (system, text, mean, _) in enumerate(rows)
                ]
            )
        ],
    )
    bleu = signature("bleu-2")
    MetricScore.objects.bulk_create(
        MetricScore(response=Response.objects.get(text=text), signature=bleu, value=value)
        for _, text, _, value in rows
    )
    question = study.questions.get()

    scores = study_human_scores(study=study, questions=[question])[question.pk]
    assert {Response.objects.get(pk=pk).text: value for pk, value in scores.items()} == {
        text: mean for _, text, mean, _ in rows
    }
    document = report_document(study, resamples=0)
    assert document["questions"][0]["human_scored"] == len(rows)
    [system_row] = document["system_level"]
    assert {entry["system"]: entry["human_mean"] for entry in system_row["systems"]} == pytest.approx(
        {
            system: fmean(mean for name, _, mean, _ in rows if name == system)
            for system in ("good-bot", "dull-bot", "mid-bot")
        }
    )


# --- anonymous per-position ratings ----------------------------------------------------------------------


def _anonymous_jsonl(replies: int, raters: int) -> ImportFile:
    return _jsonl(
        [
            {
                "context_id": f"c{index}",
                "context": [f"question {index} ?"],
                "response": f"answer {index} .",
                "system": "bot",
                "ratings": {
                    "appropriateness": [(index + slot) % 5 + 1 for slot in range(raters - index % 2)]
                },
            }
            for index in range(replies)
        ],
        name="anonymous.jsonl",
    )


def test_600_replies_with_anonymous_ratings_make_one_annotator_per_position(study):
    """The issue's case: 600 replies with up to 5 unnamed scores each used to make an annotator per score
    (thousands); each position of the lists is now one anonymous annotator of unknown identity."""
    record = study_import(study=study, format="jsonl", files=[_anonymous_jsonl(600, 5)])

    annotators = Annotator.objects.filter(study=study)
    assert annotators.count() == 5
    assert record.counts["annotators_created"] == 5
    assert not annotators.filter(identity_known=True).exists()
    ratings = Rating.objects.filter(response__context__study=study)
    assert ratings.count() == 300 * 5 + 300 * 4 == record.counts["ratings_created"]
    assert sorted(annotators.values_list("pseudonym", flat=True)) == [f"jsonl-anon-{n}" for n in range(1, 6)]
    # Position i of every list is annotator jsonl-anon-<i+1>: reply 7's scores, position by position.
    assert sorted(
        ratings.filter(response__context__external_id="c7").values_list("annotator__pseudonym", "value")
    ) == [(f"jsonl-anon-{slot + 1}", (7 + slot) % 5 + 1) for slot in range(4)]
    assert ratings.filter(annotator__pseudonym="jsonl-anon-1").count() == 600
    fifth = ratings.filter(annotator__pseudonym="jsonl-anon-5")
    assert sorted(fifth.values_list("response__context__external_id", flat=True)) == sorted(
        f"c{index}"
        for index in range(0, 600, 2)  # only the lists of five have a fifth score
    )


def test_csv_anonymous_ratings_and_a_later_import_make_new_position_annotators(study):
    rows = [[f"question {i} ?", f"answer {i} .", "bot", "1;2;3"] for i in range(600)]
    study_import(
        study=study,
        format="csv",
        files=[_csv(["context", "response", "system", "rating:appropriateness"], rows)],
    )
    assert Annotator.objects.filter(study=study).count() == 3

    later = [[f"question {i} ?", f"other {i} .", "bot-2", "4;5"] for i in range(600)]
    record = study_import(
        study=study,
        format="csv",
        files=[_csv(["context", "response", "system", "rating:appropriateness"], later)],
    )
    # A later file's positions are other people: two more anonymous annotators, numbered after the first.
    assert record.counts["annotators_created"] == 2
    assert sorted(Annotator.objects.filter(study=study).values_list("pseudonym", flat=True)) == [
        "csv-anon-1",
        "csv-anon-2",
        "csv-anon-3",
        "csv-anon-4",
        "csv-anon-5",
    ]


def test_position_annotators_are_not_excluded_for_their_agreement_as_the_report_does(study):
    """A position is not a person: the quality filter leaves such raters in, as the report does
    (stats/report/human.py), even where their agreement would leave a named rater out."""
    study_import(study=study, format="jsonl", files=[_anonymous_jsonl(60, 3)])
    positions = Annotator.objects.filter(study=study)
    assert positions.count() == 3
    agreements = agreements_from_rows(study_rating_rows(study=study))
    low = [
        annotator.pk
        for annotator in positions
        if (kappa := overall_agreement(agreements[annotator.pk].values())) is not None
        and kappa < study.kappa_threshold
    ]
    assert low  # named raters with these ratings would be excluded
    assert excluded_annotator_ids(study=study) == set()
    question = study.questions.get()
    assert len(study_human_scores(study=study, questions=[question])[question.pk]) == 60
    positions.filter(pseudonym="jsonl-anon-2").update(report_inclusion="exclude")  # an explicit choice counts
    assert excluded_annotator_ids(study=study) == {positions.get(pseudonym="jsonl-anon-2").pk}
