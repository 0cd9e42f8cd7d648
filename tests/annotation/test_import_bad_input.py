"""Bad input: every rejection names file, line and field, and leaves the database exactly as it was."""

from __future__ import annotations

import json

import pytest
from django.apps import apps

from annotation.importers import ImportFile, ImportProblem, ImportRejected
from annotation.models import Annotator, DialogContext, Question, Response, Study, System
from annotation.services.imports import study_import
from annotation.services.studies import study_create
from kernel.importing.limits import EXTERNAL_ID_MAX, PSEUDONYM_MAX, QUESTION_NAME_MAX, SYSTEM_NAME_MAX


def row_counts() -> dict[str, int]:
    return {
        model.__name__: model._default_manager.count()
        for model in apps.get_app_config("annotation").get_models()
    }


@pytest.fixture
def study(researcher):
    study = study_create(owner=researcher, name="bad input")
    # Something already there, so that "unchanged" is checked against a non-empty study.
    line = {"context": ["Hi ."], "response": "hello .", "system": "s", "ratings": {"appropriateness": [1]}}
    study_import(study=study, format="jsonl", files=[ImportFile("seed.jsonl", json.dumps(line).encode())])
    return study


def rejected(study, format: str, name: str, data: bytes | str, **kwargs) -> list[ImportProblem]:
    before = row_counts()
    raw = data.encode("utf-8") if isinstance(data, str) else data
    with pytest.raises(ImportRejected) as error:
        study_import(study=study, format=format, files=[ImportFile(name, raw)], **kwargs)
    assert row_counts() == before
    assert str(error.value).startswith("import rejected, nothing was changed")
    return error.value.problems


def jsonl(*records: dict) -> str:
    return "".join(json.dumps(record) + "\n" for record in records)


GOOD = {"context": ["Are you there ?"], "response": "yes .", "system": "bot"}


@pytest.mark.django_db
def test_wrong_encoding_names_the_line_of_the_first_bad_byte(study):
    data = jsonl(GOOD, {**GOOD, "system": "b2"}).encode("utf-8") + "x,caf\u00e9\n".encode("latin-1")
    problems = rejected(study, "jsonl", "latin1.jsonl", data)
    assert str(problems[0]) == (
        "latin1.jsonl, line 3: the file is not UTF-8 text (byte 0xe9 at column 6 cannot be decoded); "
        "save it as UTF-8 and upload it again"
    )


@pytest.mark.django_db
def test_invalid_json_on_a_line(study):
    problems = rejected(study, "jsonl", "r.jsonl", jsonl(GOOD) + '{"context": ["a"], "response": \n')
    assert str(problems[0]).startswith("r.jsonl, line 2: invalid JSON: Expecting value")


@pytest.mark.django_db
def test_missing_required_key_and_column(study):
    problems = rejected(study, "jsonl", "r.jsonl", jsonl({"context": ["Hi ."], "response": "yo ."}))
    assert str(problems[0]) == 'r.jsonl, line 1, field "system": missing required key'

    problems = rejected(study, "multiref-ratings", "m.csv", "model,context_id,response\nbot,1_0,hi .\n")
    assert (problems[0].file, problems[0].line, problems[0].field) == ("m.csv", 1, "human_average_rating")
    assert problems[0].message.startswith("missing required column")


@pytest.mark.django_db
def test_empty_response(study):
    problems = rejected(study, "jsonl", "r.jsonl", jsonl(GOOD, {**GOOD, "system": "b", "response": "  "}))
    assert str(problems[0]) == 'r.jsonl, line 2, field "response": empty response'

    problems = rejected(study, "csv", "r.csv", "context,response,system\nHi .,,bot\n")
    assert str(problems[0]) == 'r.csv, line 2, field "response": empty response'


@pytest.mark.django_db
def test_rating_outside_the_scale(study):
    line = {**GOOD, "ratings": {"appropriateness": [0, 2, 7]}}
    problems = rejected(study, "jsonl", "ratings.jsonl", jsonl(GOOD | {"system": "b"}, line))
    assert str(problems[0]) == (
        'ratings.jsonl, line 2, field "ratings.appropriateness[2]": 7 is outside the study\'s scale 0-2'
    )


@pytest.mark.django_db
def test_non_integer_rating(study):
    problems = rejected(study, "jsonl", "r.jsonl", jsonl({**GOOD, "ratings": {"appropriateness": [1, 1.5]}}))
    assert (
        str(problems[0])
        == 'r.jsonl, line 1, field "ratings.appropriateness[1]": 1.5 is not an integer rating; '
        'a mean of several raters\' scores goes in "mean_rating"'
    )

    problems = rejected(
        study, "csv", "r.csv", "context,response,system,rating:appropriateness\nHi .,yo .,b,1;two\n"
    )
    assert (
        str(problems[0])
        == "r.csv, line 2, field \"rating:appropriateness[1]\": 'two' is not an integer rating"
    )


@pytest.mark.django_db
def test_unknown_context_id(study):
    problems = rejected(
        study, "jsonl", "r.jsonl", jsonl({"context_id": "nope", "response": "x .", "system": "b"})
    )
    assert (problems[0].file, problems[0].line, problems[0].field) == ("r.jsonl", 1, "context_id")
    assert problems[0].message.startswith('unknown context id "nope"')


@pytest.mark.django_db
def test_duplicate_item_within_the_file(study):
    problems = rejected(study, "jsonl", "r.jsonl", jsonl(GOOD, {**GOOD, "response": "no ."}))
    assert (
        str(problems[0])
        == 'r.jsonl, line 2: duplicate item: system "bot" already answers this context on line 1'
    )


@pytest.mark.django_db
def test_importing_the_same_file_again_is_a_duplicate(study):
    file = ImportFile("r.jsonl", jsonl(GOOD, {**GOOD, "system": "other"}).encode())
    study_import(study=study, format="jsonl", files=[file])
    problems = rejected(study, "jsonl", "r.jsonl", file.data)
    assert len(problems) == 2
    assert str(problems[0]) == (
        'r.jsonl, line 1: duplicate item: the study already has a reply of system "bot" to this context '
        "(was this file imported before?)"
    )


@pytest.mark.django_db
def test_unknown_question(study):
    problems = rejected(study, "jsonl", "r.jsonl", jsonl({**GOOD, "ratings": {"fluency": [1]}}))
    assert str(problems[0]) == (
        'r.jsonl, line 1, field "ratings.fluency[0]": unknown question "fluency"; '
        "this study's questions are: appropriateness"
    )
    problems = rejected(study, "grade", "g.jsonl", "", question="fluency")
    assert any(
        str(p) == 'unknown question "fluency"; this study\'s questions are: appropriateness' for p in problems
    )


@pytest.mark.django_db
def test_annotators_and_ratings_length_mismatch(study):
    line = {**GOOD, "annotators": ["a", "b"], "ratings": {"appropriateness": [1, 2, 0]}}
    problems = rejected(study, "jsonl", "r.jsonl", jsonl(line))
    assert str(problems[0]) == (
        'r.jsonl, line 1, field "ratings.appropriateness": 3 values for 2 annotators; '
        "give one value (or null/empty for 'not rated') per annotator"
    )


@pytest.mark.django_db
def test_not_rated_needs_an_annotators_list(study):
    problems = rejected(study, "jsonl", "r.jsonl", jsonl({**GOOD, "ratings": {"appropriateness": [1, None]}}))
    assert (problems[0].line, problems[0].field) == (1, "ratings.appropriateness[1]")


@pytest.mark.django_db
def test_empty_file(study):
    for format in (
        "dailydialog",
        "multiref",
        "multiref-ratings",
        "grade",
        "jsonl",
        "csv",
        "conversations-jsonl",
    ):
        problems = rejected(study, format, "empty.txt", "\n  \n")
        assert str(problems[0]) == "empty.txt: the file is empty"


@pytest.mark.django_db
def test_unknown_format_name(study):
    problems = rejected(study, "xml", "r.xml", "<a/>")
    assert str(problems[0]) == (
        'unknown format "xml"; choose one of dailydialog, multiref, multiref-ratings, grade, jsonl, csv, '
        "conversations-jsonl"
    )


@pytest.mark.django_db
def test_a_file_over_the_upload_limit(study, settings):
    settings.DIALEVAL_MAX_UPLOAD_BYTES = 100
    data = jsonl(GOOD, GOOD, GOOD)
    problems = rejected(study, "jsonl", "big.jsonl", data)
    assert str(problems[0]) == f"big.jsonl: the file is {len(data)} bytes; the limit is 100"


@pytest.mark.django_db
def test_problems_are_collected_not_just_the_first(study):
    lines = jsonl(*[{**GOOD, "system": f"s{n}", "response": ""} for n in range(80)])
    problems = rejected(study, "jsonl", "many.jsonl", lines)
    assert len(problems) == 80  # every one, not the first 50 (the page now groups them)
    assert [problem.line for problem in problems[:3]] == [1, 2, 3]


@pytest.mark.django_db
def test_the_parsers_length_limits_match_the_model():
    def length(model, name: str) -> int | None:
        return model._meta.get_field(name).max_length

    assert length(System, "name") == SYSTEM_NAME_MAX
    assert length(Annotator, "pseudonym") == PSEUDONYM_MAX
    assert length(DialogContext, "external_id") == EXTERNAL_ID_MAX
    assert length(Response, "external_id") == EXTERNAL_ID_MAX
    assert length(Question, "name") == QUESTION_NAME_MAX


@pytest.mark.django_db
def test_ratings_need_a_question_but_contexts_do_not(researcher):
    bare = Study.objects.create(owner=researcher, name="bare")  # a study without questions
    study_import(
        study=bare, format="dailydialog", files=[ImportFile("d.txt", b"Hi . __eou__ Yo . __eou__\n")]
    )
    line = {**GOOD, "system": "b"}
    problems = rejected(
        bare,
        "grade",
        "g.jsonl",
        jsonl(
            {
                "ID": 1,
                "DialogModel": "m",
                "Context": "Hi .|||Yo .",
                "Response": "ok .",
                "HumanScores": "[1, 2]",
            }
        ),
    )
    assert [str(p) for p in problems] == [
        'g.jsonl, line 1, field "HumanScores[0]": the study has no question to rate'
    ]
    study_import(study=bare, format="jsonl", files=[ImportFile("r.jsonl", jsonl(line).encode())])


@pytest.mark.django_db
def test_a_header_without_rows_is_nothing_to_import(study):
    problems = rejected(study, "csv", "header.csv", "context,response,system\n")
    assert str(problems[0]) == "header.csv: no records found to import"
